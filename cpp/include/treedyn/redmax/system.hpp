// The RedMax system (baxter2019 §2): the tree of Model<S> (reduced coordinates, with its joint
// springs and dampers K_r = −stiffness, D_r = damping, and armature) plus what the
// linearly implicit step needs beyond it — body damping
// (D_m), point-to-point spring–dampers (off-block-diagonal K_m, D_m), constant and moving point
// forces, and loop-closing joints (G q̇ = 0). Constant once built, like the Model.
#pragma once
#include <vector>

#include "treedyn/model/configuration.hpp"
#include "treedyn/model/model.hpp"

namespace treedyn::redmax {

// a spring–damper between point xa of body a and point xb of body b (body coordinates):
// force k (l − L) + d l̇ along the line between the points (stiffness in force per length)
template <class S> struct Spring {
  int a, b;
  Vec3<S> xa, xb;
  S k, d, L;
};

// a constant world-frame force f at point x of a body
template <class S> struct PointForce {
  int body;
  Vec3<S> x, f;
};

// a constant world-frame force f whose point of application moves at constant speed along a path
// of segments x0[s] -> x1[s] on bodies body[s] (body coordinates), from t = 0 to t = duration;
// afterwards it has left the path and no longer acts (the car of docs/scenes.md)
template <class S> struct MovingForce {
  Vec3<S> f;
  std::vector<int> body;
  std::vector<Vec3<S>> x0, x1;
  S duration;

  // the point at time t: returns the body, or -1 when the force does not act
  int at(S t, Vec3<S>& x) const {
    if (!(t >= S(0) && t <= duration) || body.empty()) return -1;
    S total = S(0);
    for (size_t s = 0; s < body.size(); ++s) total += (x1[s] - x0[s]).norm();
    S left = total * t / duration;
    for (size_t s = 0; s < body.size(); ++s) {
      const S len = (x1[s] - x0[s]).norm();
      if (left <= len || s + 1 == body.size()) {
        const S u = len > S(0) ? std::min(left / len, S(1)) : S(0);
        x = x0[s] + (x1[s] - x0[s]) * u;
        return body[s];
      }
      left -= len;
    }
    return -1;
  }
};

// A loop-closing joint between a frame on body a and a frame on body b (R: frame axes in body
// coordinates, p: frame origin in body coordinates); its kind and rows: model/model.hpp.
template <class S> struct LoopClosure {
  int a, b;
  Mat3<S> Ra, Rb;
  Vec3<S> pa, pb;
  LoopKind kind;
  Vec3<S> axis, axis2;  // hinge: axis (both frames); universal: axis in frame a, axis2 in frame b
};

// A coupling of joint coordinates (one row; MJCF's joint and fixed-tendon equalities, URDF's
// mimic): L₁(q) − y₀ = p(L₂(q) − x₀), p(x) = a₀ + a₁x + … + a₄x⁴, where each L(q) = Σ c_k q_k is a
// fixed linear combination of 1-DoF coordinates (a joint: one term; a fixed tendon: several).
// Without a leader (L₂ empty) it holds L₁(q) = y₀ + a₀. For 1-DoF joints q̇ = v, so
//   C = L₁(q) − y₀ − p(x),  G = [c₁ at v₁] − p'(x)[c₂ at v₂],  Ġ q̇ = −p''(x) (L₂(q̇))².
template <class S> struct Coupling {
  std::vector<int> q1, v1, q2, v2;  // follower and leader terms: coordinate indices in q and v
  std::vector<S> c1, c2;            // their coefficients
  S y0 = S(0), x0 = S(0);
  S a[5] = {S(0), S(1), S(0), S(0), S(0)};
};

template <class S> struct System {
  Model<S> tree;
  std::vector<Mat6<S>> D_m;  // N+1: body damping, body coordinates
  std::vector<Spring<S>> springs;
  std::vector<PointForce<S>> point_forces;
  std::vector<MovingForce<S>> moving_forces;
  std::vector<LoopClosure<S>> loops;
  std::vector<Coupling<S>> couplings;
  S baumgarte = S(-1);  // Baumgarte factor of the loop closures; < 0: 1/h

  explicit System(const Model<S>& model) : tree(model), D_m(model.N + 1, Mat6<S>::Zero()) {}

  int n_loop_rows() const {
    int l = 0;
    for (const auto& c : loops) l += loop_rows(c.kind);
    return l + static_cast<int>(couplings.size());
  }
};

}  // namespace treedyn::redmax
