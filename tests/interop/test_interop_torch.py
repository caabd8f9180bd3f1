"""treedyn.interop.torch: torch.autograd.gradcheck (float64) of forward dynamics, inverse dynamics
and one step on every joint kind, fixed and floating bases, single and batched; the autograd
Jacobians against central differences in q's coordinates with tests/algorithms/test_derivatives.py's bound;
float32 within its bound of float64; bad input. Skipped without torch (pip install treedyn[torch];
.ci/interop installs it and runs these)."""

import numpy as np
import pytest
from conftest import assert_below, dynamics_scale, random_state, rounding_bound
from interop_checks import check_against_central_differences, models
from support.derivatives import random_f_ext, two_floating_bodies

import treedyn as td
from treedyn.scenes import chain

torch = pytest.importorskip("torch", reason="PyTorch is optional (pip install treedyn[torch])")
tdt = pytest.importorskip("treedyn.interop.torch")


@pytest.fixture(params=models(), ids=lambda c: c[0])
def model(request):
    return request.param[1]


def tensors(model, rng, B=None, dtype=torch.float64):
    states = [random_state(model, rng) for _ in range(B or 1)]
    out = [torch.tensor(np.array([s[k] for s in states]), dtype=dtype) for k in range(3)]
    return [x[0] if B is None else x for x in out]


def wrapped(model, which, f_ext=None, dt=0.2):
    if which == "forward":
        return lambda q, v, x: tdt.forward_dynamics(model, q, v, x, f_ext)
    if which == "inverse":
        return lambda q, v, x: tdt.inverse_dynamics(model, q, v, x, f_ext)
    return lambda q, v, x: tdt.step(model, q, v, x, dt, f_ext)


@pytest.mark.parametrize("which", ["forward", "inverse", "step"])
@pytest.mark.parametrize("B", [None, 2], ids=["single", "batch"])
def test_gradcheck(model, which, B):
    # PyTorch's own check of the backward pass against its finite differences (its default
    # tolerances for float64): every input and output for one state; for a batch, its fast mode
    # (a random vector-Jacobian-vector product: the full Jacobian's B·nv backward passes are slow)
    rng = np.random.default_rng(1)
    q, v, x = (t.requires_grad_() for t in tensors(model, rng, B))
    f_ext = None if B is None else np.array([random_f_ext(model, rng) for _ in range(B)])
    assert torch.autograd.gradcheck(wrapped(model, which, f_ext), (q, v, x), fast_mode=B is not None)


@pytest.mark.parametrize("which", ["forward", "inverse", "step"])
def test_jacobians_match_central_differences_in_coordinates(model, which):
    # tests/interop/interop_checks.py: the bound of tests/algorithms/test_derivatives.py
    def value(q, v, x, f_ext):
        y = wrapped(model, which, f_ext)(*(torch.tensor(a) for a in (q, v, x)))
        return (torch.cat(y) if which == "step" else y).numpy()

    def jacobian(q, v, x, f_ext):
        fn = wrapped(model, which, f_ext)
        g = (lambda *a: torch.cat(fn(*a))) if which == "step" else fn
        return [J.numpy() for J in torch.autograd.functional.jacobian(g, tuple(torch.tensor(a) for a in (q, v, x)))]

    check_against_central_differences(model, which, value, jacobian)


@pytest.mark.parametrize("which", ["forward", "inverse", "step"])
def test_float32_agrees_with_float64(which):
    # values and gradients within δ32·cond(M) of the magnitudes summed (as the float32 tests of
    # tests/algorithms/test_derivatives.py), on two free bodies with spherical and universal joints
    model, rng = two_floating_bodies(), np.random.default_rng(4)
    q, v, x = random_state(model, rng)
    outs = {}
    for dtype in (torch.float64, torch.float32):
        args = [torch.tensor(a, dtype=dtype, requires_grad=True) for a in (q, v, x)]
        y = wrapped(model, which)(*args)
        y = torch.cat(y) if which == "step" else y
        assert y.dtype == dtype
        y.sum().backward()
        assert all(a.grad.dtype == dtype for a in args)
        outs[dtype] = [y.detach().numpy().astype(np.float64)] + [a.grad.numpy().astype(np.float64) for a in args]
    zero = np.zeros(model.nv)
    S = np.abs(dynamics_scale(model, q, v, zero, zero)).max() + np.abs(x).max()
    M = td.mass_matrix(model, q)
    cond = np.linalg.cond(M, np.inf) if which != "inverse" else 1.0
    d32 = rounding_bound(model.nv, np.float32)
    for k, name in enumerate(["value", "grad q", "grad v", "grad x"]):
        r64, r32 = outs[torch.float64][k], outs[torch.float32][k]
        size = model.nv * (np.abs(r64).max() + S)  # a gradient sums nv entries
        assert_below(r32 - r64, d32 * cond * size, f"float32 {which} {name}", size=size)


def test_a_batched_gradient_is_the_single_ones():
    model, rng = two_floating_bodies(), np.random.default_rng(5)
    q, v, tau = (t.requires_grad_() for t in tensors(model, rng, 4))
    w = torch.tensor(rng.standard_normal((4, model.nv)))
    (tdt.forward_dynamics(model, q, v, tau) * w).sum().backward()
    for b in range(4):
        qb, vb, tb = (t.detach()[b].clone().requires_grad_() for t in (q, v, tau))
        (tdt.forward_dynamics(model, qb, vb, tb) * w[b]).sum().backward()
        for got, ref in ((q.grad[b], qb.grad), (v.grad[b], vb.grad), (tau.grad[b], tb.grad)):
            # the same products summed in another order at most: δ of the terms' magnitudes
            bound = rounding_bound(model.nv) * (np.abs(ref.numpy()).max() + 1)
            assert_below(got.numpy() - ref.numpy(), bound, "batched gradient", size=np.abs(ref.numpy()).max() + 1)


def test_bad_input_raises_clear_errors():
    model = chain(3)
    q, v, tau = (torch.zeros(3, dtype=torch.float64) for _ in range(3))
    with pytest.raises(TypeError, match="one dtype, float32 or float64"):
        tdt.forward_dynamics(model, q, v, tau.float())
    with pytest.raises(TypeError, match="one dtype, float32 or float64"):
        tdt.inverse_dynamics(model, q.long(), v.long(), tau.long())
    with pytest.raises(TypeError, match="tau must be a torch.Tensor"):
        tdt.forward_dynamics(model, q, v, [0.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="model must be a treedyn.Model"):
        tdt.forward_dynamics("chain", q, v, tau)
    with pytest.raises(ValueError, match="f_ext requires grad"):
        tdt.forward_dynamics(model, q, v, tau, torch.zeros((4, 6), dtype=torch.float64, requires_grad=True))
    with pytest.raises(ValueError, match="v must have shape"):
        tdt.forward_dynamics(model, q, v[:2], tau)
    with pytest.raises(ValueError, match="dt must be finite"):
        tdt.step(model, q, v, tau, float("nan"))
    qg = q.clone().requires_grad_()
    qdd = tdt.forward_dynamics(model, qg, v, tau)
    (g,) = torch.autograd.grad((qdd**2).sum(), qg, create_graph=True)  # a gradient that depends on qg
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()
