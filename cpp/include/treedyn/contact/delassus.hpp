// The Delassus operator G = J M⁻¹ Jᵀ of a step's contact rows on a tree, never formed: products
// with G and solves with G + ρI by articulated-body passes (docs/contact.md).
//
// Rows. A contact gives three (its normal n and tangents t₁, t₂: J_i u is the velocity of its
// second body relative to its first at the contact point, along each; a torsional or rolling pyramid
// edge adds the relative angular velocity along a direction a: n·v + μ a·ω), a joint-limit bound one
// (s e_kᵀ), a bilateral constraint one (any row of nv). Impulses x on the rows act on the bodies as
// the forces Jᵀx.
//
// Products. J M⁻¹ Jᵀ x is one backward pass (the impulses as body forces, the bias pass of ABA with
// q̇ = 0 and no gravity, RBDA Table 7.1) and one forward pass (the accelerations, here velocity
// changes) on the factors U_i, D_i⁻¹ of ABA, then the rows read off the bodies' motions: O(N + m).
//
// Solves. (ρI + J M⁻¹ Jᵀ)⁻¹ r = (r − J u)/ρ with (M + JᵀJ/ρ) u = Jᵀ r/ρ (Woodbury). For a contact
// between a body and the world, J_iᵀJ_i is the spatial inertia of a point mass 1 at the contact
// point (n, t₁, t₂ orthonormal), and a limit's row adds 1/ρ to its coordinate's pivot (armature):
// M + JᵀJ/ρ is the mass matrix of the same tree with these inertias appended, factored by ABA's
// backward pass in O(N + m). The rest — contacts between two moving bodies, which close a loop, and
// bilateral rows — are the coupled rows C, taken by Woodbury once more with the dense block
// S_C = ρI + J_C A⁻¹ J_Cᵀ (A the tree part), formed with one tree solve per coupled row.
#pragma once
#include <Eigen/Cholesky>
#include <vector>

#include "treedyn/algorithms/aba.hpp"
#include "treedyn/linalg/reserved.hpp"

namespace treedyn {

// A contact's geometry for the operator: the bodies (a, b; the impulse pushes b along +d, a along
// −d), the contact point and the frame D = [n t₁ t₂] in each body's coordinates; angular: its rows
// also turn the bodies, row r's wrench on b (c × D_r + A_r, D_r) (MuJoCo's torsional and rolling
// pyramid edges, condim 4 and 6: n ± μ a with a an angular direction)
struct ContactFrame {
  int body[2];
  Vec3<double> c[2];
  Mat3<double> D[2], A[2];
  bool angular = false;
  // row r's wrench on side e (ABA's force order: moment, force)
  Vec6<double> wrench(int e, int r) const {
    Vec6<double> w;
    w << cross(c[e], Vec3<double>(D[e].col(r))), D[e].col(r);
    if (angular) w.head<3>() += A[e].col(r);
    return w;
  }
};

// the factors of a tree's (augmented) mass matrix: ABA's U_i, D_i⁻¹
struct TreeFactor {
  std::vector<ArticulatedInertia<double>> IA;
  std::vector<Force<double>> U;
  std::vector<Data<double>::Small> Dinv;
  explicit TreeFactor(const Model<double>& model)
      : IA(model.N + 1, ArticulatedInertia<double>::zero()), U(model.nv, Force<double>::zero()), Dinv(model.N + 1) {
    for (int i = 0; i <= model.N; ++i) Dinv[i].setZero(model.nv_i[i], model.nv_i[i]);
  }
};

// ADMM's row weights from the rows' own inverse inertias d_k = G_kk (in place): a contact's three rows
// one weight, their mean (so that the cones' projections stay Euclidean), relative to the largest,
// floored at 1e-3 (a row that cannot move, G_kk = 0, keeps G + ρD regular)
inline void relative_weights(ReservedVector& d, int contacts) {
  for (int k = 0; k < contacts; ++k) d.segment<3>(3 * k).setConstant(d.segment<3>(3 * k).mean());
  const double top = d.size() ? d.maxCoeff() : 0.0;
  d = (d / (top > 0 ? top : 1.0)).cwiseMax(1e-3);
}

struct TreeDelassus {
  using VecX = Eigen::VectorXd;
  using MatX = Eigen::MatrixXd;
  const Model<double>* model = nullptr;
  const Data<double>* kin = nullptr;  // Xup, S at q (and M's factors U, D⁻¹: the free motion's ABA)
  // the rows: contacts (3 each), then limits (1 each), then bilateral rows (1 each)
  std::vector<ContactFrame> contacts;
  std::vector<int> limit_dof;
  std::vector<double> limit_sign;
  MatX bilateral;  // nb x nv
  double rho = 1.0;
  // the soft rows' regularisers (contact/soft.hpp): the operator is then G + diag(R); empty: hard
  ReservedVector R;  // (per row: storage kept as the rows shrink, linalg/reserved.hpp; so are the others below)
  double reg(int k) const { return R.size() ? R[k] : 0.0; }

