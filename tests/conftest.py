import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

# Property-test budgets (tests/test_fuzz_api.py), chosen by HYPOTHESIS_PROFILE: "ci" (default) keeps
# the fuzz file near a minute on two cores and draws the same examples on every run (derandomize: a
# red CI names a defect in the code, not a lucky draw); "fuzz" is a long random campaign that
# explores new inputs each time; "dev" a quick look.
# The example database (failing examples, replayed first next time) lives in the temporary directory,
# not in the repository: a test run writes nothing there.
_slow_ok = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
_common = dict(
    deadline=None,
    print_blob=True,
    suppress_health_check=_slow_ok,
)
set_hypothesis_home_dir(os.path.join(tempfile.gettempdir(), "treedyn-hypothesis"))  # its caches, not ./.hypothesis
_database = DirectoryBasedExampleDatabase(os.path.join(tempfile.gettempdir(), "treedyn-hypothesis", "examples"))
settings.register_profile(
    "ci", max_examples=60, derandomize=True, database=None, **_common
)  # (derandomized: no database)
settings.register_profile("dev", max_examples=15, database=_database, **_common)
settings.register_profile("fuzz", max_examples=5000, database=_database, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

import treedyn as td  # noqa: E402 (after the hypothesis profiles)
from treedyn.scenes import chain, random_tree  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def _run_outside_the_repository(tmp_path_factory):
    """Every test runs in a temporary working directory: what a library or a peer writes into the
    current directory (MuJoCo's MUJOCO_LOG.TXT, a figure script's default output) never lands in the
    repository. Tests name repository files by absolute paths."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(here)


def mounted_chain(n, at):
    """chain(n) with a fixed base whose first joint is mounted at `at` (a robot placed far out):
    0.1 m links, axes alternating z and y."""
    model = td.Model()
    rod = td.Inertia.box(1.0, (0.1, 0.01, 0.01), com=(0.05, 0, 0))
    parent = None
    for i in range(n):
        place = td.Transform(translation=(0.1, 0, 0) if i else at)
        axis = (0, 0, 1) if i % 2 == 0 else (0, 1, 0)
        parent = model.add_body(f"link{i + 1}", parent, td.Revolute(axis), place, rod)
    return model


def rel_err(a, b) -> float:
    """max |a − b| / max(1, max |b|): for exact identities only (values that must be equal up to a
    handful of roundings); numerical comparisons use the bounds below."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


# ------------------------------------------------------------ tolerances from error bounds
# Every numerical assertion compares against a bound from rounding-error analysis, never a number
# that happened to pass on one machine (N. J. Higham, "Accuracy and Stability of Numerical
# Algorithms", 2nd ed., SIAM 2002, "Higham" below). Notation: u = ε/2 is the unit roundoff of the
# precision computed in (1.1e-16 in float64, 6.0e-8 in float32), n the number of coordinates,
# ‖·‖ the ∞-norm (max row sum; max |x_i| for a vector), δ = c·n·u.
#
# What the constant c covers (C_ROUNDING = 64). The recursive algorithms (RNEA, CRBA, ABA,
# drumwright2012, LᵀL, OEE) have no published backward-error theorem; their error analysis is the
# componentwise one of sums of products (Higham §3.1-3.4: a k-term dot product carries |Δ| ≤ γ_k
# times the sum of magnitudes, γ_k = ku/(1 − ku)). Per body they chain a few (≤ 5) 6×6 spatial
# products, each entry a ≤ 6-term dot product (γ_6), and accumulate them over the ≤ n bodies of a
# path or a subtree (γ_n): ≈ 30·n·u for the algorithm under test; the reference it is checked
# against (CRBA's M, RNEA's bias, a LAPACK solve) carries as much again, and evaluating a residual
# adds γ_{n+1} (Higham eq. (3.11)): 2·30 + 1 ≈ 61, so c = 64. For comparison, dense Cholesky
# (Higham Thm 10.3-10.4) is backward stable with |ΔM| ≤ γ_{3n+1}|Rᵀ||R|, ‖ΔM‖ ≤ n·γ_{3n+1}‖M‖ in the
# worst case; LU with partial pivoting (Thm 9.4) with γ_{3n}·ρ_n, and triangular solves (Thm 8.5)
# with γ_n. Those worst cases grow like n²u, but the actual errors of these dense kernels are far
# smaller (rounding errors add like a random walk, Higham §2.8): c·n·u with c = 64 holds them with
# a wide margin at the sizes tested (n ≤ 400), and the margin is reported by TREEDYN_TOL_REPORT=1.
# An elimination on a symmetric positive definite matrix (Cholesky, ABA's articulated inertias,
# OEE's Schur complements) has no growth: every Schur complement is bounded by the matrix it comes
# from, so the magnitudes stay those of M.
#
# c is a model of the error, not a proven constant: measured on this suite (float64 and float32;
# OpenBLAS's Haswell, Sandybridge and SSE kernels; both M⁻¹ loops) every assertion sits at
# ≤ 0.07 of its bound (drumwright2012's M⁻¹ of a floating chain sat at 0.3 while its global frame
# had the world's origin, whose rounding grows with the squared distance of the bodies from it; with
# the origin at the tree's root it is at ≤ 0.006, 1 km out included: tests/kernels/test_minv.py), except
# cfa-oee's inverse_inertia, which exceeds it (a backward error of ~260·n·u on a 12-link chain; its
# q̈ stays within the forward bound).
C_ROUNDING = 64.0


def unit_roundoff(dtype=np.float64) -> float:
    """u = ε/2 of a floating dtype (Higham §2.1): 1.1e-16 for float64, 6.0e-8 for float32."""
    return float(np.finfo(dtype).eps) / 2


def rounding_bound(n: int, dtype=np.float64, c: float = C_ROUNDING) -> float:
    """δ = c·n·u: the relative (backward) error of an O(n)-deep computation in `dtype`, see above."""
    return c * max(int(n), 1) * unit_roundoff(dtype)


def _dtype_of(*xs):
    """The lowest precision among the computed arrays: that is the precision the errors come from."""
    dts = [np.asarray(x).dtype for x in xs if np.issubdtype(np.asarray(x).dtype, np.floating)]
    return max(dts, key=lambda d: np.finfo(d).eps) if dts else np.dtype(np.float64)


def _columns(X):
    X = np.asarray(X, dtype=np.float64)
    return X.reshape(X.shape[0], -1)


_MARGINS = []  # (test, what, error / bound), printed by TREEDYN_TOL_REPORT=1 pytest


def _check(err: float, bound: float, what: str):
    assert bound < 1.0, f"{what}: the bound {bound:.3g} is vacuous (≥ 1): the test would assert nothing"
    _MARGINS.append((os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0], what, err / bound))
    assert err <= bound, f"{what}: error {err:.3g} > bound {bound:.3g}"


