"""The passes of what acts on the joints: the joints' passive attributes (``armature``,
``damping``, ``stiffness`` with ``springref``), the fixed tendons of ``<tendon>`` and the
actuators of ``<actuator>``, as the model's data (``Model.set_joint_armature``,
``Model.set_joint_spring``, ``Model.add_tendon``, ``Model.add_actuator``;
treedyn.model.actuation gives their meaning, which is MuJoCo's).

Actuators: ``<motor>``, ``<position>`` (``kp``, ``kv``), ``<velocity>`` (``kv``) and ``<general>``
(``gaintype``/``biastype`` fixed, affine or none, ``gainprm``, ``biasprm``, ``dyntype`` none,
integrator or filter with ``dynprm``), each with ``gear`` (its first value), ``ctrlrange``/
``ctrllimited``, ``forcerange``/``forcelimited``, ``actrange``/``actlimited`` (limited by MuJoCo's
"auto" rule), on a hinge or slide ``joint`` (or ``jointinparent``) or a fixed ``tendon``. Other
actuators (muscles, cylinders, adhesion, a site, body or ball-joint transmission, a spatial
tendon) are noted as not modelled and left out: ``model.actuator_names`` lists those loaded.
Tendons: ``<fixed>`` with ``stiffness``, ``damping``, ``springlength`` (default: the length at the
joints' ``springref``), ``range``/``limited`` and ``frictionloss``; spatial tendons are noted as not
modelled. Joints: ``frictionloss`` (dry friction, ``Model.set_joint_frictionloss``) and, on hinges
and slides, ``actuatorfrcrange``/``actuatorfrclimited`` (the clamp of the actuators' total force,
``Model.set_joint_actuator_force_range``; MuJoCo ignores it on ball and free joints, and so does
this reader).
"""

from __future__ import annotations

import numpy as np

from .collision import softness

__all__ = ["joint_passive", "tendons", "actuators"]

_SHORTCUTS = ("motor", "position", "velocity", "general")
_UNSUPPORTED = ("intvelocity", "damper", "cylinder", "muscle", "adhesion", "plugin")


def joint_passive(r, model) -> None:
    """Each joint's armature, spring–damper and dry friction (bodies._passive read them) into the
    model; stiffness on a free joint noted as not modelled."""
    with model._passive_batch():  # (pushed to the C++ model once: before M0 below needs it)
        for name, (_, a) in r.passive.items():
            if a.get("armature"):
                model.set_joint_armature(name, a["armature"])
    with model._passive_batch():
        _springs(r, model)


def _springs(r, model) -> None:
    """The joints' spring–dampers and dry friction (joint_passive)."""
    M0 = None
    for name, (kind, a) in r.passive.items():
        k, d = a.get("stiffness", 0.0), a.get("damping", 0.0)
        if "springdamper" in a:  # MuJoCo's (AutoSpringDamper): the spring–damper of time constant tc and
            # damping ratio ζ on the coordinate's inertia at qpos0, m = 1/(M⁻¹)_ii (armature included;
            # averaged over a joint's coordinates as n/Σ(M⁻¹)_ii): k = m/(tc ζ)², d = 2m/tc, replacing both
            if M0 is None:
                from ...algorithms.dynamics import mass_matrix

                M0 = np.diag(np.linalg.inv(mass_matrix(model, model.reference_configuration)))
            tc, ratio = a["springdamper"]
            i = model.v_index(name)
            n = {"free": 6, "ball": 3}.get(kind, 1)
            m0 = n / max(M0[i : i + n].sum(), 1e-15)
            k, d = m0 / (tc * ratio) ** 2, 2.0 * m0 / tc
        if kind == "free" and k:
            r.ignored.note(f"stiffness of free joint {name!r} not modelled")
            k = 0.0
        if k or d:
            rest = [a.get("springref", 0.0)] if kind in ("hinge", "slide") else None
            model.set_joint_spring(name, stiffness=k, damping=d, rest=rest)
        if a.get("frictionloss"):
            model.set_joint_frictionloss(name, a["frictionloss"])
        if a.get("actuatorfrcrange"):
            model.set_joint_actuator_force_range(name, *a["actuatorfrcrange"])
    for (kind, name), soft in r.__dict__.get("row_softness", {}).items():  # (solreffriction, solimpfriction)
        model.set_row_softness(kind, name, soft.get("solref"), soft.get("solimp"))


def tendons(r, root, model) -> None:
    """The fixed tendons (see the module); spatial ones noted."""
    springref = {name: a.get("springref", 0.0) for name, (_, a) in r.passive.items()}
    added = len(model.tendon_names)  # (counted here: model.tendons is a copy per call)
    for sec in [s for s in root if s.tag == "tendon"]:
        for t in sec:
            if not isinstance(t.tag, str):
                continue
            r.current = t
            if t.tag == "spatial":
                r.ignored.note(f"spatial tendon {t.get('name', '')!r} not modelled")
                continue
            if t.tag != "fixed":
                r.ignored.add(t.tag)
                continue
            a = _tendon_attrs(r, t)
            name = a.get("name") or f"tendon{added}"
            if r.limited(t, a, "actuatorfrcrange", f"tendon {name!r}"):
                r.ignored.note(f"tendon {name!r}: actuatorfrcrange (the clamp of its actuators' force) not modelled")
            terms = {}
            for j in t:
                if j.tag == "joint":
                    jn = j.get("joint")
                    terms[jn] = terms.get(jn, 0.0) + r.num(j, "coef", None, 1.0)
            rest = r.vec(t, "springlength", None, a, (-1.0,))
            if rest[0] == -1.0:  # MuJoCo's default: the length at the joints' springref
                rest = np.array([sum(c * springref.get(jn, 0.0) for jn, c in terms.items())])
            try:
                model.add_tendon(
                    name,
                    terms,
                    stiffness=r.num(t, "stiffness", a, 0.0),
                    damping=r.num(t, "damping", a, 0.0),
                    rest_length=rest,
                    range=r.limited(t, a, "range", f"tendon {name!r}"),
                    frictionloss=r.num(t, "frictionloss", a, 0.0),
                )
            except ValueError as err:
                raise r.err(str(err), t) from None
            for kind, keys in (("tendon friction", "friction"), ("tendon limit", "limit")):
                soft = softness(r, t, a, (f"solref{keys}", f"solimp{keys}"))
                if soft:
                    model.set_row_softness(kind, name, soft.get("solref"), soft.get("solimp"))
            added += 1


