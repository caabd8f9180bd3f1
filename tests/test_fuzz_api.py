"""Property-based fuzzing (hypothesis) of every public entry point of treedyn and of the model loaders.

Random small models (chains and random trees, fixed and floating base, every joint kind, models
without coordinates), arrays in every layout (C, Fortran, negative strides, strided slices,
read-only, big-endian, float32, int, bool, lists; complex, object and strings must be refused),
values (normal, NaN, ±inf, ±1e300, subnormal), batch sizes 0, 1 and 3. The contract checked for
every call:

(a) it returns a finite array of the documented shape and dtype, or raises TypeError / ValueError
    (or a subclass: td.SingularInertiaError, ModelFileError) with a non-empty message; any other
    exception type escapes the test and fails it;
(b) an input in any layout gives the same bits as its C-contiguous float64 copy (the kernels see
    the same numbers; nothing in a kernel depends on the caller's memory layout);
(c) inputs are never modified, and a result never aliases an input;
(d) a batch gives the same bits as its items one by one, and fails when one of its items fails.

Budget: the hypothesis profile (tests/conftest.py) sets max_examples: ``ci`` (default) keeps this
file near a minute on two cores; ``HYPOTHESIS_PROFILE=fuzz pytest tests/test_fuzz_api.py`` runs a
long campaign. A failure prints the minimal example and a ``@reproduce_failure`` blob.
"""

from __future__ import annotations

import functools
import os
import tempfile
import warnings

import numpy as np
import pytest
from conftest import assert_same_solution
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

import treedyn as td
from treedyn.io import ModelFileError
from treedyn.scenes import chain, random_tree
from treedyn.scenes.random_tree import JOINT_KINDS
from treedyn.solvers.registry import list_solver_classes

ALLOWED = (TypeError, ValueError)

#: treedyn's own solvers (a third-party plugin installed by another test is not ours to fuzz)
SOLVERS = sorted(n for n, c in list_solver_classes().items() if c.__module__.startswith("treedyn."))


