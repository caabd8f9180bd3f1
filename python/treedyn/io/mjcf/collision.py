"""The collision geoms of a body (its ``<geom>``s that collide), and the ``<contact>`` pass: body
pairs excluded, explicit geom pairs, and ``<option><flag contact="disable"/>``, by MuJoCo's rules
(docs/contact.md)."""

from __future__ import annotations

import numpy as np

from ...model import Transform
from ...model.shapes import DEFAULT_SOLIMP, Box, Capsule, Cylinder, Ellipsoid, Plane, Sphere
from .._common import z_to_vector
from .._xml import ModelFileError
from .meshes import mesh_hull

__all__ = ["collision_geoms", "read_contact"]

_KINDS = ("sphere", "capsule", "box", "plane", "cylinder", "ellipsoid", "mesh")


def collision_geoms(r, contents, body):
    """The body's geoms that collide (contype or conaffinity non-zero) as (shape, pose in the body
    frame, add_geom keywords): sphere, capsule, box, plane, cylinder, ellipsoid and mesh (by its
    convex hull). Those treedyn cannot collide (hfield, sdf, a primitive fitted to a mesh, a mesh it
    cannot read or whose points span no volume) are
    recorded in r.dropped_geoms, which read_contact puts on the model. The geoms that only show
    (contype and conaffinity 0) are kept in r.visual_geoms[body] as (shape, pose, add_visual
    keywords), a mesh as its surface (TriangleMesh), for td.view."""
    out = []
    dropped = r.__dict__.setdefault("dropped_geoms", [])
    visuals = r.__dict__.setdefault("visual_geoms", {}).setdefault(body, [])
    for _, g, X, cls in (c for c in contents if c[0] == "geom"):
        r.current = g
        a = r.attrs(g, cls)
        kind = a.get("type", "sphere")
        masks = []
        for key in ("contype", "conaffinity"):
            x = r.num(g, key, a, 1)
            if not (0 <= x < 2**31 and x == int(x)):
                raise r.err(f"geom of body {body!r}: {key}={a.get(key)!r} is not a non-negative integer", g)
            masks.append(int(x))
        contype, conaffinity = masks
        if contype == 0 and conaffinity == 0:
            shown = _visual(r, g, a, kind, body)
            if shown is not None:
                visuals.append((shown[0], X @ shown[1], shown[2]))
            continue
        label = f"{kind} geom {a['name']!r}" if a.get("name") else f"a {kind} geom"
        if kind not in _KINDS or (kind != "mesh" and "mesh" in a):
            why = "a primitive fitted to a mesh" if kind in _KINDS else f"type {kind!r}"
            dropped.append(f"{label} of body {body!r} ({why}: not a collision shape treedyn has)")
            continue
        size, pose = _size_and_pose(r, g, a, kind, body)
        if kind == "mesh":  # a mesh treedyn cannot read or hull is dropped, not an error: the
            # load goes on (its inertia, where a body needs it, still reads the file and says why)
            try:
                shape = mesh_hull(r, g, a, f"mesh geom of body {body!r}")
            except ModelFileError as e:
                dropped.append(f"{label} of body {body!r} ({e})")
                continue
        try:
            shape = shape if kind == "mesh" else _PRIMITIVES[kind](size)
        except (ValueError, TypeError) as e:
            raise r.err(f"{kind} geom of body {body!r}: {e}", g) from None
        r.current = g
        kw = {"friction": _friction(r, g, a, (1.0, 0.005, 0.0001)), "contype": contype}
        kw["conaffinity"] = conaffinity
        kw["condim"] = _condim(r, g, a, label)
        kw["margin"] = r.num(g, "margin", a, 0.0)
        kw["rgba"] = _rgba(r, g, a)
        kw.update(softness(r, g, a, ("solref", "solimp")))
        if "solmix" in a:
            kw["solmix"] = r.num(g, "solmix", a)
        if "priority" in a:
            kw["priority"] = int(r.num(g, "priority", a))
        if kw["margin"] < 0:
            raise r.err(f"{label} of body {body!r}: margin={a['margin']!r} is negative", g)
        if a.get("name"):
            kw["name"] = a["name"]
        out.append((shape, X @ pose, kw))
    return out


