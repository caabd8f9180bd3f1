// One time step with contact, in C++ (docs/contact.md): the phases of mj_step, each a small pass.
//   dynamics     the free motion v* = v + h q̈(q, v, τ) by ABA (its U_i, D_i⁻¹ are M's factors; where Newton
//                solves, by RNEA, CRBA and LTL as MuJoCo: contact/free_motion.hpp), the
//                joints' damping implicit as in MuJoCo's Euler: M̂ = M + h diag(damping) (the world's
//                model copy has armature + h damping) and τ + τ_p, τ_p = −k (q ⊖ q_rest) − d v, so that
//                M̂ (v⁺ − v)/h = τ + τ_p − c + Jᵀz/h
//   collision    the body poses from ABA's transforms, a broad phase, the candidate geom pairs' closed
//                forms (contact/collision.hpp)
//   contact      the rows (each contact's n, t₁, t₂; the joint limits within reach; the bilateral rows),
//                g = J v*, the targets, the impulses by Newton (contact/newton.hpp: the soft problem of a
//                small tree) or ADMM on the tree Delassus operator
//                (contact/admm.hpp, contact/delassus.hpp), v⁺ = v* + M⁻¹Jᵀz
//   integrate    q⁺ = q ⊕ h v⁺ (semi-implicit Euler) or q ⊕ h v (explicit Euler)
// A free joint's linear velocity is stepped as the world-frame velocity it is (below), so that a
// torque-free body keeps its speed. A world's workspace keeps the last step's impulses (the warm
// start) and ρ for the step that continues it (from the state it ended in); any other step starts
// cold, so that its result is a function of its inputs alone (the same run repeated, or a rollout
// from a saved state, gives the same bits). One engine steps many worlds, one workspace each.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "treedyn/algorithms/aba.hpp"
#include "treedyn/algorithms/crba.hpp"
#include "treedyn/algorithms/kinematics.hpp"
#include "treedyn/algorithms/ltl.hpp"
#include "treedyn/algorithms/passive.hpp"
#include "treedyn/algorithms/rnea_derivatives.hpp"
#include "treedyn/contact/admm.hpp"
#include "treedyn/contact/broad_phase.hpp"
#include "treedyn/contact/collision.hpp"
#include "treedyn/contact/delassus.hpp"
#include "treedyn/contact/delassus_dense.hpp"
#include "treedyn/contact/fluid.hpp"
#include "treedyn/contact/free_motion.hpp"
#include "treedyn/contact/implicit.hpp"
#include "treedyn/contact/newton.hpp"
#include "treedyn/contact/rows.hpp"
#include "treedyn/model/actuation.hpp"
#include "treedyn/model/configuration.hpp"

namespace treedyn {

struct ContactOptions {
  // 0: semi-implicit Euler, 1: explicit Euler, 2: RK4 (soft only: rk4 below), 3: MuJoCo's implicitfast
  // (semi-implicit with the velocity derivatives implicit: implicit_velocity), 4: MuJoCo's implicit (the
  // bias's derivative too: implicit_full)
  int integrator = 0;
  int edges = 4;  // 0: the second-order cone; k >= 3: k-edge pyramid
  double stabilization = 0.02, slop = 1e-5, push_out_limit = 0.2;
  int delassus = 0;  // the operator: 0 chosen per step by size (dense_pays), 1 tree, 2 dense
  AdmmSettings admm;
  // the contact solver: 0 auto (Newton where it applies, on larger trees where it pays: newton_applies), 1 ADMM,
  // 2 Newton where it applies (contact/newton.hpp: soft rows, pyramidal or frictionless, no hard rows;
  // dense up to newton_max_nv coordinates, on the tree's sparsity beyond: newton_applies), else ADMM
  int solver = 0;
  int newton_max_nv = 60;
  NewtonSettings newton;
  // MuJoCo's soft contacts and limits (contact/soft.hpp) instead of the hard rows with their push-out
  bool soft = false;
  double impratio = 1.0;  // a contact's friction rows' R = R_n / impratio
};

struct LimitTable {  // the model's finite joint-limit bounds: coordinate (q, v) and bound, ±1
  std::vector<int> qi, vi;
  std::vector<double> bound, sign;  // sign +1: a lower bound, −1: an upper one
};

// the phases timed; kDelassus: the operator's set-up (G formed, λ_max(G)), out of kContact
enum Phase { kCollision = 0, kDynamics = 1, kDelassus = 2, kContact = 3, kIntegrate = 4, kPhases = 5 };

// how a step ended: stepped; refused (τ, or q, v, not finite: nothing done); overflowed or diverged (past
// kDivergence: the state restored)
enum StepStatus {
  kStepped = 0,
  kTauNotFinite = 1,
  kOverflow = 2,
  kStateNotFinite = 3,
  kCtrlNotFinite = 4,
  kDiverged = 5
};
// a state beyond any physical scale: |q| or |v| past 1e10 (MuJoCo's mjMAXVAL, its divergence warning)
constexpr double kDivergence = 1e10;

struct StepStats {
  int contacts = 0, limits = 0, iterations = 0;
  bool converged = true;
  double primal = 0, dual = 0, max_penetration = 0;
  double seconds[kPhases] = {0, 0, 0, 0, 0};
  int status = kStepped;
  bool dense = false;  // the Delassus operator was formed
};

constexpr long long kBilateralKey = -(1LL << 40);  // warm-start keys of the bilateral rows: this − row

struct WarmEntry {
  long long key;
  double z[3], y[3];
};

// one world's workspace
struct ContactWorld {
  Model<double> model;  // the engine's, its armature + h damping for the step h it was made for (damped)
  double h = -1;
  Data<double> data;
  std::vector<Transform<double>> X0;
  std::vector<ContactPoint> found, split;
  std::vector<long long> keys, split_keys;  // per contact: (pair << 8) + its index in the pair's; limits: −1 − bound
  std::vector<unsigned char> edges;         // per contact: MuJoCo's pyramid edges (split_pyramids)
  TreeDelassus G;
  DenseDelassus D;  // G formed, for the small problems
  AdmmWorkspace w;
  Eigen::VectorXd qk, vk, qdd, vstar, vnext, dv, gap, tau;
  ReservedVector b, angle, mu, jv;  // per row or contact (storage kept as the rows shrink: linalg/reserved.hpp)
  ReservedVector
      dv_newton;  // Newton's last x − v* (its warm start, MuJoCo's qacc_warmstart in velocities; empty: none)
  std::vector<WarmEntry> warm;                 // the last step's z, y by key, sorted
  Eigen::VectorXd last_q, last_v;              // the state the last step ended in (empty: none)
  Eigen::VectorXd bilateral_target;            // the bilateral rows' targets (the rows: G.bilateral)
  Eigen::VectorXd bilateral_lo, bilateral_hi;  // their impulses' bounds (empty: unbounded)
  // soft steps: the first rows of the bilateral ones are MuJoCo's (soft_rows; contact/rows.hpp)
  std::vector<SoftGeneralRow> soft_general;
  std::vector<int> general_top;  // each general row's deepest coordinate (on_chains; −1: empty, −2: off the chains)
  std::vector<int> bounds;       // the limit bounds in the problem
  std::vector<char> in_problem;
  std::vector<Motion<double>> vel;  // the bodies' velocities at v*
  double rho = 0, lambda_max = 0;
  // the last solve's iterations on each operator, for the choice of operator (the formed one's
  // are fewer: the polish, admm.hpp); 20 until it has been used
  int last_iterations_tree = 20, last_iterations_dense = 20;
  bool polished = false;           // the last solve ended by the polish (admm.hpp)
  std::vector<int> through_count;  // rows through each joint (dense_pays)
  // the implicit velocity terms (implicit_velocity): K, and for a diagonal K a copy of the model with
  // armature + h K and no gravity, its workspace; made at the first such step
  VelocityStiffness stiffness;
  // implicit (implicit_full): ∂c/∂v's workspace and its matrices (held: no allocation once sized)
  std::unique_ptr<RneaDerivativesData<double>> rnea;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> DQ, DV;
  Eigen::MatrixXd T, G_imp, Mmj, H;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
  std::unique_ptr<Model<double>> euler;
  std::unique_ptr<Data<double>> euler_data;
  Eigen::VectorXd zero_v, y, corr;
  // RK4 (rk4): the step's start and each stage's velocity and acceleration in MuJoCo's form
  // (y, corr: implicit_velocity's, or RK4's combined velocity and acceleration)
  Eigen::VectorXd q0, v0, v_in, vtmp;
  Eigen::MatrixXd rk_vel, rk_acc;
  // the Newton solver (contact/newton.hpp): its workspace, M (CRBA) and the joints' motion axes in
  // world coordinates (each coordinate's angular velocity Ω_j and velocity of the world origin u_j)
  NewtonWorkspace nw;
  std::vector<Mat3<double>> geom_R;  // each paired geom's world orientation and centre (collide)
  std::vector<Vec3<double>> geom_p;
  SweepWorkspace sweep;  // the broad phase's order and this step's pairs
  std::unique_ptr<Data<double>> mass;
  bool mass_fresh = false;   // mass->M is this evaluation's (free_motion's or Newton's: implicit_velocity takes it)
  bool factored = false;     // data holds ABA's U_i, D_i⁻¹ at q (the ADMM operators': factor)
  bool newton_last = false;  // the last problem was Newton's (free_motion's route; false after start_cold)
  std::vector<double> Lm, pivot_scale;  // free_motion: M's factor on the compact rows, its pivots' scales
  std::vector<Vec3<double>> axis_ang, axis_lin;
  GeneralRowsWork general;  // the model's constraints, dry friction, tendon limits (contact/rows.hpp)
  // the fluid's forces (contact/fluid.hpp): a kinematics workspace, per body scratch, τ with them
  std::unique_ptr<Data<double>> fluid_data;
  std::vector<Motion<double>> fluid_vel;
  std::vector<Transform<double>> fluid_X0;
  std::vector<Force<double>> fluid_F;
  Eigen::VectorXd fluid_tau;
  std::mutex busy;
  explicit ContactWorld(const Model<double>& m)
      : model(m),
        data(m),
        X0(m.N + 1),
        G(model),  // (the delassus operators factor M̂: the world's model)
        D(model),
        qk(m.nq),
        vk(m.nv),
        qdd(m.nv),
        vstar(m.nv),
        vnext(m.nv),
        dv(m.nv),
        tau(m.nv),
        vel(m.N + 1) {}
};

// one world's state, inputs and last step's outcome in one place (MuJoCo's mjData in treedyn's words;
// the binding shares its arrays with numpy): q, v, the activations act and the time; the controls ctrl
// and the applied generalized force tau; force, the step's τ (tau + the actuators' and tendons')
struct StepData {
  Eigen::VectorXd q, v, ctrl, act, tau, force;
  Eigen::VectorXd q_start, v_start;  // the state the last step started from (empty before the first: sensors)
  double time = 0;
  StepStats stats;
  Actuation::Work work;
  StepData(int nq, int nv, int nu, int na)
      : q(Eigen::VectorXd::Zero(nq)),
        v(Eigen::VectorXd::Zero(nv)),
        ctrl(Eigen::VectorXd::Zero(nu)),
        act(Eigen::VectorXd::Zero(na)),
        tau(Eigen::VectorXd::Zero(nv)),
        force(Eigen::VectorXd::Zero(nv)) {}
};

struct ContactEngine {
  Model<double> model;
  Actuation actuation;  // the model's actuators and tendons (step_data)
  std::vector<GeomData> geoms;
  std::vector<std::pair<int, int>> pairs;
  std::vector<double> pair_friction, pair_margin;  // per pair: its own (NaN: the geoms' rule), or empty
  // per pair: its own condim, torsional and rolling friction (NaN: the geoms' rule), or empty
  std::vector<double> pair_condim, pair_spin, pair_roll;
  std::vector<int> paired;     // the geoms in some pair (their world poses each step)
  SweepAndPrune broad;         // the pairs' broad phase
  std::vector<double> radius;  // each geom's bounding_radius (the broad phase)
  LimitTable limits;
  GeneralRows general;  // the rows made each step in C++ (contact/rows.hpp)
  Fluid fluid;          // MuJoCo's inertia-box fluid forces (contact/fluid.hpp)
  // the soft rows (opt.soft): each pair's and each limit bound's solref and solimp, and MuJoCo's
  // approximate inverse inertias at the reference pose: each geom's body's body_invweight0
  // (translation), each coordinate's dof_invweight0
  std::vector<Softness> pair_soft, limit_soft;
  std::vector<double> geom_invweight, dof_invweight;
  ContactOptions opt;
  Pyramid pyramid;
  bool damped_joints;              // some joint has damping
  bool diagonal_stiffness = true;  // every actuator and damped tendon moves one coordinate (contact/implicit.hpp)
  std::vector<int> standalone;     // the free bodies without children (implicitfast's gyroscopic term)