def _scaled(divisor: int):
    """Settings for a costly property: the profile's budget divided by ``divisor`` (at least 5)."""
    return settings(max_examples=max(5, settings.default.max_examples // divisor))


# ------------------------------------------------------------------ models


@functools.cache
def _model(recipe) -> td.Model:
    """A model from a hashable recipe (built once: the properties never modify models)."""
    kind = recipe[0]
    if kind == "chain":
        _, n, joint, fb = recipe
        return chain(n, joint=joint, floating_base=fb)
    if kind == "tree":
        _, n, seed, joints, fb, branching = recipe
        return random_tree(n, seed, joints=joints, floating_base=fb, branching=branching)
    if kind == "fixed-only":  # bodies but no coordinates: nv = 0
        m = td.Model()
        m.add_body("a", None, td.Fixed())
        m.add_body("b", "a", td.Fixed())
        return m
    return td.Model()  # "empty": the world alone


RECIPES = st.one_of(
    st.tuples(st.just("chain"), st.integers(1, 5), st.sampled_from(["revolute", "prismatic"]), st.booleans()),
    st.tuples(
        st.just("tree"),
        st.integers(1, 6),
        st.integers(0, 30),
        st.lists(st.sampled_from(JOINT_KINDS), min_size=1, max_size=3, unique=True).map(tuple),
        st.booleans(),
        st.sampled_from([0.0, 0.5, 1.0]),
    ),
    st.sampled_from([("fixed-only",), ("empty",)]),
)
models = RECIPES.map(_model)


def _supported(model):
    return [n for n in SOLVERS if list_solver_classes()[n].supports(model) is None]


# ------------------------------------------------------------------ values and layouts

#: values planted in an otherwise valid input: non-finite ones must be refused, huge ones must give
#: a finite result or a ValueError, tiny ones must work
POISON = [None, None, None, np.nan, np.inf, -np.inf, 1e300, -1e300, 1e150, 5e-324, -0.0, 1e-300]

#: layouts with the same float64 values as the C-contiguous array
EXACT = ["C", "F", "neg", "slice", "readonly", ">f8", "list", "tuple"]
#: real dtypes whose values differ (rounded, truncated): compared with their own float64 copy
LOSSY = ["f4", "f2", "i8", "u1", "bool"]
#: dtypes that must be refused with a TypeError
REFUSED = ["complex", "object", "str"]
LAYOUTS = EXACT + LOSSY + REFUSED


def layout(x: np.ndarray, kind: str):
    """``x`` (C-contiguous float64) handed over in layout / dtype ``kind``."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    if kind == "C":
        return x.copy()
    if kind == "F":
        return np.asfortranarray(x)
    if kind == "neg":  # negative strides on every axis
        return np.flip(np.flip(x).copy())
    if kind == "slice":  # every other element of a larger buffer along the last axis
        if x.ndim == 0:
            return x.copy()
        big = np.full(x.shape[:-1] + (2 * x.shape[-1],), -7.0)
        big[..., ::2] = x
        return big[..., ::2]
    if kind == "readonly":
        y = x.copy()
        y.flags.writeable = False
        return y
    if kind == ">f8":
        return x.astype(">f8")
    if kind in ("list", "tuple") and x.size == 0 and x.ndim > 1:
        return x.copy()  # a nested empty list would lose the shape: (0, 3) and (0,) both print []
    if kind == "list":
        return x.tolist()
    if kind == "tuple":
        return tuple(x.tolist()) if x.ndim == 1 else x.tolist()
    if kind in ("f4", "f2"):
        with np.errstate(over="ignore"):
            return x.astype(kind)
    if kind in ("i8", "u1"):
        with np.errstate(invalid="ignore"):  # NaN/inf cast to int: any value, compared with its own copy
            return np.nan_to_num(x, posinf=0, neginf=0).clip(-1e9, 1e9).astype(kind)
    if kind == "bool":
        return x != 0
    if kind == "complex":
        return x.astype(complex)
    if kind == "object":
        return x.astype(object)
    if kind == "str":
        return x.astype(str)
    raise AssertionError(kind)


def reference(x):
    """The C-contiguous float64 copy of an input in a real layout."""
    return np.ascontiguousarray(np.array(x, dtype=np.float64))


def snapshot(x):
    """Everything about an input that a call must leave alone."""
    if isinstance(x, np.ndarray):
        return (x.dtype.str, x.shape, x.strides, x.flags.writeable, x.tobytes())
    return repr(x)


def poisoned(x: np.ndarray, value, index: int) -> np.ndarray:
    x = np.array(x, dtype=np.float64)
    if value is not None and x.size:
        x.flat[index % x.size] = value
    return x


# ------------------------------------------------------------------ the contract


class Raised:
    """The outcome of a call that raised an allowed exception."""

    def __init__(self, exc):
        self.type = type(exc)
        self.message = str(exc)

    def __eq__(self, other):
        return isinstance(other, Raised) and issubclass(self.type, ALLOWED) and issubclass(other.type, ALLOWED)

    def __repr__(self):
        return f"Raised({self.type.__name__}: {self.message[:200]})"


def call(f, *args, **kwargs):
    """f(*args), checking (a) on the way out and (c) for every argument: the result, or Raised
    for a TypeError / ValueError with a message. Any other exception propagates (a failure)."""
    before = [snapshot(a) for a in args] + [snapshot(v) for v in kwargs.values()]
    try:
        out = f(*args, **kwargs)
    except ALLOWED as e:
        assert str(e).strip(), f"{type(e).__name__} without a message"
        out = Raised(e)
    after = [snapshot(a) for a in args] + [snapshot(v) for v in kwargs.values()]
    assert before == after, "an input was modified"
    if isinstance(out, np.ndarray):
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, np.ndarray):
                assert not np.shares_memory(out, a), "the result aliases an input"
    note(f"{getattr(f, '__name__', f)} -> {out!r}"[:400])
    return out


def finite_array(out, shape, dtype=np.float64):
    """(a) for a call that returned: a finite ndarray of the documented shape and dtype."""
    assert isinstance(out, np.ndarray), f"expected an ndarray, got {type(out).__name__}"
    assert out.shape == tuple(shape), f"shape {out.shape}, documented {tuple(shape)}"
    assert out.dtype == np.dtype(dtype), f"dtype {out.dtype}, documented {np.dtype(dtype)}"
    assert np.all(np.isfinite(out)), "a silent non-finite result"


def same(a, b):
    """(b)/(d): two outcomes agree: both raised an allowed exception, or both returned the same bits."""
    if isinstance(a, Raised) or isinstance(b, Raised):
        assert a == b, f"{a!r} but {b!r}"
        return
    assert type(a) is type(b)
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    assert a.shape == b.shape and a.dtype == b.dtype, f"{a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    assert a.tobytes() == b.tobytes(), f"different bits: max |diff| = {np.abs(a - b).max()}"


def expect(out, kinds, args, other_bad=False):
    """What the inputs alone decide: a refused dtype (complex, object, str) must give a TypeError
    and a NaN or inf in a real input (after its conversion to float64) a ValueError. When another
    argument is bad too (a planted value, ``other_bad``), the first one checked wins: any allowed
    exception is right. Returns True when the call had to fail."""
    refused = [k in REFUSED for k in kinds]
    nonfinite = [
        k not in REFUSED and a is not None and not np.all(np.isfinite(reference(a))) for a, k in zip(args, kinds)
    ]
    if any(refused) or any(nonfinite) or other_bad:
        assert isinstance(out, Raised), f"inputs {kinds} (NaN/inf: {nonfinite}) accepted: {out!r}"
    # a lossy conversion (integers, bool) of another argument can make it invalid too (a quaternion
    # cast to integers is no unit quaternion): then the first check wins as well
    lossy = any(k in LOSSY for k in kinds)
    if any(refused) and not any(nonfinite) and not other_bad and not lossy:
        assert issubclass(out.type, TypeError), f"{kinds} input gave {out!r}"
    if any(nonfinite) and not any(refused) and not other_bad:
        assert issubclass(out.type, ValueError), f"NaN/inf gave {out!r}"
    return any(refused) or any(nonfinite) or other_bad


# ------------------------------------------------------------------ inputs of a model


@st.composite
def states(draw, model, batch=None):
    """(q, v, tau) valid for ``model`` (one state, or ``batch`` of them), then perhaps one value
    poisoned; returns also which poison was planted."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    scale = draw(st.sampled_from([1.0, 1e-3, 1e3]))
    n = 1 if batch is None else batch
    q = np.array([td.random_configuration(model, rng) for _ in range(n)]).reshape(n, model.nq)
    v = scale * rng.standard_normal((n, model.nv))
    tau = scale * rng.standard_normal((n, model.nv))
    which = draw(st.sampled_from(["q", "v", "tau"]))
    value = draw(st.sampled_from(POISON))
    index = draw(st.integers(0, 10**6))
    arrays = {"q": q, "v": v, "tau": tau}
    arrays[which] = poisoned(arrays[which], value, index)
    if arrays[which].size == 0:
        value = None  # nothing to poison
    if batch is None:
        arrays = {k: a[0] for k, a in arrays.items()}
    return arrays["q"], arrays["v"], arrays["tau"], value


def _nonfinite(value):
    return value is not None and not np.isfinite(value)


def solver_and_model():
    return models.flatmap(
        lambda m: st.tuples(st.just(m), st.sampled_from(_supported(m)), st.sampled_from([np.float64, np.float32]))
    )


def make(name, model, dtype):
    """A solver, or None when this solver has no kernels in ``dtype`` (a TypeError saying so)."""
    out = call(td.make_solver, name, model, dtype=dtype)
    if isinstance(out, Raised):
        assert out.type is TypeError and "float" in out.message, out
        return None
    return out


# ------------------------------------------------------------------ solvers


@given(solver_and_model(), st.data())
def test_forward_dynamics_single(smd, data):
    model, name, dtype = smd
    s = make(name, model, dtype)
    assume(s is not None)
    q, v, tau, value = data.draw(states(model))
    kinds = [data.draw(st.sampled_from(LAYOUTS), label=f"layout of {x}") for x in ("q", "v", "tau")]
    args = [layout(x, k) for x, k in zip((q, v, tau), kinds)]
    out = call(s.forward_dynamics, *args)
    if expect(out, kinds, args, other_bad=value is not None and any(k in REFUSED for k in kinds)):
        return
    if not isinstance(out, Raised):
        finite_array(out, (model.nv,), s.dtype)
    # (b) the same bits as the C-contiguous float64 copies
    same(out, call(s.forward_dynamics, *[reference(a) for a in args]))


@_scaled(2)
@given(solver_and_model(), st.sampled_from([0, 1, 3]), st.data())
def test_forward_dynamics_batch_equals_items(smd, B, data):
    model, name, dtype = smd
    s = make(name, model, dtype)
    assume(s is not None)
    q, v, tau, value = data.draw(states(model, batch=B))
    kind = data.draw(st.sampled_from(EXACT))
    use_f = data.draw(st.booleans()) and "f_ext" in s.capabilities
    f = None
    if use_f:
        f = data.draw(st.sampled_from([1.0, 1e300, np.nan])) * np.random.default_rng(B).standard_normal(
            (B, model.n_bodies, 6)
        )
    args = [layout(x, kind) for x in (q, v, tau)]
    out = call(s.forward_dynamics, *args, *([layout(f, kind)] if use_f else []))
    items = [call(s.forward_dynamics, q[b], v[b], tau[b], *([f[b]] if use_f else [])) for b in range(B)]
    if any(isinstance(i, Raised) for i in items):
        assert isinstance(out, Raised), f"the batch succeeded but an item raised {items}"
        return
    if isinstance(out, Raised):  # (d) a batch fails only when one of its items fails
        raise AssertionError(f"the batch raised {out!r} but every item succeeded")
    finite_array(out, (B, model.nv), s.dtype)
    for b in range(B):
        same(out[b], items[b])


def test_empty_batch_has_shape_0_by_nv():
    """The boundary of the batch property, for every solver: B = 0 gives (0, nv), not garbage."""
    model = chain(3)
    for name in _supported(model):
        s = td.make_solver(name, model)
        out = s.forward_dynamics(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3)))
        assert out.shape == (0, 3), name