# a primitive geom's shape from its size (3 numbers, padded with zeros)
_PRIMITIVES = {
    "sphere": lambda size: Sphere(size[0]),
    "capsule": lambda size: Capsule(size[0], size[1]),
    "box": lambda size: Box(size),
    "plane": lambda size: Plane(),
    "cylinder": lambda size: Cylinder(size[0], size[1]),
    "ellipsoid": lambda size: Ellipsoid(size),
}


def _size_and_pose(r, g, a, kind, body):
    """A geom's size (3 numbers) and pose in its frame's parent: its size and pos/orientation, or,
    given fromto, the segment's: centred on it, z along it, half its length (box, ellipsoid: the
    two transverse sizes are size[0], as MuJoCo does; io/mjcf/inertia.py)."""
    size, pose = r.size3(g, a), r.pose(g, a)
    if "fromto" in a and kind in ("capsule", "box", "cylinder", "ellipsoid"):
        ft = r.vec(g, "fromto", 6, a)
        d = ft[3:] - ft[:3]
        L = float(np.linalg.norm(d))
        if L < 1e-12:
            raise r.err(f"geom of body {body!r}: fromto has zero length", g)
        pose = Transform(z_to_vector(d), 0.5 * (ft[:3] + ft[3:]))
        size = (
            np.array([size[0], 0.5 * L, 0.0]) if kind in ("capsule", "cylinder") else np.r_[size[0], size[0], 0.5 * L]
        )
    return size, pose


def _visual(r, g, a, kind, body):
    """(shape, pose in its frame's parent, add_visual keywords) of a geom that only shows; None for
    what treedyn cannot draw (a plane, an hfield, a mesh it cannot read)."""
    from ...model.shapes import TriangleMesh
    from .meshes import mesh_surface

    if kind not in _KINDS or kind == "plane":
        return None
    try:
        size, pose = _size_and_pose(r, g, a, kind, body)
        if kind == "mesh":
            shape = TriangleMesh(*mesh_surface(r, g, a, f"mesh geom of body {body!r}"))
        else:
            shape = _PRIMITIVES[kind](size)
    except (ValueError, TypeError, ModelFileError):
        return None  # (a visual treedyn cannot make is not drawn; it is no part of the dynamics)
    kw = {"rgba": _rgba(r, g, a)}
    if a.get("name"):
        kw["name"] = a["name"]
    return shape, pose, kw


def _rgba(r, g, a):
    """A geom's colour: its rgba, else its material's; None (the viewer's colour)."""
    rgba = r.vec(g, "rgba", 4, a) if "rgba" in a else r.materials.get(a.get("material"))
    return None if rgba is None else tuple(float(x) for x in np.clip(rgba, 0, 1))


def _condim(r, e, a, label):
    """MuJoCo's condim (1, 3, 4, 6; default 3)."""
    raw = a.get("condim", "3").strip()
    if raw not in ("1", "3", "4", "6"):
        raise r.err(f"{label}: condim={raw!r} must be 1, 3, 4 or 6", e)
    return int(raw)


def _friction(r, e, a, default) -> tuple:
    """An element's friction numbers, those it leaves out MuJoCo's ``default``; a negative one refused."""
    x = r.vec(e, "friction", None, a) if "friction" in a else np.zeros(0)
    if len(x) > len(default):
        raise r.err(f"friction={a['friction']!r}: at most {len(default)} numbers", e)
    if np.any(x < 0):
        raise r.err(f"friction={a['friction']!r} is negative", e)
    return tuple(float(v) for v in x) + default[len(x) :]


def softness(r, e, a, keys) -> dict:
    """The soft-constraint attributes ``keys`` (a solref's and a solimp's name) given to element e
    (or its class) as {"solref": ..., "solimp": ...}, as MuJoCo keeps them (it bounds them at use,
    as the step does); a short solimp completed by MuJoCo's defaults."""
    out = {}
    if keys[0] in a:
        x = r.vec(e, keys[0], 2, a)
        if (x[0] > 0) != (x[1] > 0):  # (MuJoCo warns and takes its default)
            r.ignored.note(f"{keys[0]}={a[keys[0]]!r} mixes a time constant and a damping: MuJoCo's default used")
        else:
            out["solref"] = x
    if keys[1] in a:
        x = r.vec(e, keys[1], None, a)
        out["solimp"] = np.r_[x, DEFAULT_SOLIMP[len(x) :]][:5]
    return out