  TreeFactor aug;                 // M + JᵀJ/ρ without the coupled rows (A)
  std::vector<Force<double>> pA;  // body forces, scratch
  std::vector<Motion<double>> a;  // body motions, scratch
  VecX tau, u, armature;          // nv scratch
  std::vector<int> coupled;       // the coupled rows, in row order
  ReservedMatrix JW;              // m x nc: J A⁻¹ J_Cᵀ
  ReservedMatrix SC;              // ρI + J_C A⁻¹ J_Cᵀ, its Cholesky factor L in the lower triangle
  ReservedVector xc, scaled, e;

  explicit TreeDelassus(const Model<double>& m)
      : model(&m),
        aug(m),
        pA(m.N + 1, Force<double>::zero()),
        a(m.N + 1, Motion<double>::zero()),
        tau(VecX::Zero(m.nv)),
        u(VecX::Zero(m.nv)),
        armature(VecX::Zero(m.nv)) {
    for (int i = 1; i <= m.N; ++i)
      for (int k = 0; k < m.nv_i[i]; ++k) dof_body.push_back(i);
  }
  std::vector<int> dof_body;  // the body whose joint owns a velocity coordinate

  // The rows' ADMM weights d_k (admm.hpp, relative_weights) from their own inverse inertias G_kk; here from
  // Ω_i, the inverse inertia a body shows to a force on it (forces in ABA's p^A sign),
  //   Ω_i = S_i D_i⁻¹ S_iᵀ + P_iᵀ X_iᵀ Ω_λ X_i P_i,  P_i = 1 − U_i D_i⁻¹ S_iᵀ,
  // X_i the force transform to the parent (inv_apply): G_kk = w_kᵀ Ω_b w_k for a row's wrench w_k
  // on body b (both bodies' for a two-body contact, their coupling through common ancestors
  // left out: a weight, not G), (D_j⁻¹)_kk + qᵀ Ω_λ q for a limit on joint j (q = X_j U_j D_j⁻¹ e_k).
  // O(N) with 6 x 6 products; bilateral rows weigh 1.
  ReservedVector d;
  std::vector<Mat6<double>> Omega;
  void weigh() {
    const Model<double>& M = *model;
    const Data<double>& D = *kin;
    Omega.resize(M.N + 1);
    for (int i = 1; i <= M.N; ++i) {
      const int p = M.parent[i], vi = M.v_index[i], ni = M.nv_i[i];
      Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6> Si(6, ni), Ui(6, ni);
      for (int k = 0; k < ni; ++k) {
        Si.col(k) << D.S[vi + k].ang, D.S[vi + k].lin;
        Ui.col(k) = D.U[vi + k].vec();
      }
      Mat6<double>& O = Omega[i];
      O.noalias() = Si * D.Dinv[i] * Si.transpose();
      if (p > 0) {
        const Mat6<double> X = D.Xup[i].matrix().transpose();  // p^A_λ += X p^A_i (^iX_λᵀ on forces)
        Mat6<double> XP = X;
        XP.noalias() -= X * Ui * D.Dinv[i] * Si.transpose();
        O.noalias() += XP.transpose() * Omega[p] * XP;
      }
    }
    const int P_ = P(), L = int(limit_dof.size()), m = rows();
    d.resize(m);
    for (int k = 0; k < P_; ++k) {
      const ContactFrame& f = contacts[k];
      double sum = 0.0;
      for (int e = 0; e < 2; ++e) {
        if (f.body[e] == 0) continue;
        for (int r = 0; r < 3; ++r) {
          const Vec6<double> w = f.wrench(e, r);
          sum += w.dot(Omega[f.body[e]] * w);
        }
      }
      d.segment<3>(3 * k).setConstant(sum);
    }
    for (int l = 0; l < L; ++l) {
      const int k = limit_dof[l], j = dof_body[k];
      const int vi = M.v_index[j], ni = M.nv_i[j], p = M.parent[j];
      double g = D.Dinv[j](k - vi, k - vi);
      if (p > 0) {
        Force<double> u = Force<double>::zero();
        for (int c = 0; c < ni; ++c) u += D.U[vi + c] * D.Dinv[j](c, k - vi);
        const Vec6<double> q = D.Xup[j].inv_apply(u).vec();
        g += q.dot(Omega[p] * q);
      }
      d[3 * P_ + l] = g;
    }
    const double most = 3 * P_ + L > 0 ? d.head(3 * P_ + L).maxCoeff() : 1.0;
    d.tail(m - 3 * P_ - L).setConstant(most);  // bilateral rows: 1
    if (R.size()) d += R;
    relative_weights(d, P_);
  }
  const ReservedVector& weights() const { return d; }
  const ReservedMatrix* formed() const { return nullptr; }  // never formed (admm.hpp's polish needs G)