def backward_error(M, X, R) -> float:
    """Normwise backward error of X as a solution of M X = R, worst column (Rigal–Gaches, Higham
    Thm 7.1): η = max_j ‖M x_j − r_j‖ / (‖M‖‖x_j‖ + ‖r_j‖), the smallest η with
    (M + ΔM) x_j = r_j + Δr_j, ‖ΔM‖ ≤ η‖M‖, ‖Δr_j‖ ≤ η‖r_j‖. It does not depend on cond(M)."""
    M, X, R = np.asarray(M, dtype=np.float64), _columns(X), _columns(R)
    res = np.abs(M @ X - R).max(axis=0)
    den = np.abs(M).sum(axis=1).max() * np.abs(X).max(axis=0) + np.abs(R).max(axis=0)
    return float(np.max(res / np.where(den > 0, den, 1.0)))


def iterative_bound(n: int, tol: float) -> float:
    """The backward error of an iterative solver stopped at ‖r‖₂ ≤ τ‖b‖₂ (PCG): ‖r‖∞ ≤ ‖r‖₂ ≤
    τ‖b‖₂ ≤ τ·√n·‖b‖∞, so η ≤ √n·τ in the ∞-norm (on top of the rounding δ of its products)."""
    return float(np.sqrt(n) * tol)