def read_contact(r, root, model):
    """<contact>'s <exclude body1 body2> and <pair geom1 geom2 condim friction margin> onto the
    model (Model.exclude_contact, Model.add_contact_pair), <option><flag contact="disable"/> (or
    constraint="disable") as model.contact_enabled, and the collision shapes dropped (Model.dropped_geoms)."""
    for why in r.__dict__.get("dropped_geoms", []):
        model._drop_geom(why)
    for opt in (e for e in root if e.tag == "option"):
        for flag in (f for f in opt if f.tag == "flag"):
            # constraint="disable" switches off every constraint, contacts included (MuJoCo's
            # mjDSBL_CONSTRAINT: no collision detection); treedyn's equalities stay (documented)
            if "disable" in (flag.get("contact", "enable"), flag.get("constraint", "enable")):
                model.contact_enabled = False
        if opt.get("impratio") is not None:
            model.impratio = r.num(opt, "impratio")
        if opt.get("integrator") is not None:
            kind = opt.get("integrator").lower()
            if kind not in ("euler", "rk4", "implicit", "implicitfast"):
                raise r.err(
                    f"<option integrator={opt.get('integrator')!r}>: MuJoCo's are Euler, RK4, implicit, implicitfast",
                    opt,
                )
            model.integrator = {"rk4": "rk4", "euler": "semi-implicit"}.get(kind, kind)
        if opt.get("cone") is not None:
            if opt.get("cone") not in ("pyramidal", "elliptic"):
                raise r.err(f"<option cone={opt.get('cone')!r}>: must be pyramidal or elliptic", opt)
            model.friction_cone = opt.get("cone")
    model.soft_constraints = True  # (MuJoCo's constraint model: ContactSimulator's default for this model)
    frames, geom_names = model.frames, {g.name for g in model.geoms}  # (copies: made once, not per element)
    for sec in (e for e in root if e.tag == "contact"):
        for e in (e for e in sec if isinstance(e.tag, str)):
            r.current = e
            if e.tag == "exclude":
                bodies = [_body(r, model, frames, e, k) for k in ("body1", "body2")]
                if bodies[0] != bodies[1]:  # (merged into one body: never collide anyway)
                    model.exclude_contact(*bodies)
            elif e.tag == "pair":
                a = r.attrs(e, e.get("class", "main"))
                geoms = []
                for k in ("geom1", "geom2"):
                    if a.get(k) not in geom_names:
                        raise r.err(f"<pair {k}={a.get(k)!r}>: no collision geom of that name", e)
                    geoms.append(a[k])
                kw = {"condim": _condim(r, e, a, "<pair>") if "condim" in a else None}
                if "friction" in a:  # (MuJoCo's five: sliding twice, torsional, rolling twice)
                    f = _friction(r, e, a, (1.0, 1.0, 0.005, 0.0001, 0.0001))
                    kw["friction"] = (f[0], f[2], f[3])
                kw["margin"] = r.num(e, "margin", a) if "margin" in a else None
                kw.update(softness(r, e, a, ("solref", "solimp")))
                try:
                    model.add_contact_pair(*geoms, **kw)
                except ValueError as ex:
                    raise r.err(f"<pair>: {ex}", e) from None
            else:
                r.ignored.add(f"contact/{e.tag}")


def _body(r, model, frames, e, key):
    """The treedyn body an MJCF body name went to (its own, or the one it was merged into)."""
    name = e.get(key)
    if name is None:
        raise r.err(f"<exclude> needs {key}", e)
    if name == "world":
        return 0
    if name not in frames:
        raise r.err(f"<exclude {key}={name!r}>: no such body", e)
    return model.body_index(frames[name][0])
