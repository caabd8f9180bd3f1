"""Smoke test of an installed treedyn wheel (.ci/wheel, and cibuildwheel's test-command), run from
outside the source tree: the extension imports, a solver runs on a chain, forward dynamics agrees
with inverse dynamics (rnea(q, v, q̈) = τ within an error bound), and the C++ SDK is in the wheel."""

import os
import sys

import numpy as np

import treedyn as td

assert "site-packages" in td.__file__ or "dist-packages" in td.__file__, f"not the installed treedyn: {td.__file__}"
print("treedyn", td.__version__, "from", os.path.dirname(td.__file__))
print("build:", {k: td.build_info()[k] for k in ("openmp", "simd", "eigen_version", "compiler")})

model = td.scenes.chain(8)
rng = np.random.default_rng(0)
q, v, tau = td.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
qdd = td.make_solver("aba", model).forward_dynamics(q, v, tau)
residual = np.abs(td.rnea(model, q, v, qdd) - tau).max()
# backward error of two O(n)-deep algorithms (treedyn.testing's δ = 64·n·u) on M q̈ = τ − c
M, c = td.mass_matrix(model, q), td.bias_forces(model, q, v)
bound = (
    64
    * model.nv
    * np.finfo(float).eps
    * (np.abs(M).sum(1).max() * np.abs(qdd).max() + np.abs(tau).max() + np.abs(c).max())
)
print(f"rnea(q, v, forward_dynamics(q, v, tau)) - tau: {residual:.3g} (bound {bound:.3g})")
assert residual <= bound

# the C++ SDK: headers, CMake package, ABI
include, cmake_dir = td.get_include(), td.get_cmake_dir()
for path in (os.path.join(include, "treedyn", "sdk", "abi.hpp"), os.path.join(cmake_dir, "treedynConfig.cmake")):
    assert os.path.isfile(path), path
print("C++ SDK:", include, "ABI", td.sdk.ABI_VERSION)
print("smoke test passed on Python", sys.version.split()[0])