def assert_backward_stable(M, X, R, *, dtype=None, c: float = C_ROUNDING, tol: float = 0.0, what: str = "M X = R"):
    """η(X) ≤ c·n·u (+ √n·tol for an iterative solve to relative residual tol): X solves a system
    within rounding of M X = R. A backward-stable algorithm (Cholesky Thm 10.4, triangular solves
    Thm 8.5, the recursive algorithms see above) meets it whatever the condition number; c also
    covers the rounding in M (a CRBA) and in the residual."""
    n = np.shape(M)[0]
    _check(backward_error(M, X, R), rounding_bound(n, dtype or _dtype_of(X), c) + iterative_bound(n, tol), what)


def solution_bound(M, X, scale=None, *, dtype=None, c: float = C_ROUNDING, tol: float = 0.0) -> np.ndarray:
    """Per column j, the bound on ‖x̂1_j − x̂2_j‖ for two computed solutions of M X = R, each backward
    stable to δ = c·n·u: x̂ − x = M⁻¹(Δr − ΔM x̂), so ‖x̂1 − x̂2‖ ≤ 2‖M⁻¹‖·δ·(‖M‖‖x‖ + ‖s‖), where s
    bounds the magnitudes of the right-hand side's terms (default |M||x|: R = M x given as data).
    Relative to ‖x‖ this is ~cond(M)·δ (Higham Thm 7.2): a forward error grows with the conditioning.
    tol: one of the two is an iterative solve to relative residual tol (δ grows by iterative_bound)."""
    M = np.asarray(M, dtype=np.float64)
    X = _columns(X)
    s = np.abs(M) @ np.abs(X) if scale is None else _columns(scale)
    delta = rounding_bound(M.shape[0], dtype or _dtype_of(X), c) + iterative_bound(M.shape[0], tol)
    return (
        2
        * np.abs(np.linalg.inv(M)).sum(axis=1).max()
        * delta
        * (np.abs(M).sum(axis=1).max() * np.abs(X).max(axis=0) + np.abs(s).max(axis=0))
    )


def assert_same_solution(
    M, X1, X2, scale=None, *, dtype=None, c: float = C_ROUNDING, tol: float = 0.0, what: str = "X1 = X2"
):
    """X1 and X2, two backward-stable computed solutions of M X = R, agree within solution_bound."""
    X1, X2 = _columns(X1), _columns(X2)
    bound = solution_bound(M, X2, scale, dtype=dtype or _dtype_of(X1, X2), c=c, tol=tol)
    err = np.abs(X1 - X2).max(axis=0)
    j = int(np.argmax(err / bound))
    size = max(float(np.abs(X2[:, j]).max()), np.finfo(np.float64).tiny)  # reported relative to ‖x‖
    _check(float(err[j]) / size, float(bound[j]) / size, what)


def assert_below(err, bound, what: str, size=None):
    """err ≤ bound entry by entry, for bounds a test composes itself from the ones above; with size
    (the magnitude of the quantities compared), the bound must also be below it: not vacuous."""
    err, bound = np.broadcast_arrays(np.abs(np.asarray(err, dtype=np.float64)), np.asarray(bound, dtype=np.float64))
    if size is not None:
        assert bound.max() < size, f"{what}: the bound {bound.max():.3g} ≥ {size:.3g}: the test would assert nothing"
    k = np.unravel_index(np.argmax(err / bound), err.shape)
    _MARGINS.append((os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0], what, float(err[k] / bound[k])))
    assert np.all(err <= bound), f"{what}: error {err[k]:.3g} > bound {bound[k]:.3g} at {k}"


