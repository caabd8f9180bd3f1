"""Formulation stiffness: ascher-pai-cloutier1996 Tables 1 and 2, reproduced in float32.

    python -m benchmarks ascher --table 2       Example 3: D₂ and q̈₁ for CRBM, ABM, modified ABM
    python -m benchmarks ascher --table 1       two-link chains: dynamics evaluations over 10 s
    python -m benchmarks ascher --table 1 --links 3 4     the same with more links at the tip
    python -m benchmarks ascher --quick         both tables, Table 1 at three r values (QUICK_R)

Every solver is constructed with ``dtype=np.float32``, so every kernel runs in single precision
in C++. The paper numbers its links from the tip (link 1) to the base (link 2); treedyn numbers
from the base, so the paper's (τ₁, τ₂) = (981, 9.81) is treedyn's tau = (9.81, 981) and the
paper's q̈₁ is treedyn's qdd[1].

CRBM: the paper eliminates M q̈ = τ − c by Gaussian elimination "using no row permutations and
our system of link enumeration" — from the tip, without square roots. That is Featherstone's LTDL
factorisation, ``crba-ltl`` with ``ltdl=True``; it is the CRBM column. Our dense ``crba-cholesky``
(LLᵀ from the base) is shown beside it: eliminating from the base, it subtracts m₁²/(m₁+m₂) from
m₁ and loses m₂ already at m₁ = 1e7 (and at 1e9 meets a small positive garbage pivot and returns
a wrong q̈ without noticing — the hazard the paper warns of). ABM is ``aba``, the modified ABM
``aba-modified``.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from treedyn import Inertia, Model, Prismatic, Revolute, SingularInertiaError, Transform, make_solver, mass_matrix
from treedyn.sim.simulate import simulate

from ._common import log_ticks, pyplot, save, write_csv

# label: (solver, options)
METHODS = {
    "CRBM": ("crba-ltl", {"ltdl": True}),
    "ABM": ("aba", {}),
    "modified ABM": ("aba-modified", {}),
    "CRBA+LLT": ("crba-cholesky", {}),
}
PAPER_METHODS = ("CRBM", "ABM", "modified ABM")

# Table 2: m1, case, then (D2, q̈1) for CRBM, ABM, modified ABM; None where the paper prints no q̈1
PAPER_TABLE2 = [
    (1e7, 1, (1.0, 971.19), (1.0, 971.19), (1.0, 971.19)),
    (1e8, 1, (0.0, None), (1.0, 971.19), (1.0, 971.19)),
    (1e9, 1, (0.0, None), (1.0, 971.19), (1.0, 971.19)),
    (1e6, 2, (1.03, 941.76), (1.03, 941.76), (1.0, 971.19)),
    (1e7, 2, (1.5, 647.46), (1.5, 647.46), (1.0, 971.19)),
    (1e8, 2, (0.0, None), (0.0, None), (1.0, 971.19)),
    (1e9, 2, (0.0, None), (0.0, None), (1.0, 971.19)),
]

# Table 1: r = l2/(l1 + l2), n_ABM, n_CRBM (None = fail), order of magnitude of κ_max
PAPER_TABLE1 = [
    (0.1, 3169, 3041, 2),
    (0.05, 4623, 5109, 3),
    (0.01, 8189, 8082, 4),
    (0.005, 10534, 10420, 5),
    (0.004, 11170, 11835, 5),
    (0.0035, 12375, 13792, 5),
    (0.003, 11990, 18986, 5),
    (0.0025, 12170, 35406, 5),
    (0.002, 12779, 44294, 5),
    (0.0018, 12418, 86656, 5),
    (0.0015, 12860, None, 5),
]


# --quick: Table 1 at an easy, a middle and a stiff r (where CRBM's count jumps), the same figure
QUICK_R = (0.1, 0.01, 0.0025)


# ----------------------------------------------------------------------------- Table 2
def example3_model(m1: float, case: int, m2: float = 1.0) -> Model:
    """Two collinear prismatic joints with coinciding frames (Φ₂₁ = I), no gravity; the base
    link has mass m2, the tip link m1; links are rods along x whose lengths are proportional to
    their masses (their rotational inertia never enters a prismatic joint's equations)."""
    H = {1: (0, 0, 1), 2: (0, 1, 1)}[case]  # the linear part of H; case 2 is normalised by Prismatic
    model = Model(gravity=(0, 0, 0))

    def rod(m):
        length = m / m2
        return Inertia(m, (0, 0, 0), np.diag([1e-6 * m, m * length**2 / 12, m * length**2 / 12]))

    model.add_body("link2", None, Prismatic(H), inertia=rod(m2))  # the paper's base link, k = 2
    model.add_body("link1", "link2", Prismatic(H), inertia=rod(m1))  # the paper's tip link, k = 1
    return model


def elimination_pivot(M: np.ndarray, tip_first: bool) -> float:
    """The last pivot of Gaussian elimination of the 2x2 M in its own precision: the paper's D₂
    (the base joint's pivot) when the tip is eliminated first, M_bb − M_bt (M_tb / M_tt); the
    tip's M_tt − M_tb (M_bt / M_bb) when the base is (≈ m₁m₂/(m₁+m₂) ≈ m₂ in exact arithmetic)."""
    b, t = (0, 1) if tip_first else (1, 0)
    return float(M[b, b] - M[b, t] * (M[t, b] / M[t, t]))


def cholesky_pivot(M: np.ndarray) -> float:
    """The last pivot L_tt² of the LLᵀ factorisation from the base, in M's precision:
    M_tt − (M_tb / √M_bb)²."""
    L_tb = M[1, 0] / np.sqrt(M[0, 0])
    return float(M[1, 1] - L_tb * L_tb)


def table2(dtype=np.float32):
    """Rows of (m1, case, {method: (D2, qdd1 or None, note)})."""
    tau = np.array([9.81, 981.0])  # treedyn order: (τ₂ base, τ₁ tip)
    q = v = np.zeros(2)
    rows = []
    for m1, case, *_ in PAPER_TABLE2:
        model = example3_model(m1, case)
        out = {}
        for label, (name, options) in METHODS.items():
            solver = make_solver(name, model, dtype=dtype, **options)
            if name in ("aba", "aba-modified"):
                D2 = float(solver.joint_inertias(q)[0][0, 0])
            elif label == "CRBM":
                D2 = elimination_pivot(solver.mass_matrix(q), tip_first=True)
            else:
                D2 = cholesky_pivot(solver.mass_matrix(q))
            try:
                qdd = solver.forward_dynamics(q, v, tau)
                out[label] = (D2, float(qdd[1]), "")
            except SingularInertiaError:
                out[label] = (D2, None, "singular pivot")
            except ValueError as e:  # an overflow is reported, never returned as inf/NaN
                out[label] = (D2, None, str(e).split(":")[0])
        rows.append((m1, case, out))
    return rows


def print_table2(rows, file=None):
    file = sys.stdout if file is None else file
    print("Table 2 (Example 3), float32: D2 / qdd1, ours | paper's (CRBM = LDLᵀ from the tip, as the paper)", file=file)
    head = f"{'m1':>6} {'case':>4} " + " ".join(f"{label:>36}" for label in PAPER_METHODS) + f" {'ours: CRBA+LLT':>26}"
    print(head, file=file)

    def fmt(D2, qdd, note):
        return f"{D2:.3g}/{'—' if qdd is None else f'{qdd:.2f}'}" + (" singular" if note else "")

    for (m1, case, out), paper in zip(rows, PAPER_TABLE2):
        cells = []
        for k, label in enumerate(PAPER_METHODS):
            pD2, pq = paper[2 + k]
            cells.append(f"{fmt(*out[label]):>22} | {pD2:g}/{'—' if pq is None else pq:<7}")
        print(
            f"{m1:>6.0e} {case:>4} " + " ".join(f"{c:>36}" for c in cells) + f" {fmt(*out['CRBA+LLT']):>26}", file=file
        )


# ----------------------------------------------------------------------------- Table 1
def chain_model(r: float, links: int = 2, width: float = 0.1) -> Model:
    """Table 1's planar chain of parallel revolute joints (about z): total length 1 m and mass
    1 kg with l = m per link; the base link has length r, the others share 1 − r equally;
    rectangular links of width ``width``; gravity along −y, orthogonal to the arm at q = 0."""
    lengths = [r] + [(1.0 - r) / (links - 1)] * (links - 1)
    model = Model(gravity=(0, -9.81, 0))
    parent, offset = None, 0.0
    for k, l in enumerate(lengths):
        box = Inertia.box(l, (l, width, width), com=(l / 2, 0, 0))  # mass = length (1 kg per metre)
        parent = model.add_body(f"link{k + 1}", parent, Revolute((0, 0, 1)), Transform(translation=(offset, 0, 0)), box)
        offset = l
    return model


def table1(
    rs=None,
    links: int = 2,
    t_end: float = 10.0,
    tol: float = 1e-4,
    dtype=np.float32,
    method: str = "rkf45",
    max_evals: int = 400_000,
    progress: bool = False,
    methods=None,
):
    """Rows of (r, {label: n_evals or None (failed)}, κ_max) for simulations from rest at q = 0.

    The integrator is Runge–Kutta–Fehlberg 4(5) with the step accepted when the largest scaled
    component of the local error is below 1 (``error_norm="max"``) at rtol = atol = 1e-4: with
    that reading of the paper's "step size accuracy of 1e-4" our counts land within a few percent
    of the paper's at r = 0.1 and r = 0.0025 (with the RMS norm the CRBM effect is about 2/3 as
    strong)."""
    methods = list(METHODS) if methods is None else methods
    rs = [row[0] for row in PAPER_TABLE1] if rs is None else rs
    rows = []
    for r in rs:
        model = chain_model(r, links)
        q0, v0 = np.zeros(model.nv), np.zeros(model.nv)
        counts, kappa = {}, 0.0
        for label in methods:
            name, options = METHODS[label]
            solver = make_solver(name, model, dtype=dtype, **options)
            res = simulate(
                model,
                solver,
                q0,
                v0,
                t_end,
                method=method,
                rtol=tol,
                atol=tol,
                error_norm="max",
                max_steps=max_evals // 6,
                progress=progress,
                on_failure="return",
            )
            counts[label] = res.n_evals if res.success else None
            if label == "modified ABM" and res.success:  # the condition number along a good trajectory
                kappa = max(np.linalg.cond(mass_matrix(model, q)) for q in res.q[:: max(1, len(res.q) // 200)])
        rows.append((r, counts, kappa))
    return rows


def print_table1(rows, links: int = 2, file=None):
    file = sys.stdout if file is None else file
    paper = {row[0]: row for row in PAPER_TABLE1} if links == 2 else {}
    print(f"Table 1, {links}-link chains, 10 s, adaptive RK 4(5) at 1e-4, float32: dynamics evaluations", file=file)
    print(
        f"{'r':>8} {'CRBM':>9} {'ABM':>9} {'mod. ABM':>9} {'CRBA+LLT':>9} {'kappa_max':>10}"
        + (f" | {'paper n_ABM':>11} {'n_CRBM':>8} {'O(kappa)':>8}" if paper else ""),
        file=file,
    )
    for r, counts, kappa in rows:
        c = [("fail" if counts.get(k, 0) is None else str(counts.get(k, "-"))) for k in METHODS]
        line = f"{r:>8g} {c[0]:>9} {c[1]:>9} {c[2]:>9} {c[3]:>9} {kappa:>10.2e}"
        if r in paper:
            _, nA, nC, e = paper[r]
            line += f" | {nA:>11} {('fail' if nC is None else nC):>8} {f'1e{e}':>8}"
        print(line, file=file)


def plot_table1(results, path: str):
    plt = pyplot(lambda line: print(line, file=sys.stderr))
    if plt is None:
        return None
    fig, axes = plt.subplots(1, len(results), figsize=(max(6.4, 4.6 * len(results)), 4.6), sharey=True, squeeze=False)
    styles = {"CRBM": ("C0", "o-"), "ABM": ("C1", "s--"), "modified ABM": ("C2", "^-"), "CRBA+LLT": ("C3", "x:")}
    for ax, (links, rows) in zip(axes[0], results.items()):
        for label in METHODS:
            pts = [(r, c[label]) for r, c, _ in rows if c.get(label) is not None]
            if pts:
                color, style = styles[label]
                ax.loglog(*zip(*pts), style, color=color, label=label, alpha=0.85)
        if links == 2:
            paper = [(r, nC) for r, _, nC, _ in PAPER_TABLE1 if nC is not None]
            ax.loglog(*zip(*paper), "k:", label="paper CRBM")
            ax.loglog([r for r, *_ in PAPER_TABLE1], [nA for _, nA, _, _ in PAPER_TABLE1], "k-.", label="paper ABM")
        log_ticks(ax.xaxis)
        log_ticks(ax.yaxis)
        ax.invert_xaxis()
        ax.set_title(f"{links} links")
        ax.set_xlabel("r = base link length / total length [m/m]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("dynamics evaluations over 10 s [count]")
    fig.suptitle("Formulation stiffness (ascher-pai-cloutier1996 Table 1):\nfloat32, adaptive RKF 4(5) at 1e-4")
    fig.tight_layout()
    return save(fig, path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks ascher", description=__doc__.split("\n")[0])
    p.add_argument("--table", type=int, choices=(1, 2), action="append", help="which table (default both)")
    p.add_argument("--links", type=int, nargs="+", default=[2], help="chain lengths for Table 1 (default 2)")
    p.add_argument("--r", type=float, nargs="+", help="the r values for Table 1 (default the paper's; --quick QUICK_R)")
    p.add_argument("--out", default=".", help="folder for the CSV and PNG files")
    p.add_argument("--progress", action="store_true", help="a progress bar per simulation (stderr)")
    p.add_argument("--quick", action="store_true", help=f"Table 1 at r = {', '.join(map(str, QUICK_R))} only")
    args = p.parse_args(argv)
    if args.quick and args.r is None:
        args.r = list(QUICK_R)
    tables = args.table or [2, 1]
    os.makedirs(args.out, exist_ok=True)
    if 2 in tables:
        rows = table2()
        print_table2(rows)
        fields = ["m1", "case"] + [f"{label} {x}" for label in METHODS for x in ("D2", "qdd1", "note")]
        write_csv(
            os.path.join(args.out, "ascher_table2.csv"),
            [dict(zip(fields, [m1, case] + [x for label in METHODS for x in out[label]])) for m1, case, out in rows],
            fields,
        )
        print()
    if 1 in tables:
        results = {}
        for links in args.links:
            rows = table1(args.r, links, progress=args.progress)
            print_table1(rows, links)
            print()
            results[links] = rows
        fields = ["links", "r"] + list(METHODS) + ["kappa_max"]
        write_csv(
            os.path.join(args.out, "ascher_table1.csv"),
            [
                dict(
                    zip(
                        fields, [links, r] + [counts[k] if counts[k] is not None else "fail" for k in METHODS] + [kappa]
                    )
                )
                for links, rows in results.items()
                for r, counts, kappa in rows
            ],
            fields,
        )
        png = plot_table1(results, os.path.join(args.out, "ascher_table1.png"))
        if png:
            print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
