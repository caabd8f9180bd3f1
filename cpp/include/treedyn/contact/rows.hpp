// The general rows of the C++ step, made each step from (q, v) without Python: the bilateral rows of
// step.hpp (G v⁺ = target, the impulse within [lo, hi]) of
//   the model's constraints (loop closures and couplings: redmax/constraints.hpp's rows, C and J̇v):
//     hard, G v⁺ = −C/τ (Baumgarte with the step's stabilization τ = max(stabilization, h)); with soft
//     constraints, those with a softness are MuJoCo's soft equalities, placed first, their R and target
//     soft_rows' (contact/soft.hpp) from C, the norm of their constraint's C, J̇v (connect, weld) and Â;
//   dry friction on a coordinate (MuJoCo's frictionloss f): e_i v⁺ = 0, |λ| ≤ h f;
//   dry friction along a fixed tendon: T_v v⁺ = 0, |λ| ≤ h f;
//   a fixed tendon's limits within reach (d ≤ 4h|L̇| + slop + 1 % of the range, d = s (L − bound) at
//     L = T_q q, or at L + h L̇ for explicit Euler): s T_v v⁺ ≥ the joint limits' targets (limit_target),
//     λ ≥ 0.
// The rows are gathered into the world's workspace (its bilateral rows, targets, bounds and equality
// table), sized by the step's count (no allocation once the largest count has been seen).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include <Eigen/Core>

#include "treedyn/contact/soft.hpp"
#include "treedyn/redmax/mapping.hpp"
#include "treedyn/redmax/step.hpp"

namespace treedyn {

struct EqualityRow {  // a constraint row: its softness (soft: MuJoCo's equality), Â, its constraint's rows
  bool soft = false, jdot = false;
  Softness softness;
  double A_hat = 0;
  int first = 0, count = 1;
};

// a violated bound returns as a critically damped spring–damper of time constant τ = max(stabilization,
// h) stepped implicitly; inside, −d/h (the gap closed in one step at most): sim/rows.py's limit_targets
inline double limit_target(double d, double rate, double h, double stabilization, double slop) {
  if (d >= 0) return -d / h;
  const double tau = std::max(stabilization, h);
  return (std::max(rate, 0.0) + h * std::max(-d - slop, 0.0) / (tau * tau)) / ((1.0 + h / tau) * (1.0 + h / tau));
}

// a soft row of the bilateral block (MuJoCo's, contact/soft.hpp): an equality's (λ free), a dry friction's
// (|λ| ≤ its bound) or a tendon limit's (λ ≥ 0); its residual r, the residual its impedance is taken at,
// J̇v subtracted from a_ref, Â and solref/solimp
struct SoftGeneralRow {
  enum Kind { kEquality = 0, kFriction = 1, kLimit = 2 };
  int kind = kEquality;
  double r = 0, r_imp = 0, bias = 0, A_hat = 0;
  Softness softness;
};

struct GeneralRows {
  std::shared_ptr<const redmax::System<double>> system;  // loop closures and couplings (null: none)
  std::vector<EqualityRow> equality;                     // per constraint row
  std::vector<int> friction_dof;                         // dry friction on coordinates, its f
  std::vector<double> friction_f;
  Eigen::MatrixXd tendon_friction;  // rows T_v of tendons with dry friction, their f
  Eigen::VectorXd tendon_f;
  Eigen::MatrixXd limit_q, limit_v;  // limited tendons' T_q, T_v and ranges
  Eigen::VectorXd limit_lo, limit_hi;
  // soft steps: the dry frictions' (coordinates', then tendons') and the limited tendons' Â and softness
  std::vector<double> friction_A, limit_A;
  std::vector<Softness> friction_soft, limit_soft;
  double stabilization = 0.02, slop = 1e-5;