def dynamics_scale(model, q, v, tau, qdd, f_ext=None, M=None):
    """|M||q̈| + |τ| + |b(q, v)| + |g(q)|: the magnitudes of the terms of the equation of motion
    M q̈ + b(q, v) = τ (g the gravity part of b, which can cancel against the velocity products),
    so that the rounding of an RNEA or ABA pass is ≤ δ times this vector (a running-error style
    bound, Higham §3.3)."""
    M = td.mass_matrix(model, q) if M is None else M
    zero = np.zeros(model.nv)
    return (
        np.abs(M) @ np.abs(qdd)
        + np.abs(tau)
        + np.abs(td.bias_forces(model, q, v, f_ext))
        + np.abs(td.bias_forces(model, q, zero))
    )


def bias_term_scale(model, q, v):
    """The magnitudes of the terms the bias forces sum: b = Σ_j J_jᵀ (I_j a_j + v_j ×* I_j v_j) over
    the bodies j (v_j = J_j q̇, a_j = J̇_j q̇, body coordinates; gravity apart), so Σ_j |J_j|ᵀ
    (|I_j||a_j| + |v_j ×*||I_j||v_j|), a running-error scale (Higham §3.3). |b| alone understates it
    when the terms cancel: a hinge about the vertical carried by two horizontal slides (gymnasium's
    point.xml, dm_control's swimmer) has b = 0 for it exactly, from terms of size m|c||v||ω|."""
    out = np.zeros(model.nv)
    for j in range(1, model.n_bodies):
        J = td.frame_jacobian(model, q, j, reference="local")
        a = td.frame_bias_acceleration(model, q, v, j, reference="local")
        I = np.abs(np.asarray(model.core.spatial_inertia(j)))
        w, u = J[:3] @ v, J[3:] @ v
        wx = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        ux = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
        cross = np.abs(np.block([[wx, ux], [np.zeros((3, 3)), wx]]))  # v ×* on forces [n; f]
        out += np.abs(J).T @ (I @ np.abs(a) + cross @ (I @ np.abs(np.r_[w, u])))
    return out


def assert_same_accelerations(
    model, q, v, tau, a1, a2, f_ext=None, *, dtype=None, c: float = C_ROUNDING, what: str = "q̈"
):
    """Two algorithms' q̈ = M⁻¹(τ − b) for the same state: each solves M q̈ = τ − b within δ = c·n·u
    of the magnitudes of the terms (its own M, its own bias force), so they agree within
    2‖M⁻¹‖δ(‖M‖‖q̈‖ + ‖dynamics_scale‖) (assert_same_solution with the bias terms' magnitudes)."""
    M = td.mass_matrix(model, q)
    a2 = np.asarray(a2, dtype=np.float64)
    assert_same_solution(
        M, a1, a2, dynamics_scale(model, q, v, tau, a2, f_ext, M), dtype=dtype or _dtype_of(a1, a2), c=c, what=what
    )


def assert_within_rounding(x, ref, scale, n: int, *, dtype=None, c: float = C_ROUNDING, what: str = "x = ref"):
    """Two evaluations of the same sums of products: max|x − ref| ≤ δ·max|scale| with δ = c·n·u and
    `scale` the magnitudes summed (e.g. |A||y| for A y; |M| for two computations of M), Higham §3.1."""
    x, ref = np.asarray(x), np.asarray(ref)
    s = float(np.abs(np.asarray(scale, dtype=np.float64)).max())
    err = float(np.abs(x.astype(np.float64) - ref.astype(np.float64)).max())
    s = s if s > 0 else 1.0
    _check(err / s, rounding_bound(n, dtype or _dtype_of(x, ref), c), what)


