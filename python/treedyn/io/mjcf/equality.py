"""MJCF's ``<equality>`` as treedyn constraints (Model.add_loop_closure, Model.add_coupling).

The rules are MuJoCo's XML reference's (``<equality>``), checked against MuJoCo's own constraint
residuals (efc_pos) in tests/io/test_io_mjcf_equality.py:

* ``connect``: body1's point ``anchor`` (body1 coordinates) and body2's point that coincides with it
  at qpos0 stay together (a spherical loop closure, 3 rows); with ``site1``/``site2``, the two
  sites' origins.
* ``weld``: body2's frame, moved to its point ``anchor`` (body2 coordinates), keeps the pose
  ``relpose`` (position, quaternion w x y z) in body1's frame, or the pose it has at qpos0 when the
  quaternion part is all zeros (the default); with ``site1``/``site2``, the two sites' frames
  coincide (6 rows). ``torquescale`` only weighs MuJoCo's soft rows: a hard weld is the same
  whatever it is. (The three position rows are MuJoCo's; the three orientation rows differ from
  its quaternion rows away from the constraint but vanish with them.)
* ``joint``: joint1's coordinate y and joint2's x keep y − y0 = p(x − x0) with p's coefficients
  ``polycoef`` and (x0, y0) the coordinates at qpos0; without joint2, y = y0 + a0 (1 row).
* ``tendon``: the same for the lengths of fixed tendons (``<tendon><fixed>``: Σ coef·q).
* ``active="false"``: kept in the model, not enforced. ``solref``/``solimp`` (MuJoCo's defaults where
  absent): each equality is one of MuJoCo's soft constraints (``Model.set_constraint_softness``) under
  ``td.ContactSimulator`` with soft constraints, its default for MJCF; hard otherwise.
* ``flex`` equalities and spatial tendons in a tendon equality: ModelFileError.
"""

from __future__ import annotations

import numpy as np

from ...algorithms.configuration import neutral
from ...model import Fixed, Spherical, Transform
from .._common import matrix_to_quat, quat_to_matrix
from .._tree import IDENTITY

__all__ = ["add_equalities", "fixed_tendons", "reference_configuration", "site_poses"]

_KINDS = ("connect", "weld", "joint", "tendon")


def reference_configuration(model, qpos0: dict) -> np.ndarray:
    """MuJoCo's qpos0 in treedyn's coordinates: {joint name: hinge/slide ref, or a free body's
    world pose (Transform)}; every other coordinate at its neutral value."""
    q = np.array(neutral(model), dtype=float)
    for name, value in qpos0.items():
        i = model.q_index(name)
        if isinstance(value, Transform):
            q[i : i + 3] = value.translation
            q[i + 3 : i + 7] = matrix_to_quat(value.rotation, wxyz=False)
        else:
            q[i] = value
    return q


def add_equalities(reader, model, sections, q0: np.ndarray) -> None:
    """Add every ``<equality>`` child of ``sections`` to ``model``. reader: the MJCF reader (its
    err, defaults, sites and tendons); q0: qpos0 in treedyn coordinates."""
    for sec in sections:
        for e in sec:
            if not isinstance(e.tag, str):
                continue
            reader.current = e
            a = _attrs(reader, e)
            if e.tag not in _KINDS:
                what = "flex equalities (deformable bodies)" if e.tag == "flex" else f"<{e.tag}>"
                raise reader.err(f"<equality><{e.tag}>: {what} are not supported by treedyn", e)
            active = a.get("active", "true") == "true"
            if a.get("active", "true") not in ("true", "false"):
                raise reader.err(f"<{e.tag} active={a['active']!r}>: must be true or false", e)
            if e.tag in ("connect", "weld"):
                _loop(reader, model, e, a, q0, active)
            else:
                _coupling(reader, model, e, a, q0, active)


def _attrs(reader, e) -> dict:
    """An equality element's attributes over its class's <default><equality> ones."""
    name = e.get("class", "main")
    if name not in reader.defaults:
        raise reader.err(f"<{e.tag}> uses default class {name!r}, which is not defined", e)
    a = dict(reader.defaults[name].get("equality", {}))
    a.update(e.attrib)
    return a


def _frame(reader, model, e, name: str, what: str):
    """(treedyn body index, pose in it) of MuJoCo body ``name`` (its frame) or of a site."""
    frames = reader.__dict__.get("frames")
    if frames is None:  # (model.frames is a copy: read once per load, not once per equality)
        frames = reader.frames = model.frames
    if what == "site":
        if name not in reader.sites:
            raise reader.err(f"<{e.tag}>: no site named {name!r}", e)
        body, pose = reader.sites[name]
    else:
        body, pose = name, IDENTITY
    if body not in frames:
        raise reader.err(f"<{e.tag}>: no body named {body!r}", e)
    b, X = frames[body]
    return model.body_index(b), X @ pose


