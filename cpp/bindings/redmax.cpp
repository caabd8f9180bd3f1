// RedMax (baxter2019): the system (tree + springs, forces, loop closures) and its solvers.
// Double precision only. Inputs are checked here; the kernels run with the GIL released.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "arrays.hpp"
#include "treedyn/engine/engine.hpp"
#include "treedyn/engine/kernels/redmax_direct.hpp"
#include "treedyn/engine/kernels/redmax_pcg.hpp"

// instantiated once, with their engines (src/instantiate_redmax*.cpp), not again here (what the
// bindings call is defined out of the classes for that: an inline member would be instantiated here;
// the step's shared pieces are declared extern in redmax/step.hpp)
namespace treedyn::redmax {
extern template class Direct<double>;
extern template class Pcg<double>;
}  // namespace treedyn::redmax

namespace py = pybind11;
using namespace treedyn;
using namespace treedyn::py_arrays;
using namespace treedyn::redmax;

namespace {

using Sys = System<double>;
using MatX = Eigen::MatrixXd;
using VecX = Eigen::VectorXd;

py::array_t<double, py::array::c_style> q_arg(const Sys& sys, py::handle q, const char* name = "q") {
  py::ssize_t B;
  auto a = vector_arg<double>(q, name, sys.tree.nq, "nq", false, B);
  check_quaternions(sys.tree, a.data(), 1, name);
  return a;
}
py::array_t<double, py::array::c_style> v_arg(const Sys& sys, py::handle v, const char* name) {
  py::ssize_t B;
  return vector_arg<double>(v, name, sys.tree.nv, "nv", false, B);
}
double h_arg(double h) {
  if (!(h > 0) || !std::isfinite(h))
    throw py::value_error("the time step h must be positive and finite, got " + std::to_string(h));
  return h;
}
void body_arg(const Sys& sys, int b, const char* what) {
  if (b < 0 || b > sys.tree.N)
    throw py::value_error(std::string(what) + ": no body " + std::to_string(b) + " (bodies are 0.." +
                          std::to_string(sys.tree.N) + ")");
}

// the kinematics of the system at q (and q̇, default at rest), for the inspection functions
redmax::Data<double> kinematics_at(const Sys& s, const double* q, const double* qd = nullptr) {
  redmax::Data<double> d(s.tree);
  const VecX zero = VecX::Zero(s.tree.nv);
  kinematics(s.tree, d, q, qd ? qd : zero.data());
  return d;
}

py::dict stats_dict(const StepStats<double>& st) {
  py::dict d;
  d["position_residual"] = st.position_residual;
  d["velocity_residual"] = st.velocity_residual;
  d["constraint_rows"] = st.rows;
  d["constraint_rank"] = st.rank;
  d["solves"] = st.solves;
  d["iterations"] = st.iterations;
  d["max_iterations"] = st.max_iterations;
  d["unconverged"] = st.unconverged;
  d["seconds"] = st.seconds;
  return d;
}

// dense maximal matrices (6N x 6N, body i at rows 6(i−1)) of the system at the workspace's poses
void dense_maximal(const Sys& sys, const redmax::Data<double>& d, double t, MatX& Mm, MatX& Km, MatX& Dm) {
  const int N = sys.tree.N;
  Mm.setZero(6 * N, 6 * N);
  Km.setZero(6 * N, 6 * N);
  Dm.setZero(6 * N, 6 * N);
  for (int i = 1; i <= N; ++i) {
    Mm.block<6, 6>(6 * (i - 1), 6 * (i - 1)) = sys.tree.I[i].matrix();
    Dm.block<6, 6>(6 * (i - 1), 6 * (i - 1)) = sys.D_m[i];
  }
  auto add_force = [&](int b, const Eigen::Vector3d& x, const Eigen::Vector3d& f) {
    if (b > 0) Km.block<6, 6>(6 * (b - 1), 6 * (b - 1)) += point_force_stiffness(d.X0[b], x, f);
  };
  for (const auto& p : sys.point_forces) add_force(p.body, p.x, p.f);
  for (const auto& mf : sys.moving_forces) {
    Eigen::Vector3d x;
    const int b = mf.at(t, x);
    if (b >= 0) add_force(b, x, mf.f);
  }
  for (const auto& s : sys.springs) {
    const auto st = spring_terms(s, d.X0[s.a], d.X0[s.b]);
    const int idx[2] = {s.a, s.b};
    for (int x = 0; x < 2; ++x)
      for (int y = 0; y < 2; ++y) {
        if (idx[x] == 0 || idx[y] == 0) continue;
        Km.block<6, 6>(6 * (idx[x] - 1), 6 * (idx[y] - 1)) += st.K.block<6, 6>(6 * x, 6 * y);
        Dm.block<6, 6>(6 * (idx[x] - 1), 6 * (idx[y] - 1)) += st.D.block<6, 6>(6 * x, 6 * y);
      }
  }
}

// the loop-closure errors C of the workspace's rows
VecX loop_errors(const ConstraintWorkspace<double>& ws) {
  VecX C(ws.rows.size());
  for (size_t r = 0; r < ws.rows.size(); ++r) C[r] = ws.rows[r].C;
  return C;
}

VecX stack(const std::vector<Force<double>>& f, int N) {
  VecX x(6 * N);
  for (int i = 1; i <= N; ++i) x.segment<6>(6 * (i - 1)) = f[i].vec();
  return x;
}

using DirectEngine = KernelEngine<RedMaxDirectKernel<double>, double>;
using PcgEngine = KernelEngine<RedMaxPcgKernel<double>, double>;

// what both RedMax solvers offer besides the engine's forward_dynamics (batched over the
// threads): the step, M̃_r⁻¹R for a step h, and the continuous dynamics at a time t. Each works on
// thread 0's solver, under that solver's own lock.
template <class Engine, class Cls> void bind_stepper(Cls& cls) {
  cls.def(
         "step",
         [](Engine& engine, py::handle q, py::handle v, double t, double h) {
           auto& self = engine.workspace().solver;
           const Sys& s = self.system();
           auto qa = q_arg(s, q);
           auto va = v_arg(s, v, "v");
           h_arg(h);
           py::array_t<double> qo(s.tree.nq), vo(s.tree.nv);
           StepStats<double> st;
           {
             py::gil_scoped_release release;
             st = self.step(qa.data(), va.data(), t, h, qo.mutable_data(), vo.mutable_data());
           }
           check_result<double>(vo, "the RedMax step");
           check_result<double>(qo, "the RedMax step");
           return py::make_tuple(qo, vo, stats_dict(st));
         },
         py::arg("q"), py::arg("v"), py::arg("t"), py::arg("h"))
      .def(
          "inverse_inertia",
          [](Engine& engine, py::handle q, double h, py::handle R, py::object out_obj) {
            auto& self = engine.workspace().solver;
            const Sys& s = self.system();
            auto qa = q_arg(s, q);
            h_arg(h);
            auto Ra = as_real<double>(R, "R");
            if (!((Ra.ndim() == 1 || Ra.ndim() == 2) && Ra.shape(0) == s.tree.nv))
              throw py::value_error("R must have shape (nv,) or (nv, m) with nv = " + std::to_string(s.tree.nv) +
                                    ", got " + shape_str(Ra));
            check_finite<double>(Ra, "R");
            const int cols = Ra.ndim() == 1 ? 1 : int(Ra.shape(1));
            const std::vector<py::ssize_t> shape = Ra.ndim() == 1
                                                       ? std::vector<py::ssize_t>{py::ssize_t(s.tree.nv)}
                                                       : std::vector<py::ssize_t>{py::ssize_t(s.tree.nv), cols};
            py::array_t<double, py::array::c_style> out = out_obj.is_none()
                                                              ? py::array_t<double, py::array::c_style>(shape)
                                                              : out_arg<double>(out_obj, shape, {{"q", q}, {"R", R}});
            MatX Rm = Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(Ra.data(), s.tree.nv, cols);
            double* o = out.mutable_data();
            {
              py::gil_scoped_release release;
              const MatX X = self.inverse_inertia(qa.data(), h, Rm);  // (the solve's own result)
              Eigen::Map<Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(o, s.tree.nv, cols) = X;
            }
            check_result<double>(o, out.size(), "inverse_inertia");
            return py::object(std::move(out));
          },
          py::arg("q"), py::arg("h"), py::arg("R"), py::kw_only(), py::arg("out") = py::none())
      .def(
          "forward_dynamics_at",
          [](Engine& engine, py::handle q, py::handle v, py::handle tau, double t) {
            auto& self = engine.workspace().solver;
            const Sys& s = self.system();
            auto qa = q_arg(s, q);
            auto va = v_arg(s, v, "v");
            auto ta = v_arg(s, tau, "tau");
            py::array_t<double> out(s.tree.nv);
            {
              py::gil_scoped_release release;
              self.forward_dynamics(qa.data(), va.data(), ta.data(), t, out.mutable_data());
            }
            check_result<double>(out, "forward dynamics");
            return out;
          },
          py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("t"),
          "the unconstrained continuous dynamics at time t (the engine's forward_dynamics: t = 0, batches)");
}

}  // namespace