@given(solver_and_model(), st.sampled_from([None, 0, 1, 3]), st.data())
def test_inverse_inertia(smd, m, data):
    model, name, dtype = smd
    s = make(name, model, dtype)
    assume(s is not None and "inverse_inertia" in s.capabilities)
    q, _, _, qval = data.draw(states(model))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    R = rng.standard_normal((model.nv,) if m is None else (model.nv, m))
    R = poisoned(R, data.draw(st.sampled_from(POISON)), data.draw(st.integers(0, 100)))
    kq, kR = data.draw(st.sampled_from(LAYOUTS)), data.draw(st.sampled_from(LAYOUTS))
    args = (layout(q, kq), layout(R, kR))
    out = call(s.inverse_inertia, *args)
    if expect(out, (kq, kR), args, other_bad=qval is not None and (kq in REFUSED or kR in REFUSED)):
        return
    if not isinstance(out, Raised):
        finite_array(out, R.shape, s.dtype)
    same(out, call(s.inverse_inertia, reference(args[0]), reference(args[1])))
    # M⁻¹R column by column equals M⁻¹R all at once: bit for bit where the columns are solved apart;
    # cfa-oee solves them jointly (one OEE elimination and refinement, stopped by the worst column's
    # backward error), so there each column agrees with its own solve within the rounding bound
    if not isinstance(out, Raised) and m:
        for j in range(m):
            col = call(s.inverse_inertia, reference(args[0]), reference(args[1])[:, j])
            if s.name == "cfa-oee" and model.nv and not isinstance(col, Raised):
                M = td.mass_matrix(model, reference(args[0]))
                assert_same_solution(M, out[:, j], col, dtype=s.dtype, what=f"cfa-oee column {j}")
            else:
                same(out[:, j].copy(), col)


@given(solver_and_model(), st.data())
def test_inverse_mass_matrix_and_solver_extras(smd, data):
    model, name, dtype = smd
    s = make(name, model, dtype)
    assume(s is not None)
    q, _, _, value = data.draw(states(model))
    kind = data.draw(st.sampled_from(LAYOUTS))
    x = layout(q, kind)
    methods = [s.inverse_mass_matrix] if "inverse_inertia" in s.capabilities else []
    methods += [getattr(s, a) for a in ("mass_matrix",) if hasattr(s, a)]
    for f in methods:
        out = call(f, x)
        if expect(out, [kind], [x], other_bad=value is not None and kind in REFUSED):
            continue
        if not isinstance(out, Raised):
            finite_array(out, (model.nv, model.nv), s.dtype)
            _symmetric_to_rounding(out, model, reference(x), s.dtype)
        same(out, call(f, reference(x)))
    if hasattr(s, "joint_inertias") and kind not in REFUSED:
        out = call(s.joint_inertias, x)
        if not isinstance(out, Raised):
            assert isinstance(out, list) and len(out) == sum(1 for j in model.joints if j.nv)
            for D, j in zip(out, [j for j in model.joints if j.nv]):
                assert D.shape == (j.nv, j.nv) and D.dtype == s.dtype


