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

struct GeneralRows {
  std::shared_ptr<const redmax::System<double>> system;  // loop closures and couplings (null: none)
  std::vector<EqualityRow> equality;                     // per constraint row
  std::vector<int> friction_dof;                         // dry friction on coordinates, its f
  std::vector<double> friction_f;
  Eigen::MatrixXd tendon_friction;  // rows T_v of tendons with dry friction, their f
  Eigen::VectorXd tendon_f;
  Eigen::MatrixXd limit_q, limit_v;  // limited tendons' T_q, T_v and ranges
  Eigen::VectorXd limit_lo, limit_hi;
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
// unbounded) and the soft equalities' table eq (ne × 11: step.hpp's W.equality); explicit_euler: the
// step moves q with v; soft: the step's constraints are soft
inline void make_general_rows(const GeneralRows& R, GeneralRowsWork& w, int nv, const double* q, const double* v,
                              double h, bool explicit_euler, bool soft, Eigen::MatrixXd& G, Eigen::VectorXd& target,
                              Eigen::VectorXd& lo, Eigen::VectorXd& hi,
                              Eigen::Matrix<double, Eigen::Dynamic, 11, Eigen::RowMajor>& eq) {
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
    const double reach = 4 * h * std::abs(rate) + R.slop + 0.01 * (R.limit_hi[t] - R.limit_lo[t]);
    for (const double s : {1.0, -1.0}) {
      const double d = s * (L - (s > 0 ? R.limit_lo[t] : R.limit_hi[t]));
      if (d <= reach) w.near_t.push_back(t), w.near_s.push_back(s), w.near_d.push_back(d), w.near_rate.push_back(rate);
    }
  }
  const int nf = int(R.friction_dof.size()), ntf = int(R.tendon_f.size()), nl = int(w.near_t.size());
  const int nb = l + nf + ntf + nl;
  G.setZero(nb, nv);
  target.resize(nb);
  const bool bounded = nf + ntf + nl > 0;
  lo.resize(bounded ? nb : 0), hi.resize(bounded ? nb : 0);
  const double inf = std::numeric_limits<double>::infinity(), tau = std::max(R.stabilization, h);
  eq.resize(ne, 11);
  for (int k = 0; k < l; ++k) {  // the constraints' rows, in w.order
    const int r = w.order[k];
    G.row(k) = w.cw->Gt.col(r).transpose();
    const double C = w.cw->rows[r].C;
    target[k] = -C / tau;
    if (bounded) lo[k] = -inf, hi[k] = inf;
    if (k >= ne) continue;
    const EqualityRow& e = R.equality[r];
    double norm = 0;  // (the impedance at the norm of its constraint's residuals: MuJoCo's getposdim)
    for (int j = e.first; j < e.first + e.count; ++j) norm += w.cw->rows[j].C * w.cw->rows[j].C;
    double* x = eq.row(k).data();
    x[0] = C, x[1] = e.count > 1 ? std::sqrt(norm) : C, x[2] = e.jdot ? w.cw->rows[r].Gdqd : 0.0, x[3] = e.A_hat;
    std::copy(e.softness.ref, e.softness.ref + 2, x + 4), std::copy(e.softness.imp, e.softness.imp + 5, x + 6);
  }
  int k = l;
  for (int f = 0; f < nf; ++f, ++k)
    G(k, R.friction_dof[f]) = 1.0, target[k] = 0.0, lo[k] = -h * R.friction_f[f], hi[k] = h * R.friction_f[f];
  for (int t = 0; t < ntf; ++t, ++k)
    G.row(k) = R.tendon_friction.row(t), target[k] = 0.0, lo[k] = -h * R.tendon_f[t], hi[k] = h * R.tendon_f[t];
  for (int n = 0; n < nl; ++n, ++k) {
    G.row(k) = w.near_s[n] * R.limit_v.row(w.near_t[n]);
    target[k] = limit_target(w.near_d[n], w.near_s[n] * w.near_rate[n], h, R.stabilization, R.slop);
    lo[k] = 0.0, hi[k] = inf;
  }
}

}  // namespace treedyn