void bind_redmax(py::module_& m) {
  py::class_<Sys>(m, "RedMaxSystem",
                  "A tree with springs, forces and loop closures (baxter2019 §2); built by treedyn.Model")
      .def(py::init<const Model<double>&>())
      // the joint springs are the tree's (treedyn.Model.set_joint_spring, _core.Model.set_passive)
      .def_property_readonly("k_r", [](const Sys& s) { return s.tree.stiffness; })
      .def_property_readonly("d_r", [](const Sys& s) { return s.tree.damping; })
      .def_property_readonly("q_rest", [](const Sys& s) { return s.tree.q_rest; })
      .def_readwrite("baumgarte", &Sys::baumgarte)
      .def("set_body_damping",
           [](Sys& s, int i, const Eigen::Matrix<double, 6, 6>& D) {
             body_arg(s, i, "body damping");
             s.D_m[i] = D;
           })
      .def(
          "add_spring",
          [](Sys& s, int a, const Eigen::Vector3d& xa, int b, const Eigen::Vector3d& xb, double k, double d, double L) {
            body_arg(s, a, "spring");
            body_arg(s, b, "spring");
            s.springs.push_back({a, b, xa, xb, k, d, L});
          })
      .def("add_point_force",
           [](Sys& s, int b, const Eigen::Vector3d& x, const Eigen::Vector3d& f) {
             body_arg(s, b, "point force");
             s.point_forces.push_back({b, x, f});
           })
      .def("add_moving_force",
           [](Sys& s, const Eigen::Vector3d& f, const std::vector<int>& bodies, const std::vector<Eigen::Vector3d>& x0,
              const std::vector<Eigen::Vector3d>& x1, double duration) {
             for (int b : bodies) body_arg(s, b, "moving force");
             if (bodies.empty() || x0.size() != bodies.size() || x1.size() != bodies.size())
               throw py::value_error("moving force: the path needs one (body, start, end) per segment");
             if (!(duration > 0)) throw py::value_error("moving force: the duration must be positive");
             s.moving_forces.push_back({f, bodies, x0, x1, duration});
           })
      .def("add_loop",
           [](Sys& s, int a, const Eigen::Matrix3d& Ra, const Eigen::Vector3d& pa, int b, const Eigen::Matrix3d& Rb,
              const Eigen::Vector3d& pb, int kind, const Eigen::Vector3d& axis, const Eigen::Vector3d& axis2) {
             body_arg(s, a, "loop closure");
             body_arg(s, b, "loop closure");
             if (kind < 0 || kind >= n_loop_kinds)
               throw py::value_error("loop closure kind must be 0 (ball), 1 (hinge), 2 (universal) or 3 (weld)");
             s.loops.push_back({a, b, Ra, Rb, pa, pb, static_cast<LoopKind>(kind), axis, axis2});
           })
      .def(
          "add_coupling",
          [](Sys& s, const std::vector<int>& follower, const std::vector<double>& c1, const std::vector<int>& leader,
             const std::vector<double>& c2, const std::vector<double>& polycoef, double y0, double x0) {
            redmax::Coupling<double> c;
            auto terms = [&](const std::vector<int>& joints, const std::vector<double>& coef, std::vector<int>& qi,
                             std::vector<int>& vi, std::vector<double>& ci) {
              if (joints.size() != coef.size()) throw py::value_error("coupling: one coefficient per joint");
              for (size_t k = 0; k < joints.size(); ++k) {
                const int j = joints[k];
                body_arg(s, j, "coupling");
                const JointKind kind = s.tree.kind[j];
                if (kind != JointKind::Revolute && kind != JointKind::Prismatic)
                  throw py::value_error("coupling: joint " + s.tree.name[j] + " is " + joint_kind_name(kind) +
                                        "; couplings join revolute and prismatic coordinates");
                qi.push_back(s.tree.q_index[j]);
                vi.push_back(s.tree.v_index[j]);
                ci.push_back(coef[k]);
              }
            };
            terms(follower, c1, c.q1, c.v1, c.c1);
            terms(leader, c2, c.q2, c.v2, c.c2);
            if (c.q1.empty()) throw py::value_error("coupling: the follower has no joint");
            if (polycoef.size() > 5) throw py::value_error("coupling: at most 5 polynomial coefficients (quartic)");
            for (int k = 0; k < 5; ++k) c.a[k] = k < static_cast<int>(polycoef.size()) ? polycoef[k] : 0.0;
            c.y0 = y0;
            c.x0 = x0;
            s.couplings.push_back(c);
          },
          py::arg("follower"), py::arg("follower_coef"), py::arg("leader"), py::arg("leader_coef"), py::arg("polycoef"),
          py::arg("y0"), py::arg("x0"), "L₁(q) − y0 = p(L₂(q) − x0) for the bodies' 1-DoF joints (redmax/system.hpp)")
      .def_property_readonly("n_loop_rows", &Sys::n_loop_rows)
      .def(
          "body_poses",
          [](const Sys& s, py::handle q) {
            auto qa = q_arg(s, q);
            const redmax::Data<double> d = kinematics_at(s, qa.data());
            py::array_t<double> R({s.tree.N + 1, 3, 3}), p({s.tree.N + 1, 3});
            auto Rm = R.mutable_unchecked<3>();
            auto pm = p.mutable_unchecked<2>();
            for (int i = 0; i <= s.tree.N; ++i)
              for (int r = 0; r < 3; ++r) {
                pm(i, r) = d.X0[i].r[r];
                for (int c = 0; c < 3; ++c) Rm(i, r, c) = d.X0[i].E(c, r);  // R = Eᵀ
              }
            check_result<double>(R, "body_poses");
            check_result<double>(p, "body_poses");
            return py::make_tuple(R, p);
          },
          py::arg("q"), "world rotation (N+1, 3, 3) and origin (N+1, 3) of every body frame")
      .def(
          "J_times",
          [](const Sys& s, py::handle q, py::handle qd, py::handle x) {
            auto qa = q_arg(s, q);
            auto qda = v_arg(s, qd, "qd");
            auto xa = v_arg(s, x, "x");
            redmax::Data<double> d = kinematics_at(s, qa.data(), qda.data());
            Jdot_times(s.tree, d, xa.data(), d.y.data(), d.z.data());
            VecX Jx(6 * s.tree.N), Jdx(6 * s.tree.N);
            for (int i = 1; i <= s.tree.N; ++i) {
              Jx.segment<6>(6 * (i - 1)) = d.y[i].vec();
              Jdx.segment<6>(6 * (i - 1)) = d.z[i].vec();
            }
            return py::make_tuple(Jx, Jdx);
          },
          py::arg("q"), py::arg("qd"), py::arg("x"),
          "(J x, J̇ x) at (q, q̇) by the traversal of Alg. 2, stacked body twists (6N,)")
      .def(
          "JT_times",
          [](const Sys& s, py::handle q, py::handle y) {
            auto qa = q_arg(s, q);
            auto ya = as_real<double>(y, "y");
            if (ya.ndim() != 1 || ya.shape(0) != 6 * s.tree.N)
              throw py::value_error("y must have shape (6N,) = (" + std::to_string(6 * s.tree.N) + ",), got " +
                                    shape_str(ya));
            redmax::Data<double> d = kinematics_at(s, qa.data());
            std::vector<Force<double>> f(s.tree.N + 1, Force<double>::zero());
            for (int i = 1; i <= s.tree.N; ++i)
              f[i] = Force<double>::from(Eigen::Map<const Vec6<double>>(ya.data() + 6 * (i - 1)));
            VecX x(s.tree.nv);
            JT_times(s.tree, d, f.data(), x.data(), d.alpha.data());
            return x;
          },
          py::arg("q"), py::arg("y"), "Jᵀ y by the traversal of Alg. 3")
      .def(
          "fill_J",
          [](const Sys& s, py::handle q, py::handle qd) {
            auto qa = q_arg(s, q);
            auto qda = v_arg(s, qd, "qd");
            redmax::Data<double> d = kinematics_at(s, qa.data(), qda.data());
            MatX J, Jd;
            fill_J(s.tree, d, J, Jd);
            return py::make_tuple(J, Jd);
          },
          py::arg("q"), py::arg("qd"), "(J, J̇) filled by Alg. 1, (6N, nv) each")
      .def(
          "spring_terms",
          [](const Sys& s, int k, py::handle q) {
            if (k < 0 || k >= int(s.springs.size())) throw py::index_error("no spring " + std::to_string(k));
            auto qa = q_arg(s, q);
            const redmax::Data<double> d = kinematics_at(s, qa.data());
            const auto st = spring_terms(s.springs[k], d.X0[s.springs[k].a], d.X0[s.springs[k].b]);
            py::dict out;
            out["K"] = MatX(st.K);
            out["D"] = MatX(st.D);
            out["V"] = st.V;
            out["length"] = st.l;
            out["wa"] = VecX(st.wa.vec());
            out["wb"] = VecX(st.wb.vec());
            return out;
          },
          py::arg("k"), py::arg("q"),
          "spring k at q: wrenches on its bodies, 12x12 stiffness K and damping D, potential V, length")
      .def(
          "loop_rows",
          [](const Sys& s, py::handle q) {
            auto qa = q_arg(s, q);
            ConstraintWorkspace<double> ws(s);
            const VecX zero = VecX::Zero(s.tree.nv);
            kinematics(s.tree, ws.d, qa.data(), zero.data());
            constraint_rows(s, ws);
            return py::make_tuple(MatX(ws.Gt.transpose()), loop_errors(ws));
          },
          py::arg("q"), "(G, C(q)) of the constraints (loop closures, then couplings)")
      .def(
          "constraint_terms",
          [](const Sys& s, py::handle q, py::handle v) {
            auto qa = q_arg(s, q);
            auto va = v_arg(s, v, "v");
            const int l = s.n_loop_rows();
            MatX G(l, s.tree.nv);
            VecX C(l), Gdqd(l);
            {
              py::gil_scoped_release release;
              ConstraintWorkspace<double> ws(s);
              kinematics(s.tree, ws.d, qa.data(), va.data());
              constraint_rows(s, ws);
              G = ws.Gt.transpose();
              for (int r = 0; r < l; ++r) {
                C[r] = ws.rows[r].C;
                Gdqd[r] = ws.rows[r].Gdqd;
              }
            }
            return py::make_tuple(G, C, Gdqd);
          },
          py::arg("q"), py::arg("v"), "(G, C(q), Ġ(q, v) v) of the constraints (loop closures, then couplings)");

  py::class_<DirectEngine, Engine<double>> direct(m, "RedMaxDirect",
                                                  "redmax-direct: sparse assembly of M̃_r and sparse LDLᵀ");
  bind_stepper<DirectEngine>(direct);
  direct
      .def(py::init([](const Sys& sys, bool leaf_to_root) { return new DirectEngine(sys.tree, sys, leaf_to_root); }),
           py::arg("system"), py::arg("leaf_to_root") = false)
      .def(
          "terms",
          [](DirectEngine& engine, py::handle q, py::handle v, double t, double h) {
            auto& self = engine.workspace().solver;
            const Sys& s = self.system();
            auto qa = q_arg(s, q);
            auto va = v_arg(s, v, "v");
            h_arg(h);
            MatX J, Jd, Mm, Km, Dm, lhs, Gt;
            VecX fm, fr, rhs, C;
            {
              py::gil_scoped_release release;
              const auto held = self.lock();  // the workspace and the matrix are the solver's
              Workspace<double>& ws = self.workspace();
              implicit_terms(s, ws, qa.data(), va.data(), t, h);
              self.assemble(h);
              fill_J(s.tree, ws.d, J, Jd);
              dense_maximal(s, ws.d, t, Mm, Km, Dm);
              lhs = MatX(self.matrix());
              if (self.leaf_to_root()) lhs = lhs.reverse().eval();  // back to joint order
              fm = stack(ws.fm, s.tree.N);
              fr = ws.fr;
              rhs = ws.rhs;
              constraint_rows(s, ws);
              Gt = ws.Gt;
              C = loop_errors(ws);
            }
            VecX dr = Eigen::Map<const VecX>(s.tree.damping.data(), s.tree.nv),
                 kr = Eigen::Map<const VecX>(s.tree.stiffness.data(), s.tree.nv);
            py::dict out;
            out["J"] = J;
            out["Jdot"] = Jd;
            out["M_m"] = Mm;
            out["K_m"] = Km;
            out["D_m"] = Dm;
            out["f_m"] = fm;
            out["f_r"] = fr;
            out["K_r"] = MatX((-kr).asDiagonal());
            out["D_r"] = MatX(dr.asDiagonal());
            out["rhs"] = rhs;
            out["lhs"] = lhs;
            out["G"] = MatX(Gt.transpose());
            out["C"] = C;
            out["baumgarte"] = s.baumgarte < 0 ? 1.0 / h : s.baumgarte;
            return out;
          },
          py::arg("q"), py::arg("v"), py::arg("t"), py::arg("h"),
          "the terms of eq. (2.13) as dense arrays (for tests and teaching; O(n²) memory)")
      .def(
          "sparse_system",
          [](DirectEngine& engine, py::handle q, py::handle v, double t, double h) {
            auto& self = engine.workspace().solver;
            const Sys& s = self.system();
            if (self.leaf_to_root())
              throw py::value_error("sparse_system needs the solver in joint order (ordering='amd')");
            auto qa = q_arg(s, q);
            auto va = v_arg(s, v, "v");
            h_arg(h);
            Eigen::SparseMatrix<double, Eigen::ColMajor, int> M;
            VecX rhs, C;
            MatX Gt;
            {
              py::gil_scoped_release release;
              const auto held = self.lock();
              Workspace<double>& ws = self.workspace();
              implicit_terms(s, ws, qa.data(), va.data(), t, h);
              self.assemble(h);
              constraint_rows(s, ws);
              M = self.matrix();
              rhs = ws.rhs;
              Gt = ws.Gt;
              C = loop_errors(ws);
            }
            const long nnz = M.nonZeros();
            py::array_t<double> data(nnz);
            py::array_t<int> indices(nnz), indptr(M.outerSize() + 1);
            std::copy(M.valuePtr(), M.valuePtr() + nnz, data.mutable_data());
            std::copy(M.innerIndexPtr(), M.innerIndexPtr() + nnz, indices.mutable_data());
            std::copy(M.outerIndexPtr(), M.outerIndexPtr() + M.outerSize() + 1, indptr.mutable_data());
            py::dict out;
            out["data"] = data;
            out["indices"] = indices;
            out["indptr"] = indptr;
            out["rhs"] = rhs;
            out["Gt"] = Gt;
            out["C"] = C;
            out["baumgarte"] = s.baumgarte < 0 ? 1.0 / h : s.baumgarte;
            return out;
          },
          py::arg("q"), py::arg("v"), py::arg("t"), py::arg("h"),
          "M̃_r as CSC arrays (both triangles, joint order) with f̃_r, Gᵀ and C: for an external sparse solver")
      .def_property_readonly("nonzeros", py::cpp_function([](DirectEngine& engine) {
                               py::gil_scoped_release release;  // the solver's lock may be held by a step
                               return engine.workspace().solver.nonzeros();
                             }));

  py::class_<PcgEngine, Engine<double>> pcg(m, "RedMaxPcg",
                                            "redmax-pcg: PCG with the projected block Jacobi preconditioner");
  bind_stepper<PcgEngine>(pcg);
  pcg.def(py::init([](const Sys& sys, double tol, int max_iter) {
            if (!(tol > 0 && tol < 1)) throw py::value_error("tol must be in (0, 1), got " + std::to_string(tol));
            if (max_iter < 1) throw py::value_error("max_iter must be >= 1, got " + std::to_string(max_iter));
            return new PcgEngine(sys.tree, sys, tol, max_iter);
          }),
          py::arg("system"), py::arg("tol"), py::arg("max_iter"))
      .def(
          "precondition",
          [](PcgEngine& engine, py::handle q, double h, const MatX& X) {
            auto& self = engine.workspace().solver;
            const Sys& s = self.system();
            auto qa = q_arg(s, q);
            h_arg(h);
            if (X.rows() != s.tree.nv) throw py::value_error("X must have nv rows");
            return self.precondition(qa.data(), h, X);
          },
          py::arg("q"), py::arg("h"), py::arg("X"), "P⁻¹ X of the projected block Jacobi preconditioner (Alg. 4) at q");
}
