"""treedyn's solvers on XLA: ``td.make_solver("aba", model, device="gpu")`` (or ``backend="jax"``).

The same Solver interface as the C++ solvers: numpy arrays in, numpy arrays out; or JAX arrays
in (on the solver's device), JAX arrays out, left on the device. The model is moved to the device
once, when the solver is made. Inputs are checked as the C++ solvers check them, with the same
messages: numpy inputs by the same C++ code; device arrays by one fused test on the device (any
non-finite value, any quaternion off unit norm, a result that overflowed), and only when it fails
are they brought to the host and given to that C++ code for its message."""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np

from .. import _core
from ..solvers.base import Solver
from ..solvers.builtin import _chain_of_1dof_reason
from .aba import aba
from .cfa import cfa
from .crba import crba, crba_cholesky, inverse_inertia
from .device_model import DeviceModel
from .rnea import rnea

__all__ = ["XlaABASolver", "XlaCRBACholeskySolver", "XlaCFASolver", "SOLVERS", "resolve_device"]


def resolve_device(device):
    """A jax.Device from None (JAX's default), "cpu", "gpu"/"cuda", or a jax.Device."""
    if device is None:
        return jax.devices()[0]
    if isinstance(device, jax.Device):
        return device
    if not isinstance(device, str):
        raise TypeError(f"device must be None, 'cpu', 'gpu' or a jax.Device, got {device!r}")
    name = {"cuda": "gpu"}.get(device.lower(), device.lower())
    if name not in ("cpu", "gpu"):
        raise ValueError(f"device must be 'cpu' or 'gpu' (or a jax.Device), got {device!r}")
    try:
        return jax.devices(name)[0]
    except RuntimeError:
        found = sorted({d.platform for d in jax.devices()})
        raise RuntimeError(
            f"device={device!r}: JAX finds no {name.upper()} on this machine (its devices: {', '.join(found)}). "
            "treedyn's XLA backend runs on an NVIDIA GPU with a CUDA build of JAX "
            "(pip install 'treedyn[gpu]' 'jax[cuda13]'); device='cpu' runs the same code on the CPU"
        ) from None


_SAMPLE_SHAPES = {"q": "nq", "v": "nv", "tau": "nv", "a": "nv"}


