"""Scripts that reproduce the papers' figures on this machine: ``python -m treedyn.bench <name>``.

- ``drumwright``: drumwright2012 Fig. 2 and Fig. 3 (time of M⁻¹ against n, serial chains and
  branched bodies, 1 and 2 threads, against CRBA + Cholesky, CRBA + LTL, Pinocchio's
  computeMinverse and MuJoCo's mj_solveM) and, with ``--counts``, Tables 1 and 2.

matplotlib is optional: the scripts always write CSV, and PNG when matplotlib is installed.
"""

SCRIPTS = {"drumwright": "treedyn.bench.drumwright"}