def _symmetric_to_rounding(X, model, q, dtype):
    """M(q) and M(q)⁻¹ are symmetric; a computed one may differ from its transpose by twice its
    forward error: ||X − Xᵀ||_F <= 2 c n ε cond₂(M) ||X||_F for a backward-stable method (c = 100,
    loose: the accuracy itself is tested per solver elsewhere). No claim when cond₂(M) ε >= 0.01."""
    M = td.mass_matrix(model, q)
    n, eps = model.nv, np.finfo(dtype).eps
    if n == 0:
        return
    cond = np.linalg.cond(M)
    if not np.isfinite(cond) or cond * eps >= 0.01:
        return
    X = X.astype(np.float64)
    assert np.linalg.norm(X - X.T) <= 2 * 100 * n * eps * cond * np.linalg.norm(X), (
        f"not symmetric: ||X - X^T|| / ||X|| = {np.linalg.norm(X - X.T) / np.linalg.norm(X):.3g}, cond {cond:.3g}"
    )


@given(
    models,
    st.sampled_from(SOLVERS),
    st.sampled_from([np.float64, np.float32, "float32", "f8", np.int32, np.complex128, "nope", None, 3]),
    st.dictionaries(
        st.sampled_from(["h", "tol", "ltdl", "ordering", "max_iter", "bogus"]),
        st.sampled_from([0, -1, 1e-3, np.nan, np.inf, 1e300, "x", True, None, "amd"]),
        max_size=2,
    ),
)
def test_make_solver(model, name, dtype, options):
    out = call(td.make_solver, name, model, dtype=dtype, **options)
    if not isinstance(out, Raised):
        assert isinstance(out, td.Solver) and out.model is model
        assert out.dtype in (np.float64, np.float32)


# ------------------------------------------------------------------ one-shot functions


@given(models, st.data())
def test_rnea_bias_forces_mass_matrix(model, data):
    q, v, a, value = data.draw(states(model))
    f = None
    if data.draw(st.booleans()):
        f = poisoned(
            np.random.default_rng(0).standard_normal((model.n_bodies, 6)),
            data.draw(st.sampled_from(POISON)),
            data.draw(st.integers(0, 100)),
        )
    kinds = {x: data.draw(st.sampled_from(LAYOUTS), label=f"layout of {x}") for x in ("q", "v", "a", "f")}
    given_ = {
        "q": layout(q, kinds["q"]),
        "v": layout(v, kinds["v"]),
        "a": layout(a, kinds["a"]),
        "f": None if f is None else layout(f, kinds["f"]),
    }
    for fn, names, shape in (
        (td.rnea, "qvaf", (model.nv,)),
        (td.bias_forces, "qvf", (model.nv,)),
        (td.mass_matrix, "q", (model.nv, model.nv)),
    ):
        names = [x for x in names if x != "f" or f is not None]
        args = [given_[x] for x in names]
        out = call(fn, model, *args)
        used = [kinds[x] for x in names]
        if expect(out, used, args, other_bad=value is not None and any(k in REFUSED for k in used)):
            continue
        if not isinstance(out, Raised):
            finite_array(out, shape)
        same(out, call(fn, model, *[reference(x) for x in args]))


@given(models, st.data(), st.sampled_from(["world", "local", "local_world_aligned"]))
def test_frames_jacobians_and_centre_of_mass(model, data, ref_frame):
    q, v, _, value = data.draw(states(model))
    body = data.draw(st.integers(0, model.n_bodies - 1), label="body")
    kinds = {x: data.draw(st.sampled_from(LAYOUTS), label=f"layout of {x}") for x in ("q", "v")}
    given_ = {"q": layout(q, kinds["q"]), "v": layout(v, kinds["v"])}
    for fn, names, shape in (
        (lambda m, q: td.frame_jacobian(m, q, body, reference=ref_frame), "q", (6, model.nv)),
        (lambda m, q, v: td.frame_bias_acceleration(m, q, v, body, reference=ref_frame), "qv", (6,)),
        (lambda m, q: td.center_of_mass(m, q), "q", (3,)),
        (lambda m, q: td.center_of_mass(m, q, jacobian=True)[1], "q", (3, model.nv)),
        (lambda m, q, v: np.array(td.kinetic_energy(m, q, v)), "qv", ()),
        (lambda m, q: np.array(td.potential_energy(m, q)), "q", ()),
    ):
        args = [given_[x] for x in names]
        out = call(fn, model, *args)
        used = [kinds[x] for x in names]
        if expect(out, used, args, other_bad=value is not None and any(k in REFUSED for k in used)):
            continue
        if not isinstance(out, Raised):
            finite_array(out, shape)
        same(out, call(fn, model, *[reference(x) for x in args]))


@given(models, st.data(), st.sampled_from([0.0, 1e-3, -0.5, 1.0, 1e3, 1e300, np.nan, np.inf, 5e-324]))
def test_integrate(model, data, dt):
    q, v, _, value = data.draw(states(model))
    kq, kv = data.draw(st.sampled_from(LAYOUTS)), data.draw(st.sampled_from(LAYOUTS))
    args = (layout(q, kq), layout(v, kv))
    out = call(td.integrate, model, *args, dt)
    if expect(
        out, (kq, kv), args, other_bad=not np.isfinite(dt) or (value is not None and (kq in REFUSED or kv in REFUSED))
    ):
        return
    if not isinstance(out, Raised):
        finite_array(out, (model.nq,))
    same(out, call(td.integrate, model, *[reference(x) for x in args], dt))


@given(
    models,
    st.one_of(st.none(), st.integers(0, 2**32 - 1), st.just("abc"), st.just(-1)),
    st.sampled_from([np.pi, 0.0, 1e-3, 1e300, np.inf, np.nan, -1.0]),
    st.sampled_from([1.0, 0.0, 1e300, np.inf, np.nan, -1.0]),
)
def test_random_configuration_and_neutral(model, seed, angle, distance):
    out = call(td.random_configuration, model, seed, angle=angle, distance=distance)
    if not isinstance(out, Raised):
        finite_array(out, (model.nq,))
        M = call(td.mass_matrix, model, out)  # a configuration the kernels take (or say why not)
        if not isinstance(M, Raised):
            finite_array(M, (model.nv, model.nv))
    else:  # only a bad seed, or a range that is negative, not finite or beyond 1e300, is refused
        good_seed = seed is None or (isinstance(seed, int) and seed >= 0)
        assert not (0 <= angle <= 1e300 and 0 <= distance <= 1e300 and good_seed), out
    finite_array(call(td.neutral, model), (model.nq,))


