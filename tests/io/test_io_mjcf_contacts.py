"""The shipped MJCF models of gymnasium and dm_control (the wheels tests/io/test_io_public_models.py
fetches): treedyn finds the same touching geom pairs as MuJoCo's mj_forward (data.contact geom1,
geom2) at the file's pose (MuJoCo's qpos0) and with the root lowered until something touches the
floor, with each file's filters (the parent filter, masks, <contact> exclude and pair, the contact
flag) and margins. MuJoCo's geoms are matched to treedyn's in order (both number them body by body
in file order; the ones treedyn keeps are those that collide), checked by name and type."""

import os
import warnings

import numpy as np
import pytest
from test_io_public_models import DM_CONTROL, GYMNASIUM

import treedyn as td
from treedyn.model.shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere
from treedyn.sim.collision import collision_pairs

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("coal")

MODELS = [("gymnasium", m) for m in GYMNASIUM] + [("dm_control", m) for m in DM_CONTROL if m != "lqr"]
_TYPES = {0: Plane, 2: Sphere, 3: Capsule, 4: Ellipsoid, 5: Cylinder, 6: Box, 7: ConvexMesh}
#: pairs within this of the touching distance (MuJoCo's margin) may be found by one side only
#: (MuJoCo's closed forms and treedyn's round differently there, and coal's GJK stops at 1e-6)
TOUCH_TOL = 1e-5


def _geom_map(m, model):
    """treedyn geom index of each MuJoCo geom that collides (others: -1), checked by name and type."""
    out, k = np.full(m.ngeom, -1), 0
    for g in range(m.ngeom):
        if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:
            continue
        if m.geom_type[g] not in _TYPES:
            continue  # hfield, sdf: recorded as dropped by treedyn
        geom = model.geoms[k]
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g)
        assert isinstance(geom.shape, _TYPES[m.geom_type[g]]), (name, geom)
        if name:
            assert geom.name == name
        out[g], k = k, k + 1
    assert k == len(model.geoms)
    return out


def _mujoco_pairs(m, d, gmap):
    """MuJoCo's touching pairs {(i, j)} in treedyn indices, and {pair: dist − margin} of all."""
    mujoco.mj_forward(m, d)
    found = {}
    for c in d.contact[: d.ncon]:
        if gmap[c.geom1] < 0 or gmap[c.geom2] < 0:
            continue  # an hfield: dropped by treedyn (model.dropped_geoms)
        i, j = sorted((int(gmap[c.geom1]), int(gmap[c.geom2])))
        found[(i, j)] = min(found.get((i, j), np.inf), c.dist - c.includemargin)
    return found


def _treedyn_pairs(model, q):
    c = td.collide(model, q)
    return {tuple(sorted(map(int, g))) for g in c.geoms}


def _distance(model, q, pair):
    """The deepest depth treedyn finds for a pair (checking a pair one side misses)."""
    c = td.collide(model, q, pairs=[pair])
    return c.depths.max(initial=-np.inf)


def _compare(model, m, d, gmap, q, what):
    mine = _treedyn_pairs(model, q)
    theirs = _mujoco_pairs(m, d, gmap)
    only_mujoco = {p for p in theirs if p not in mine and theirs[p] < -TOUCH_TOL}
    only_mine = {p for p in mine if p not in theirs and _distance(model, q, p) > TOUCH_TOL}
    name = lambda p: tuple(model.geoms[k].name for k in p)  # noqa: E731
    assert not only_mujoco and not only_mine, (
        f"{what}: only MuJoCo {[name(p) for p in only_mujoco]}, only treedyn {[name(p) for p in only_mine]}"
    )
    return len(theirs)


@pytest.mark.parametrize("package,name", MODELS, ids=[f"{p}-{m}" for p, m in MODELS])
def test_touching_pairs_agree_with_mujoco(public_models, package, name, tmp_path, monkeypatch):  # noqa: F811
    from treedyn.tools.peers import MujocoFromFile

    monkeypatch.chdir(tmp_path)
    path = os.path.join(public_models[package], f"{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = td.Model.from_mjcf(path)
    peer = MujocoFromFile(model, path)  # (its coordinates; its MjModel has contact switched off)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    gmap = _geom_map(m, model)
    q, _ = peer.from_peer(m.qpos0.copy(), np.zeros(m.nv))
    _compare(model, m, d, gmap, q, f"{name} at qpos0")
    # the root lowered: a free root (or a vertical slide "rootz") sinks until MuJoCo finds contacts
    # with the world's geoms, then 5 mm more
    qpos = m.qpos0.copy()
    z = _root_height_index(m)
    if z is None:
        return
    for _ in range(60):
        d.qpos[:] = qpos
        mujoco.mj_forward(m, d)
        world = [c for c in d.contact[: d.ncon] if 0 in (m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2])]
        if world:
            break
        qpos[z] -= 0.02
    qpos[z] -= 0.005
    d.qpos[:] = qpos
    q, _ = peer.from_peer(qpos, np.zeros(m.nv))
    _compare(model, m, d, gmap, q, f"{name} lowered")


def _root_height_index(m):
    """qpos index of the root's height: a free joint's z, or a slide joint along z on a top body."""
    for j in range(m.njnt):
        if m.jnt_bodyid[j] and m.body_parentid[m.jnt_bodyid[j]] == 0:
            if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
                return int(m.jnt_qposadr[j]) + 2
            if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE and abs(m.jnt_axis[j][2]) > 0.99:
                return int(m.jnt_qposadr[j])
    return None


def test_parent_filter_on_the_humanoids(public_models):  # noqa: F811
    """MuJoCo's parent filter: a body never collides with its file parent, through treedyn's
    chains of joint-only bodies ("<body>#<joint>") and merged jointless bodies: no candidate pair
    of Gymnasium's humanoid or dm_control's humanoid_CMU joins a body to its MuJoCo parent."""
    for package, name in (("gymnasium", "humanoid"), ("dm_control", "humanoid_CMU")):
        path = os.path.join(public_models[package], f"{name}.xml")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = td.Model.from_mjcf(path)
        m = mujoco.MjModel.from_xml_path(path)
        gmap = _geom_map(m, model)
        inverse = {int(k): g for g, k in enumerate(gmap) if k >= 0}
        weld = m.body_weldid
        for i, j in collision_pairs(model):
            if (i, j) in {(c.geom1, c.geom2) for c in model.contact_pairs}:
                continue
            b1, b2 = (weld[m.geom_bodyid[inverse[k]]] for k in (i, j))
            assert b1 != b2
            if b1 and b2:
                assert weld[m.body_parentid[b1]] != b2 and weld[m.body_parentid[b2]] != b1, (name, i, j)
