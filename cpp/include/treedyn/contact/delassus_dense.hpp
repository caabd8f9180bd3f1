// The Delassus operator formed, G = J M⁻¹ Jᵀ, from the factors of ABA (docs/contact.md): for the
// small problems, where m² entries cost less than an iteration's articulated-body passes.
//
// ABA's backward pass is a unit block-triangular map B (τ ↦ u: u_i = τ_i − S_iᵀ p^A_i, p^A_λ +=
// ^iX_λᵀ(p^A_i + U_i D_i⁻¹ u_i)) and its forward pass solves with D + N, N strictly on the
// ancestors; M⁻¹ = (D + N)⁻¹ B is symmetric, so M = B⁻¹ D B⁻ᵀ (the block LDU factors are unique)
// and
//     G = J M⁻¹ Jᵀ = Yᵀ D⁻¹ Y,   Y = B Jᵀ.
// Column r of Y is the backward pass of row r's force alone: nonzero only on the joints between
// the row's bodies and the root. So Y costs O(d) per row and G_rs sums over the joints that rows
// r and s share: O(m d + Σ_i n_i m_i²), m_i the rows through joint i, d the depth. Solves with
// G + ρD by its Cholesky factor, O(m³) per ρ; products and solves O(m²). D weighs the rows by
// their own inverse inertia (G's diagonal): ADMM's penalty row by row (admm.hpp).
#pragma once
#include <Eigen/Cholesky>
#include <algorithm>
#include <vector>

#include "treedyn/contact/delassus.hpp"

namespace treedyn {

struct DenseDelassus {
  using VecX = Eigen::VectorXd;
  using MatX = Eigen::MatrixXd;
  const Model<double>* model;
  ReservedMatrix G, F, S, Y;  // G; G + ρD's Cholesky factor L (lower), or (S) its inverse; Y = B Jᵀ (nv x m)
  ReservedVector d;           // the rows' ADMM weights D (admm.hpp): G's diagonal, a contact's mean over its rows
  double rho = 1.0;
  std::vector<Force<double>> pA;          // (N + 1) x 3: a row group's articulated forces
  std::vector<std::vector<int>> through;  // per body: the rows whose Y is nonzero on its joint
  std::vector<int> path, stamp;           // a row group's joints, leaves first; visited marks
  int visit = 0;

  explicit DenseDelassus(const Model<double>& m)
      : model(&m), pA(3 * (m.N + 1), Force<double>::zero()), through(m.N + 1), stamp(m.N + 1, 0) {}

  // the joints from bodies `seeds` to the root, each once, children before parents (λ(i) < i)
  void collect_path(std::initializer_list<int> seeds) {
    ++visit;
    path.clear();
    for (int b : seeds)
      for (int i = b; i > 0 && stamp[i] != visit; i = model->parent[i]) stamp[i] = visit, path.push_back(i);
    std::sort(path.begin(), path.end(), std::greater<int>());
  }

  // ABA's backward pass of the rows r0 .. r0 + c − 1 along `path` (their forces seeded in pA, a
  // limit's τ on its coordinate): column r of Y, RBDA Table 7.1 with q̇ = 0, no gravity
  void backward(const TreeDelassus& T, int r0, int c, int tau_dof = -1, double tau = 0.0) {
    for (int i : path) {
      for (int k = 0; k < c; ++k) through[i].push_back(r0 + k);
      switch (model->nv_i[i]) {  // (fixed sizes for the common joints)
        case 1:
          backward_step<1>(T, i, r0, c, tau_dof, tau);
          break;
        case 3:
          backward_step<3>(T, i, r0, c, tau_dof, tau);
          break;
        default:
          backward_step<0>(T, i, r0, c, tau_dof, tau);
      }
    }
  }
  template <int NI> void backward_step(const TreeDelassus& T, int i, int r0, int c, int tau_dof, double tau) {
    const Model<double>& M = *model;
    const Data<double>& d = *T.kin;
    const int p = M.parent[i], vi = M.v_index[i], ni = NI ? NI : M.nv_i[i];
    for (int k = 0; k < c; ++k) {
      Force<double>& f = pA[3 * i + k];
      double u[6], z[6];
      double* y = Y.data() + std::size_t(r0 + k) * Y.rows() + vi;
      for (int j = 0; j < ni; ++j) y[j] = u[j] = (vi + j == tau_dof ? tau : 0.0) - dot(d.S[vi + j], f);  // u_i
      for (int j = 0; j < ni; ++j) {
        double x = 0.0;
        for (int l = 0; l < ni; ++l) x += d.Dinv[i](j, l) * u[l];
        z[j] = x;
      }
      for (int j = 0; j < ni; ++j) f += d.U[vi + j] * z[j];  // p^A_i + U_i D_i⁻¹ u_i
      if (p > 0) pA[3 * p + k] += d.Xup[i].inv_apply(f);
      f = Force<double>::zero();
    }
  }

