"""Scripts that reproduce the papers' figures on this machine, run from the repository's root
against the installed treedyn: ``python -m benchmarks <name> [options]`` (``--list``).

- ``drumwright``: drumwright2012 Fig. 2 and Fig. 3 (time of M⁻¹ against n, serial chains and
  branched bodies, 1 and 2 threads, against CRBA + Cholesky, CRBA + LTL, Pinocchio's
  computeMinverse and MuJoCo's mj_solveM) and, with ``--counts``, Tables 1 and 2.

- ``ascher``: ascher-pai-cloutier1996 Table 2 (Example 3 in float32: D₂ and q̈₁ for CRBM, ABM and
  the modified ABM) and Table 1 (dynamics evaluations of an adaptive RK 4(5) over 10 s on
  ill-conditioned two-link chains, and on longer ones with ``--links 3 4``).

- ``groups``: yang-wu-pan Fig. 2 (time of one forward dynamics call against the number of links,
  for aba, crba-cholesky, jsiia, cfa-oee and Pinocchio's aba) and Fig. 3 (time of B robots'
  batched forward dynamics over OpenMP threads against B, for 7-, 10- and 200-link robots, against
  Pinocchio's abaInParallel on as many threads).

- ``redmax``: baxter2019 §4 (Figs. 3-4, 8, 14-15, 17, 19-20, 22, 25-26): time per RedMax step
  against DOF for the bridge (rigid towers, flexible towers, car, heavy car), the umbrella, the
  tree and the alternate tree, with ``redmax-pcg``, ``redmax-direct`` and MKL Pardiso (when
  pypardiso is installed) on the same assembled matrix; PCG iterations; fitted slopes and
  crossovers beside the thesis'.

- ``centipede``: drumwright2012 Fig. 4 (§6.3): time per step of the walking centipede (explicit
  Euler, h = 1e-5, one thread) against its legs, every phase, with the contact-space inertia by
  drumwright, crba-cholesky and crba-ltl, and MuJoCo's mj_step on the same centipede; fitted
  slopes, crossovers, the Cholesky / drumwright ratio beside the paper's order of magnitude.

- ``contact_step``: the whole contact step (the C++ step: ADMM on the tree Delassus operator)
  against MuJoCo's mj_step on the walking centipede, semi-implicit Euler at h = 1e-3, 10 to 250
  segments, interleaved on one thread: the ratio MuJoCo / treedyn per size, the ADMM iterations,
  where the step goes; and a batch of worlds on 1 and 2 threads.

- ``speed``: featherstone-part3's model simplification and symbolic simplification against
  Pinocchio in the same run: pinocchio.aba / treedyn's "aba" (generic, specialise=True, and on
  td.simplify's model) on a 100-joint chain, UR5, Panda, Solo12 and Talos with operation counts;
  pin.abaInParallel / batched "aba" on 2 threads (4096 x 7, 256 x 200; float64 and float32); the
  2-thread speedup of the full M⁻¹ at n = 1000.

- ``sweep``: a parameter sweep on Dask (treedyn.distributed.sweep, a LocalCluster or ``--scheduler``):
  the bridge's maximum deck deflection against its cable stiffness, under gravity and with the car;
  the sweep's wall time beside the same simulations run serially.

- ``derivatives``: analytic derivatives against Pinocchio in the same run: time per call of
  td.rnea_derivatives / td.aba_derivatives and computeRNEADerivatives / computeABADerivatives on one
  thread over chain lengths and on UR5, Solo12 and Talos, interleaved min-of-samples, and the ratio.

- ``gpu``: yang-wu-pan Figs. 2-3 on a GPU with treedyn's XLA backend (treedyn.xla): one robot's forward
  dynamics against its links (aba, cfa-oee, crba-cholesky on the device) and B robots' against B
  (Panda, Talos) beside treedyn's C++ batch on all cores, pin.abaInParallel and MJX's forward on the same
  device; ``--quick`` for a short GPU loan. Runs on the CPU too (its figures then say so).

- ``rollout``: many worlds × many steps in one call (``td.rollout`` over ``td.StepData``) against
  ``mujoco.rollout`` on a Gymnasium model, 1 and 2 threads: the ratio and each one's speed-up.

matplotlib is optional: the scripts always write CSV, and PNG when matplotlib is installed.
"""

SCRIPTS = {
    "drumwright": "benchmarks.drumwright",
    "ascher": "benchmarks.ascher",
    "groups": "benchmarks.groups",
    "redmax": "benchmarks.redmax",
    "centipede": "benchmarks.centipede",
    "contact_step": "benchmarks.contact_step",
    "speed": "benchmarks.speed",
    "sweep": "benchmarks.sweep",
    "derivatives": "benchmarks.derivatives",
    "gpu": "benchmarks.gpu",
    "rollout": "benchmarks.rollout",
}