  ContactEngine(const Model<double>& m, std::vector<GeomData> g, std::vector<std::pair<int, int>> p, LimitTable l,
                const ContactOptions& o)
      : model(m),
        geoms(std::move(g)),
        pairs(std::move(p)),
        limits(std::move(l)),
        opt(o),
        pyramid(o.edges),
        damped_joints(std::any_of(m.damping.begin(), m.damping.end(), [](double d) { return d > 0; })) {
    for (int i = 1; i <= model.N; ++i)
      if (model.kind[i] == JointKind::Free &&
          std::none_of(model.parent.begin() + 1, model.parent.end(), [i](int p) { return p == i; }))
        standalone.push_back(i);
    std::vector<char> in(geoms.size(), 0);
    for (const auto& [a, b] : pairs) in[a] = in[b] = 1;
    for (std::size_t g = 0; g < geoms.size(); ++g) {
      if (in[g]) paired.push_back(int(g));
      radius.push_back(bounding_radius(geoms[g]));
    }
    prepare_broad_phase();
  }
  // the broad phase's sorted pairs (contact/broad_phase.hpp); again after a change of pairs or pair_margin
  void prepare_broad_phase() {
    std::vector<double> margin(geoms.size());
    std::vector<Vec3<double>> half(geoms.size());
    for (std::size_t g = 0; g < geoms.size(); ++g) margin[g] = geoms[g].margin, half[g] = half_extents(geoms[g]);
    std::vector<char> own(pair_margin.size());  // (a pair's margin within its geoms' sum: their boxes hold it)
    for (std::size_t k = 0; k < pair_margin.size(); ++k)
      own[k] = !std::isnan(pair_margin[k]) && pair_margin[k] > margin[pairs[k].first] + margin[pairs[k].second];
    broad.build(pairs, half, margin, own);
  }

  void set_actuation(Actuation A) {
    actuation = std::move(A);
    diagonal_stiffness = VelocityStiffness::is_diagonal(actuation);
  }

  static double largest(const double* x, int n) {
    double m = 0;
    for (int k = 0; k < n; ++k) m = std::max(m, std::abs(x[k]));
    return m;
  }
  static bool finite(const double* x, int n) {
    for (int k = 0; k < n; ++k)
      if (!std::isfinite(x[k])) return false;
    return true;
  }

  using Clock = std::chrono::steady_clock;
  static double since(Clock::time_point& t0) {
    const auto t1 = Clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    t0 = t1;
    return s;
  }

  // a geom's half extents in its own frame (∞ for a plane): the broad phase's box
  static Vec3<double> half_extents(const GeomData& g) {
    const double r = g.size[0];
    switch (g.kind) {
      case ShapeKind::Sphere:
        return Vec3<double>::Constant(r);
      case ShapeKind::Capsule:
        return Vec3<double>(r, r, g.size[1] + r);
      case ShapeKind::Cylinder:
        return Vec3<double>(r, r, g.size[1]);
      case ShapeKind::Box:
      case ShapeKind::Ellipsoid:
        return g.size;
      case ShapeKind::Mesh: {
        Vec3<double> e = Vec3<double>::Zero();
        for (const Vec3<double>& v : *g.vertices) e = e.cwiseMax(v.cwiseAbs());
        return e;
      }
      default:
        return Vec3<double>::Constant(std::numeric_limits<double>::infinity());
    }
  }
  // a geom's bounding radius about its centre (∞ for a plane): the sphere test
  static double bounding_radius(const GeomData& g) {
    switch (g.kind) {
      case ShapeKind::Sphere:
        return g.size[0];
      case ShapeKind::Capsule:
        return g.size[0] + g.size[1];
      case ShapeKind::Box:
        return g.size.norm();
      case ShapeKind::Cylinder:
        return std::hypot(g.size[0], g.size[1]);
      case ShapeKind::Ellipsoid:
        return g.size.maxCoeff();
      case ShapeKind::Mesh:
        return g.radius;
      default:
        return std::numeric_limits<double>::infinity();
    }
  }

  // the broad phase: whether the pair's bounding spheres (a plane: its half-space) come within its
  // margin m — a pair further apart has no contact (the narrow phase reports depth + m > 0 only)
  bool near(int ia, const Mat3<double>& Ra, const Vec3<double>& pa, int ib, const Vec3<double>& pb, double m) const {
    const double ra = radius[ia], rb = radius[ib];
    const GeomData& a = geoms[ia];
    if (std::isinf(rb)) return true;  // (pairs are ordered with a plane first: see collide)
    if (std::isinf(ra)) return a.kind != ShapeKind::Plane || Ra.col(2).dot(pb - pa) <= rb + m;
    return (pb - pa).squaredNorm() <= (ra + rb + m) * (ra + rb + m);
  }

  // the bodies' world poses ^iX_0 = ^iX_λ ^λX_0 from ABA's ^iX_λ (the same bits as forward_kinematics,
  // without its second pass of joint transforms)
  void world_poses(ContactWorld& W) const {
    W.X0[0] = Transform<double>::identity();
    for (int i = 1; i <= model.N; ++i) W.X0[i] = compose(W.data.Xup[i], W.X0[model.parent[i]]);
  }

  // collision: the candidate pairs at the bodies' poses X0 (^iX_0: E = R_iᵀ, r = p_i), each geom's
  // world pose once, then the broad phase (near), then the closed forms
  void collide(ContactWorld& W) const {
    W.found.clear();
    W.keys.clear();
    W.geom_R.resize(geoms.size()), W.geom_p.resize(geoms.size());
    for (int g : paired) {
      const Transform<double>& X = W.X0[geoms[g].body];
      W.geom_R[g].noalias() = X.E.transpose() * geoms[g].R;
      W.geom_p[g] = X.E.transpose() * geoms[g].p + X.r;
    }
    sweep_and_prune(broad, W.geom_R, W.geom_p, W.sweep);
    for (const int k : W.sweep.pairs) {
      auto [ia, ib] = pairs[k];
      if (std::isinf(radius[ib]) && !std::isinf(radius[ia])) std::swap(ia, ib);
      const GeomData &a = geoms[ia], &b = geoms[ib];
      const Mat3<double>& Ra = W.geom_R[ia];
      const Vec3<double>&pa = W.geom_p[ia], &pb = W.geom_p[ib];
      const double m = pair_margin.empty() || std::isnan(pair_margin[k]) ? a.margin + b.margin : pair_margin[k];
      if (!near(ia, Ra, pa, ib, pb, m)) continue;
      std::tie(ia, ib) = pairs[k];  // (the narrow phase in the pair's own order)
      const std::size_t first = W.found.size();
      const GeomData &g0 = geoms[ia], &g1 = geoms[ib];
      if (pair_friction.empty())
        collide_pair(g0, ia, W.geom_R[ia], W.geom_p[ia], g1, ib, W.geom_R[ib], W.geom_p[ib], W.found);
      else
        collide_pair(g0, ia, W.geom_R[ia], W.geom_p[ia], g1, ib, W.geom_R[ib], W.geom_p[ib], W.found, pair_friction[k],
                     pair_margin[k]);
      const double own = pair_condim.empty() ? std::nan("") : pair_condim[k];
      const int dim = std::isnan(own) ? std::max(g0.condim, g1.condim) : int(own);
      for (std::size_t j = first; j < W.found.size(); ++j) {
        W.keys.push_back((static_cast<long long>(k) << 8) + (j - first));
        if (opt.soft) W.found[j].soft = pair_soft[k];
        ContactPoint& c = W.found[j];  // MuJoCo's rule: the larger condim and coefficients, or the pair's own
        c.dim = dim;
        c.spin = !pair_spin.empty() && !std::isnan(pair_spin[k]) ? pair_spin[k] : std::max(g0.spin, g1.spin);
        c.roll = !pair_roll.empty() && !std::isnan(pair_roll[k]) ? pair_roll[k] : std::max(g0.roll, g1.roll);
      }
    }
  }

