"""MJCF ``<sensor>`` onto the model (Model.add_sensor): the sites the sensors read become named
frames (``model.frames``; a site named as a body or another frame keeps its name with " (site)"
after it), a touch sensor's site its zone; the kinds treedyn has (treedyn.model.sensors) are read,
the others noted once each (IgnoredElementWarning). ``noise`` is not drawn (MuJoCo draws none in
its step either); ``cutoff`` clamps as MuJoCo's does."""

from __future__ import annotations

import numpy as np

from ...model.sensors import SENSOR_KINDS
from ...model.spatial import Transform
from .._tree import IDENTITY
from .collision import _PRIMITIVES, _size_and_pose

__all__ = ["read_sensors"]

_SITE_KINDS = {"gyro", "velocimeter", "accelerometer", "touch", "force", "torque"}
_SUBTREE = {"subtreecom", "subtreelinvel", "subtreeangmom"}
_ZONES = ("sphere", "capsule", "box", "cylinder", "ellipsoid")


def read_sensors(r, root, model) -> None:
    """Every ``<sensor>`` section's sensors, in file order (MuJoCo's sensordata order)."""
    sections = [e for e in root if e.tag == "sensor"]
    if not sections:
        return
    sites = _sites(r, root)
    frames = model.frames  # (MuJoCo's bodies by name: their treedyn body and pose)
    named = {}  # site name -> the frame made for it
    for e in (s for sec in sections for s in sec):
        a = r.attrs(e, e.get("class", "main"))
        kind = e.tag
        name = a.get("name")
        if kind not in SENSOR_KINDS:
            r.ignored.note(f"sensor <{kind}> is not modelled")
            continue
        zone = None
        if kind in ("jointpos", "jointvel"):
            target = a.get("joint")
            if target not in model.joint_names:
                raise r.err(f"<{kind}>: no joint named {target!r}", e)
        elif kind in _SITE_KINDS:
            target, zone = _site(r, e, model, sites, named, a.get("site"), kind == "touch")
        elif kind in _SUBTREE:
            target = a.get("body")
            if target not in frames:
                raise r.err(f"<{kind}>: no body named {target!r}", e)
            target = model.body_names[model.body_index(frames[target][0])]
        else:  # a frame sensor: objtype site, xbody (the body's frame), body (its centre of mass), geom
            objtype, objname = a.get("objtype"), a.get("objname")
            if a.get("reftype") or a.get("refname"):
                r.ignored.note("a frame sensor's reftype/refname (readings relative to another frame) is not modelled")
                continue
            if objtype == "site":
                target, _ = _site(r, e, model, sites, named, objname, False)
            elif objtype in ("xbody", "body"):
                if objname not in frames:
                    raise r.err(f"<{kind}>: no body named {objname!r}", e)
                if objtype == "body":  # (its inertial frame: the centre of mass; its principal axes are not kept)
                    if kind not in ("framepos", "framelinvel", "frameangvel", "framelinacc", "frameangacc"):
                        r.ignored.note(f'<{kind} objtype="body">: the inertial frame\'s axes are not kept')
                        continue
                    target = _com_frame(model, frames, objname)
                else:
                    target = _frame(model, f"{objname} (body)", *frames[objname], objname)
            else:
                r.ignored.note(f"a frame sensor of objtype {objtype!r} is not modelled")
                continue
        try:
            model.add_sensor(kind, target, name, zone=zone, cutoff=r.num(e, "cutoff", a, 0.0))
        except (ValueError, TypeError) as ex:
            raise r.err(f"<{kind}>: {ex}", e) from None


def _frame(model, name: str, body: str, pose, wanted: str) -> str:
    """A named frame at (body, pose): ``wanted`` itself where free or already that frame, else ``name``."""
    frames = model.frames
    for n in (wanted, name):
        if n in frames and frames[n][0] == body and np.allclose(frames[n][1].as_matrix(), pose.as_matrix()):
            return n
        if n not in frames and n not in model.body_names:
            model.add_frame(n, body, pose)
            return n
    raise ValueError(f"a frame named {name!r} exists elsewhere")


def _com_frame(model, frames, objname: str) -> str:
    body, X = frames[objname]
    c = model.inertias[model.body_index(body)].com
    return _frame(model, f"{objname} (com)", body, Transform(np.eye(3), c), f"{objname} (com)")


def _site(r, e, model, sites, named, site, touch: bool):
    """(frame name, zone) of site ``site``: the frame made for it (once), its shape for a touch."""
    if site not in sites:
        raise r.err(f"<{e.tag}>: no site named {site!r}", e)
    body, pose, kind, size = sites[site]
    frames = model.frames
    if body not in frames:
        raise r.err(f"<{e.tag}>: the site {site!r} is on body {body!r}, which treedyn does not have", e)
    b, X = frames[body]
    if site not in named:
        named[site] = _frame(model, f"{site} (site)", b, X @ pose, site)
    zone = None
    if touch:
        if kind not in _ZONES:
            raise r.err(f"<touch>: site {site!r} of type {kind!r} has no volume", e)
        zone = _PRIMITIVES[kind](size)
    return named[site], zone


def _sites(r, root) -> dict:
    """{site name: (MuJoCo body name, pose in it, type, size)}, through <frame>s and default classes."""
    out = {}
    stack = [(wb, "world", IDENTITY, "main") for wb in reversed([e for e in root if e.tag == "worldbody"])]
    while stack:
        elem, body, X, cls = stack.pop()
        for e in reversed(list(elem)):
            if e.tag == "frame":
                stack.append((e, body, X @ r.pose(e), e.get("childclass", cls)))
            elif e.tag == "body":
                stack.append((e, r.body_names.get(id(e), e.get("name")), IDENTITY, e.get("childclass", cls)))
            elif e.tag == "site" and e.get("name"):
                a = r.attrs(e, cls)
                kind = a.get("type", "sphere")
                a.setdefault("size", "0.005 0.005 0.005")
                size, pose = _size_and_pose(r, e, a, kind, body) if kind in _ZONES else (None, r.pose(e, a))
                out[e.get("name")] = (body, X @ pose, kind, size)
    return out