def _tendon_attrs(r, t):
    a = r.attrs(t, "main")
    d = dict(r.defaults[t.get("class", "main")].get("tendon", {}))
    d.update(a)
    return d


def _actuator_attrs(r, e, cls):
    """The actuator's attributes over its class's <general> defaults and its own tag's."""
    name = e.get("class", cls)
    if name not in r.defaults:
        raise r.err(f"<{e.tag}> uses default class {name!r}, which is not defined", e)
    d = r.defaults[name]
    a = dict(d.get("general", {}))
    a.update(d.get(e.tag, {}))
    a.update(e.attrib)
    return a


def actuators(r, root, model) -> None:
    """The actuators (see the module), in file order (MuJoCo's ctrl order)."""
    tendon_names = set(model.tendon_names)  # (all added already: the tendons pass comes first)
    r.ctrl_index, index = [], -1  # per loaded actuator: its index in MuJoCo's ctrl (keyframes.py)
    for sec in [s for s in root if s.tag == "actuator"]:
        for e in sec:
            if not isinstance(e.tag, str):
                continue
            r.current, index = e, index + 1
            a = _actuator_attrs(r, e, "main")
            name = a.get("name") or f"actuator{model.nu}"
            if e.tag in _UNSUPPORTED or e.tag not in _SHORTCUTS:
                r.ignored.note(f"<{e.tag}> actuator {name!r} not modelled (left out of model.actuator_names)")
                continue
            target = a.get("joint", a.get("jointinparent"))
            transmission = "joint"
            if target is None and "tendon" in a:
                target, transmission = a["tendon"], "tendon"
            if target is None:
                r.ignored.note(f"actuator {name!r}: its transmission (a site or a body) is not modelled")
                continue
            if transmission == "tendon" and target not in tendon_names:
                if target not in r.__dict__.get("tendons", {}):  # (MuJoCo's refusal too)
                    raise r.err(f"actuator {name!r}: its transmission target, tendon {target!r}, does not exist", e)
                r.ignored.note(f"actuator {name!r} on tendon {target!r}: not a fixed tendon treedyn models")
                continue
            gain, bias, dyn, T = _gain_bias(r, e, a, name)
            if dyn is None:
                continue
            try:
                model.add_actuator(
                    name,
                    target,
                    transmission,
                    gear=r.num(e, "gear", a, 1.0, n=None),
                    gain=gain,
                    bias=bias,
                    ctrlrange=r.limited(e, a, "ctrlrange", f"actuator {name!r}"),
                    forcerange=r.limited(e, a, "forcerange", f"actuator {name!r}"),
                    dynamics=dyn,
                    time_constant=T,
                    actrange=r.limited(e, a, "actrange", f"actuator {name!r}"),
                )
            except ValueError as err:
                if "not a revolute or prismatic" in str(err):
                    r.ignored.note(f"actuator {name!r}: {err}")
                    continue
                raise r.err(str(err), e) from None
            r.ctrl_index.append(index)
    r.ctrl_count = index + 1  # MuJoCo's nu: every actuator of the file


def _gain_bias(r, e, a, name):
    """(gain, bias, dynamics, time constant) of a shortcut or <general>; dynamics None: not modelled."""
    num = lambda key, default: r.num(e, key, a, default)  # noqa: E731
    if e.tag == "motor":
        return (1.0,), (0.0,), "none", 1.0
    if e.tag == "position":
        kp, kv = num("kp", 1.0), num("kv", 0.0)
        if num("timeconst", 0.0) > 0:
            return (kp,), (0.0, -kp, -kv), "filter", num("timeconst", 0.0)
        return (kp,), (0.0, -kp, -kv), "none", 1.0
    if e.tag == "velocity":
        kv = num("kv", 1.0)
        return (kv,), (0.0, 0.0, -kv), "none", 1.0
    gaintype, biastype, dyntype = a.get("gaintype", "fixed"), a.get("biastype", "none"), a.get("dyntype", "none")
    if (
        gaintype not in ("fixed", "affine")
        or biastype not in ("none", "affine")
        or dyntype not in ("none", "integrator", "filter")
    ):
        r.ignored.note(f"actuator {name!r}: gaintype {gaintype}, biastype {biastype}, dyntype {dyntype} not modelled")
        return None, None, None, None
    g = r.vec(e, "gainprm", None, a, (1.0,))[:3]
    b = r.vec(e, "biasprm", None, a, (0.0,))[:3] if biastype == "affine" else (0.0,)
    if gaintype == "fixed":
        g = g[:1]
    T = r.num(e, "dynprm", a, 1.0, n=None)
    return tuple(g), tuple(b), dyntype, T if dyntype == "filter" else 1.0