  // the contacts' frames in their bodies' coordinates: n; t₁ = n × e/|n × e|, e the world axis least
  // aligned with n; t₂ = n × t₁ (treedyn.sim.contact.friction_basis). Soft: MuJoCo's (mju_makeFrame:
  // t₁ the collision's hint — a plane–capsule contact's axis — or else the y axis, or z where
  // |n_y| ≥ ½, made orthogonal to n), whose axes its pyramid's edges follow
  void frames(ContactWorld& W) const {
    W.G.contacts.resize(W.found.size());
    for (std::size_t k = 0; k < W.found.size(); ++k) {
      const ContactPoint& c = W.found[k];
      const Vec3<double> n = c.normal;
      Vec3<double> t1;
      if (opt.soft) {
        const Vec3<double> e =
            c.tangent.squaredNorm() >= 0.25 ? c.tangent : Vec3<double>::Unit(std::abs(n[1]) < 0.5 ? 1 : 2);
        t1 = e - n.dot(e) * n;
      } else {
        int e = 0;
        for (int j = 1; j < 3; ++j)
          if (std::abs(n[j]) < std::abs(n[e])) e = j;
        t1 = cross(n, Vec3<double>(Vec3<double>::Unit(e)));
      }
      t1 /= t1.norm();
      const Vec3<double> t2 = cross(n, t1);
      Mat3<double> D, A = Mat3<double>::Zero();
      if (c.half < 0) {
        D << n, t1, t2;
      } else if (c.half < 2) {  // MuJoCo's pyramid: two edges n ± μ t, a row held at 0
        const Vec3<double> t = (c.half == 0 ? t1 : t2) * c.friction;
        D << n + t, n - t, Vec3<double>::Zero();
      } else {  // its torsional and rolling edges: n ± μ a, a = n, t₁, t₂ an angular direction
        const Vec3<double> a = (c.half == 2 ? n : c.half == 3 ? t1 : t2) * (c.half == 2 ? c.spin : c.roll);
        D << n, n, Vec3<double>::Zero();
        A << a, -a, Vec3<double>::Zero();
      }
      ContactFrame& f = W.G.contacts[k];
      f.angular = c.half >= 2;
      for (int s = 0; s < 2; ++s) {
        const Transform<double>& X = W.X0[c.body[s]];
        f.body[s] = c.body[s];
        f.c[s] = X.E * (c.point - X.r);
        f.D[s] = X.E * D;
        if (f.angular) f.A[s] = X.E * A;
      }
    }
  }

  // the bodies' velocities at v (for g = J v*)
  void body_velocities(ContactWorld& W, const double* v, std::vector<Motion<double>>& vel) const {
    for (int i = 1; i <= model.N; ++i) {
      const int p = model.parent[i], vi = model.v_index[i];
      const Motion<double> vJ = subspace_times<double>(W.data.S.data() + vi, model.nv_i[i], v + vi);
      vel[i] = p > 0 ? W.data.Xup[i].apply(vel[p]) + vJ : vJ;
    }
  }

  static int contact_count(const ContactWorld& W) {  // (a pyramid's two halves are one contact)
    int n = 0;
    for (const ContactPoint& c : W.found) n += c.half <= 0;
    return n;
  }

  // the limit bounds: gap d = s(q̂ − bound), q̂ = q (semi-implicit) or q + h v (explicit)
  double gap(int k, const double* q, const double* v, double h) const {
    const double x = q[limits.qi[k]] + (opt.integrator == 1 ? h * v[limits.vi[k]] : 0.0);
    return limits.sign[k] * (x - limits.bound[k]);
  }

  // the target of a violated bound (violation e > 0, gap velocity ḋ = s v at the step's start): the
  // gap follows a critically damped spring–damper of time constant τ = max(stabilization, h),
  // d̈ = −2ḋ/τ − d/τ², stepped implicitly: ḋ⁺ = (max(ḋ, 0) + h e/τ²)/(1 + h/τ)² (e less the slop;
  // never outwards: a joint moving further out is stopped, as before). As MuJoCo's soft limits
  // (solref's time constant τ, damping ratio 1) push: the row is unilateral, it pushes and never
  // pulls, so it does not brake the return either; a joint started outside its range comes in
  // within a few τ and leaves at no more than the spring's largest speed e/(e_E τ) — where a
  // first-order return capped like a contact's push-out (0.2 rad/s) took 2.6 s for the Gymnasium
  // ant's 30° and left its torso on the floor meanwhile (docs/contact.md)
  double limit_return(double e, double rate, double h) const {
    const double tau = std::max(opt.stabilization, h), a = 1.0 + h / tau;
    return (std::max(rate, 0.0) + h * std::max(e - opt.slop, 0.0) / (tau * tau)) / (a * a);
  }

  // the rows' velocities g = J v*, targets b, cones (a contact's first edge against its slide)
  void rows(ContactWorld& W, double h) {
    const int P = int(W.found.size()), L = int(W.bounds.size()), B = int(W.G.bilateral.rows()), m = 3 * P + L + B;
    W.G.limit_dof.resize(L);
    W.G.limit_sign.resize(L);
    for (int l = 0; l < L; ++l) W.G.limit_dof[l] = limits.vi[W.bounds[l]], W.G.limit_sign[l] = limits.sign[W.bounds[l]];
    W.w.resize(m, opt.admm.anderson);
    W.b.resize(m);
    W.angle.resize(2 * P);
    W.mu.resize(P);
    ReservedVector& g = W.w.g;
    for (int i = 1; i <= model.N; ++i) W.G.a[i] = W.vel[i];
    W.G.gather(W.vstar.data(), g.data());
    const double tau = std::max(opt.stabilization, h);
    for (int k = 0; k < P; ++k) {
      const ContactPoint& c = W.found[k];
      W.b[3 * k] = std::min(std::max(c.depth - opt.slop, 0.0) / tau, opt.push_out_limit);
      W.b[3 * k + 1] = W.b[3 * k + 2] = 0.0;
      W.mu[k] = c.half < 0 ? c.friction : 0.0;
      const double s1 = g[3 * k + 1], s2 = g[3 * k + 2];
      const double sl = std::hypot(s1, s2);  // the first edge against the slide: (cos, sin) = −s/|s|
      const bool sliding = !opt.soft && sl > 1e-12 * (1.0 + std::abs(g[3 * k]));  // (soft: MuJoCo's axes)
      W.angle[2 * k] = sliding ? -s1 / sl : 1.0;
      W.angle[2 * k + 1] = sliding ? -s2 / sl : 0.0;
    }
    for (int l = 0; l < L; ++l) {  // s v⁺ ≥ −d/h inside; a violation's critically damped return
      const int k = W.bounds[l];
      const double d = W.gap[k];
      W.b[3 * P + l] = d >= 0 ? -d / h : limit_return(-d, limits.sign[k] * W.vk[limits.vi[k]], h);
    }
    for (int r = 0; r < B; ++r) W.b[3 * P + L + r] = W.bilateral_target[r];  // G v⁺ = −C/τ (Baumgarte)
    if (opt.soft) soft_rows(W, h);
  }

  // MuJoCo's soft contacts and limits (contact/soft.hpp): each row's R and its target from the
  // reference acceleration, b = J v + h a_ref, J v the rows' velocities at the step's start; Â a
  // contact's geoms' bodies' body_invweight0 (translation), a limit's dof_invweight0 (MuJoCo's
  // diagApprox); the soft general rows' (W.soft_general) with theirs, the other bilateral rows hard. Elliptic cones
  // (edges = 0): the friction rows R_n / impratio, damped only (no position term). MuJoCo's pyramid (edges = 4): its
  // edges n ± μ t_i (split_pyramids), each Â (1 + μ²), all with R_py = 2μ²/impratio R_e (R_e the first edge's)
  void soft_rows(ContactWorld& W, double h) {
    const int P = int(W.found.size()), L = int(W.bounds.size()), m = int(W.b.size());
    W.G.R.setZero(m);
    W.jv.resize(m);
    body_velocities(W, W.vk.data(), W.G.a);
    W.G.gather(W.vk.data(), W.jv.data());
    for (int k = 0; k < P; ++k) {
      const ContactPoint& c = W.found[k];
      const double A_hat = geom_invweight[c.geom[0]] + geom_invweight[c.geom[1]], mu = c.friction;
      if (c.half >= 0) {  // two pyramid edges: R_py = 2μ²/impratio R_e on both, R_e the first edge's (Â (1 + μ²), μ
                          // the sliding friction: MuJoCo's, the torsional and rolling edges' too)
        for (int e = 0; e < 2; ++e) {
          const SoftRow r = soft_row(c.soft, -c.depth, W.jv[3 * k + e], A_hat * (1 + mu * mu), h);
          W.G.R[3 * k + e] = 2 * mu * mu / opt.impratio * r.R, W.b[3 * k + e] = r.b;
        }
        W.G.R[3 * k + 2] = W.G.R[3 * k], W.b[3 * k + 2] = 0.0;
        continue;
      }
      const SoftRow n = soft_row(c.soft, -c.depth, W.jv[3 * k], A_hat, h);  // r = dist − margin = −depth
      W.G.R[3 * k] = n.R, W.b[3 * k] = n.b;
      for (int t = 1; t < 3; ++t) {  // (elliptic: R_t = R_n / impratio, damped only)
        W.G.R[3 * k + t] = n.R / opt.impratio;
        W.b[3 * k + t] = (1.0 - h * n.B) * W.jv[3 * k + t];
      }
    }
    for (int l = 0; l < L; ++l) {
      const int k = W.bounds[l];
      const SoftRow s = soft_row(limit_soft[k], W.gap[k], W.jv[3 * P + l], dof_invweight[limits.vi[k]], h);
      W.G.R[3 * P + l] = s.R, W.b[3 * P + l] = s.b;
    }
    for (int e = 0; e < int(W.soft_general.size()); ++e) {
      const SoftGeneralRow& g = W.soft_general[e];
      const SoftRow s = soft_row(g.softness, g.r, W.jv[3 * P + L + e], g.A_hat, h, g.r_imp, g.bias);
      W.G.R[3 * P + L + e] = s.R, W.b[3 * P + L + e] = s.b;
    }
  }