def assert_agrees_with_peer(
    model,
    q,
    v=None,
    tau=None,
    M_peer=None,
    b_peer=None,
    qdd_peer=None,
    Minv_peer=None,
    qdd=None,
    Minv=None,
    what: str = "peer",
):
    """Treedyn against a peer (Pinocchio, MuJoCo) on one state: two computations of the same M, b,
    q̈ and M⁻¹ from the same model (each parsed from the same numbers, rounded on the way in), each
    within δ = c·n·u of the magnitudes it sums. M: within δ·max|M|; b: within δ·max(|b| + |g| + the
    magnitudes of its velocity terms, bias_term_scale);
    q̈ and M⁻¹: two backward-stable solutions (assert_same_accelerations, assert_same_solution).
    qdd and Minv are treedyn's (ABA's by default)."""
    M = td.mass_matrix(model, q)
    n = model.nv
    if M_peer is not None:
        assert_within_rounding(M, M_peer, M, n, what=f"M = {what}")
    if b_peer is not None:
        zero = np.zeros(n)
        scale = dynamics_scale(model, q, v, zero, zero, M=M) + bias_term_scale(model, q, v)
        assert_within_rounding(td.bias_forces(model, q, v), b_peer, scale, n, what=f"b = {what}")
    if qdd_peer is not None:
        qdd = td.make_solver("aba", model).forward_dynamics(q, v, tau) if qdd is None else qdd
        assert_same_accelerations(model, q, v, tau, qdd, qdd_peer, what=f"q̈ = {what}")
    if Minv_peer is not None:
        Minv = td.make_solver("aba", model).inverse_inertia(q, np.eye(n)) if Minv is None else Minv
        assert_same_solution(M, Minv, Minv_peer, what=f"M⁻¹ = {what}")


def assert_peer_agrees_at_random_states(model, peer, rng, n: int = 4, what: str = "peer", peer_q=None):
    """assert_agrees_with_peer at n random states (q from td.random_configuration, v and τ normal):
    a treedyn.peers.PeerCoordinates' M, b, q̈ and M⁻¹ against ABA's. peer_q(q): the peer's view of
    the same state when its coordinates differ beyond the PeerCoordinates map (default: q)."""
    aba = td.make_solver("aba", model)
    for _ in range(n):
        q = td.random_configuration(model, rng)
        v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
        qp = q if peer_q is None else peer_q(q)
        M_peer = peer.mass_matrix(qp)
        assert_agrees_with_peer(
            model,
            q,
            v,
            tau,
            M_peer,
            peer.bias_forces(qp, v),
            peer.forward_dynamics(qp, v, tau),
            np.linalg.inv(M_peer),
            aba.forward_dynamics(q, v, tau),
            aba.inverse_inertia(q, np.eye(model.nv)),
            what=what,
        )


def pytest_report_header(config):
    """The BLAS kernel numpy's OpenBLAS runs (OPENBLAS_CORETYPE overrides it) and treedyn's M⁻¹
    loops (TREEDYN_MINV_ISA=generic forces the portable ones): the rounding depends on both."""
    lines = [f"treedyn M⁻¹ kernels: {td.build_info()['minv_kernels']}"]
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return lines + ["BLAS kernel: unknown (pip install threadpoolctl)"]
    for lib in threadpool_info():
        if lib.get("user_api") == "blas":
            lines.append(f"BLAS: {lib.get('internal_api')} {lib.get('version')}, kernel {lib.get('architecture')}")
    return lines


def pytest_terminal_summary(terminalreporter):
    """TREEDYN_TOL_REPORT=1 pytest ...: the assertions closest to their bounds (error / bound)."""
    if os.environ.get("TREEDYN_TOL_REPORT") and _MARGINS:
        terminalreporter.section("error / bound, the 15 closest to 1")
        for test, what, r in sorted(_MARGINS, key=lambda m: -m[2])[:15]:
            terminalreporter.write_line(f"{r:8.2e}  {what:28s} {test}")