@given(models, st.data())
def test_inverse_mass_matrix_function_and_contact_inertia(model, data):
    q, _, _, value = data.draw(states(model))
    method = data.draw(st.sampled_from(SOLVERS + ["nope"]))
    kq = data.draw(st.sampled_from(LAYOUTS))
    x = layout(q, kq)
    out = call(td.inverse_mass_matrix, model, x, method=method)
    if method in _supported(model):
        expect(out, [kq], [x], other_bad=value is not None and kq in REFUSED)
    if not isinstance(out, Raised):
        finite_array(out, (model.nv, model.nv))
    names = [n for n in _supported(model) if "inverse_inertia" in list_solver_classes()[n].capabilities]
    assume(names)
    s = td.make_solver(data.draw(st.sampled_from(names)), model)
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    p, r = data.draw(st.integers(0, 3)), data.draw(st.sampled_from([None, 0, 2]))
    N = poisoned(rng.standard_normal((model.nv, p)), data.draw(st.sampled_from(POISON)), data.draw(st.integers(0, 9)))
    D = None if r is None else rng.standard_normal((model.nv, r))
    kN = data.draw(st.sampled_from(LAYOUTS))
    args = (layout(q, "C"), layout(N, kN)) + (() if D is None else (layout(D, "F"),))
    out = call(td.contact_inertia, s, *args)
    if expect(out, ("C", kN, "F"), args):
        return
    if not isinstance(out, Raised):
        outs = (out,) if D is None else out
        shapes = [(p, p)] if D is None else [(p, p), (p, r), (r, r)]
        for o, sh in zip(outs, shapes):
            finite_array(o, sh)
    same(out, call(td.contact_inertia, s, *[reference(a) for a in args]))


# ------------------------------------------------------------------ linalg


def _spd_blocks(rng, n, k, cond):
    """n symmetric positive definite k x k blocks (eigenvalues in [1, cond]) and n-1 couplings small
    enough for the block tri-diagonal matrix to stay positive definite (block diagonal dominance)."""
    Q = np.linalg.qr(rng.standard_normal((n, k, k)))[0]
    ev = np.exp(rng.uniform(0, np.log(cond), (n, k)))
    D = np.einsum("nij,nj,nkj->nik", Q, ev, Q)
    U = rng.standard_normal((max(n - 1, 0), k, k))
    U *= 0.25 / max(1.0, np.abs(U).sum(axis=(1, 2)).max(initial=0.0))
    return D, U


@given(
    st.integers(1, 6),
    st.integers(1, 8),
    st.sampled_from([None, 0, 1, 3]),
    st.integers(0, 10**6),
    st.sampled_from([1.0, 1e3, 1e12]),
    st.data(),
)
def test_solve_block_tridiagonal(n, k, m, seed, cond, data):
    rng = np.random.default_rng(seed)
    D, U = _spd_blocks(rng, n, k, cond)
    R = rng.standard_normal((n, k) if m is None else (n, k, m))
    which = data.draw(st.sampled_from(["D", "U", "R"]))
    arrays = {"D": D, "U": U, "R": R}
    arrays[which] = poisoned(arrays[which], data.draw(st.sampled_from(POISON)), data.draw(st.integers(0, 99)))
    kinds = [data.draw(st.sampled_from(LAYOUTS)) for _ in range(3)]
    args = [layout(arrays[x], kk) for x, kk in zip("DUR", kinds)]
    _linalg_contract(td.linalg.solve_block_tridiagonal, args, kinds, R.shape)


def _linalg_contract(fn, args, kinds, shape):
    """(a)-(c) for the linalg solvers: float32 when every input is a float32 array, else float64."""
    out = call(fn, *args)
    if expect(out, kinds, args):
        return
    all32 = all(k == "f4" for k in kinds)
    if not isinstance(out, Raised):
        finite_array(out, shape, np.float32 if all32 else np.float64)
    same(out, call(fn, *[np.ascontiguousarray(a) if all32 else reference(a) for a in args]))


@given(
    st.integers(1, 6),
    st.integers(1, 8),
    st.sampled_from([None, 0, 1, 3]),
    st.integers(0, 10**6),
    st.sampled_from([0.5, 1.0, 10.0]),
    st.data(),
)
def test_solve_block_bidiagonal(n, k, m, seed, scale, data):
    rng = np.random.default_rng(seed)
    A = scale * rng.standard_normal((n - 1, k, k)) / np.sqrt(k)
    b = rng.standard_normal((n, k) if m is None else (n, k, m))
    which = data.draw(st.sampled_from(["A", "b"]))
    arrays = {"A": A, "b": b}
    arrays[which] = poisoned(arrays[which], data.draw(st.sampled_from(POISON)), data.draw(st.integers(0, 99)))
    kinds = [data.draw(st.sampled_from(LAYOUTS)) for _ in range(2)]
    args = [layout(arrays[x], kk) for x, kk in zip("Ab", kinds)]
    _linalg_contract(td.linalg.solve_block_bidiagonal, args, kinds, b.shape)


# ------------------------------------------------------------------ State, RedMax, simulate


@given(models, st.data(), st.sampled_from([0.0, 1.5, np.nan, np.inf, "x", None]))
def test_state(model, data, t):
    q, v, _, value = data.draw(states(model))
    kq, kv = data.draw(st.sampled_from(LAYOUTS)), data.draw(st.sampled_from(LAYOUTS))
    args = (layout(q, kq), layout(v, kv))
    out = call(td.State, *args, t)
    bad_t = not isinstance(t, (int, float)) or not np.isfinite(t)
    if expect(out, (kq, kv), args, other_bad=bad_t):
        return
    if not isinstance(out, Raised):
        assert np.all(np.isfinite(out.q)) and np.all(np.isfinite(out.v)) and np.isfinite(out.t)
        assert out.q.dtype == np.float64 and out.q.shape == (len(q),)
        # the state owns its arrays: stepping it never writes through to the caller's
        for a in args:
            if isinstance(a, np.ndarray):
                assert not np.shares_memory(a, out.q) and not np.shares_memory(a, out.v)