class XlaSolver(Solver):
    """A treedyn solver whose kernels are JAX functions compiled by XLA for ``device``."""

    backend = "jax"
    thread_safe = True  # no state changes after construction; compiled functions are made under a lock
    capabilities = frozenset({"batch", "inverse_inertia", "float32", "floating_base", "branched", "multi_dof", "f_ext"})
    _kernel = staticmethod(aba)

    def __init__(self, model, dtype=np.float64, device=None, **options):
        super().__init__(model, dtype, **options)  # (unknown options: the TypeError every solver gives)
        self.device = resolve_device(device)
        self.device_model = DeviceModel(model, self.dtype, self.device)
        self._arrays = self.device_model.arrays
        self._compiled: dict = {}
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r} nv={self.model.nv} dtype={self.dtype} device={self.device}>"

    # ----------------------------------------------------------------------------- compiled kernels
    def _function(self, key, make):
        f = self._compiled.get(key)
        if f is None:
            with self._lock:
                f = self._compiled.setdefault(key, make())
        return f

    def _x64(self):
        return jax.enable_x64(self.dtype == np.float64)

    def _run(self, method, kernel, args, batched, fext, checks):
        """kernel(st, A, *args[, f_ext]) compiled for this shape of call, with the device-side test."""
        st = self.device_model.structure
        key = (method, batched, fext is not None and fext.ndim == 3, fext is None)
        quats = _quaternion_slices(self.model)

        def make():
            def one(A, *xs):
                return kernel(st, A, *xs)

            def call(A, xs, f):
                single = (lambda *x: one(A, *x, f)) if f is not None else (lambda *x: one(A, *x))
                if batched:
                    if f is not None and f.ndim == 3:
                        y = jax.vmap(lambda *x: one(A, *x))(*xs, f)
                    else:
                        y = jax.vmap(single)(*xs)
                else:
                    y = single(*xs)
                bad = ~jnp.all(jnp.isfinite(y))
                for x in xs[: len(checks)]:
                    bad = bad | ~jnp.all(jnp.isfinite(x))
                if f is not None:
                    bad = bad | ~jnp.all(jnp.isfinite(f))
                if quats:
                    q = xs[0]
                    norms = jnp.stack([jnp.linalg.norm(q[..., s : s + 4], axis=-1) for s in quats])
                    bad = bad | jnp.any(jnp.abs(norms - 1) > 1e-3)
                return y, bad

            return jax.jit(call)

        return self._function(key, make)(self._arrays, args, fext)

    # ------------------------------------------------------------------------------------ inputs
    def _prepare(self, names, values, f_ext=None):
        """(device arrays, batched, f_ext, came_as_jax) after the C++ solvers' checks."""
        as_jax = any(isinstance(x, jax.Array) for x in values)
        if not as_jax:
            check = _core.check_state32 if self.dtype == np.float32 else _core.check_state
            if names == ("q", "v", "tau"):
                *arrays, batched = check(self.model.core, *values)
            else:  # (q, v, a) or (q,): the same checks under the caller's names
                arrays, batched = _checked_vectors(self, names, values)
            fe = _checked_fext(self.model, f_ext, arrays[0].shape[0] if batched else None, self.dtype)
            # numpy arrays go to the compiled call as they are: it moves them to the device of the
            # model's arrays (one transfer, no separate device_put per argument)
            return arrays, batched, fe, False
        arrays = []
        for name, x in zip(names, values):
            x = jnp.asarray(x)
            n = getattr(self.model, _SAMPLE_SHAPES[name])
            if x.ndim not in (1, 2) or x.shape[-1] != n:
                raise ValueError(
                    f"{name} must have shape ({_SAMPLE_SHAPES[name]},) = ({n},) or (B, {n}), got {tuple(x.shape)}"
                )
            if not jnp.issubdtype(x.dtype, jnp.floating) and not jnp.issubdtype(x.dtype, jnp.integer):
                raise TypeError(f"{name} must be an array of real numbers, got dtype {x.dtype}")
            arrays.append(x.astype(self.dtype))
        batched = arrays[0].ndim == 2
        if any((x.ndim == 2) != batched or (batched and x.shape[0] != arrays[0].shape[0]) for x in arrays):
            shapes = ", ".join(str(tuple(x.shape)) for x in arrays)
            raise ValueError(f"{', '.join(names)} must all be single vectors or batches of the same size, got {shapes}")
        fe = None
        if f_ext is not None:
            _fext_shape(self.model, tuple(jnp.shape(f_ext)), arrays[0].shape[0] if batched else None)
            fe = jnp.asarray(f_ext).astype(self.dtype)
        return arrays, batched, fe, True

    def _finish(self, method, y, bad, raw, names, f_ext, as_jax, out=None):
        if bool(bad):  # the device found something: the host's checks name it
            host = [np.asarray(x) for x in raw]
            if names == ("q", "v", "tau"):
                (_core.check_state32 if self.dtype == np.float32 else _core.check_state)(self.model.core, *host)
            else:
                _checked_vectors(self, names, host)
            _checked_fext(self.model, None if f_ext is None else np.asarray(f_ext), None, self.dtype, shape=False)
            raise ValueError(
                f"{method} overflowed to inf/NaN: the inputs are too large for this precision, or the model is singular"
            )
        if as_jax:
            return y
        result = np.asarray(y)
        if out is not None:
            self.check_out(out, result.shape, **dict(zip(names, raw)))
            np.copyto(out, result)
            return out
        return result

    def _call(self, method, kernel, names, values, f_ext=None, out=None):
        arrays, batched, fe, as_jax = self._prepare(names, values, f_ext)
        if batched and arrays[0].shape[0] == 0:
            width = self.model.nv
            empty = np.zeros((0, width) if method != "mass_matrix" else (0, width, width), self.dtype)
            return jnp.asarray(empty) if as_jax else empty
        with self._x64():
            y, bad = self._run(method, kernel, arrays, batched, fe, names)
        return self._finish(method, y, bad, values, names, f_ext, as_jax, out)

    # ------------------------------------------------------------------------------- the methods
    def forward_dynamics(self, q, v, tau, f_ext=None, *, out=None):
        return self._call("forward dynamics", type(self)._kernel, ("q", "v", "tau"), (q, v, tau), f_ext, out)

    def inverse_dynamics(self, q, v, a, f_ext=None):
        """τ = M(q) a + c(q, v) − τ_p − Σ Jᵀ f_ext by RNEA (td.rnea's), computed on the device."""
        return self._call("inverse dynamics", rnea, ("q", "v", "a"), (q, v, a), f_ext)

    def mass_matrix(self, q):
        """M(q) by CRBA (nv, nv), or (B, nv, nv) for a batch, computed on the device."""
        return self._call("mass_matrix", crba, ("q",), (q,))

    def inverse_inertia(self, q, R, *, out=None):
        """M(q)⁻¹ R for R (nv,) or (nv, m), one configuration, by M's Cholesky factor."""
        R_host = R
        if not isinstance(R, jax.Array):
            R = np.asarray(R, dtype=float)
        if R.ndim not in (1, 2) or R.shape[0] != self.model.nv:  # (a JAX array's shape is known on the host)
            raise ValueError(f"R must have shape (nv,) or (nv, m) with nv = {self.model.nv}, got {tuple(R.shape)}")
        if not isinstance(R, jax.Array) and not np.all(np.isfinite(R)):
            raise ValueError("R must be finite (no NaN or inf)")
        (qd,), batched, _, as_jax = self._prepare(("q",), (q,))
        if batched:
            raise ValueError(f"inverse_inertia takes one configuration q of shape ({self.model.nq},), got {qd.shape}")
        with self._x64():
            Rd = R.astype(self.dtype) if isinstance(R, jax.Array) else np.asarray(R, self.dtype)
            y, bad = self._run("inverse_inertia", inverse_inertia, [qd, Rd], False, None, ("q",))
        return self._finish("inverse_inertia", y, bad, (q,), ("q",), None, as_jax or isinstance(R_host, jax.Array), out)