  int P() const { return int(contacts.size()); }
  int rows() const { return 3 * P() + int(limit_dof.size()) + int(bilateral.rows()); }
  bool is_coupled(int c) const { return contacts[c].body[0] != 0 && contacts[c].body[1] != 0; }

  // Jᵀ x as body forces (pA = −f, ABA's sign) and generalized forces (tau), x scaled by s
  void spread(const double* x, double s) {
    const Model<double>& M = *model;
    for (int i = 0; i <= M.N; ++i) pA[i] = Force<double>::zero();
    tau.setZero();
    for (int k = 0; k < P(); ++k) {
      const ContactFrame& f = contacts[k];
      const Vec3<double> xk(x[3 * k] * s, x[3 * k + 1] * s, x[3 * k + 2] * s);
      for (int e = 0; e < 2; ++e) {
        if (f.body[e] == 0) continue;
        const Vec3<double> F = f.D[e] * xk;  // the force on body b (e = 1), −force on a (e = 0)
        Force<double> w{cross(f.c[e], F), F};
        if (f.angular) w.ang += f.A[e] * xk;
        if (e == 1)
          pA[f.body[e]] -= w;
        else
          pA[f.body[e]] += w;
      }
    }
    const int r0 = 3 * P();
    for (std::size_t l = 0; l < limit_dof.size(); ++l) tau[limit_dof[l]] += limit_sign[l] * x[r0 + l] * s;
    const int r1 = r0 + int(limit_dof.size());
    for (int b = 0; b < bilateral.rows(); ++b) tau += bilateral.row(b).transpose() * (x[r1 + b] * s);
  }