  // the warm start: the last step's z, y of the same contact (pair, index) or bound, else 0
  void warm_start(ContactWorld& W) const {
    const int P = int(W.found.size()), L = int(W.bounds.size());
    W.w.z.setZero();
    W.w.y.setZero();
    auto find = [&](long long key) -> const WarmEntry* {
      auto it = std::lower_bound(W.warm.begin(), W.warm.end(), key,
                                 [](const WarmEntry& e, long long k) { return e.key < k; });
      return it != W.warm.end() && it->key == key ? &*it : nullptr;
    };
    for (int k = 0; k < P; ++k)
      if (const WarmEntry* e = find(W.keys[k]))
        for (int r = 0; r < 3; ++r) W.w.z[3 * k + r] = e->z[r], W.w.y[3 * k + r] = e->y[r];
    for (int l = 0; l < L; ++l)
      if (const WarmEntry* e = find(-1 - W.bounds[l])) W.w.z[3 * P + l] = e->z[0], W.w.y[3 * P + l] = e->y[0];
    for (int r = 0; r < int(W.G.bilateral.rows()); ++r)
      if (const WarmEntry* e = find(kBilateralKey - r)) W.w.z[3 * P + L + r] = e->z[0], W.w.y[3 * P + L + r] = e->y[0];
  }
  void keep_warm(ContactWorld& W) const {
    const int P = int(W.found.size()), L = int(W.bounds.size());
    W.warm.clear();
    for (int l = 0; l < L; ++l)  // limits' keys are negative: −1 − the bound
      W.warm.push_back({-1 - W.bounds[l], {W.w.z[3 * P + l], 0, 0}, {W.w.y[3 * P + l], 0, 0}});
    for (int r = 0; r < int(W.G.bilateral.rows()); ++r)
      W.warm.push_back({kBilateralKey - r, {W.w.z[3 * P + L + r], 0, 0}, {W.w.y[3 * P + L + r], 0, 0}});
    for (int k = 0; k < P; ++k)
      W.warm.push_back({W.keys[k],
                        {W.w.z[3 * k], W.w.z[3 * k + 1], W.w.z[3 * k + 2]},
                        {W.w.y[3 * k], W.w.y[3 * k + 1], W.w.y[3 * k + 2]}});
    std::sort(W.warm.begin(), W.warm.end(), [](const WarmEntry& a, const WarmEntry& b) { return a.key < b.key; });
  }

  // soft with MuJoCo's pyramid: a frictional contact becomes condim − 1 pairs of edges, n ± μ t₁ and
  // n ± μ t₂ (half 0, 1), condim 4 and 6 the torsional n ± μ_spin n (2) and condim 6 the rolling
  // n ± μ_roll t₁, t₂ (3, 4), the last three angular (frames); each edge's impulse ≥ 0 (the cones'
  // edges flag), keys 8 key + half
  void split_pyramids(ContactWorld& W) const {
    W.split.clear(), W.split_keys.clear(), W.edges.clear();
    for (std::size_t k = 0; k < W.found.size(); ++k) {
      ContactPoint c = W.found[k];
      const bool split = opt.soft && opt.edges == 4 && c.friction > 0;
      const int halves = !split ? 1 : c.dim == 6 ? 5 : c.dim == 4 ? 3 : 2;
      for (int half = 0; half < halves; ++half) {
        c.half = split ? half : -1;
        W.split.push_back(c), W.split_keys.push_back(8 * W.keys[k] + half), W.edges.push_back(split);
      }
    }
    std::swap(W.found, W.split), std::swap(W.keys, W.split_keys);
  }

  // contacts found outside (the pairs without a closed form here: coal's, in Python), appended; a
  // contact's warm-start key is its geoms and its rank among theirs
  void add_contacts(ContactWorld& W, const std::vector<ContactPoint>& extra) const {
    const long long G = static_cast<long long>(geoms.size());
    for (std::size_t j = 0; j < extra.size(); ++j) {
      const ContactPoint& c = extra[j];
      long long rank = 0;
      for (std::size_t i = 0; i < j; ++i) rank += extra[i].geom[0] == c.geom[0] && extra[i].geom[1] == c.geom[1];
      W.found.push_back(c);
      W.keys.push_back((1LL << 40) + ((c.geom[0] * G + c.geom[1]) << 8) + rank);
    }
  }

  // the impulses on operator G (tree or dense): ADMM from the last step's ρ, λ_max(G) re-estimated
  template <class Op>
  AdmmResult solve(ContactWorld& W, Op& G, const ConeRows& cones, int m, StepStats& st, Clock::time_point t0) const {
    if (W.lambda_max <= 0 || W.rho <= 0) {
      W.lambda_max = largest_eigenvalue(G, W.w, m, 12);
      W.rho = 0.1 * W.lambda_max;
    } else {
      W.lambda_max = largest_eigenvalue(G, W.w, m, 4);
    }
    st.seconds[kDelassus] += since(t0);
    return admm(G, cones, W.w.g.data(), W.b.data(), W.lambda_max, W.rho, opt.admm, W.w);
  }

  // forming G pays where it and its solves cost less than the tree's iterations, in rough cycles:
  // the tree's two articulated-body passes ~300 a body; forming G Σ_i n_i m_i² / 2 (m_i the rows
  // through joint i, counted along the contacts' paths), its inverse (Cholesky and 2m³ flops of
  // triangular solves at GEMM speed) ~m³ a step, the polish's elimination (admm.hpp) 2m³/3 once,
  // an iteration m²/2; both ~40 m
  // an iteration for projections and Anderson; K = the last iterations on each. Checked on the centipede:
  // the cheaper of the two at 10 segments standing (m ≈ 60) and walking, and at 18, 25 and 50
  bool dense_pays(ContactWorld& W, int m) const {
    const double K = std::max(W.last_iterations_tree, 20), Kd = std::max(W.last_iterations_dense, 5), md = m;
    const double tree = K * (300.0 * model.N + 40 * md);
    if (md * md * md >= tree) return false;  // (the factorisation alone costs more: no need to count)
    double form = 0.0;
    std::vector<int>& through = W.through_count;
    through.assign(model.N + 1, 0);
    for (const ContactFrame& f : W.G.contacts) {
      W.D.collect_path({f.body[0], f.body[1]});
      for (int i : W.D.path) through[i] += 3;
    }
    for (int l : W.G.limit_dof)
      for (int i = W.G.dof_body[l]; i > 0; i = model.parent[i]) ++through[i];
    for (int i = 1; i <= model.N; ++i) {
      const double mi = through[i] + double(W.G.bilateral.rows());
      form += 0.5 * model.nv_i[i] * mi * mi;
    }
    const double dense = form + md * md * md * (1.0 + 2.0 / 3.0) + Kd * (0.5 * md * md + 40 * md);  // (+ a polish)
    return dense < tree;
  }