  // G = Yᵀ D⁻¹ Y for the rows of T (its contacts, limits, bilateral rows) at T's factors
  void form(const TreeDelassus& T) {
    const Model<double>& M = *model;
    const int m = T.rows(), P = T.P(), L = int(T.limit_dof.size());
    Y.setZero(M.nv, m);
    for (auto& t : through) t.clear();
    for (int k = 0; k < P; ++k) {  // a contact: its three rows' forces on its bodies (TreeDelassus::spread)
      const ContactFrame& f = T.contacts[k];
      for (int e = 0; e < 2; ++e) {
        if (f.body[e] == 0) continue;
        for (int r = 0; r < 3; ++r) {
          const Force<double> w = Force<double>::from(f.wrench(e, r));
          pA[3 * f.body[e] + r] += e == 1 ? w * -1.0 : w;
        }
      }
      collect_path({f.body[0], f.body[1]});
      backward(T, 3 * k, 3);
    }
    for (int l = 0; l < L; ++l) {  // a limit: s on its coordinate
      collect_path({T.dof_body[T.limit_dof[l]]});
      backward(T, 3 * P + l, 1, T.limit_dof[l], T.limit_sign[l]);
    }
    for (int b = 0; b < int(T.bilateral.rows()); ++b) {  // a bilateral row: any τ, the whole tree
      backward_row(T, 3 * P + L + b, T.bilateral.row(b));
    }
    G.setZero(m, m);
    for (int i = 1; i <= M.N; ++i) {  // G_rs += Y_irᵀ D_i⁻¹ Y_is over the rows through joint i
      switch (M.nv_i[i]) {            // (fixed sizes for the common joints)
        case 1:
          accumulate<1>(T, i);
          break;
        case 3:
          accumulate<3>(T, i);
          break;
        default:
          accumulate<0>(T, i);
      }
    }
    G.triangularView<Eigen::StrictlyLower>() = G.transpose();
    if (T.R.size()) G.diagonal() += T.R;  // the soft rows: G + R (contact/soft.hpp)
    d = G.diagonal();                     // D: the rows' own inverse inertias (relative_weights)
    relative_weights(d, P);
  }
  const ReservedVector& weights() const { return d; }
  const ReservedMatrix* formed() const { return &G; }  // (for the polish: admm.hpp)

  // joint i's share of G's upper triangle: its rows' y_r = Y_ir and z_r = D_i⁻¹ y_r gathered
  // (contiguous), then G_rs += y_r · z_s for r ≤ s in the rows' order. NI: n_i when fixed, else 0
  std::vector<double> ybuf, zbuf;
  template <int NI> void accumulate(const TreeDelassus& T, int i) {
    const std::vector<int>& rows = through[i];
    const int n = int(rows.size()), vi = model->v_index[i], ni = NI ? NI : model->nv_i[i], m = int(G.rows());
    if (n == 0 || ni == 0) return;
    if (int(ybuf.size()) < n * ni) ybuf.resize(n * ni), zbuf.resize(n * ni);
    const auto& Dinv = T.kin->Dinv[i];
    for (int a = 0; a < n; ++a) {
      double* y = ybuf.data() + a * ni;
      double* z = zbuf.data() + a * ni;
      const double* col = Y.data() + std::size_t(rows[a]) * Y.rows() + vi;
      for (int k = 0; k < ni; ++k) y[k] = col[k];
      for (int k = 0; k < ni; ++k) {
        double x = 0.0;
        for (int j = 0; j < ni; ++j) x += Dinv(k, j) * y[j];
        z[k] = x;
      }
    }
    for (int b = 0; b < n; ++b) {
      const double* z = zbuf.data() + b * ni;
      double* Gb = G.data() + std::size_t(rows[b]) * m;
      for (int a = 0; a <= b; ++a) {
        const double* y = ybuf.data() + a * ni;
        double x = 0.0;
        for (int k = 0; k < ni; ++k) x += y[k] * z[k];
        Gb[rows[a]] += x;
      }
    }
  }

  // a row of nv values (a bilateral constraint): the backward pass over the whole tree
  template <class Row> void backward_row(const TreeDelassus& T, int r, const Row& row) {
    const Model<double>& M = *model;
    const Data<double>& d = *T.kin;
    for (int i = M.N; i >= 1; --i) {
      const int p = M.parent[i], vi = M.v_index[i], ni = M.nv_i[i];
      through[i].push_back(r);
      Force<double>& f = pA[3 * i];
      Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> u(ni);
      for (int j = 0; j < ni; ++j) u[j] = row[vi + j] - dot(d.S[vi + j], f);
      Y.col(r).segment(vi, ni) = u;
      const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> z = d.Dinv[i] * u;
      for (int j = 0; j < ni; ++j) f += d.U[vi + j] * z[j];
      if (p > 0) pA[3 * p] += d.Xup[i].inv_apply(f);
      f = Force<double>::zero();
    }
  }

  void apply(const double* x, double* y) const {
    Eigen::Map<VecX>(y, G.rows()).noalias() = G * Eigen::Map<const VecX>(x, G.rows());
  }
  // G + ρD by Cholesky, per ρ: m³/3; its inverse formed as well (2m³ at matrix-product speed)
  // where the iterations to come (K, expected) make it pay: the solve is then one product instead
  // of two triangular solves (~2 times slower a flop at these sizes, measured on the centipede at
  // m ≈ 36 and 57): K 2m² · 2 > 2m³
  bool inverse = false;
  void plan(int K) { inverse = 2 * K > int(G.rows()); }
  void factor(double rho_) {
    rho = rho_;
    F = G;
    F.diagonal() += rho * d;
    Eigen::LLT<Eigen::Ref<MatX>> in_place(F.map());  // L in F's lower triangle
    if (inverse) {
      S.resize(F.rows(), F.cols());
      S.setIdentity();
      solve_in_place(S.map());
    }
  }
  template <class X> void solve_in_place(X&& x) const {  // x = (L Lᵀ)⁻¹ x
    const auto L = F.triangularView<Eigen::Lower>();
    L.solveInPlace(x), L.adjoint().solveInPlace(x);
  }
  void solve(const double* r, double* x) const {
    Eigen::Map<VecX> out(x, G.rows());
    if (inverse) {
      out.noalias() = S * Eigen::Map<const VecX>(r, G.rows());
    } else {
      out = Eigen::Map<const VecX>(r, G.rows());
      solve_in_place(out);
    }
  }
};

}  // namespace treedyn