  // J u from the bodies' motions a and the coordinates' u, into y (rows)
  void gather(const double* uq, double* y) const {
    for (int k = 0; k < P(); ++k) {
      const ContactFrame& f = contacts[k];
      Vec3<double> w = Vec3<double>::Zero();
      for (int e = 0; e < 2; ++e) {
        if (f.body[e] == 0) continue;
        const Motion<double>& m = a[f.body[e]];
        Vec3<double> pv = f.D[e].transpose() * Vec3<double>(m.lin + cross(m.ang, f.c[e]));
        if (f.angular) pv.noalias() += f.A[e].transpose() * m.ang;
        w += e == 1 ? pv : Vec3<double>(-pv);
      }
      y[3 * k] = w[0], y[3 * k + 1] = w[1], y[3 * k + 2] = w[2];
    }
    const int r0 = 3 * P();
    for (std::size_t l = 0; l < limit_dof.size(); ++l) y[r0 + l] = limit_sign[l] * uq[limit_dof[l]];
    const int r1 = r0 + int(limit_dof.size());
    for (int b = 0; b < bilateral.rows(); ++b) y[r1 + b] = bilateral.row(b).dot(Eigen::Map<const VecX>(uq, model->nv));
  }

  // u = (factored matrix)⁻¹ (tau − Σ body forces): ABA's bias and acceleration passes with q̇ = 0
  // and no gravity on the factors U, D⁻¹; the bodies' motions land in a
  void tree_solve(const std::vector<Force<double>>& U, const std::vector<Data<double>::Small>& Dinv, double* uq) {
    const Model<double>& M = *model;
    const Data<double>& d = *kin;
    for (int i = M.N; i >= 1; --i) {  // u_i = τ_i − S_iᵀ p^A_i, p^A_λ += ^iX_λᵀ (p^A_i + U_i D_i⁻¹ u_i)
      const int p = M.parent[i], vi = M.v_index[i], ni = M.nv_i[i];
      if (ni == 1) {  // (one DoF, the common joint: scalars)
        const double w = tau[vi] - dot(d.S[vi], pA[i]);
        uq[vi] = w;
        if (p > 0) pA[p] += d.Xup[i].inv_apply(pA[i] + U[vi] * (Dinv[i](0, 0) * w));
        continue;
      }
      if (ni == 3) {  // (a spherical joint: fixed sizes)
        const Vec3<double> w(tau[vi] - dot(d.S[vi], pA[i]), tau[vi + 1] - dot(d.S[vi + 1], pA[i]),
                             tau[vi + 2] - dot(d.S[vi + 2], pA[i]));
        for (int k = 0; k < 3; ++k) uq[vi + k] = w[k];
        const Vec3<double> z = Dinv[i].topLeftCorner<3, 3>() * w;
        if (p > 0) pA[p] += d.Xup[i].inv_apply(pA[i] + U[vi] * z[0] + U[vi + 1] * z[1] + U[vi + 2] * z[2]);
        continue;
      }
      Force<double> pa = pA[i];
      Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> w(ni);
      for (int k = 0; k < ni; ++k) w[k] = tau[vi + k] - dot(d.S[vi + k], pA[i]);
      for (int k = 0; k < ni; ++k) uq[vi + k] = w[k];
      const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> z = Dinv[i] * w;
      for (int k = 0; k < ni; ++k) pa += U[vi + k] * z[k];
      if (p > 0) pA[p] += d.Xup[i].inv_apply(pa);
    }
    for (int i = 1; i <= M.N; ++i) {  // a_i = ^iX_λ a_λ, u_i = D_i⁻¹(u_i − U_iᵀ a_i), a_i += S_i u_i
      const int p = M.parent[i], vi = M.v_index[i], ni = M.nv_i[i];
      Motion<double> ai = p > 0 ? d.Xup[i].apply(a[p]) : Motion<double>::zero();
      if (ni == 1) {
        uq[vi] = Dinv[i](0, 0) * (uq[vi] - dot(ai, U[vi]));
        a[i] = ai + d.S[vi] * uq[vi];
        continue;
      }
      if (ni == 3) {
        const Vec3<double> w(uq[vi] - dot(ai, U[vi]), uq[vi + 1] - dot(ai, U[vi + 1]), uq[vi + 2] - dot(ai, U[vi + 2]));
        const Vec3<double> x = Dinv[i].topLeftCorner<3, 3>() * w;
        for (int k = 0; k < 3; ++k) uq[vi + k] = x[k];
        a[i] = ai + d.S[vi] * x[0] + d.S[vi + 1] * x[1] + d.S[vi + 2] * x[2];
        continue;
      }
      Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> w(ni);
      for (int k = 0; k < ni; ++k) w[k] = uq[vi + k] - dot(ai, U[vi + k]);
      Eigen::Map<VecX>(uq + vi, ni).noalias() = Dinv[i] * w;
      ai += subspace_times<double>(d.S.data() + vi, ni, uq + vi);
      a[i] = ai;
    }
  }