def _loop(reader, model, e, a, q0, active):
    if "site1" in a or "site2" in a:
        if not ("site1" in a and "site2" in a):
            raise reader.err(f"<{e.tag}>: give both site1 and site2 (or body1 and body2)", e)
        ia, Xa = _frame(reader, model, e, a["site1"], "site")
        ib, Xb = _frame(reader, model, e, a["site2"], "site")
        if e.tag == "connect":
            Xa, Xb = Transform(translation=Xa.translation), Transform(translation=Xb.translation)
    else:
        if "body1" not in a:
            raise reader.err(f"<{e.tag}> has no body1 (or site1/site2)", e)
        ia, Xa = _frame(reader, model, e, a["body1"], "body")
        ib, Xb = _frame(reader, model, e, a.get("body2", "world"), "body")
        if e.tag == "connect":
            Xa = Xa @ Transform(translation=reader.vec(e, "anchor", 3, a))
            Xb = None  # the point of body2 that coincides with the anchor at qpos0
        else:  # body2's point `anchor` is at relpose's position in body1, with relpose's orientation
            Xb = Xb @ Transform(translation=reader.vec(e, "anchor", 3, a, (0, 0, 0)))
            rel = reader.vec(e, "relpose", 7, a, (0, 1, 0, 0, 0, 0, 0))
            if np.all(rel[3:] == 0):  # where that frame of body2 is at qpos0
                R, p = model.body_poses(q0)
                Ra, pa = R[ia] @ Xa.rotation, R[ia] @ Xa.translation + p[ia]
                Rb, pb = R[ib] @ Xb.rotation, R[ib] @ Xb.translation + p[ib]
                Xa = Xa @ Transform(Ra.T @ Rb, Ra.T @ (pb - pa))
            else:
                Xa = Xa @ Transform(quat_to_matrix(rel[3:] / np.linalg.norm(rel[3:])), rel[:3])
    if ia == ib:
        raise reader.err(f"<{e.tag}>: both sides are on the same body", e)
    joint = Spherical() if e.tag == "connect" else Fixed()
    try:
        k = model.add_loop_closure(ia, ib, joint, placement_a=Xa, placement_b=Xb, q=q0, active=active)
    except ValueError as ex:
        raise reader.err(f"<{e.tag}>: {ex}", e) from None
    _soft(reader, model, e, a, "loop", k)


def _coupling(reader, model, e, a, q0, active):
    n = "joint" if e.tag == "joint" else "tendon"
    if f"{n}1" not in a:
        raise reader.err(f"<{e.tag}> has no {n}1", e)
    poly = reader.vec(e, "polycoef", 5, a, (0, 1, 0, 0, 0))

    def terms(name):
        if n == "joint":
            if name not in model._joint_index:  # (a moving joint; joint_names is a new list per call)
                raise reader.err(f"<joint>: no joint named {name!r}", e)
            return {name: 1.0}
        if name not in reader.tendons:
            raise reader.err(f"<tendon>: no fixed tendon named {name!r}", e)
        t = reader.tendons[name]
        if t is None:
            raise reader.err(f"<tendon>: tendon {name!r} is spatial; treedyn couples fixed tendons only", e)
        return t

    leader = terms(a[f"{n}2"]) if f"{n}2" in a else None
    try:
        k = model.add_coupling(terms(a[f"{n}1"]), leader, poly, reference=q0, active=active)
    except ValueError as ex:
        raise reader.err(f"<{e.tag}>: {ex}", e) from None
    _soft(reader, model, e, a, "coupling", k)


def _soft(reader, model, e, a, kind: str, k: int) -> None:
    """The equality's solref/solimp (its class's, MuJoCo's defaults where none, read as a geom's are):
    a soft equality."""
    from .collision import softness

    soft = softness(reader, e, a, ("solref", "solimp"))
    try:
        model.set_constraint_softness(kind, k, soft.get("solref"), soft.get("solimp"))
    except ValueError as ex:
        raise reader.err(f"<{e.tag}>: {ex}", e) from None


def fixed_tendons(reader, root) -> dict:
    """{tendon name: {joint name: coef} for a fixed tendon, None for a spatial one}."""
    out = {}
    for sec in [s for s in root if s.tag == "tendon"]:
        for t in sec:
            if t.tag not in ("fixed", "spatial") or not t.get("name"):
                continue
            if t.tag == "spatial":
                out[t.get("name")] = None
                continue
            terms = {}
            for j in t:
                if j.tag == "joint":
                    terms[j.get("joint")] = terms.get(j.get("joint"), 0.0) + reader.num(j, "coef")
            out[t.get("name")] = terms
    return out


def site_poses(reader, root) -> dict:
    """{site name: (MuJoCo body name, the site's pose in that body's frame)}, through <frame>s."""
    out = {}
    stack = [(wb, "world", IDENTITY) for wb in reversed([e for e in root if e.tag == "worldbody"])]
    while stack:  # iterative: a chain of thousands of nested bodies loads
        elem, body, X = stack.pop()
        for e in reversed(list(elem)):
            if e.tag == "frame":
                stack.append((e, body, X @ reader.pose(e)))
            elif e.tag == "site" and e.get("name"):
                out[e.get("name")] = (body, X @ reader.pose(e))
            elif e.tag == "body":
                stack.append((e, reader.body_names.get(id(e), e.get("name")), IDENTITY))
    return out