  // whether Newton solves this step's problem (contact/newton.hpp): soft rows only (the bilateral ones
  // soft equalities), each contact a pyramid's edges or frictionless (elliptic cones: ADMM). On the tree's
  // sparsity (LTL on compact rows) where every row lies on one chain (on_chains) — every contact against the world
  // or between a body and its ancestor, each general row on one chain — up to kNewtonTreeMaxNv coordinates: on a small
  // tree always (faster than the dense factor: Gymnasium's and the DeepMind Control humanoids and ant, 1.2-1.3x a
  // step), on a larger one asked for (solver 2) or by auto where newton_tree_pays (on a deep tree the factor's Σ depth²
  // per change of the active set costs more than ADMM's O(N) iterations). Dense (H n × n, Cholesky) on small trees (nv
  // ≤ newton_max_nv) otherwise, and where more rows join two moving bodies than the tree has coordinates (a pile of
  // bodies: ADMM's operator would hold a dense block of those rows, nc² memory and nc³ to factor, 20 overlapping boxes
  // 9 s a step; Newton's Hessian is nv × nv)
  static constexpr int kNewtonTreeMaxNv = 1000;
  bool newton_applies(ContactWorld& W) const {
    if (!opt.soft || opt.solver == 1 || W.G.bilateral.rows() > int(W.soft_general.size())) return false;
    for (std::size_t k = 0; k < W.found.size(); ++k)
      if (W.found[k].half < 0 && W.mu[k] > 0) return false;
    const bool small = model.nv <= opt.newton_max_nv;
    W.nw.tree = on_chains(W) && (small || opt.solver == 2 || newton_tree_pays(W));
    if (W.nw.tree || small) return true;
    if (model.nv > kNewtonTreeMaxNv) return false;
    return opt.solver == 2 || coupled_rows(W) > model.nv || newton_dense_pays(W);  // (a pile: dense)
  }
  // the rows on the tree's pattern (LTL's): contacts against the world or between a body and its ancestor, limits, and
  // general rows whose coordinates all lie on their deepest one's chain (a joint's dry friction: one coordinate), each
  // general row's deepest coordinate into W.general_top (−1: an empty row, −2: off the chains); true where the rows off
  // the chains (a contact between two branches, an equality across them: Newton's Woodbury rows, newton.hpp) number at
  // most nv / 2, which their C = I + UᵀHₜ⁻¹U (a² nv) keeps below H's dense factor (nv³ / 3); a pile is dense
  bool on_chains(ContactWorld& W) const {
    if (model.nv > kNewtonTreeMaxNv) return false;
    int off = 0;
    for (const ContactPoint& c : W.found) off += crosses(c) ? (c.half >= 0 ? 2 : 1) : 0;
    const auto& B = W.G.bilateral;
    W.general_top.assign(W.soft_general.size(), -1);
    for (int e = 0; e < int(W.soft_general.size()); ++e) {
      int& top = W.general_top[e];
      for (int j = model.nv - 1; j >= 0 && top != -2; --j) {
        if (B(e, j) == 0) continue;
        const int b = W.G.dof_body[j];
        if (top < 0)
          top = j;
        else if (!ancestor(b, W.G.dof_body[top]))  // (ancestor or the same body)
          top = -2, ++off;
      }
    }
    return 2 * off <= model.nv;
  }
  bool crosses(const ContactPoint& c) const {  // a contact between two branches
    return c.body[0] != 0 && c.body[1] != 0 && !ancestor(c.body[0], c.body[1]) && !ancestor(c.body[1], c.body[0]);
  }
  // the last coordinate on body b's chain (b's own last, or its nearest ancestor's with coordinates; −1: none)
  int chain_top(int b) const {
    while (b > 0 && model.nv_i[b] == 0) b = model.parent[b];
    return b > 0 ? model.v_index[b] + model.nv_i[b] - 1 : -1;
  }
  // auto's choice on a larger tree, in dense_pays' units: Newton's factor Σ_k len_k² (LTL's flops, len_k
  // the length of coordinate k's chain; ~2 factors a step and the products: 3Σ) and H's terms (a row on
  // the chain of top: len_top², two rows a contact), against ADMM's iterations K (300 N + 40 m), whose
  // count is the slower per unit (the tree passes' scattered reads against LTL's contiguous rows): on the
  // soft centipede Newton's step is 0.6, 0.77, 0.93 and 1.18 times ADMM's at 10, 15, 20 and 25 segments
  // where the counts' ratio is 0.55, 1.05, 1.7 and 2.5, so Newton where its count is below twice ADMM's
  bool newton_tree_pays(ContactWorld& W) const {
    const ChainRows& chain = chain_rows(W);
    double newton = 3.0 * chain.squares;
    auto row = [&](int top) { return top >= 0 ? double(chain.len[top]) * chain.len[top] : 0.0; };
    double off = 0;  // rows off the chains: a tree solve each and their C (a² nv) a factor
    for (const ContactPoint& c : W.found)
      if (crosses(c))
        off += 2;
      else
        newton += 2.0 * row(chain_top(ancestor(c.body[0], c.body[1]) ? c.body[1] : c.body[0]));
    for (int k : W.bounds) newton += row(limits.vi[k]);
    for (const int top : W.general_top) {
      if (top == -2)
        off += 1;
      else
        newton += row(top);
    }
    newton += 3.0 * off * (2.0 * chain.nnz() + off * model.nv);
    const double K = std::max(W.last_iterations_tree, 20);
    return newton < 2.0 * K * (300.0 * model.N + 40.0 * double(W.b.size()));
  }
  // dense Newton on a larger tree whose rows leave its chains (contacts between two branches): its factors
  // (nv³/3 flops each, ~3 a step) and H's terms (n nv² a factor, n rows), against ADMM's iterations as above;
  // the DeepMind Control dog (nv 85, its paws against its legs) took up to 131 ADMM iterations on the formed operator
  // there (1-2 ms steps); over 1000 random-control steps its median step was 179 us with ADMM there, 159 with dense
  // Newton there, 170 with this rule
  bool newton_dense_pays(const ContactWorld& W) const {
    const double nv = model.nv, m = double(W.b.size());
    const double newton = nv * nv * nv + 3.0 * m * nv * nv;
    const double K = std::max({W.last_iterations_tree, W.last_iterations_dense, 20});
    return newton < 2.0 * K * (300.0 * model.N + 40.0 * m);
  }
  int coupled_rows(const ContactWorld& W) const {  // the rows of contacts between two moving bodies
    int n = 0;
    for (const ContactPoint& c : W.found) n += 3 * (c.body[0] != 0 && c.body[1] != 0);
    return n;
  }
  bool ancestor(int a, int b) const {  // a is b or one of its ancestors
    while (b > a) b = model.parent[b];
    return b == a;
  }

  // the dense rows J (n × nv) of the rows Newton takes: a pyramid's two edges, a frictionless contact's
  // normal, each limit. Row (side e of contact k, direction d, point p in world coordinates) of
  // coordinate j, an ancestor's of body b_e: ±(d · u_j + (p × d) · Ω_j), + for e = 1 (gather's sign)
  void newton_rows(ContactWorld& W) const {
    const int nv = model.nv, P = int(W.found.size()), L = int(W.bounds.size());
    W.axis_ang.resize(nv), W.axis_lin.resize(nv);
    for (int i = 1; i <= model.N; ++i) {
      const Mat3<double> Et = W.X0[i].E.transpose();
      for (int j = model.v_index[i]; j < model.v_index[i] + model.nv_i[i]; ++j) {
        const Motion<double>& S = W.data.S[j];
        W.axis_ang[j] = Et * S.ang;
        W.axis_lin[j] = Et * S.lin - cross(W.axis_ang[j], W.X0[i].r);
      }
    }
    NewtonWorkspace& w = W.nw;
    w.rows.clear();
    for (int k = 0; k < P; ++k) {
      w.rows.push_back(3 * k);
      if (W.found[k].half >= 0) w.rows.push_back(3 * k + 1);
    }
    for (int l = 0; l < L; ++l) w.rows.push_back(3 * P + l);
    const int E = int(W.soft_general.size());  // (the general rows: equalities, frictions, limits: newton.hpp)
    for (int e = 0; e < E; ++e) w.rows.push_back(3 * P + L + e);
    const int n = int(w.rows.size());
    w.kind.assign(n, kUnilateral);
    w.bound.assign(n, 0.0);
    for (int e = 0; e < E; ++e) {
      const int kind = W.soft_general[e].kind;
      w.kind[n - E + e] = kind == SoftGeneralRow::kEquality   ? kFree
                          : kind == SoftGeneralRow::kFriction ? kBox
                                                              : kUnilateral;
      if (kind == SoftGeneralRow::kFriction) w.bound[n - E + e] = W.bilateral_hi[e];
    }
    if (w.tree) {  // each row's chain: the deeper body's (a limit: its coordinate's), its J there compact; a row off
                   // the chains dense in X
      chain_rows(W);
      w.top.resize(n), w.jadr.resize(n + 1), w.cross.assign(n, -1);
      w.jadr[0] = 0;
      int off = 0;
      for (int r = 0; r < n; ++r) {
        const int row = w.rows[r];
        int top = row >= 3 * P + L ? W.general_top[row - 3 * P - L] : row >= 3 * P ? W.G.limit_dof[row - 3 * P] : -1;
        if (row < 3 * P) {
          const ContactFrame& f = W.G.contacts[row / 3];
          top = crosses(W.found[row / 3]) ? -2 : chain_top(ancestor(f.body[0], f.body[1]) ? f.body[1] : f.body[0]);
        }
        if (top == -2) w.cross[r] = off++, top = -1;
        w.top[r] = top;
        w.jadr[r + 1] = w.jadr[r] + (top >= 0 ? w.chain.len[top] : 0);
      }
      w.Jc.assign(w.jadr[n], 0.0);
      w.X.setZero(off, nv);
    } else {
      w.J.setZero(n, nv);
    }
    // row r's entry at coordinate j (on the row's chain where w.tree, or its dense row off the chains)
    auto J = [&w](int r, int j) -> double& {
      return !w.tree ? w.J(r, j) : w.cross[r] >= 0 ? w.X(w.cross[r], j) : w.Jc[w.jadr[r] + w.chain.pos(w.top[r], j)];
    };
    w.b.resize(n), w.Rinv.resize(n);
    for (int r = 0; r < n; ++r) {
      const int row = w.rows[r];
      w.b[r] = W.b[row], w.Rinv[r] = 1.0 / W.G.R[row];
      if (row >= 3 * P + L) {  // a general row (on its chain where w.tree: on_chains)
        const int e = row - 3 * P - L;
        for (int j = 0; j < nv; ++j)
          if (W.G.bilateral(e, j) != 0) J(r, j) = W.G.bilateral(e, j);
        continue;
      }
      if (row >= 3 * P) {
        const int l = row - 3 * P;
        J(r, W.G.limit_dof[l]) = W.G.limit_sign[l];
        continue;
      }
      const ContactFrame& f = W.G.contacts[row / 3];
      for (int e = 0; e < 2; ++e) {
        const int body = f.body[e];
        if (body == 0) continue;
        const Transform<double>& X = W.X0[body];
        const Vec3<double> d = X.E.transpose() * f.D[e].col(row % 3);
        const Vec3<double> p = X.E.transpose() * f.c[e] + X.r;
        Vec3<double> pxd = cross(p, d);  // (+ an angular edge's direction: n·v + μ a·ω)
        if (f.angular) pxd += X.E.transpose() * f.A[e].col(row % 3);
        const double sign = e == 1 ? 1.0 : -1.0;
        for (int i = body; i > 0; i = model.parent[i])
          for (int j = model.v_index[i]; j < model.v_index[i] + model.nv_i[i]; ++j)
            J(r, j) += sign * (d.dot(W.axis_lin[j]) + pxd.dot(W.axis_ang[j]));
      }
    }
  }

  // q̈ of the free motion at (q, v) under τ on model m into W.qdd, with the kinematics the step goes on with (W.data's
  // ^iX_λ, S_i at q): where Newton is to solve the step (soft pyramids or frictionless contacts, Newton chosen, the
  // last problem Newton's, newton_may: no bilateral rows given), by RNEA, CRBA and LTL (contact/free_motion.hpp: M is
  // then Newton's); else, or where a pivot is refused there, by ABA, whose U_i, D_i⁻¹ the ADMM operators use
  void free_motion(ContactWorld& W, const Model<double>& m, const double* q, const double* v, const double* tau,
                   bool newton_may) const {
    W.mass_fresh = W.factored = false;
    if (newton_may && opt.soft && opt.edges == 4 && opt.solver != 1 && W.newton_last) {
      if (!W.mass) W.mass = std::make_unique<Data<double>>(W.model, true);
      W.mass_fresh =
          crba_ltl_free_motion(m, W.data, *W.mass, chain_rows(W), W.Lm, W.pivot_scale, q, v, tau, W.qdd.data());
      if (W.mass_fresh) return;
    }
    aba<double>(m, W.data, q, v, tau, static_cast<const double*>(nullptr), W.qdd.data());
    W.factored = true;
  }
  // the tree's compact rows (algorithms/ltl.hpp), built at first use: Newton's, the free motion's and the damping's
  const ChainRows& chain_rows(ContactWorld& W) const {
    NewtonWorkspace& w = W.nw;
    if (w.lambda.empty()) w.lambda = coordinate_parents(model);
    if (w.chain.n() != model.nv) w.chain.build(w.lambda);
    return w.chain;
  }
  // ABA's U_i, D_i⁻¹ at q (the world's model: M̂ if hard) where the free motion did not leave them
  void factor(ContactWorld& W) const {
    if (!W.factored) aba_factor(W.model, W.data), W.factored = true;
  }
  // M at q (CRBA on the free motion's kinematics, the world's model: M̂ if hard) where the free motion did not leave it
  void mass_matrix(ContactWorld& W) const {
    if (W.mass_fresh) return;
    if (!W.mass) W.mass = std::make_unique<Data<double>>(W.model, true);
    W.mass->Xup = W.data.Xup, W.mass->S = W.data.S;
    crba_root_axes_from_kinematics(W.model, *W.mass);
    W.mass_fresh = true;
  }

