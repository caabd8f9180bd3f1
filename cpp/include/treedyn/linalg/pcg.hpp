// Preconditioned conjugate gradients (Hestenes–Stiefel with a left preconditioner), matrix-free:
// `A(x, y)` sets y = A x, `P(r, z)` sets z = P⁻¹ r, both on raw arrays of n. Stops when
// ‖r‖ ≤ tol ‖b‖ or after max_iter iterations; x holds the starting guess and gets the result.
// The work vectors (r, z, p, Ap) are the caller's, so that a loop of solves allocates nothing.
#pragma once
#include <Eigen/Core>
#include <cmath>

namespace treedyn::linalg {

template <class S> struct PcgVectors {
  Eigen::Matrix<S, Eigen::Dynamic, 1> r, z, p, Ap;
  explicit PcgVectors(int n = 0) : r(n), z(n), p(n), Ap(n) {}
};

struct PcgResult {
  int iterations = 0;
  bool converged = false;
  bool breakdown = false;  // pᵀAp <= 0: A (or P) is not positive definite
  double relative_residual = 0;
};

template <class S, class Op, class Prec>
PcgResult pcg(Op&& A, Prec&& P, const S* b_, S* x_, int n, S tol, int max_iter, PcgVectors<S>& w) {
  using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  Eigen::Map<const VecX> b(b_, n);
  Eigen::Map<VecX> x(x_, n);
  PcgResult out;
  const S bnorm = b.norm();
  if (bnorm == S(0)) {  // the solution is 0
    x.setZero();
    out.converged = true;
    return out;
  }
  A(x.data(), w.Ap.data());
  w.r = b - w.Ap;
  S rnorm = w.r.norm();
  if (rnorm <= tol * bnorm) {
    out.converged = true;
    out.relative_residual = double(rnorm / bnorm);
    return out;
  }
  P(w.r.data(), w.z.data());
  w.p = w.z;
  S rz = w.r.dot(w.z);
  for (int k = 1; k <= max_iter; ++k) {
    A(w.p.data(), w.Ap.data());
    const S pAp = w.p.dot(w.Ap);
    if (!(pAp > S(0))) {  // no exception: solves may run inside an OpenMP region
      out.breakdown = true;
      break;
    }
    const S alpha = rz / pAp;
    x += alpha * w.p;
    w.r -= alpha * w.Ap;
    rnorm = w.r.norm();
    out.iterations = k;
    if (rnorm <= tol * bnorm) {
      out.converged = true;
      break;
    }
    P(w.r.data(), w.z.data());
    const S rz_new = w.r.dot(w.z);
    w.p = w.z + (rz_new / rz) * w.p;
    rz = rz_new;
  }
  out.relative_residual = double(rnorm / bnorm);
  return out;
}

}  // namespace treedyn::linalg
