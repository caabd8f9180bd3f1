// MuJoCo's soft constraints (docs/contact.md, "Soft constraints"; Todorov 2014, MuJoCo's documentation,
// "Computation"): a constraint row k is a spring–damper with an impedance d ∈ (0, 1). With R_k the
// regulariser and a_ref,k the reference acceleration, MuJoCo's dual problem is
//   min_f ½ fᵀ(A + R) f + fᵀ(J a₀ − a_ref),  f in the cones,
// and with impulses λ = h f and the free motion's v* = v + h a₀ it is treedyn's problem on G + R with
// the row's velocity target b_k = (J v)_k + h a_ref,k (σ = (G + R)λ + g − b, g = J v*).
//   solref (τ, ζ):  K = 1/(d_max² τ² ζ²), B = 2/(d_max τ), τ ≥ 2h (MuJoCo's refsafe);
//   or direct (−k, −b): K = k/d_max², B = b/d_max
//   solimp (d₀, d_max, width, midpoint, power): d(r) from d₀ at r = 0 to d_max at |r| ≥ width
//   R_k = (1 − d)/d Â_k, Â_k the row's approximate inverse inertia (MuJoCo's diagApprox)
//   a_ref,k = −B (J v)_k − K d r_k (r: the position residual, negative when violated; 0 on friction rows)
//   (an equality row: r its residual, d at the norm of its equality's residuals, a_ref − (J̇ v)_k)
#pragma once
#include <algorithm>
#include <cmath>

namespace treedyn {

struct Softness {  // one constraint's solref and solimp, MuJoCo's defaults
  double ref[2] = {0.02, 1.0};
  double imp[5] = {0.9, 0.95, 0.001, 0.5, 2.0};
};

// d(r): solimp's sigmoid of x = |r|/width, y = x^p/mid^(p−1) below the midpoint, 1 − (1−x)^p/(1−mid)^(p−1)
// above; d = d₀ + y (d_max − d₀) (MuJoCo's getimpedance, its bounds on solimp applied)
inline double impedance(const Softness& s, double r) {
  const double d0 = std::clamp(s.imp[0], 1e-4, 0.9999), d1 = std::clamp(s.imp[1], 1e-4, 0.9999);
  const double width = std::max(s.imp[2], 0.0), mid = std::clamp(s.imp[3], 1e-4, 0.9999);
  const double p = std::max(s.imp[4], 1.0);
  if (d0 == d1 || width <= 1e-15) return 0.5 * (d0 + d1);
  const double x = std::abs(r) / width;
  if (x >= 1.0 || x <= 0.0) return x >= 1.0 ? d1 : d0;
  const double y = p == 1.0   ? x
                   : p == 2.0 ? (x <= mid ? x * x / mid : 1.0 - (1.0 - x) * (1.0 - x) / (1.0 - mid))  // (the default)
                   : x <= mid ? std::pow(x, p) / std::pow(mid, p - 1)
                              : 1.0 - std::pow(1.0 - x, p) / std::pow(1.0 - mid, p - 1);
  return d0 + y * (d1 - d0);
}

struct SoftRow {
  double R, b, B;  // the regulariser, the velocity target, the damping B (for a contact's friction rows)
};

// a row of residual r, velocity vel = (J v)_k at the step's start and approximate inverse inertia Â;
// the impedance d at r_imp (an equality's: the norm of its rows' residuals, MuJoCo's getposdim), and
// bias = (J̇ v)_k subtracted from a_ref (a connect's or weld's: MuJoCo's mj_Jdotv)
inline SoftRow soft_row(const Softness& s, double r, double vel, double A_hat, double h, double r_imp,
                        double bias = 0.0) {
  const double d = impedance(s, r_imp), dmax = std::clamp(s.imp[1], 1e-4, 0.9999);
  double K, B;
  if (s.ref[0] > 0) {  // (τ, ζ), τ ≥ 2h
    const double tau = std::max(s.ref[0], 2 * h), zeta = s.ref[1];
    K = 1.0 / std::max(1e-15, dmax * dmax * tau * tau * zeta * zeta);
    B = 2.0 / std::max(1e-15, dmax * tau);
  } else {  // direct: (−stiffness, −damping)
    K = -s.ref[0] / (dmax * dmax);
    B = -s.ref[1] / dmax;
  }
  const double a_ref = -B * vel - K * d * r - bias;
  return {std::max(1e-15, (1.0 - d) / d * A_hat), vel + h * a_ref, B};
}
inline SoftRow soft_row(const Softness& s, double r, double vel, double A_hat, double h) {
  return soft_row(s, r, vel, A_hat, h, r);
}

}  // namespace treedyn