  // the soft problem by Newton (contact/newton.hpp) on M (the free motion's, or CRBA on its kinematics), warm-started
  // from the last step's impulses (x₀ = v* + M⁻¹Jᵀz by the tree's solve) where that is cheaper than v*
  void solve_newton(ContactWorld& W, const double* q, double h, StepStats& st) const {
    auto t0 = Clock::now();
    mass_matrix(W);
    newton_rows(W);
    st.seconds[kDelassus] += since(t0);
    // the warm start: the last Newton step's change of velocity on this step's v* (MuJoCo's: the last qacc),
    // else the last impulses' M⁻¹Jᵀz (kept per contact and limit: a step after ADMM's)
    const bool carried = W.dv_newton.size() == model.nv;
    const bool warm = carried || (W.w.z.size() && W.w.z.cwiseAbs().maxCoeff() > 0);
    if (carried) {
      W.nw.xw = W.vstar + W.dv_newton;
    } else if (warm) {
      factor(W);
      W.G.apply(W.w.z.data(), W.w.sigma.data(), W.dv.data());  // M⁻¹Jᵀz
      W.nw.xw = W.vstar + W.dv;
    }
    W.w.z.setZero();
    W.w.y.setZero();
    const NewtonResult res = newton(W.mass->M, W.vstar, warm ? &W.nw.xw : nullptr, h, opt.newton, W.nw, W.w.z.data());
    W.vnext = W.nw.x;
    W.dv_newton = W.nw.x - W.vstar;
    st.iterations += res.iterations;
    st.converged = st.converged && res.converged;
    st.primal = res.gradient, st.dual = res.improvement;
    st.dense = true;
  }

  // the contact phase: v⁺ = v* + M⁻¹Jᵀz
  void contact(ContactWorld& W, const double* q, const double* v, double h, StepStats& st) {
    const int P = int(W.found.size()), nB = int(limits.qi.size());
    W.gap.resize(nB);
    W.in_problem.assign(nB, 0);
    W.bounds.clear();
    for (int k = 0; k < nB; ++k) {  // within reach: d ≤ h max(−s v*, 0) + slop; soft: violated (MuJoCo's)
      W.gap[k] = gap(k, q, v, h);
      const double reach = opt.soft ? 0.0 : h * std::max(-limits.sign[k] * W.vstar[limits.vi[k]], 0.0) + opt.slop;
      if (opt.soft ? W.gap[k] < 0 : W.gap[k] <= reach) W.in_problem[k] = 1, W.bounds.push_back(k);
    }
    W.vnext = W.vstar;
    if (!opt.soft) W.G.R.resize(0);  // (hard: no regulariser; soft: set by soft_rows, its storage kept)
    if (P == 0 && W.bounds.empty() && W.G.bilateral.rows() == 0) {
      W.warm.clear(), W.dv_newton.resize(0);
      return;
    }
    body_velocities(W, W.vstar.data(), W.vel);
    for (int again = 0; again <= nB; ++again) {
      rows(W, h);
      warm_start(W);
      W.newton_last = newton_applies(W);
      if (W.newton_last) {
        solve_newton(W, q, h, st);
        break;
      }
      factor(W);
      const int m = int(W.b.size());
      ConeRows cones{P, int(W.bounds.size()), int(W.G.bilateral.rows()), W.mu.data(), &pyramid, W.angle.data()};
      if (W.bilateral_lo.size()) cones.lo = W.bilateral_lo.data(), cones.hi = W.bilateral_hi.data();
      cones.convex = opt.soft;
      if (opt.soft && opt.edges == 4) cones.edges = W.edges.data();
      const bool dense = opt.delassus == 2 || (opt.delassus == 0 && dense_pays(W, m));
      auto t0 = Clock::now();
      if (dense)
        W.D.form(W.G), W.D.plan(std::max(W.last_iterations_dense, 5));
      else
        W.G.weigh();
      const AdmmResult res = dense ? solve(W, W.D, cones, m, st, t0) : solve(W, W.G, cones, m, st, t0);
      W.dv_newton.resize(0);  // (a Newton step after this one starts from these impulses)
      st.dense = dense;
      W.polished = res.polished;
      W.rho = res.rho;
      (dense ? W.last_iterations_dense : W.last_iterations_tree) = res.iterations;
      st.iterations += res.iterations;
      st.converged = st.converged && res.converged;
      st.primal = res.primal, st.dual = res.dual;
      W.G.apply(W.w.z.data(), W.w.sigma.data(), W.dv.data());  // M⁻¹Jᵀz
      W.vnext = W.vstar + W.dv;
      // a bound left out that v⁺ crosses by more than the slop: into the problem, solve again (hard rows)
      bool missed = false;
      for (int k = 0; k < nB && !opt.soft; ++k)
        if (!W.in_problem[k] && W.gap[k] + h * limits.sign[k] * W.vnext[limits.vi[k]] < -opt.slop)
          W.in_problem[k] = 1, W.bounds.push_back(k), missed = true;
      if (!missed) break;
    }
    keep_warm(W);
  }

  // a free joint's linear velocity as a world-frame quantity: v* gets the classical acceleration
  // (q̈ + ω × v: what the Coriolis term of the body-frame q̈ takes away), and after the step the
  // linear velocity is rotated into the new body frame, R_{k+1}ᵀ R_k = exp(−h ω̂)
  void free_classical(const double* v, double h, double* vstar) const {
    for (int i = 1; i <= model.N; ++i) {
      if (model.kind[i] != JointKind::Free) continue;
      const double* vi = v + model.v_index[i];
      const Vec3<double> w(vi[3], vi[4], vi[5]), u(vi[0], vi[1], vi[2]);
      const Vec3<double> c = cross(w, u) * h;
      for (int k = 0; k < 3; ++k) vstar[model.v_index[i] + k] += c[k];
    }
  }

  void integrate_step(ContactWorld& W, const double* q, const double* v, double h, double* q_out, double* v_out) const {
    const double* vq = opt.integrator == 1 ? v : W.vnext.data();  // the velocity q moves with
    integrate(model, q, vq, h, q_out);
    for (int i = 1; i <= model.N; ++i) {
      if (model.kind[i] != JointKind::Free) continue;
      const int qi = model.q_index[i], vi = model.v_index[i];
      // p⁺ = p + h R_k u: the position along the world-frame velocity (not the screw)
      const Mat3<double> Rk = quat_rotation<double>(q + qi + 3);
      const Vec3<double> dp = Rk * Vec3<double>(vq[vi], vq[vi + 1], vq[vi + 2]) * h;
      for (int k = 0; k < 3; ++k) q_out[qi + k] = q[qi + k] + dp[k];
      // v⁺ in the new frame: exp(−h ω̂) v⁺, ω̂ the angular velocity the quaternion moved with
      const Vec3<double> w(vq[vi + 3], vq[vi + 4], vq[vi + 5]);
      const Eigen::Matrix<double, 4, 1> e = quat_exp<double>(Vec3<double>(w * h));
      const Mat3<double> Rh = quat_rotation<double>(e.data());
      const Vec3<double> un = Rh.transpose() * Vec3<double>(W.vnext[vi], W.vnext[vi + 1], W.vnext[vi + 2]);
      for (int k = 0; k < 3; ++k) W.vnext[vi + k] = un[k];
    }
    for (int k = 0; k < model.nv; ++k) v_out[k] = W.vnext[k];
  }

  // the model of step h, M̂ = M + h diag(damping): the world's copy, its armature refreshed when h
  // changes (soft: M, and implicit_velocity after the solve, as MuJoCo's Euler)
  const Model<double>& damped(ContactWorld& W, double h) const {
    if (!model.has_springs || opt.soft || W.h == h) return W.model;
    for (int k = 0; k < model.nv; ++k) W.model.armature[k] = model.armature[k] + h * model.damping[k];
    W.model.has_armature = true;
    W.h = h;
    return W.model;
  }

  // the implicit velocity terms after the solve (contact/implicit.hpp): MuJoCo's Euler's joint damping
  // (soft: the solve was on M; hard steps have it in M̂ already: damped), implicitfast's actuators and
  // tendons too; kv: the actuators' velocity gains (nullptr: none)
  void implicit_velocity(ContactWorld& W, const double* q, const double* v, double h, const double* kv) const {
    if (opt.integrator == 4) return implicit_full(W, q, v, h, kv);
    const bool fast = opt.integrator == 3, joints = opt.soft && damped_joints;
    if (!fast && !joints) return;
    const int nv = model.nv;
    VelocityStiffness& S = W.stiffness;
    S.diagonal = diagonal_stiffness || !fast;                   // (Euler's: the joints' damping alone)
    W.dv = W.vnext - Eigen::Map<const Eigen::VectorXd>(v, nv);  // Δ
    const bool any = S.assemble(actuation, fast ? kv : nullptr, joints ? &model.damping : nullptr, fast, nv);
    if (any) stiffness_correction(W, q, h);
    if (fast) standalone_free_bodies(W, v, h, any);
  }