  bool any() const { return system || friction_dof.size() || tendon_f.size() || limit_lo.size(); }
};

// one world's share: the constraint rows' workspace, the order of the rows and the limits within reach
struct GeneralRowsWork {
  std::unique_ptr<redmax::ConstraintWorkspace<double>> cw;
  std::vector<int> order;  // constraint rows, the soft ones first
  std::vector<int> near_t;
  std::vector<double> near_s, near_d, near_rate;
};

// the rows at (q, v) for a step h into G (nb × nv), target, lo, hi (bounds, or empty where all are
// unbounded) and the soft rows, which come first (soft: the step's constraints are soft): the soft
// equalities, every dry friction, the tendons' violated limits (MuJoCo's rows); then the hard rows: the
// constraints without a softness, and where not soft the dry frictions and the limits within reach.
// explicit_euler: the step moves q with v
inline void make_general_rows(const GeneralRows& R, GeneralRowsWork& w, int nv, const double* q, const double* v,
                              double h, bool explicit_euler, bool soft, Eigen::MatrixXd& G, Eigen::VectorXd& target,
                              Eigen::VectorXd& lo, Eigen::VectorXd& hi, std::vector<SoftGeneralRow>& soft_rows) {
  const int l = R.system ? R.system->n_loop_rows() : 0;
  if (R.system) {
    if (!w.cw) w.cw = std::make_unique<redmax::ConstraintWorkspace<double>>(*R.system);
    redmax::kinematics(R.system->tree, w.cw->d, q, v);
    redmax::constraint_rows(*R.system, *w.cw);
  }
  w.order.clear();
  for (int r = 0; r < l; ++r)  // (the soft rows first)
    if (soft && R.equality[r].soft) w.order.push_back(r);
  const int ne = int(w.order.size());
  for (int r = 0; r < l; ++r)
    if (!(soft && R.equality[r].soft)) w.order.push_back(r);
  w.near_t.clear(), w.near_s.clear(), w.near_d.clear(), w.near_rate.clear();
  for (int t = 0; t < int(R.limit_lo.size()); ++t) {
    const double rate = R.limit_v.row(t).dot(Eigen::Map<const Eigen::VectorXd>(v, nv));
    const double L = R.limit_q.row(t).dot(Eigen::Map<const Eigen::VectorXd>(q, R.limit_q.cols())) +
                     (explicit_euler ? h * rate : 0.0);
    const double reach = soft ? 0.0 : 4 * h * std::abs(rate) + R.slop + 0.01 * (R.limit_hi[t] - R.limit_lo[t]);
    for (const double s : {1.0, -1.0}) {
      const double d = s * (L - (s > 0 ? R.limit_lo[t] : R.limit_hi[t]));
      if (soft ? d < 0 : d <= reach)
        w.near_t.push_back(t), w.near_s.push_back(s), w.near_d.push_back(d), w.near_rate.push_back(rate);
    }
  }
  const int nf = int(R.friction_dof.size()), ntf = int(R.tendon_f.size()), nl = int(w.near_t.size());
  const int nb = l + nf + ntf + nl;
  G.setZero(nb, nv);
  target.resize(nb);
  const bool bounded = nf + ntf + nl > 0;
  lo.resize(bounded ? nb : 0), hi.resize(bounded ? nb : 0);
  const double inf = std::numeric_limits<double>::infinity(), tau = std::max(R.stabilization, h);
  soft_rows.clear();
  // the rows in order: soft equalities [0, ne), dry frictions, limits, hard constraint rows (soft); or
  // constraint rows, dry frictions, limits (hard)
  const int k_friction = soft ? ne : l, k_limit = k_friction + nf + ntf, k_hard = soft ? k_limit + nl : ne;
  for (int k = 0; k < l; ++k) {  // the constraints' rows, in w.order
    const int r = w.order[k], row = k < ne ? k : k_hard + (k - ne);
    G.row(row) = w.cw->Gt.col(r).transpose();
    const double C = w.cw->rows[r].C;
    target[row] = -C / tau;
    if (bounded) lo[row] = -inf, hi[row] = inf;
    if (k >= ne) continue;
    const EqualityRow& e = R.equality[r];
    double norm = 0;  // (the impedance at the norm of its constraint's residuals: MuJoCo's getposdim)
    for (int j = e.first; j < e.first + e.count; ++j) norm += w.cw->rows[j].C * w.cw->rows[j].C;
    soft_rows.push_back({SoftGeneralRow::kEquality, C, e.count > 1 ? std::sqrt(norm) : C,
                         e.jdot ? w.cw->rows[r].Gdqd : 0.0, e.A_hat, e.softness});
  }
  int k = k_friction;
  for (int f = 0; f < nf + ntf; ++f, ++k) {  // |λ| ≤ h f, J v⁺ = 0 (soft: MuJoCo's friction row, r = 0)
    if (f < nf)
      G(k, R.friction_dof[f]) = 1.0;
    else
      G.row(k) = R.tendon_friction.row(f - nf);
    const double F = h * (f < nf ? R.friction_f[f] : R.tendon_f[f - nf]);
    target[k] = 0.0, lo[k] = -F, hi[k] = F;
    if (soft) soft_rows.push_back({SoftGeneralRow::kFriction, 0.0, 0.0, 0.0, R.friction_A[f], R.friction_soft[f]});
  }
  for (int n = 0; n < nl; ++n, ++k) {  // s J v⁺ ≥ target, λ ≥ 0 (soft: MuJoCo's limit row at r = d < 0)
    const int t = w.near_t[n];
    G.row(k) = w.near_s[n] * R.limit_v.row(t);
    target[k] = limit_target(w.near_d[n], w.near_s[n] * w.near_rate[n], h, R.stabilization, R.slop);
    lo[k] = 0.0, hi[k] = inf;
    if (soft)
      soft_rows.push_back({SoftGeneralRow::kLimit, w.near_d[n], w.near_d[n], 0.0, R.limit_A[t], R.limit_soft[t]});
  }
}

}  // namespace treedyn