  // y = (G + R) x (x, y: rows()), on M's factors (the free motion's ABA in kin); dv = M⁻¹Jᵀx if asked
  void apply(const double* x, double* y, double* dv = nullptr) {
    spread(x, 1.0);
    double* uq = dv ? dv : u.data();
    tree_solve(kin->U, kin->Dinv, uq);
    gather(uq, y);
    for (int k = 0; k < int(R.size()); ++k) y[k] += R[k] * x[k];
  }

  // M + Jᵀ(ρD + R)⁻¹J on the tree rows (A), and the coupled block S_C
  void factor(double rho_) {
    rho = rho_;
    const Model<double>& M = *model;
    const Data<double>& d = *kin;
    for (int i = 1; i <= M.N; ++i) aug.IA[i] = ArticulatedInertia<double>::from(M.I[i]);
    coupled.clear();
    for (int k = 0; k < P(); ++k) {
      if (is_coupled(k)) {
        for (int r = 0; r < 3; ++r) coupled.push_back(3 * k + r);
        continue;
      }
      const ContactFrame& f = contacts[k];
      const int e = f.body[1] != 0 ? 1 : 0;
      if (f.body[e] == 0) continue;  // world against world: nothing moves
      // a point mass W = D diag(w) Dᵀ at c, w_r = 1/(ρ d_r + R_r): [−c× W c×, c× W; −W c×, W]; angular rows
      // (wrench (c×D + A, D)) add Q = A diag(w) Dᵀ and A diag(w) Aᵀ: [c× Qᵀ − Q c× + A w Aᵀ, Q; Qᵀ, 0]
      const Vec3<double> w(1.0 / (rho * this->d[3 * k] + reg(3 * k)), 1.0 / (rho * this->d[3 * k + 1] + reg(3 * k + 1)),
                           1.0 / (rho * this->d[3 * k + 2] + reg(3 * k + 2)));
      const Mat3<double> W = f.D[e] * w.asDiagonal() * f.D[e].transpose();
      const Mat3<double> cx = skew<double>(f.c[e]);
      ArticulatedInertia<double>& I = aug.IA[f.body[e]];
      I.A.noalias() -= cx * W * cx;
      I.B.noalias() += cx * W;
      I.C.noalias() += W;
      if (f.angular) {
        const Mat3<double> Q = f.A[e] * w.asDiagonal() * f.D[e].transpose();
        I.A.noalias() += cx * Q.transpose() - Q * cx + f.A[e] * w.asDiagonal() * f.A[e].transpose();
        I.B += Q;
      }
    }
    armature = Eigen::Map<const VecX>(M.armature.data(), M.nv);  // the model's (M's), then the limits'
    for (std::size_t l = 0; l < limit_dof.size(); ++l)
      armature[limit_dof[l]] += 1.0 / (rho * this->d[3 * P() + l] + reg(3 * P() + l));
    const int r1 = 3 * P() + int(limit_dof.size());
    for (int b = 0; b < bilateral.rows(); ++b) coupled.push_back(r1 + b);
    for (int i = M.N; i >= 1; --i) {  // ABA's backward pass: U_i = I^A_i S_i, D_i = S_iᵀU_i (+ armature)
      const int p = M.parent[i], vi = M.v_index[i], ni = M.nv_i[i];
      const Motion<double>* Si = d.S.data() + vi;
      Force<double>* Ui = aug.U.data() + vi;
      Data<double>::Small D(ni, ni);
      for (int b = 0; b < ni; ++b) Ui[b] = aug.IA[i] * Si[b];
      for (int r = 0; r < ni; ++r)
        for (int b = 0; b < ni; ++b) D(r, b) = dot(Si[r], Ui[b]) + (r == b ? armature[vi + r] : 0.0);
      invert_joint_pivot(M, i, aug.IA[i], Si, D, aug.Dinv[i]);
      ArticulatedInertia<double>& Ia = aug.IA[i];
      if (ni == 1) {
        Ia.subtract_outer(Ui[0], aug.Dinv[i](0, 0));
      } else if (ni > 1) {
        Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6> Um(6, ni);
        for (int b = 0; b < ni; ++b) Um.col(b) = Ui[b].vec();
        Ia = ArticulatedInertia<double>::from_matrix(Ia.matrix() - Um * aug.Dinv[i] * Um.transpose());
      }
      if (p > 0) aug.IA[p] += d.Xup[i].inv_apply(Ia);
    }
    const int m = rows(), nc = int(coupled.size());
    JW.resize(m, nc);
    if (nc == 0) return;
    e.setZero(m);
    for (int j = 0; j < nc; ++j) {  // column j of J A⁻¹ J_Cᵀ: one tree solve
      e[coupled[j]] = 1.0;
      spread(e.data(), 1.0);
      tree_solve(aug.U, aug.Dinv, u.data());
      gather(u.data(), JW.col(j).data());
      e[coupled[j]] = 0.0;
    }
    SC.resize(nc, nc);
    for (int j = 0; j < nc; ++j) SC.row(j) = JW.row(coupled[j]);
    for (int j = 0; j < nc; ++j)  // (J_C A⁻¹ J_Cᵀ symmetric to rounding: the mean of its two triangles)
      for (int k = 0; k < j; ++k) SC(j, k) = 0.5 * (SC(j, k) + SC(k, j));
    for (int j = 0; j < nc; ++j) SC(j, j) += rho * this->d[coupled[j]] + reg(coupled[j]);
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> in_place(SC.map());  // L in SC's lower triangle
  }