def _redmax_model(recipe, rng, extras):
    """A fresh model of ``recipe`` with RedMax terms added (a spring between two bodies, a joint
    spring, body damping, a point force, a loop closure), each drawn or not."""
    m = _model.__wrapped__(recipe)
    if m.nv == 0 or m.n_bodies < 3:
        return m
    last = m.n_bodies - 1
    if "spring" in extras:
        m.add_spring(
            1,
            rng.uniform(-0.1, 0.1, 3),
            last,
            rng.uniform(-0.1, 0.1, 3),
            stiffness=rng.uniform(0, 1e3),
            damping=rng.uniform(0, 1),
        )
    if "joint-spring" in extras and m.joint_names:
        free = isinstance(m.joints[m._joint_body(m.joint_names[-1])], td.Free)
        m.set_joint_spring(m.joint_names[-1], stiffness=0.0 if free else 10.0, damping=0.1)
    if "damping" in extras:
        m.set_body_damping(last, 0.5)
    if "force" in extras:
        m.add_point_force(last, (0, 0, 0.1), (0, 5.0, 0))
    if "loop" in extras:
        m.add_loop_closure(last, "world", td.Spherical())
    return m


@_scaled(2)
@given(
    RECIPES,
    st.sampled_from(["redmax-direct", "redmax-pcg"]),
    st.data(),
    st.sets(st.sampled_from(["spring", "joint-spring", "damping", "force", "loop"])),
    st.sampled_from([None, 1e-3, 1e-2, 1.0, 0.0, -1.0, np.nan, np.inf, 1e300, "x"]),
)
def test_redmax_step(recipe, name, data, extras, h):
    model = _redmax_model(recipe, np.random.default_rng(data.draw(st.integers(0, 99))), extras)
    s = td.make_solver(name, model)
    q, v, _, value = data.draw(states(model))
    kq, kv = data.draw(st.sampled_from(EXACT + LOSSY)), data.draw(st.sampled_from(EXACT + LOSSY))
    args = (layout(q, kq), layout(v, kv))
    state = call(td.State, *args)
    if expect(state, (kq, kv), args):
        return
    assert not isinstance(state, Raised), state
    before = state.copy()
    out = call(lambda: s.step(state, h))  # (state is advanced in place by design)
    if isinstance(out, Raised):  # a failed step leaves the state as it was
        assert snapshot(state.q) == snapshot(before.q) and snapshot(state.v) == snapshot(before.v)
        assert state.t == before.t
        return
    assert isinstance(out, dict)
    finite_array(state.q, (model.nq,))
    finite_array(state.v, (model.nv,))
    assert np.isfinite(state.t) and state.t > before.t
    for key in ("position_residual", "velocity_residual"):
        assert np.isfinite(out[key]), key
    # terms() at the new state are finite dense arrays
    terms = call(s.terms, state)
    if not isinstance(terms, Raised):
        for key, x in terms.items():
            assert np.all(np.isfinite(x)), key


@_scaled(4)
@given(
    models,
    st.sampled_from(["euler", "semi-implicit-euler", "rk4", "dopri5", "rkf45"]),
    st.data(),
    st.sampled_from([None, "zero", "nan", "huge", "raise-index"]),
)
def test_simulate(model, method, data, tau_kind):
    names = _supported(model)
    name = data.draw(st.sampled_from(names))
    q, v, _, value = data.draw(states(model))

    def tau(t, q, v):
        if tau_kind == "nan":
            return np.full(model.nv, np.nan)
        if tau_kind == "huge":
            return np.full(model.nv, 1e300)
        if tau_kind == "raise-index":
            return np.zeros(model.nv + 1)
        return np.zeros(model.nv)

    res = call(
        td.simulate,
        model,
        name,
        q,
        v,
        0.02,
        method=method,
        dt=0.01,
        tau=None if tau_kind is None else tau,
        max_steps=200,
    )
    if isinstance(res, Raised):
        return
    assert res.q.shape[1:] == (model.nq,) and res.v.shape[1:] == (model.nv,) and len(res.t) == len(res.q)
    assert np.all(np.isfinite(res.q)) and np.all(np.isfinite(res.v)) and np.all(np.isfinite(res.t))
    # a poisoned q or v (the drawn tau array is not used: tau comes from tau_kind) or a NaN tau fails
    # the run, unless nothing moves (nv = 0: tau is empty, and the run is right to succeed)
    poisoned_state = not (np.all(np.isfinite(q)) and np.all(np.isfinite(v)))
    if poisoned_state or (tau_kind == "nan" and model.nv) or tau_kind == "raise-index":
        assert not res.success and res.message


# ------------------------------------------------------------------ model building


@given(
    st.sampled_from(["Transform", "Inertia", "Revolute", "Prismatic", "Universal", "gravity"]),
    st.sampled_from(LAYOUTS),
    st.sampled_from(POISON),
    st.integers(0, 99),
    st.integers(0, 10**6),
)
def test_model_building_blocks(what, kind, value, index, seed):
    rng = np.random.default_rng(seed)
    R = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    R = R * np.sign(np.linalg.det(R))
    if what == "Transform":
        x = layout(poisoned(R, value, index), kind)
        out = call(td.Transform, x, layout(rng.standard_normal(3), kind))
    elif what == "Inertia":
        x = layout(poisoned(np.diag([1.0, 1.5, 2.0]), value, index), kind)
        out = call(td.Inertia, 1.0, layout(rng.standard_normal(3), kind), x)
    elif what == "gravity":
        m = td.Model()
        out = call(setattr, m, "gravity", layout(poisoned(rng.standard_normal(3), value, index), kind))
        if not isinstance(out, Raised):
            assert np.all(np.isfinite(m.gravity))
    elif what == "Universal":
        out = call(td.Universal, layout(poisoned(R[0], value, index), kind), layout(R[1], kind))
    else:
        out = call(getattr(td, what), layout(poisoned(R[0], value, index), kind))
    if kind in REFUSED:
        assert isinstance(out, Raised) and issubclass(out.type, TypeError), out
    if _nonfinite(value) and kind in EXACT:
        assert isinstance(out, Raised) and issubclass(out.type, ValueError), out