def random_models():
    """Random trees covering every joint kind, chains, and floating bases."""
    out = [
        ("chain", chain(9)),
        ("chain-prismatic", chain(6, joint="prismatic")),
        ("chain-fb", chain(8, floating_base=True)),
    ]
    for seed in range(4):
        out.append((f"tree-all-{seed}", random_tree(14, seed)))
        out.append((f"tree-fb-{seed}", random_tree(12, 100 + seed, floating_base=True)))
    for kind in ("revolute", "prismatic", "universal", "spherical"):
        out.append((f"tree-{kind}", random_tree(10, 7, joints=(kind,))))
    return out


@pytest.fixture(params=random_models(), ids=lambda p: p[0])
def model(request):
    return request.param[1]


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def random_state(model, rng):
    return td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def outputs_for_thread_counts(f, counts=(1, 2, 3)):
    """[f() run with each OpenMP thread count], the thread count restored afterwards."""
    before = td.get_num_threads()
    try:
        out = []
        for t in counts:
            td.set_num_threads(t)
            out.append(f())
        return out
    finally:
        td.set_num_threads(before)


@pytest.fixture
def saved_figures(monkeypatch):
    """Every figure saved (matplotlib's Figure.savefig, an animation's frames too) while the test
    runs, as (file, tests/figcheck.py's list of its problems, each Axes' (xlim, ylim)), checked just
    before it is written; stays empty when matplotlib is not installed."""
    saved = []
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return saved
    from figcheck import figure_problems

    savefig = Figure.savefig

    def checked_savefig(fig, fname, *args, **kwargs):
        name = str(fname) if isinstance(fname, (str, os.PathLike)) else "a frame"
        saved.append((name, figure_problems(fig), [(ax.get_xlim(), ax.get_ylim()) for ax in fig.axes]))
        return savefig(fig, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", checked_savefig)
    return saved


# --- the Gymnasium and dm_control model files (tests/io/test_io_public_models.py, tests/sim/test_mujoco_suite.py)
# the releases whose models are listed below (pinned: a new release cannot change the set silently)
WHEELS = {"gymnasium": "1.4.0", "dm_control": "1.0.50"}
MODEL_DIRS = {"gymnasium": "gymnasium/envs/mujoco/assets/", "dm_control": "dm_control/suite/"}
DOWNLOAD_TIMEOUT = 600  # seconds: the dm_control wheel is ~56 MB


def _cache_dir():
    if os.environ.get("TREEDYN_PUBLIC_MJCF"):
        return os.environ["TREEDYN_PUBLIC_MJCF"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "treedyn", "public-mjcf")


def _unpacked(cache, package, version):
    """The folder holding the package's models, unpacked from its wheel (downloaded if absent)."""
    target = os.path.join(cache, f"{package}-{version}")
    done = os.path.join(target, ".unpacked")
    if os.path.isfile(done):
        return target
    wheel = os.path.join(cache, f"{package}-{version}-py3-none-any.whl")
    if not os.path.isfile(wheel):
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        cmd += [f"{package}=={version}", "-d", cache, "--disable-pip-version-check", "--quiet"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.skip(f"pip download {package}=={version} took over {DOWNLOAD_TIMEOUT} s (no network?)")
        if r.returncode != 0 or not os.path.isfile(wheel):
            tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["no output"]
            pytest.skip(f"cannot download the {package}=={version} wheel (no network?): {tail[0]}")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(target, [n for n in z.namelist() if n.startswith(MODEL_DIRS[package])])
    open(done, "w").close()
    return target


@pytest.fixture(scope="session")
def public_models():
    """{package: folder of its models}, downloaded and unpacked once."""
    cache = _cache_dir()
    os.makedirs(cache, exist_ok=True)
    return {p: os.path.join(_unpacked(cache, p, v), MODEL_DIRS[p]) for p, v in WHEELS.items()}
