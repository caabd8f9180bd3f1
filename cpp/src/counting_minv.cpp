// Operation counts of the inverse inertia kernels (drumwright2012 Tables 1 and 2), measured with
// the counting scalar on a serial chain of n revolute joints (fixed base, axes in no special
// direction: the kernels never exploit an axis' zeros). Each stage runs the production kernel
// instantiated for Counted; only the split of Alg. 1 into its two passes repeats mMultInv's loop.
#include <map>
#include <string>
#include <tuple>

#include <Eigen/Geometry>

#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/ltl.hpp"
#include "treedyn/algorithms/minv/blocked.hpp"
#include "treedyn/algorithms/minv/minv.hpp"
#include "treedyn/spatial/counting.hpp"

namespace treedyn {

namespace {
using C = Counted;
using Counts = std::tuple<long, long, long>;  // multiplications, additions, divisions
template <class F> Counts measure(F&& f) {
  Counted::count() = OpCount{};
  f();
  const OpCount c = Counted::count();
  return Counts{c.m, c.a, c.d};
}

Model<double> revolute_chain(int n) {
  Model<double> model;
  const Vec3<double> axes[2] = {Vec3<double>(0.36, 0.48, 0.8), Vec3<double>(0.0, 0.6, 0.8)};
  const Mat3<double> E = Eigen::AngleAxisd(0.3, Vec3<double>(1, 2, 3).normalized()).toRotationMatrix();
  for (int i = 1; i <= n; ++i) {
    const Transform<double> placement{E, Vec3<double>(0.1, 0.02, -0.03)};
    const RigidInertia<double> I = RigidInertia<double>::from_mci(
        1.0 + 0.1 * i, Vec3<double>(0.05, 0.01, 0.0), Vec3<double>(0.01, 0.02, 0.015).asDiagonal().toDenseMatrix());
    model.add_body("link" + std::to_string(i), i - 1, JointKind::Revolute, placement, axes[i % 2], Vec3<double>::Zero(),
                   I);
  }
  return model;
}
}  // namespace

// {stage: (multiplications, additions, divisions)} for a chain of n revolute joints:
//   "global_frame"   ŝ, Î in the global frame (with the transforms ^iX_0 from q)   Table 1 rows 1-2
//   "articulated"    Î^A, Î^A ŝ, ŝᵀÎ^A ŝ and its inverse                             Table 1 row 3
//   "impulse"        Alg. 1 lines 4-5 over the n columns of R = 1                    Table 1 row 4
//   "velocity"       Alg. 1 lines 7-10 over the n columns                            Table 1 row 5
//   "mMultInv"       the two passes as mMultInv runs them (impulse + velocity)
//   "mInv"           the full M⁻¹ as treedyn computes it (all columns at once, symmetric)
//   "crba"           M by CRBA (link coordinates, compact transforms)                 Table 2 rows 1-5
//   "cholesky"       M = LLᵀ (Eigen's LLT)                                           Table 2 row 6
//   "cholesky_inverse"  M⁻¹ from LLᵀ (two triangular solves with n right-hand sides)
//   "ltl"            Featherstone's LTL of M;  "ltl_inverse": M⁻¹ from it, column by column
std::map<std::string, Counts> minv_op_counts(int n) {
  const Model<C> model = revolute_chain(n).cast<C>();
  std::vector<C> q(model.nq);
  for (int k = 0; k < model.nq; ++k) q[k] = C(0.3 + 0.7 * k);
  std::map<std::string, Counts> out;

  MinvData<C> w(model);
  out["global_frame"] = measure([&] {
    for (int i = 1; i <= model.N; ++i) minv_global_frame_step(model, w, i, q.data());
  });
  out["articulated"] = measure([&] {
    for (int i = model.N; i >= 1; --i) minv_articulated_inertia_step(model, w, i);
  });

  const int nv = model.nv;
  std::vector<C> R(std::size_t(nv) * nv, C(0.0)), Y(std::size_t(nv) * nv);
  for (int k = 0; k < nv; ++k) R[std::size_t(k) * nv + k] = C(1.0);
  auto& c = w.col;
  out["mMultInv"] = measure([&] {
    for (int k = 0; k < nv; ++k) mMultInv(model, w, c, &R[std::size_t(k) * nv], &Y[std::size_t(k) * nv]);
  });
  // the same columns, lines 4-5 alone (mMultInv's loop, repeated here to split the count)
  out["impulse"] = measure([&] {
    for (int k = 0; k < nv; ++k) {
      const C* r = &R[std::size_t(k) * nv];
      const int start = last_impulse_joint(model, w, r);
      for (int i = 0; i <= start; ++i) c.busy[i] = 0;
      for (int i = start; i >= 1; --i) mMultInv_impulse_step(model, w, c, i, r);
    }
  });
  {
    const Counts all = out["mMultInv"], imp = out["impulse"];
    out["velocity"] = Counts{std::get<0>(all) - std::get<0>(imp), std::get<1>(all) - std::get<1>(imp),
                             std::get<2>(all) - std::get<2>(imp)};
  }
  MinvBlocked<C> blocked(model);
  std::vector<C> Minv(std::size_t(nv) * nv);
  out["mInv"] = measure([&] { mInv(model, w, blocked, Minv.data(), 1); });

  Data<C> data(model, true);
  out["crba"] = measure([&] { crba(model, data, q.data()); });
  const Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic> M = data.M;
  out["cholesky"] = measure([&] { data.llt.compute(data.M); });
  Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic> I =
      Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic>::Identity(nv, nv);
  out["cholesky_inverse"] = measure([&] { data.llt.solveInPlace(I); });
  const std::vector<int> lambda = coordinate_parents(model);
  data.M = M;
  out["ltl"] = measure([&] { ltl(data.M.data(), nv, lambda.data()); });
  out["ltl_inverse"] = measure([&] {
    for (int k = 0; k < nv; ++k) ltl_solve(data.M.data(), nv, lambda.data(), &R[std::size_t(k) * nv], k);
  });
  return out;
}

}  // namespace treedyn
