// MuJoCo's inertia-box fluid model (its documentation, "Computation: Fluid forces", mj_inertiaBoxFluidModel):
// each body with mass is the box of its principal inertia, dimensions b_k = √(6 (I_j + I_l − I_k)/m),
// moving through a fluid of density ρ and viscosity η (and a wind w, the fluid's velocity). With ω and
// u the body's angular velocity and the velocity of its centre of mass relative to the wind, both in the
// principal axes:
//   viscous (Stokes):  n = −π d³ η ω,  f = −3π d η u,  d = (b₁ + b₂ + b₃)/3, the sphere of the mean size
//   quadratic drag:    f_k −= ½ ρ b_j b_l |u_k| u_k,  n_k −= ρ b_k (b_j⁴ + b_l⁴)/64 |ω_k| ω_k
// a force f at the centre of mass and a torque n, τ += Jᵀ (n, f) over the tree by one backward pass.
// A body merged from welded MJCF bodies is one box (MuJoCo boxes each); the ellipsoid model
// (a geom's fluidshape) is not this one.
#pragma once
#include <cmath>
#include <memory>
#include <vector>

#include "treedyn/algorithms/kinematics.hpp"

namespace treedyn {

struct Fluid {
  static constexpr double kPi = 3.14159265358979323846;
  double density = 0, viscosity = 0;
  Vec3<double> wind = Vec3<double>::Zero();
  // per body: the box's dimensions (0: no mass, no force), its principal axes in body coordinates
  // (columns) and its centre of mass
  std::vector<Vec3<double>> box, com;
  std::vector<Mat3<double>> axes;

  bool any() const { return (density > 0 || viscosity > 0) && !box.empty(); }

  // tau_out = tau + the fluid's generalized force at (q, v); d: a workspace of the model (its Xup, S),
  // vel, X0, F: per body scratch
  void apply(const Model<double>& model, Data<double>& d, const double* q, const double* v, const double* tau,
             double* tau_out, std::vector<Motion<double>>& vel, std::vector<Transform<double>>& X0,
             std::vector<Force<double>>& F) const {
    kinematics(model, d, q);
    vel.resize(model.N + 1), X0.resize(model.N + 1), F.resize(model.N + 1);
    X0[0] = Transform<double>::identity();
    for (int i = 1; i <= model.N; ++i) {  // the bodies' velocities (body coordinates) and poses
      const int p = model.parent[i], vi = model.v_index[i];
      const Motion<double> vJ = subspace_times<double>(d.S.data() + vi, model.nv_i[i], v + vi);
      vel[i] = p > 0 ? d.Xup[i].apply(vel[p]) + vJ : vJ;
      X0[i] = compose(d.Xup[i], X0[p]);
    }
    for (int i = 0; i <= model.N; ++i) F[i] = Force<double>::zero();
    for (int i = 1; i <= model.N; ++i) {
      const Vec3<double>& b = box[i];
      if (b[0] <= 0) continue;
      const Mat3<double>& R = axes[i];
      const Vec3<double> w = R.transpose() * vel[i].ang;  // (principal axes)
      const Vec3<double> u = R.transpose() * (vel[i].lin + cross(vel[i].ang, com[i]) - X0[i].E * wind);
      Vec3<double> n = Vec3<double>::Zero(), f = Vec3<double>::Zero();
      if (viscosity > 0) {
        const double diam = (b[0] + b[1] + b[2]) / 3.0;
        n = -kPi * diam * diam * diam * viscosity * w;
        f = -3.0 * kPi * diam * viscosity * u;
      }
      if (density > 0) {
        for (int k = 0; k < 3; ++k) {
          const int j = (k + 1) % 3, l = (k + 2) % 3;
          f[k] -= 0.5 * density * b[j] * b[l] * std::abs(u[k]) * u[k];
          n[k] -= density * b[k] * (std::pow(b[j], 4) + std::pow(b[l], 4)) * std::abs(w[k]) * w[k] / 64.0;
        }
      }
      const Vec3<double> fb = R * f, nb = R * n;  // body coordinates, the torque about the body origin
      F[i] = Force<double>{Vec3<double>(nb + cross(com[i], fb)), fb};
    }
    for (int k = 0; k < model.nv; ++k) tau_out[k] = tau[k];
    for (int i = model.N; i >= 1; --i) {  // τ_j = S_jᵀ F_i over the subtree, F to the parent
      for (int k = model.v_index[i]; k < model.v_index[i] + model.nv_i[i]; ++k) tau_out[k] += dot(d.S[k], F[i]);
      if (model.parent[i] > 0) F[model.parent[i]] = F[model.parent[i]] + d.Xup[i].inv_apply(F[i]);
    }
  }
};

}  // namespace treedyn
