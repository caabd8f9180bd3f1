"""The one place where a model meets C++: the frozen ``_core.Model`` the kernels run on, the C++
systems of its constraints and RedMax terms. (The way back, a model pickled as what it is made of
and rebuilt body by body, is Model's own: tree.py.) ``CoreMixin`` is one of Model's bases."""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .. import _core
from .cache import cached


class CoreMixin:
    """Model's copy into C++ and back."""

    @property
    def core(self) -> _core.Model:
        """The C++ model (treedyn._core.Model) the kernels and solver engines run on: the one
        accessor for code that hands the model to C++; read it, never modify it."""
        return self._cpp

    def body_poses(self, q=None):
        """World rotation (n_bodies, 3, 3) and origin (n_bodies, 3) of every body frame at q
        (default: the neutral configuration): treedyn.forward_kinematics."""
        return _core.forward_kinematics(self._cpp, _core.neutral(self._cpp) if q is None else q)

    def _reference_q(self) -> np.ndarray:
        return _core.neutral(self._cpp) if self.reference_configuration is None else self.reference_configuration

    def _constraint_system(self):
        """The C++ RedMax system of the tree and its active constraints only (what C(q), G and
        Ġq̇ need), made once per revision of the model (model/cache.py)."""
        return cached(self, None, _constraint_system)

    def _loop_system(self, keep=None):
        """A new C++ RedMax system of the tree and its active loop closures and couplings; keep: a
        set of ("loop", i) and ("coupling", i) to take only those (model/constraint_checks.py)."""
        sys = _core.RedMaxSystem(self._cpp)
        for i, c in enumerate(self._loops):
            if c.active and (keep is None or ("loop", i) in keep):
                sys.add_loop(
                    c.body_a,
                    c.placement_a.rotation,
                    c.placement_a.translation,
                    c.body_b,
                    c.placement_b.rotation,
                    c.placement_b.translation,
                    c.kind,
                    c.axis,
                    c.axis2,
                )
        for i, c in enumerate(self._couplings):
            if c.active and (keep is None or ("coupling", i) in keep):
                sys.add_coupling(
                    [i for i, _ in c.follower],
                    [x for _, x in c.follower],
                    [i for i, _ in c.leader],
                    [x for _, x in c.leader],
                    list(c.polycoef),
                    c.y0,
                    c.x0,
                )
        return sys

    def _push_passive(self) -> None:
        """The joints' armature and springs (set_joint_armature, set_joint_spring) into the C++
        model, whole: every solver made from it (model/cache.py) sees them. Inside
        ``_passive_batch()`` (the file loaders, setting them joint by joint) once, at its end."""
        if self.__dict__.get("_passive_deferred"):
            return
        cpp = self._cpp
        armature, stiffness, damping = np.zeros(cpp.nv), np.zeros(cpp.nv), np.zeros(cpp.nv)
        rest = _core.neutral(cpp)
        q_start, v_start = self._q_start, self._v_start  # (the core's vectors copy whole on each read)
        for i, a in self._joint_armature.items():
            armature[v_start[i] : v_start[i] + len(a)] = a
        for i, (k, d, r) in self._joint_springs.items():
            vi, qi = v_start[i], q_start[i]
            stiffness[vi : vi + len(k)], damping[vi : vi + len(d)], rest[qi : qi + len(r)] = k, d, r
        cpp.set_passive(armature, stiffness, damping, rest)

    @contextmanager
    def _passive_batch(self):
        """Joint springs and armatures set inside are pushed to the C++ model once, at the end
        (each push is O(n): one per joint made loading a file with damped joints O(n²))."""
        self.__dict__["_passive_deferred"] = True
        try:
            yield
        finally:
            del self.__dict__["_passive_deferred"]
            self._push_passive()

    def _redmax_system(self):
        """The C++ RedMax system: a frozen copy of the tree with its springs (the tree's joint
        springs and armature included), forces and loops."""
        sys = self._loop_system()
        for i, D in self._body_damping.items():
            sys.set_body_damping(i, D)
        for s in self._springs:
            sys.add_spring(s.body_a, s.point_a, s.body_b, s.point_b, s.stiffness, s.damping, s.rest_length)
        for i, x, f in self._point_forces:
            sys.add_point_force(i, x, f)
        for f, segs, T in self._moving_forces:
            sys.add_moving_force(f, [s[0] for s in segs], [s[1] for s in segs], [s[2] for s in segs], T)
        sys.baumgarte = -1.0 if self.baumgarte is None else float(self.baumgarte)
        return sys


def _constraint_system(model, _key):
    return model._loop_system()