  // v⁺ −= (M + hK)⁻¹ h K Δ
  void stiffness_correction(ContactWorld& W, const double* q, double h) const {
    const int nv = model.nv;
    VelocityStiffness& S = W.stiffness;
    // the free motion's or Newton's M + h diag(K): no fill-in on the tree's pattern, LTL in O(n d²) on Newton's
    // compact rows (algorithms/ltl.hpp), where the dense factor costs n³/3
    if (S.diagonal && W.mass_fresh) {
      const ChainRows& chain = chain_rows(W);
      S.hk = h * S.kd;
      S.Hc.resize(chain.nnz());
      ltl_rows_from(W.mass->M, S.hk.data(), chain, S.Hc.data());
      if (ltl_rows(S.Hc.data(), chain) < 0) {
        W.y = h * S.kd.cwiseProduct(W.dv);
        ltl_rows_solve(S.Hc.data(), chain, W.y.data());
        W.vnext -= W.y;
        return;
      }  // (not positive definite to rounding: the dense factor below)
    }
    if (!S.diagonal || W.mass_fresh) {  // (M + hK)⁻¹ h K Δ, M by CRBA on ABA's kinematics at q (the world's
      // model: M̂ if hard), or Newton's of this step: one dense factor where it has M already, not a second ABA
      mass_matrix(W);
      if (S.diagonal) S.K = S.kd.asDiagonal();
      S.H = W.mass->M + h * S.K;
      S.ldlt.compute(S.H);
      W.y.noalias() = h * (S.K * W.dv);
      W.vnext -= S.ldlt.solve(W.y);
      return;
    }
    if (!W.euler) {  // (M + hK)⁻¹ by ABA at q̇ = 0 without gravity on a copy with armature + h K
      W.euler = std::make_unique<Model<double>>(model);
      W.euler->gravity.setZero();
      W.euler->has_springs = false;
      W.euler->armature.resize(nv);
      W.euler_data = std::make_unique<Data<double>>(*W.euler);
      W.zero_v = Eigen::VectorXd::Zero(nv), W.y.resize(nv), W.corr.resize(nv);
    }
    for (int k = 0; k < nv; ++k)
      W.euler->armature[k] = (W.model.armature.empty() ? 0.0 : W.model.armature[k]) + h * S.kd[k];
    W.euler->has_armature = true;
    W.y = h * S.kd.cwiseProduct(W.dv);
    aba<double>(*W.euler, *W.euler_data, q, W.zero_v.data(), W.y.data(), static_cast<const double*>(nullptr),
                W.corr.data());
    W.vnext -= W.corr;
  }

  // MuJoCo's implicit (mj_implicitSkip with the RNE term): H = M − h qDeriv with qDeriv = ∂(f_act + τ_p − c)/∂v,
  // the bias c's velocity derivative (Coriolis, centrifugal, gyroscopic) with the joints' damping by the analytic
  // RNEA derivatives (algorithms/rnea_derivatives.hpp: ∂(c − τ_p)/∂v in treedyn's coordinates) and the actuators'
  // and tendons' K; taken in MuJoCo's coordinates v_mj = T v (a free joint's linear velocity R u in world axes),
  // where c_mj = T c − M_mj Ṫ v, so ∂c_mj/∂v_mj = (T ∂c/∂v − M_mj ∂(Ṫv)/∂v) Tᵀ (Ṫ v = (R (ω × u), 0) per
  // free joint); H is not symmetric: LU. Δ⁺ = H⁻¹ M_mj Δ_mj, as qacc = H⁻¹ (qfrc_smooth + qfrc_constraint).
  void implicit_full(ContactWorld& W, const double* q, const double* v, double h, const double* kv) const {
    const int nv = model.nv;
    VelocityStiffness& S = W.stiffness;
    S.diagonal = false;
    const bool any = S.assemble(actuation, kv, nullptr, true, nv);
    if (!W.rnea) W.rnea = std::make_unique<RneaDerivativesData<double>>(model);
    W.DQ.resize(nv, nv), W.DV.resize(nv, nv);
    W.zero_v = Eigen::VectorXd::Zero(nv);
    rnea_derivatives<double>(model, *W.rnea, q, v, W.zero_v.data(), static_cast<const double*>(nullptr), W.DQ.data(),
                             W.DV.data(), static_cast<double*>(nullptr));
    if (!opt.soft)  // (hard: the joints' damping is in M̂ already)
      for (int k = 0; k < nv && model.has_springs; ++k) W.DV(k, k) -= model.damping[k];
    mass_matrix(W);
    Eigen::MatrixXd &T = W.T, &G = W.G_imp, &Mmj = W.Mmj, &H = W.H;
    T.setIdentity(nv, nv), G.setZero(nv, nv);
    for (int i = 1; i <= model.N; ++i) {
      if (model.kind[i] != JointKind::Free) continue;
      const int j = model.v_index[i];
      const Mat3<double> R = W.X0[i].E.transpose();
      const Vec3<double> u(v[j], v[j + 1], v[j + 2]), w(v[j + 3], v[j + 4], v[j + 5]);
      T.block<3, 3>(j, j) = R;
      G.block<3, 3>(j, j) = R * skew<double>(w), G.block<3, 3>(j, j + 3) = -R * skew<double>(u);
    }
    Mmj.noalias() = T * W.mass->M * T.transpose();
    H.noalias() = T * W.DV * T.transpose();
    H.noalias() -= Mmj * G * T.transpose();
    if (any) H.noalias() += T * S.K * T.transpose();
    H = Mmj + h * H;
    W.dv = W.vnext - Eigen::Map<const Eigen::VectorXd>(v, nv);  // Δ
    W.lu.compute(H);
    W.y.noalias() = Mmj * (T * W.dv);
    W.corr.noalias() = T.transpose() * W.lu.solve(W.y);
    W.vnext = Eigen::Map<const Eigen::VectorXd>(v, nv) + W.corr;
  }

  // implicitfast on a standalone free body (a free joint without children), as MuJoCo 4.0 (mjd_freeMhat): its
  // block decoupled from the rest, Δ⁺ = A⁻¹ M Δ with A = M + hK + hB in MuJoCo's coordinates (the origin's
  // linear velocity in world axes, ω in body axes: T = diag(R, 1) of ours), B = ∂(bias)/∂v, the gyroscopic
  // and the centre-of-mass offset's terms:  K = s ωᵀ − (ω·s) 1 + [ω × s]ₓ,  B_lin,ang = −m K R,
  // B_ang,ang = Rᵀ(−m [s]ₓ K + [ω]ₓ I_w − [I_w ω]ₓ) R, ω and s = R c (the centre of mass) in world axes
  void standalone_free_bodies(ContactWorld& W, const double* v, double h, bool with_K) const {
    using Mat6 = Eigen::Matrix<double, 6, 6>;
    using Vec6 = Eigen::Matrix<double, 6, 1>;
    for (int i : standalone) {
      const int j = model.v_index[i];
      const Mat3<double> R = W.X0[i].E.transpose(), I3 = Mat3<double>::Identity();
      const RigidInertia<double>& In = model.I[i];
      const double m = In.m;
      const Vec3<double> c = In.h / m;
      const Mat3<double> Ibar = In.I.full(), Ic = Ibar + m * skew<double>(c) * skew<double>(c);
      Mat6 Mo;  // ours: (linear, angular) in body axes
      Mo << m * I3, -m * skew<double>(c), m * skew<double>(c), Ibar;
      for (int k = 0; k < 6 && !W.model.armature.empty(); ++k) Mo(k, k) += W.model.armature[j + k];
      Mat6 T = Mat6::Zero();
      T.topLeftCorner<3, 3>() = R, T.bottomRightCorner<3, 3>() = I3;
      Mat6 A = T * Mo * T.transpose();
      const Mat6 Mmj = A;
      if (with_K) {
        const VelocityStiffness& S = W.stiffness;
        const Mat6 Ko = S.diagonal ? Mat6(S.kd.segment<6>(j).asDiagonal()) : Mat6(S.K.block<6, 6>(j, j));
        A += h * T * Ko * T.transpose();
      }
      const Vec3<double> w = R * Vec3<double>(v[j + 3], v[j + 4], v[j + 5]), s = R * c;
      const Mat3<double> Iw = R * Ic * R.transpose();
      const Mat3<double> K = s * w.transpose() - w.dot(s) * I3 + skew<double>(cross(w, s));
      const Mat3<double> C = -m * skew<double>(s) * K + skew<double>(w) * Iw - skew<double>(Iw * w);
      A.topRightCorner<3, 3>() += h * (-m * K * R);
      A.bottomRightCorner<3, 3>() += h * (R.transpose() * C * R);
      const Vec6 d = T * W.dv.segment<6>(j);
      const Vec6 dn = T.transpose() * A.partialPivLu().solve(Mmj * d);
      for (int k = 0; k < 6; ++k) W.vnext[j + k] = v[j + k] + dn[k];
    }
  }

  // τ plus the fluid's force at (q, v) (contact/fluid.hpp), or τ where there is no fluid
  const double* with_fluid(ContactWorld& W, const double* q, const double* v, const double* tau) const {
    if (!fluid.any()) return tau;
    if (!W.fluid_data) W.fluid_data = std::make_unique<Data<double>>(model), W.fluid_tau.resize(model.nv);
    fluid.apply(model, *W.fluid_data, q, v, tau, W.fluid_tau.data(), W.fluid_vel, W.fluid_X0, W.fluid_F);
    return W.fluid_tau.data();
  }

  // a free joint's linear velocity in MuJoCo's form (world frame, w = R u) and back (u = Rᵀ w), in place
  void free_to_world(const double* q, double* v, bool back) const {
    for (int i = 1; i <= model.N; ++i) {
      if (model.kind[i] != JointKind::Free) continue;
      const int qi = model.q_index[i], vi = model.v_index[i];
      const Mat3<double> R = quat_rotation<double>(q + qi + 3);
      const Vec3<double> x(v[vi], v[vi + 1], v[vi + 2]);
      const Vec3<double> y = back ? Vec3<double>(R.transpose() * x) : Vec3<double>(R * x);
      for (int k = 0; k < 3; ++k) v[vi + k] = y[k];
    }
  }

  // q_out = q ⊕ dt·vel, vel in MuJoCo's form (a free joint's position moves by dt·w, its
  // orientation and every other joint as integrate moves them: mj_integratePos)
  void integrate_mujoco(ContactWorld& W, const double* q, const Eigen::VectorXd& vel, double dt, double* q_out) const {
    W.vtmp = vel;
    free_to_world(q, W.vtmp.data(), true);
    integrate(model, q, W.vtmp.data(), dt, q_out);
    for (int i = 1; i <= model.N; ++i) {
      if (model.kind[i] != JointKind::Free) continue;
      const int qi = model.q_index[i], vi = model.v_index[i];
      for (int k = 0; k < 3; ++k) q_out[qi + k] = q[qi + k] + dt * vel[vi + k];
    }
  }