  // x = (G + ρD + R)⁻¹ r: x = Ŵ⁻¹(r − J B⁻¹JᵀŴ⁻¹r), Ŵ = ρD + R, B = A + J_CᵀŴ_C⁻¹J_C (Woodbury)
  void solve(const double* r, double* x) {
    const int m = rows(), nc = int(coupled.size());
    scaled.resize(m);
    for (int k = 0; k < m; ++k) scaled[k] = r[k] / (rho * this->d[k] + reg(k));
    spread(scaled.data(), 1.0);
    tree_solve(aug.U, aug.Dinv, u.data());
    gather(u.data(), x);  // J A⁻¹ Jᵀ (ρD)⁻¹r
    if (nc) {             // − JW S_C⁻¹ (J_C A⁻¹ Jᵀ (ρD)⁻¹r)
      xc.resize(nc);
      for (int j = 0; j < nc; ++j) xc[j] = x[coupled[j]];
      const auto L = SC.triangularView<Eigen::Lower>();
      L.solveInPlace(xc), L.adjoint().solveInPlace(xc);  // S_C⁻¹ x_C
      Eigen::Map<VecX>(x, m).noalias() -= JW * xc;
    }
    for (int k = 0; k < m; ++k) x[k] = (r[k] - x[k]) / (rho * this->d[k] + reg(k));
  }
};

}  // namespace treedyn