@given(st.integers(0, 10**6))
def test_model_does_not_follow_later_mutation_of_its_parts(seed):
    """A Joint, Transform or Inertia handed to add_body is the model's from then on: changing the
    object afterwards either is refused or does not reach the model's dynamics."""
    rng = np.random.default_rng(seed)
    joint, place = td.Revolute(rng.standard_normal(3)), td.Transform(translation=rng.standard_normal(3))
    inertia = td.Inertia(1.0, rng.standard_normal(3) * 0.1, np.eye(3))
    model = td.Model()
    model.add_body("a", None, joint, place, inertia)
    axis = joint.axis.copy()
    q, v = np.array([0.3]), np.array([1.0])
    M, c = td.mass_matrix(model, q), td.bias_forces(model, q, v)
    for obj, attr in (
        (joint, "axis"),
        (place, "translation"),
        (place, "rotation"),
        (inertia, "com"),
        (inertia, "inertia"),
    ):
        try:  # in place
            a = getattr(obj, attr)
            a[...] = 2 * a + 1
        except (TypeError, ValueError, AttributeError):
            pass  # refused: read-only
        try:  # by assignment
            setattr(obj, attr, np.ones_like(np.asarray(getattr(obj, attr))))
        except (TypeError, ValueError, AttributeError):
            pass  # refused: immutable
    same(td.mass_matrix(model, q), M)
    same(td.bias_forces(model, q, v), c)
    # what the model reports about its joints is what it computes with
    assert np.array_equal(model.joints[1].axis, axis), "model.joints shows an axis the model does not use"


@given(
    st.sampled_from([1, 3, 2.0, 0, -1, 2.5, np.inf, np.nan, "3", None, np.int64(2)]),
    st.sampled_from(["chain", "random_tree"]),
    st.sampled_from(["revolute", "prismatic", "x", None]),
    st.sampled_from([None, (), ("fixed",), ("spherical", "universal"), "revolute"]),
    st.sampled_from([0.0, 0.5, 1.0, np.nan, 2.0]),
    st.booleans(),
)
def test_scenes(n, which, joint, joints, branching, floating_base):
    if which == "chain":
        out = call(chain, n, **({} if joint is None else {"joint": joint}), floating_base=floating_base)
    else:
        out = call(
            random_tree,
            n,
            0,
            **({} if joints is None else {"joints": joints}),
            branching=branching,
            floating_base=floating_base,
        )
    if not isinstance(out, Raised):
        assert isinstance(out, td.Model) and out.n_bodies == int(n) + 1


# ------------------------------------------------------------------ threads


_THREADS_SCRIPT = r"""
import sys, threading
import numpy as np
import treedyn as td
from treedyn.scenes import chain, random_tree

name, seed = sys.argv[1], int(sys.argv[2])
model = chain(12) if name == "cfa-oee" else random_tree(12, seed % 50, joints=("revolute", "spherical"),
                                                          branching=0.0 if name == "jsiia" else 0.5)
s = td.make_solver(name, model)
rng = np.random.default_rng(seed)
inputs = [(td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv))
          for _ in range(6)]
R = rng.standard_normal((model.nv, 5))
calls = [lambda x=x: s.forward_dynamics(*x) for x in inputs]
calls += [lambda x=x: s.inverse_inertia(x[0], R) for x in inputs[:3]]
calls += [lambda x=x: s.inverse_mass_matrix(x[0]) for x in inputs[:3]]
calls += [lambda: s.forward_dynamics(np.stack([x[0] for x in inputs]), np.stack([x[1] for x in inputs]),
                                     np.stack([x[2] for x in inputs]))]
serial = [c() for c in calls]
errors = []

def work(t):
    try:
        for rep in range(25):
            for i in range(len(calls)):
                k = (i + 3 * t + rep) % len(calls)  # the threads interleave different calls
                if calls[k]().tobytes() != serial[k].tobytes():
                    errors.append((t, k))
    except Exception as e:
        errors.append(repr(e))

threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print(errors[:5])
sys.exit(1 if errors else 0)
"""


@pytest.mark.parametrize("name", SOLVERS)
def test_one_solver_from_many_threads_gives_the_serial_answers(name):
    """A solver shared by Python threads (the GIL is released in the kernels) answers each call
    (forward dynamics, batches, M⁻¹R, M⁻¹) as if it ran alone: no workspace is shared between
    concurrent calls. In a subprocess, so that a crash is this test's failure, not the run's."""
    import subprocess
    import sys

    seed = int(np.random.default_rng().integers(10**6))
    r = subprocess.run(
        [sys.executable, "-c", _THREADS_SCRIPT, name, str(seed)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONFAULTHANDLER="1"),
    )
    assert r.returncode == 0, (
        f"seed {seed}: exit code {r.returncode} (negative: killed by a signal); "
        f"wrong answers or errors: {r.stdout[-500:]} {r.stderr[-2000:]}"
    )


@_scaled(5)
@given(st.integers(0, 10**6), st.sampled_from([1, 2, 3]))
def test_answers_do_not_depend_on_the_thread_count(seed, threads):
    model = random_tree(9, seed % 50)
    rng = np.random.default_rng(seed)
    q = np.stack([td.random_configuration(model, rng) for _ in range(5)])
    v, tau = rng.standard_normal((2, 5, model.nv))
    R = rng.standard_normal((model.nv, 7))
    before = td.get_num_threads()
    outs = []
    try:
        for t in (1, threads):
            td.set_num_threads(t)
            outs.append(
                [td.make_solver(n, model).forward_dynamics(q, v, tau) for n in _supported(model)]
                + [td.make_solver("drumwright", model).inverse_inertia(q[0], R), td.inverse_mass_matrix(model, q[0])]
            )
    finally:
        td.set_num_threads(before)
    for a, b in zip(*outs):
        same(a, b)