  // one evaluation of the soft dynamics at (W.qk, W.vk): the velocity and the acceleration
  // q̈ + M⁻¹Jᵀf (f the soft constraints' forces, λ/h) in MuJoCo's form, into column j of W.rk_vel,
  // W.rk_acc (a free joint's linear acceleration R(q̈ + ω × u): the world frame's, free_classical)
  void evaluate(ContactWorld& W, const double* tau, double h, StepStats& st, int j) {
    const double *q = W.qk.data(), *v = W.vk.data();
    if (model.has_springs) {
      add_passive_force(model, q, v, tau, W.tau.data());
      tau = W.tau.data();
    }
    tau = with_fluid(W, q, v, tau);
    free_motion(W, W.model, q, v, tau, true);
    world_poses(W);
    collide(W);
    if (opt.soft && opt.edges == 4) split_pyramids(W);
    W.vstar = W.vk + h * W.qdd;
    free_classical(v, h, W.vstar.data());  // (the rows' velocities from MuJoCo's qacc: with ω × u)
    W.G.kin = &W.data;
    W.G.bilateral.resize(0, model.nv);
    W.bilateral_lo.resize(0), W.bilateral_hi.resize(0);
    W.soft_general.clear();
    frames(W);
    contact(W, q, v, h, st);
    if (j == 0) st.contacts = contact_count(W), st.limits = int(W.bounds.size());
    for (const ContactPoint& c : W.found) st.max_penetration = std::max(st.max_penetration, c.depth);
    W.rk_acc.col(j) = (W.vnext - W.vk) / h;
    free_to_world(q, W.rk_acc.col(j).data(), false);
    W.rk_vel.col(j) = W.vk;
    free_to_world(q, W.rk_vel.col(j).data(), false);
  }

  // MuJoCo's RK4 (mj_RungeKutta) on the soft dynamics: stages X_i = X_0 + a_i h F_{i−1}
  // (a = ½, ½, 1), F = (velocity, acceleration) in MuJoCo's form, X⁺ = X_0 + h Σ B_i F_i
  // (B = 1/6, 1/3, 1/3, 1/6); the positions by integrate_mujoco. τ is held over the step.
  void rk4(ContactWorld& W, const double* tau, double h, double* q_out, double* v_out, StepStats& st) {
    const int nv = model.nv;
    W.rk_vel.resize(nv, 4), W.rk_acc.resize(nv, 4);
    W.q0 = W.qk, W.v0 = W.vk;
    free_to_world(W.q0.data(), W.v0.data(), false);
    static constexpr double a[3] = {0.5, 0.5, 1.0}, B[4] = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};
    auto t0 = Clock::now();
    evaluate(W, tau, h, st, 0);
    for (int i = 1; i < 4; ++i) {
      W.y = W.rk_vel.col(i - 1);  // (a vector of its own: integrate_mujoco takes one, no temporary)
      integrate_mujoco(W, W.q0.data(), W.y, a[i - 1] * h, W.qk.data());
      W.vk = W.v0 + (a[i - 1] * h) * W.rk_acc.col(i - 1);
      free_to_world(W.qk.data(), W.vk.data(), true);
      evaluate(W, tau, h, st, i);
    }
    st.seconds[kContact] = since(t0) - st.seconds[kDelassus];
    W.y.noalias() = W.rk_vel * Eigen::Map<const Eigen::Vector4d>(B);  // the combined velocity, acceleration
    W.corr.noalias() = W.rk_acc * Eigen::Map<const Eigen::Vector4d>(B);
    integrate_mujoco(W, W.q0.data(), W.y, h, q_out);
    Eigen::Map<Eigen::VectorXd>(v_out, nv) = W.v0 + h * W.corr;
    free_to_world(q_out, v_out, true);
    st.seconds[kIntegrate] = since(t0);
  }

  // one step of world W from (q, v) under τ: (q_out, v_out); may alias q, v
  void step(ContactWorld& W, const double* q, const double* v, const double* tau, double h, double* q_out,
            double* v_out, StepStats& st, const std::vector<ContactPoint>* extra = nullptr,
            const Eigen::MatrixXd* rows = nullptr, const double* targets = nullptr, const double* lower = nullptr,
            const double* upper = nullptr, const double* kv = nullptr) {
    std::lock_guard<std::mutex> lock(W.busy);
    st = StepStats{};
    if (!finite(tau, model.nv)) {
      st.status = kTauNotFinite;
      return;
    }
    if (!finite(q, model.nq) || !finite(v, model.nv)) {
      st.status = kStateNotFinite;
      return;
    }
    W.qk = Eigen::Map<const Eigen::VectorXd>(q, model.nq);  // q_out, v_out may alias q, v
    W.vk = Eigen::Map<const Eigen::VectorXd>(v, model.nv);
    q = W.qk.data(), v = W.vk.data();
    if (!(W.last_q.size() == model.nq && W.last_q == W.qk && W.last_v == W.vk)) start_cold(W);
    if (opt.integrator == 2) {  // (soft, no bilateral rows or outside contacts: checked by the binding)
      W.v_in = W.vk;
      rk4(W, tau, h, q_out, v_out, st);  // (W.qk, W.vk then hold its last stage; W.q0 the start)
      return finish(W, W.q0.data(), W.v_in.data(), q_out, v_out, st);
    }
    auto t0 = Clock::now();
    if (model.has_springs) {  // τ + τ_p, with M̂ (damped)
      add_passive_force(model, q, v, tau, W.tau.data());
      tau = W.tau.data();
    }
    tau = with_fluid(W, q, v, tau);
    free_motion(W, damped(W, h), q, v, tau, !(rows && rows->rows() > 0));  // q̈, and Xup, S
    for (int k = 0; k < model.nv; ++k) W.vstar[k] = v[k] + h * W.qdd[k];
    free_classical(v, h, W.vstar.data());
    st.seconds[kDynamics] = since(t0);
    world_poses(W);
    collide(W);
    if (extra) add_contacts(W, *extra);
    if (opt.soft && opt.edges == 4) split_pyramids(W);
    st.seconds[kCollision] = since(t0);
    W.G.kin = &W.data;
    W.soft_general.clear();
    if (rows && rows->rows() > 0) {  // bilateral rows given, G v⁺ = target
      W.G.bilateral = *rows;
      W.bilateral_target = Eigen::Map<const Eigen::VectorXd>(targets, rows->rows());
      if (lower) {  // bounded rows (dry friction, tendon limits): lo ≤ λ ≤ hi
        W.bilateral_lo = Eigen::Map<const Eigen::VectorXd>(lower, rows->rows());
        W.bilateral_hi = Eigen::Map<const Eigen::VectorXd>(upper, rows->rows());
      } else {
        W.bilateral_lo.resize(0), W.bilateral_hi.resize(0);
      }
    } else if (general.any()) {  // the model's (contact/rows.hpp)
      make_general_rows(general, W.general, model.nv, q, v, h, opt.integrator == 1, opt.soft, W.G.bilateral,
                        W.bilateral_target, W.bilateral_lo, W.bilateral_hi, W.soft_general);
    } else {
      W.G.bilateral.resize(0, model.nv);
      W.bilateral_lo.resize(0), W.bilateral_hi.resize(0);
    }
    frames(W);
    contact(W, q, v, h, st);
    st.contacts = contact_count(W);
    st.limits = int(W.bounds.size());
    for (const ContactPoint& c : W.found) st.max_penetration = std::max(st.max_penetration, c.depth);
    implicit_velocity(W, q, v, h, kv);
    st.seconds[kContact] = since(t0) - st.seconds[kDelassus];
    integrate_step(W, q, v, h, q_out, v_out);
    st.seconds[kIntegrate] = since(t0);
    finish(W, q, v, q_out, v_out, st);
  }

  // one step of a world's data: τ = tau + the actuators' and tendons' force at (q, v, ctrl, act), the
  // step in place, then the activations (explicit Euler) and the time; nothing done where the state
  // (q, v, act) or ctrl is not finite (the status says which)
  void step_data(ContactWorld& W, StepData& d, double h) {
    const bool state =
        finite(d.q.data(), model.nq) && finite(d.v.data(), model.nv) && finite(d.act.data(), int(d.act.size()));
    if (!state || !finite(d.ctrl.data(), int(d.ctrl.size()))) {
      d.stats = StepStats{};
      d.stats.status = state ? kCtrlNotFinite : kStateNotFinite;
      return;
    }
    d.q_start = d.q, d.v_start = d.v;  // (no allocation once sized)
    d.force = d.tau;
    if (actuation.any()) actuation.apply(d.q.data(), d.v.data(), d.ctrl.data(), d.act.data(), d.force.data(), d.work);
    step(W, d.q.data(), d.v.data(), d.force.data(), h, d.q.data(), d.v.data(), d.stats, nullptr, nullptr, nullptr,
         nullptr, nullptr, actuation.nu ? d.work.kv.data() : nullptr);
    if (d.stats.status != kStepped) return;
    actuation.activate(d.act.data(), d.ctrl.data(), h);
    d.time += h;
  }

  // the step's end: an overflow or a divergence restores the state; the state it ended in is kept (warm start)
  void finish(ContactWorld& W, const double* q, const double* v, double* q_out, double* v_out, StepStats& st) const {
    const bool overflow = !finite(q_out, model.nq) || !finite(v_out, model.nv);
    if (overflow || largest(q_out, model.nq) > kDivergence || largest(v_out, model.nv) > kDivergence) {
      std::copy(q, q + model.nq, q_out), std::copy(v, v + model.nv, v_out);  // (the state as it was)
      st.status = overflow ? kOverflow : kDiverged;
    }
    W.last_q = Eigen::Map<const Eigen::VectorXd>(q_out, model.nq);
    W.last_v = Eigen::Map<const Eigen::VectorXd>(v_out, model.nv);
  }

  // no warm start, ρ and λ_max estimated afresh, the operator chosen as on a first step
  static void start_cold(ContactWorld& W) {
    W.warm.clear(), W.dv_newton.resize(0);
    W.newton_last = false;  // (the free motion by ABA, whatever the last step's solver was)
    W.rho = W.lambda_max = 0;
    W.last_iterations_tree = W.last_iterations_dense = 20;
  }
};

}  // namespace treedyn
