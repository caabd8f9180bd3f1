// Joint space inertia inversion algorithm (yang-wu-pan §II-C, eq. (7)) for an unbranched chain
// (any joints, fixed or floating base), in link coordinates:
//   τ^bias = c(q, q̇) by RNEA (q̈ = 0), M(q) by column-wise inverse dynamics, q̈ = M⁻¹(τ − τ^bias).
// Column k of M is the inverse dynamics with q̈ = e_k, q̇ = 0 and no gravity: all nv columns at once
// as two block bi-diagonal systems with 6 x nv blocks, each solved by parallel scan (linalg/scan.hpp):
//   a_1 = S_1 E_1,  a_i = X_i a_{i-1} + S_i E_i          (I − Γ) a = S        eq. (2b), forward
//   F_N = J_N a_N,  F_i = J_i a_i + X_{i+1}ᵀ F_{i+1}     (I − Γ)ᵀ F = J a     eq. (2c), backward
//   M = Sᵀ F                                                                   eq. (2d)
// (E_i: the nv_i rows of the identity that pick joint i's coordinates), then a dense Cholesky solve
// (O(n³), the method's known bottleneck, §V).
#pragma once
#include <Eigen/Cholesky>
#include <string>
#include <vector>

#include "treedyn/algorithms/pivots.hpp"
#include "treedyn/algorithms/rnea.hpp"
#include "treedyn/linalg/scan.hpp"
#include "treedyn/support/parallel.hpp"  // parallel_range

namespace treedyn {

// the chains JSIIA handles: parent[i] = i − 1 (empty if so)
template <class S> std::string jsiia_unsupported(const Model<S>& model) {
  for (int i = 1; i <= model.N; ++i)
    if (model.parent[i] != i - 1) return "the model is not an unbranched chain (body '" + model.name[i] + "')";
  return {};
}

// per-instance workspace: O(N nv) blocks and the nv x nv mass matrix
template <class S> struct JsiiaData {
  using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
  using Mat6R = Eigen::Matrix<S, 6, 6, Eigen::RowMajor>;
  using Block = Eigen::Map<Eigen::Matrix<S, 6, Eigen::Dynamic, Eigen::RowMajor>>;
  int N = 0, nv = 0;
  std::vector<S> Xf, Xb;   // (N−1) 36: the scans' A blocks, X_i (forward) and X_{i+1}ᵀ (backward)
  std::vector<S> b, a, F;  // N 6 nv: right-hand sides, accelerations a_i, forces F_i (6 x nv each)
  ScanWorkspace<S> fwd, bwd;
  MatX M;
  Eigen::LLT<MatX> llt;
  explicit JsiiaData(const Model<S>& model)
      : N(model.N),
        nv(model.nv),
        Xf(size_t(std::max(model.N - 1, 0)) * 36),
        Xb(Xf.size()),
        b(size_t(model.N) * 6 * model.nv),
        a(b.size()),
        F(b.size()),
        fwd(model.N, 6, model.nv),
        bwd(model.N, 6, model.nv),
        M(MatX::Zero(model.nv, model.nv)),
        llt(model.nv) {
    const std::string why = jsiia_unsupported(model);
    if (!why.empty()) throw std::invalid_argument("jsiia: " + why);
  }
  Block block(std::vector<S>& v, int j) { return Block(v.data() + size_t(j) * 6 * nv, 6, nv); }
};

// M(q) from the ^iX_λ and S_i already in data (after kinematics or RNEA)
template <class S> void jsiia_mass_matrix(const Model<S>& model, const Data<S>& data, JsiiaData<S>& w) {
  const int N = model.N, nv = model.nv;
  if (N == 0 || nv == 0) return;
  using Mat6R = typename JsiiaData<S>::Mat6R;
  // forward system (scan index j = body j+1): A_{j-1} = X_{j+1}, b_j = S_{j+1} E_{j+1}
  parallel_range(1, N + 1, 64, [&](int i) {
    auto bi = w.block(w.b, i - 1);
    bi.setZero();
    for (int c = 0; c < model.nv_i[i]; ++c) bi.col(model.v_index[i] + c) = data.S[model.v_index[i] + c].vec();
    if (i > 1) {
      const Mat6<S> X = data.Xup[i].matrix();
      Eigen::Map<Mat6R>(&w.Xf[size_t(i - 2) * 36]) = X;              // A_{i-2} takes a_{i-1} to a_i
      Eigen::Map<Mat6R>(&w.Xb[size_t(N - i) * 36]) = X.transpose();  // backward: F_i to F_{i-1}
    }
  });
  scan_solve<S, 6>(w.fwd, N, 6, nv, w.Xf.data(), w.b.data(), w.a.data());
  // backward system (scan index j = body N−j): A_{j-1} = X_{N−j+1}ᵀ, b_j = J_{N−j} a_{N−j}
  parallel_range(1, N + 1, 64,
                 [&](int i) { w.block(w.b, N - i).noalias() = model.I[i].matrix() * w.block(w.a, i - 1); });
  scan_solve<S, 6>(w.bwd, N, 6, nv, w.Xb.data(), w.b.data(), w.F.data());
  // M = Sᵀ F (eq. (2d)): row v_index[i] + c is S_i[c]ᵀ F_i; then + diag(armature)
  parallel_range(1, N + 1, 64, [&](int i) {
    for (int c = 0; c < model.nv_i[i]; ++c) {
      const int k = model.v_index[i] + c;
      w.M.row(k) = data.S[k].vec().transpose() * w.block(w.F, N - i);
      if (model.has_armature) w.M(k, k) += model.armature[k];
    }
  });
}

template <class S> void jsiia_factorize(const Model<S>& model, JsiiaData<S>& w) {
  w.llt.compute(w.M);
  const int bad = singular_pivot<S>(w.llt, w.M);
  if (bad >= 0) throw_singular_coordinate(model, bad, "jsiia's Cholesky");
}

// inputs: q (nq), qd (nv), tau (nv), fext ((N+1) x 6 or null); output: qdd (nv)
template <class S>
TREEDYN_ENTRY void jsiia(const Model<S>& model, Data<S>& data, JsiiaData<S>& w, const S* q, const S* qd, const S* tau,
                         const S* fext, S* qdd) {
  // τ^bias by RNEA (eq. (7)); it leaves ^iX_λ and S_i in data
  rnea(model, data, q, qd, static_cast<const S*>(nullptr), fext, data.bias.data());
  jsiia_mass_matrix(model, data, w);
  jsiia_factorize(model, w);
  Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, 1>> x(qdd, model.nv);
  x = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, 1>>(tau, model.nv) - data.bias;
  w.llt.solveInPlace(x);
}

// M(q)⁻¹ R (R and Y nv x m, column-major) by the dense Cholesky factor of the scanned M
template <class S>
TREEDYN_ENTRY void jsiia_inverse_inertia(const Model<S>& model, Data<S>& data, JsiiaData<S>& w, const S* q, const S* R,
                                         int m, S* Y) {
  kinematics(model, data, q);
  jsiia_mass_matrix(model, data, w);
  jsiia_factorize(model, w);
  Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>> Ym(Y, model.nv, m);
  Ym = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>>(R, model.nv, m);
  w.llt.solveInPlace(Ym);
}

}  // namespace treedyn