# ------------------------------------------------------------------ loaders: mutated real files

NUMBERS = ["nan", "inf", "-inf", "-1", "0", "1e300", "-1e300", "1e-320", "abc", "", "1 2", "0x10", "1e"]


def _real_files():
    files = []
    try:
        from treedyn.tools.peers import example_robot_path

        for rel in ("ur_description/urdf/ur5_robot.urdf", "solo_description/robots/solo12.urdf"):
            with open(example_robot_path(rel)) as fh:
                files.append(("urdf", fh.read()))
    except (FileNotFoundError, ImportError):
        pass
    files.append(("urdf", _SMALL_URDF))
    files.append(("mjcf", _SMALL_MJCF))
    return files


_SMALL_URDF = """<?xml version="1.0"?>
<robot name="two">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0 0 0.1" rpy="0 0 0"/><mass value="1.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.005"/></inertial></link>
  <link name="l2"><inertial><mass value="0.5"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.001"/></inertial></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.1" rpy="0 0.2 0"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/>
    <origin xyz="0 0.1 0.2"/><axis xyz="1 0 0"/></joint>
  <joint name="j3" type="fixed"><parent link="l2"/><child link="tool"/><origin xyz="0 0 0.05"/></joint>
</robot>
"""

_SMALL_MJCF = """<mujoco model="creature">
  <compiler angle="radian"/>
  <option gravity="0.5 -0.3 -9.81"/>
  <default><joint type="hinge" axis="0 1 0"/>
    <default class="leg"><geom type="capsule" size="0.03" density="900"/></default></default>
  <worldbody>
    <body name="torso" pos="0 0 0.6" quat="0.9 0.1 0 0.2">
      <freejoint name="root"/>
      <geom type="ellipsoid" size="0.25 0.15 0.08" density="600"/>
      <body name="tail" pos="-0.25 0 0"><joint name="tail_slide" type="slide" axis="-1 0 0.3"/>
        <geom type="cylinder" fromto="0 0 0 -0.2 0 0.05" size="0.02"/></body>
      <body name="leg" pos="0.2 0.1 0" childclass="leg"><joint name="hip" type="ball" pos="0 0 0.02"/>
        <geom fromto="0 0 0 0.1 0.1 -0.15"/>
        <body name="shin" pos="0.1 0.1 -0.15"><joint name="knee" axis="1 -1 0"/>
          <geom fromto="0 0 0 0.05 0.05 -0.2"/>
          <body name="foot" euler="0.1 0.2 0.3"><inertial pos="0 0 0" mass="0.1" diaginertia="1e-3 1e-3 1e-3"/>
            <joint name="ankle" type="hinge" axis="0 0 1"/></body></body></body>
    </body>
  </worldbody>
</mujoco>
"""

REAL_FILES = _real_files()


@st.composite
def mutated_files(draw):
    kind, text = draw(st.sampled_from(REAL_FILES))
    import re

    for _ in range(draw(st.integers(1, 3))):
        op = draw(
            st.sampled_from(["number", "number", "number", "delete", "duplicate", "truncate", "attr", "tag", "insert"])
        )
        if op == "number":
            spans = [m.span() for m in re.finditer(r"-?\d+(\.\d+)?(e-?\d+)?", text)]
            if spans:
                a, b = spans[draw(st.integers(0, len(spans) - 1))]
                text = text[:a] + draw(st.sampled_from(NUMBERS)) + text[b:]
        elif op == "attr":
            spans = [m.span() for m in re.finditer(r'\s\w+="[^"]*"', text)]
            if spans:
                a, b = spans[draw(st.integers(0, len(spans) - 1))]
                text = text[:a] + text[b:]
        elif op == "tag":
            tags = sorted(set(re.findall(r"<(\w+)", text)))
            spans = [m.span(1) for m in re.finditer(r"</?(\w+)", text)]
            if spans:
                a, b = spans[draw(st.integers(0, len(spans) - 1))]
                text = text[:a] + draw(st.sampled_from(tags)) + text[b:]
        else:
            a = draw(st.integers(0, len(text)))
            b = min(len(text), a + draw(st.integers(0, 80)))
            if op == "delete":
                text = text[:a] + text[b:]
            elif op == "duplicate":
                text = text[:b] + text[a:b] + text[b:]
            elif op == "truncate":
                text = text[:a]
            else:
                text = text[:a] + draw(st.text(max_size=12)) + text[a:]
    return kind, text


@given(mutated_files())
def test_loaders_on_mutated_files(kind_text):
    """A mutated real file loads, or fails with a ModelFileError (a ValueError) with a message;
    a model that loads has finite dynamics or says why (ValueError) - never a crash, a silent NaN
    or another exception type."""
    kind, text = kind_text
    suffix = ".urdf" if kind == "urdf" else ".xml"
    fd, path = tempfile.mkstemp(suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(text)
        loader = td.Model.from_urdf if kind == "urdf" else td.Model.from_mjcf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model = loader(path)
            except ModelFileError as e:
                assert str(e).strip()
                return
            except UnicodeEncodeError:
                return  # the mutation itself could not be written as UTF-8
    finally:
        os.unlink(path)
    assert isinstance(model, td.Model)
    q = td.neutral(model)
    M = call(td.mass_matrix, model, q)
    if not isinstance(M, Raised):
        finite_array(M, (model.nv, model.nv))
    out = call(td.make_solver("aba", model).forward_dynamics, q, np.zeros(model.nv), np.zeros(model.nv))
    if not isinstance(out, Raised):
        finite_array(out, (model.nv,))
