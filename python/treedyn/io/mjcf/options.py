"""The ``<compiler>`` and ``<option>`` passes: the settings the other passes read from the Reader
(angle unit, Euler sequence, inertia from geoms, bounds on masses and inertias, autolimits, the
mesh folder) and the gravity."""

from __future__ import annotations

import numpy as np

__all__ = ["read_compiler", "gravity", "fluid", "timestep"]


def read_compiler(r, root):
    """The <compiler> attributes (of every <compiler>, later ones winning) into the Reader."""
    c = {}
    for e in root.iter("compiler"):
        c.update(e.attrib)
    elem = r.current = next(iter(root.iter("compiler")), root)
    angle = c.get("angle", "degree")
    if angle not in ("degree", "radian"):
        raise r.err(f"<compiler angle={angle!r}>: must be 'degree' or 'radian'", elem)
    r.deg = angle == "degree"
    r.eulerseq = c.get("eulerseq", "xyz")
    if len(r.eulerseq) != 3 or any(ch not in "xyzXYZ" for ch in r.eulerseq):
        raise r.err(f"<compiler eulerseq={r.eulerseq!r}>: three letters among x, y, z, X, Y, Z", elem)
    r.fromgeom = c.get("inertiafromgeom", "auto")
    if r.fromgeom not in ("auto", "true", "false"):
        raise r.err(f"<compiler inertiafromgeom={r.fromgeom!r}>: must be auto, true or false", elem)
    rng = c.get("inertiagrouprange", "0 5").split()
    try:
        if len(rng) != 2 or not all(t.lstrip("+-").isascii() and t.lstrip("+-").isdigit() for t in rng):
            raise ValueError  # (int() also takes "1_0" and non-ASCII digits)
        r.groups = (int(rng[0]), int(rng[1]))
    except ValueError:
        raise r.err(f"<compiler inertiagrouprange={c['inertiagrouprange']!r}>: two integers", elem) from None
    if c.get("coordinate", "local") != "local":
        raise r.err(
            "<compiler coordinate='global'> is not supported (MuJoCo itself removed it); use local coordinates",
            elem,
        )
    # lower bounds on each body's mass and principal moments, and the fix of moments that break the
    # triangle inequality (their mean), as MuJoCo applies them to every body but the world
    r.boundmass = r.num(elem, "boundmass", c, 0.0)
    r.boundinertia = r.num(elem, "boundinertia", c, 0.0)
    r.balanceinertia = c.get("balanceinertia", "false") == "true"
    if c.get("alignfree", "false") == "true":
        raise r.err("<compiler alignfree='true'> is not supported", elem)
    r.totalmass = r.num(elem, "settotalmass", c, -1.0)
    r.autolimits = c.get("autolimits", "true")  # MuJoCo's default since 2.2.2
    if r.autolimits not in ("true", "false"):
        raise r.err(f"<compiler autolimits={r.autolimits!r}>: must be 'true' or 'false'", elem)
    # mesh files: meshdir, else assetdir, relative to the main file's folder (MuJoCo's rule; an
    # <include>d file's meshes too)
    r.meshdir = c.get("meshdir", c.get("assetdir", ""))


def gravity(r, root):
    """<option gravity> (default 0 0 -9.81), zero with <option><flag gravity="disable"/>."""
    g = np.array([0.0, 0.0, -9.81])
    for opt in root.iter("option"):
        r.current = opt
        if opt.get("gravity") is not None:
            g = r.vec(opt, "gravity", 3)
        for flag in opt.iter("flag"):
            if flag.get("gravity") == "disable":
                g = np.zeros(3)
    return g


def fluid(r, root) -> tuple:
    """<option density viscosity wind> (MuJoCo's defaults 0, 0, 0 0 0): the fluid of MuJoCo's inertia-box
    model (model.fluid, contact/fluid.hpp); a geom's fluidshape="ellipsoid" (MuJoCo's other model) is
    noted as stepped by the box."""
    rho, eta, wind = 0.0, 0.0, np.zeros(3)
    for opt in root.iter("option"):
        r.current = opt
        rho = r.num(opt, "density", None, rho)
        eta = r.num(opt, "viscosity", None, eta)
        wind = r.vec(opt, "wind", 3, None, wind)
        if rho < 0 or eta < 0:
            raise r.err("<option density viscosity>: must be >= 0", opt)
    if (rho or eta) and any(g.get("fluidshape", "none") == "ellipsoid" for g in root.iter("geom")):
        r.ignored.note('fluidshape="ellipsoid": MuJoCo\'s ellipsoid fluid model is stepped as its inertia box')
    return rho, eta, tuple(float(x) for x in wind)


def timestep(r, root):
    """<option timestep>, MuJoCo's default 0.002 s where the file gives none; the simulators' default
    step (ContactSimulator's dt)."""
    h = 0.002
    for opt in root.iter("option"):
        r.current = opt
        if opt.get("timestep") is not None:
            h = r.num(opt, "timestep")
            if not h > 0:
                raise r.err(f"<option timestep={opt.get('timestep')!r}>: must be positive", opt)
    return h
