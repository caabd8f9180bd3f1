// Tendons and actuators with MuJoCo's meaning, in C++ (the Python model's treedyn.model.actuation
// holds the same model and documents it): a fixed tendon's length L = T_q q, its velocity L̇ = T_v v,
// its spring–damper −T_vᵀ (k · stretch(L) + d L̇) (stretch: beyond the dead band [L₀, L₁]); an
// actuator's length l = m_q q and velocity l̇ = m_v v (its gear times the joint's or the tendon's),
// its force f = (a₀ + a₁ l + a₂ l̇) w + b₀ + b₁ l + b₂ l̇ clamped to forcerange, w the control clamped
// to ctrlrange or the activation, τ = m_vᵀ f, each coordinate's total clamped to its joint's actuator
// force range (MuJoCo's joint actuatorfrcrange); activations stepped by explicit Euler, ẇ = u
// (integrator) or (u − w)/T (filter), clamped to actrange. apply also leaves each actuator's velocity
// gain kv = −∂f/∂l̇ = −(b₂ + a₂ w) in the work (0 where forcerange clamps f, MuJoCo's mjd_actuator_vel, and on
// a saturated joint, as MuJoCo 4.0's), for the implicit integrators (contact/implicit.hpp). Dense maps: the
// models this serves have few actuators; the step of a world adds this to its τ, no allocation (the work
// vectors are the caller's).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>

namespace treedyn {

struct Actuation {
  int nq = 0, nv = 0, nu = 0, na = 0;
  Eigen::MatrixXd tendon_q, tendon_v;  // nt × nq, nt × nv
  Eigen::VectorXd k, d, rest_lo, rest_hi;
  bool passive = false;
  Eigen::MatrixXd moment_q, moment_v;  // nu × nq, nu × nv
  Eigen::MatrixXd gain, bias;          // nu × 3
  Eigen::VectorXd ctrl_lo, ctrl_hi, force_lo, force_hi;
  Eigen::VectorXd joint_lo, joint_hi;  // nv: the clamp of each coordinate's total actuator force (±∞: none)
  bool joint_clamp = false;            // some coordinate has one
  std::vector<int> act_of;             // per actuator: its activation's index, or −1
  std::vector<char> integrator;        // per activation: ẇ = u (else the filter's (u − w)/T)
  Eigen::VectorXd T, act_lo, act_hi;   // per activation

  struct Work {
    Eigen::VectorXd w, f, l, ldot, L, Ldot, tau;
    Eigen::VectorXd kv;  // per actuator: −∂f/∂l̇ at this force (0: clamped)
  };

  bool any() const { return nu > 0 || passive; }

  // τ += the actuators' force at controls u (nu) and activations act (na) and the tendons' passive force
  void apply(const double* q, const double* v, const double* u, const double* act, double* tau, Work& s) const {
    Eigen::Map<Eigen::VectorXd> out(tau, nv);
    const Eigen::Map<const Eigen::VectorXd> qv(q, nq), vv(v, nv);
    if (nu) {
      s.w.resize(nu);
      for (int r = 0; r < nu; ++r) s.w[r] = act_of[r] >= 0 ? act[act_of[r]] : std::clamp(u[r], ctrl_lo[r], ctrl_hi[r]);
      s.l.noalias() = moment_q * qv;
      s.ldot.noalias() = moment_v * vv;
      s.f.resize(nu), s.kv.resize(nu);
      for (int r = 0; r < nu; ++r) {
        const double f = (gain(r, 0) + gain(r, 1) * s.l[r] + gain(r, 2) * s.ldot[r]) * s.w[r] + bias(r, 0) +
                         bias(r, 1) * s.l[r] + bias(r, 2) * s.ldot[r];
        s.f[r] = std::clamp(f, force_lo[r], force_hi[r]);
        s.kv[r] = f > force_lo[r] && f < force_hi[r] ? -(bias(r, 2) + gain(r, 2) * s.w[r]) : 0.0;
      }
      if (joint_clamp) {
        s.tau.noalias() = moment_v.transpose() * s.f;
        for (int k = 0; k < nv; ++k) {
          if (s.tau[k] > joint_lo[k] && s.tau[k] < joint_hi[k]) continue;
          s.tau[k] = std::clamp(s.tau[k], joint_lo[k], joint_hi[k]);  // saturated: no implicit damping through it
          for (int r = 0; r < nu; ++r)
            if (moment_v(r, k) != 0) s.kv[r] = 0.0;
        }
        out += s.tau;
      } else {
        out.noalias() += moment_v.transpose() * s.f;
      }
    }
    if (passive) {
      s.L.noalias() = tendon_q * qv;
      s.Ldot.noalias() = tendon_v * vv;
      for (int t = 0; t < int(s.L.size()); ++t) {
        const double L = s.L[t];
        const double stretch = L > rest_hi[t] ? L - rest_hi[t] : std::min(L - rest_lo[t], 0.0);
        s.L[t] = -(k[t] * stretch + d[t] * s.Ldot[t]);
      }
      out.noalias() += tendon_v.transpose() * s.L;
    }
  }

  // the activations after a step h under controls u (in place)
  void activate(double* act, const double* u, double h) const {
    for (int r = 0; r < nu; ++r) {
      const int a = act_of[r];
      if (a < 0) continue;
      const double ur = std::clamp(u[r], ctrl_lo[r], ctrl_hi[r]);
      const double rate = integrator[a] ? ur : (ur - act[a]) / T[a];
      act[a] = std::clamp(act[a] + h * rate, act_lo[a], act_hi[a]);
    }
  }
};

}  // namespace treedyn