def _quaternion_slices(model):
    """Where each quaternion starts in q (spherical: at its first coordinate; free: after p)."""
    kinds, qi = model.core.kind, model.core.q_index
    return [qi[i] + (3 if k == 5 else 0) for i, k in enumerate(kinds) if k in (4, 5)]


def _checked_vectors(solver, names, values):
    """The C++ checks of (q, v, a) or (q,) with the caller's names (check_state with stand-ins)."""
    core = solver.model.core
    check = _core.check_state32 if solver.dtype == np.float32 else _core.check_state
    if names == ("q",):
        q = values[0]
        q_arr = np.asarray(q) if not isinstance(q, np.ndarray) else q
        zeros = np.zeros(q_arr.shape[:-1] + (core.nv,)) if q_arr.ndim in (1, 2) else np.zeros(core.nv)
        *arrays, batched = check(core, q, zeros, zeros)
        return arrays[:1], batched
    try:
        *arrays, batched = check(core, *values)
    except ValueError as e:  # the message names tau: the third argument is called a here
        raise ValueError(str(e).replace("tau", names[2])) from None
    except TypeError as e:
        raise TypeError(str(e).replace("tau", names[2])) from None
    return arrays, batched


def _fext_shape(model, shape, B):
    n = model.n_bodies
    ok = shape == ((B, n, 6) if B is not None else (n, 6))
    if not ok:
        want = f"(B, n_bodies, 6) with B = {B} and" if B is not None else "(n_bodies, 6) with"
        raise ValueError(f"f_ext must have shape {want} n_bodies = {n} (row 0, the world, is ignored), got {shape}")


def _checked_fext(model, f_ext, B, dtype, shape=True):
    if f_ext is None:
        return None
    f = np.asarray(f_ext)
    if not (np.issubdtype(f.dtype, np.floating) or np.issubdtype(f.dtype, np.integer)):
        raise TypeError(f"f_ext must be an array of real numbers, got dtype {f.dtype}")
    if shape:
        _fext_shape(model, f.shape, B)
    if not np.all(np.isfinite(f)):
        raise ValueError("f_ext must be finite (no NaN or inf)")
    return np.array(f, dtype=dtype)


class XlaABASolver(XlaSolver):
    """Featherstone's articulated-body algorithm on XLA (treedyn.xla.aba): three passes over the
    tree's levels, each level one vectorised step; a batch by ``jax.vmap``."""

    name = "aba"
    description = "articulated-body algorithm on XLA (JAX; CPU or GPU)"


class XlaCRBACholeskySolver(XlaSolver):
    """M(q) by CRBA and a dense Cholesky solve on XLA (treedyn.xla.crba): the bias by RNEA."""

    name = "crba-cholesky"
    description = "CRBA + dense Cholesky on XLA (JAX; CPU or GPU)"
    _kernel = staticmethod(crba_cholesky)


class XlaCFASolver(XlaSolver):
    """yang-wu-pan's per-robot parallel scheme on XLA (treedyn.xla.cfa): the constraint force
    algorithm with odd–even elimination, and RNEA's propagations as parallel scans; unbranched
    chains of 1-DoF joints fixed to the world, without armature (as the C++ ``cfa-oee``)."""

    name = "cfa-oee"
    description = "constraint force algorithm with odd-even elimination and scans on XLA (JAX; CPU or GPU), chains"
    capabilities = frozenset({"batch", "inverse_inertia", "float32", "f_ext"})
    _kernel = staticmethod(cfa)

    @classmethod
    def supports(cls, model):
        if model.armature.any():
            return f"{cls.name} does not take armature (rotor inertia, set_joint_armature); use aba"
        return _chain_of_1dof_reason(model, cls.name)

    def __init__(self, model, dtype=np.float64, device=None, **options):
        super().__init__(model, dtype, device, **options)
        if "J_inv" not in self._arrays:
            singular = next(
                name
                for i, name in enumerate(model.body_names[1:], 1)
                if np.any(np.linalg.eigvalsh(model.core.spatial_inertia(i)) <= 0)
            )
            raise ValueError(f"cfa: body {singular!r} has a singular spatial inertia (CFA needs J_i⁻¹)")


#: the XLA backend's solvers by name
SOLVERS = {cls.name: cls for cls in (XlaABASolver, XlaCRBACholeskySolver, XlaCFASolver)}
