// The model: a constant structure of arrays, built once from Python and then frozen.
// Bodies are numbered 1..N; index 0 is the fixed world and its entries are unused.
// parent[i] < i and bodies come in depth-first order, so a body's subtree is the contiguous
// range i..last(i).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "treedyn/spatial/transform.hpp"

namespace treedyn {

enum class JointKind : int { Fixed = 0, Revolute = 1, Prismatic = 2, Universal = 3, Spherical = 4, Free = 5 };

// The joints' coordinate layout, the one source for C++ and Python (treedyn._core.joint_layouts):
// coordinates in q and v, and where a unit quaternion (x, y, z, w) starts in q (-1: none)
struct JointLayout {
  const char* name;
  int nq, nv, quaternion;
};
inline const JointLayout& joint_layout(JointKind k) {
  static const JointLayout layouts[] = {{"fixed", 0, 0, -1},     {"revolute", 1, 1, -1}, {"prismatic", 1, 1, -1},
                                        {"universal", 2, 2, -1}, {"spherical", 4, 3, 0}, {"free", 7, 6, 3}};
  return layouts[static_cast<int>(k)];
}
constexpr int n_joint_kinds = 6;
inline int joint_nq(JointKind k) { return joint_layout(k).nq; }
inline int joint_nv(JointKind k) { return joint_layout(k).nv; }
inline const char* joint_kind_name(JointKind k) { return joint_layout(k).name; }

// Loop-closing joints (RedMax, redmax/system.hpp) join a frame on body a to a frame on body b.
// The rows of G follow from the joint's kind:
//   ball: the origins coincide (3 rows);
//   hinge: and the frame-a axis `axis` stays parallel to the same axis of frame b (+2 rows);
//   universal: and axis1 (of frame a) keeps its angle to axis2 (of frame b) (+1 row);
//   weld: and the two frames keep their orientation (+3 rows: MJCF's weld equality).
enum class LoopKind : int { Ball = 0, Hinge = 1, Universal = 2, Weld = 3 };
constexpr int n_loop_kinds = 4;
inline const char* loop_kind_name(LoopKind k) {
  static const char* names[] = {"ball", "hinge", "universal", "weld"};
  return names[static_cast<int>(k)];
}
inline int loop_rows(LoopKind k) {
  static const int rows[] = {3, 5, 4, 6};
  return rows[static_cast<int>(k)];
}

template <class S> struct Model {
  int N = 0;           // number of bodies, world excluded
  int nq = 0, nv = 0;  // configuration and velocity dimensions
  Vec3<S> gravity = Vec3<S>(S(0), S(0), S(-9.81));

  // per body, indexed 0..N (0 = world)
  std::vector<std::string> name;
  std::vector<int> parent;  // λ(i) < i; parent[0] = -1
  std::vector<JointKind> kind;
  std::vector<int> q_index, v_index;  // first coordinate of joint i in q and in v
  std::vector<int> nq_i, nv_i;
  std::vector<Transform<S>> X_tree;  // parent frame -> joint frame (the joint's placement)
  std::vector<Vec3<S>> axis, axis2;  // joint axes in the joint frame (axis2: universal only)
  std::vector<RigidInertia<S>> I;    // body inertia in body coordinates
  // the last body of i's subtree (subtree = i..last(i)); closed_last[i] = -1 while i is on the path
  // from the world to the last body added (its subtree may still grow), so adding a body is O(1)
  // amortised instead of a walk over every ancestor
  std::vector<int> closed_last;
  int last(int i) const { return closed_last[i] < 0 ? N : closed_last[i]; }

  // passive joint terms, model data of every solver (MuJoCo's dof_armature, dof_damping,
  // jnt_stiffness, qpos_spring): per velocity coordinate the rotor inertia (M ← M + diag(armature))
  // and the spring–damper τ_p = −stiffness ∘ (q ⊖ q_rest) − damping ∘ q̇ (algorithms/passive.hpp);
  // q_rest per configuration coordinate. has_armature / has_springs: any nonzero (set_passive).
  std::vector<S> armature, stiffness, damping;  // nv
  std::vector<S> q_rest;                        // nq
  bool has_armature = false, has_springs = false;
  // the Python model's revision (treedyn.model's _revision, bumped by every change): a copy keeps the
  // value it was made at, so a data stepping a copy can tell that the model changed since
  long long revision = 0;

  Model() { add_world(); }

  void add_world() {
    name = {"world"};
    parent = {-1};
    kind = {JointKind::Fixed};
    q_index = {0};
    v_index = {0};
    nq_i = {0};
    nv_i = {0};
    X_tree = {Transform<S>::identity()};
    axis = {Vec3<S>::Zero()};
    axis2 = {Vec3<S>::Zero()};
    I = {RigidInertia<S>::zero()};
    closed_last = {-1};
    armature.clear(), stiffness.clear(), damping.clear(), q_rest.clear();
    has_armature = has_springs = false;
  }

  // the passive terms (sizes nv, nv, nv, nq), checked: finite, armature, stiffness, damping >= 0
  void set_passive(std::vector<S> a, std::vector<S> k, std::vector<S> d, std::vector<S> rest) {
    const auto check = [](const std::vector<S>& x, int n, const char* what, bool nonnegative) {
      if (int(x.size()) != n)
        throw std::invalid_argument(std::string(what) + " must have " + std::to_string(n) + " values, got " +
                                    std::to_string(x.size()));
      for (const S& e : x)
        if (!(e == e) || e - e != S(0) || (nonnegative && e < S(0)))
          throw std::invalid_argument(std::string(what) +
                                      (nonnegative ? " must be finite and >= 0" : " must be finite"));
    };
    check(a, nv, "armature", true);
    check(k, nv, "stiffness", true);
    check(d, nv, "damping", true);
    check(rest, nq, "q_rest", false);
    const auto any = [](const std::vector<S>& x) {
      for (const S& e : x)
        if (e != S(0)) return true;
      return false;
    };
    has_armature = any(a);
    has_springs = any(k) || any(d);
    armature = std::move(a), stiffness = std::move(k), damping = std::move(d), q_rest = std::move(rest);
  }

  int add_body(const std::string& body_name, int par, JointKind k, const Transform<S>& placement, const Vec3<S>& a1,
               const Vec3<S>& a2, const RigidInertia<S>& inertia) {
    const int i = N + 1;
    if (par < 0 || par >= i)
      throw std::invalid_argument("body '" + body_name + "': parent index " + std::to_string(par) +
                                  " is not an existing body (bodies are added parent first)");
    // depth-first order: the parent must be the last body added or one of its ancestors, so
    // that every subtree is the contiguous range i..last(i)
    int j = N;
    while (j > par) j = parent[j];
    if (j != par)
      throw std::invalid_argument("body '" + body_name + "': its parent '" + name[par] +
                                  "' is not an ancestor of the last body added ('" + name[N] +
                                  "'); add bodies in depth-first order so that each subtree is contiguous");
    name.push_back(body_name);
    parent.push_back(par);
    kind.push_back(k);
    q_index.push_back(nq);
    v_index.push_back(nv);
    nq_i.push_back(joint_nq(k));
    nv_i.push_back(joint_nv(k));
    X_tree.push_back(placement);
    axis.push_back(a1);
    axis2.push_back(a2);
    I.push_back(inertia);
    for (j = N; j > par; j = parent[j]) closed_last[j] = N;  // j's subtree ended with the last body added
    closed_last.push_back(-1);
    armature.resize(nv + joint_nv(k), S(0));
    stiffness.resize(nv + joint_nv(k), S(0));
    damping.resize(nv + joint_nv(k), S(0));
    q_rest.resize(nq + joint_nq(k), S(0));  // the joint's zero: its quaternion the identity (x, y, z, w)
    if (joint_layout(k).quaternion >= 0) q_rest[nq + joint_layout(k).quaternion + 3] = S(1);
    nq += joint_nq(k);
    nv += joint_nv(k);
    N = i;
    return i;
  }

  // whether o's passive terms, cast to S, are this model's (same bodies assumed)
  template <class T> bool same_passive(const Model<T>& o) const {
    const auto same = [](const std::vector<S>& a, const std::vector<T>& b) {
      if (a.size() != b.size()) return false;
      for (std::size_t k = 0; k < a.size(); ++k)
        if (a[k] != S(b[k])) return false;
      return true;
    };
    return same(armature, o.armature) && same(stiffness, o.stiffness) && same(damping, o.damping) &&
           same(q_rest, o.q_rest);
  }

  template <class T> Model<T> cast() const {
    Model<T> m;
    m.N = N;
    m.nq = nq;
    m.nv = nv;
    m.gravity = gravity.template cast<T>();
    m.name = name;
    m.parent = parent;
    m.kind = kind;
    m.q_index = q_index;
    m.v_index = v_index;
    m.nq_i = nq_i;
    m.nv_i = nv_i;
    m.closed_last = closed_last;
    const auto to = [](const std::vector<S>& x) {
      std::vector<T> out;
      for (const S& e : x) out.push_back(T(e));
      return out;
    };
    m.armature = to(armature), m.stiffness = to(stiffness), m.damping = to(damping), m.q_rest = to(q_rest);
    m.has_armature = has_armature, m.has_springs = has_springs;
    m.X_tree.clear();
    m.axis.clear();
    m.axis2.clear();
    m.I.clear();
    for (int i = 0; i <= N; ++i) {
      m.X_tree.push_back({X_tree[i].E.template cast<T>(), X_tree[i].r.template cast<T>()});
      m.axis.push_back(axis[i].template cast<T>());
      m.axis2.push_back(axis2[i].template cast<T>());
      const auto& Ii = I[i].I;
      m.I.push_back(
          {T(I[i].m), I[i].h.template cast<T>(), {T(Ii.xx), T(Ii.yx), T(Ii.yy), T(Ii.zx), T(Ii.zy), T(Ii.zz)}});
    }
    return m;
  }
};

// Thrown by a kernel when the articulated inertia of a joint is not positive definite: the
// subtree the joint moves has no inertia along the joint's motion subspace.
struct SingularJoint : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace treedyn
