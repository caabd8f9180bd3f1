// The contact step (treedyn/contact/step.hpp) for treedyn.sim.contact.ContactSimulator: an engine
// built once per model and options, stepping one world (a State, in place) or a batch of worlds
// (spread over td.set_num_threads threads), the GIL released. The Python side checks the states.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "arrays.hpp"
#include "meshes.hpp"
#include "treedyn/contact/step.hpp"
#include "treedyn/redmax/system.hpp"
#include "treedyn/support/parallel.hpp"

namespace py = pybind11;
using namespace treedyn;
using Arr = py::array_t<double, py::array::c_style>;

namespace {

struct PyContactEngine {
  ContactEngine engine;
  std::vector<std::unique_ptr<ContactWorld>> worlds;
  std::mutex grow;
  ContactWorld& world(std::size_t k) {
    std::lock_guard<std::mutex> lock(grow);
    while (worlds.size() <= k) worlds.push_back(std::make_unique<ContactWorld>(engine.model));
    return *worlds[k];
  }
};

// a writable float64 C-contiguous array of `n` values per world (B worlds, or one when B = 0)
double* inout(py::handle obj, const char* name, py::ssize_t B, py::ssize_t n) {
  auto a = py::reinterpret_borrow<py::array>(obj);
  if (!py::isinstance<py::array_t<double>>(obj) || !(a.flags() & py::array::c_style) || !a.writeable())
    throw py::type_error(std::string(name) + " must be a writable C-contiguous float64 array");
  const bool ok = B == 0 ? (a.ndim() == 1 && a.shape(0) == n) : (a.ndim() == 2 && a.shape(0) == B && a.shape(1) == n);
  if (!ok)
    throw py::value_error(std::string(name) + " has shape " + py_arrays::shape_str(a) + ", expected " +
                          (B == 0 ? "(" : "(" + std::to_string(B) + ", ") + std::to_string(n) + ")");
  return static_cast<double*>(a.mutable_data());
}

py::tuple stats_tuple(const StepStats& s) {
  static_assert(kPhases == 5, "the phases' tuple below");
  const double* t = s.seconds;
  const py::tuple secs = py::make_tuple(t[0], t[1], t[2], t[3], t[4]);
  return py::make_tuple(s.status, s.contacts, s.limits, s.iterations, s.converged, s.primal, s.dual, s.max_penetration,
                        secs, s.dense);
}

// column j of G and of (G + ρD)⁻¹ from an operator's products and solves (row-major out: transposed)
template <class Op> void columns_of(Op& op, int m, double rho, double* G, double* S) {
  Eigen::VectorXd x = Eigen::VectorXd::Zero(m);
  op.factor(rho);
  for (int j = 0; j < m; ++j) {
    x[j] = 1.0;
    op.apply(x.data(), G + std::size_t(j) * m);
    op.solve(x.data(), S + std::size_t(j) * m);
    x[j] = 0.0;
  }
}

// a world's last contacts: geoms, bodies, points, normals, depths, friction, impulses (on the second
// body, world N·s) and the limits' generalized impulse
py::tuple contacts_of(const ContactEngine& E, ContactWorld& W) {
  std::lock_guard<std::mutex> lock(W.busy);
  const py::ssize_t F = py::ssize_t(W.found.size()), P = ContactEngine::contact_count(W);
  py::array_t<std::int64_t> geoms({P, py::ssize_t(2)}), bodies({P, py::ssize_t(2)});
  Arr points({P, py::ssize_t(3)}), normals({P, py::ssize_t(3)}), impulses({P, py::ssize_t(3)}), depths(P), mu(P);
  const bool solved = W.w.z.size() >= 3 * F && py::ssize_t(W.G.contacts.size()) == F;
  for (py::ssize_t j = 0, k = -1; j < F; ++j) {  // (MuJoCo's pyramid: its two halves summed)
    const ContactPoint& c = W.found[j];
    const auto force = [&](py::ssize_t i) -> Vec3<double> {
      if (!solved) return Vec3<double>::Zero();
      const Mat3<double> D = W.X0[c.body[1]].E.transpose() * W.G.contacts[i].D[1];  // world frame
      return D * Vec3<double>(W.w.z.segment<3>(3 * i));
    };
    if (c.half >= 1) {  // (and the torsional and rolling edges: their forces on the normal)
      for (int r = 0; r < 3; ++r) impulses.mutable_at(k, r) += force(j)[r];
      continue;
    }
    ++k;
    const Vec3<double> f = force(j);
    for (int r = 0; r < 2; ++r) geoms.mutable_at(k, r) = c.geom[r], bodies.mutable_at(k, r) = c.body[r];
    for (int r = 0; r < 3; ++r) {
      points.mutable_at(k, r) = c.point[r];
      normals.mutable_at(k, r) = c.normal[r];
      impulses.mutable_at(k, r) = f[r];
    }
    depths.mutable_at(k) = c.depth;
    mu.mutable_at(k) = c.friction;
  }
  const py::ssize_t L = py::ssize_t(W.bounds.size());
  Arr limit_impulse(py::ssize_t(E.model.nv));
  std::fill(limit_impulse.mutable_data(), limit_impulse.mutable_data() + limit_impulse.size(), 0.0);
  for (py::ssize_t l = 0; l < L && W.w.z.size() >= 3 * F + L; ++l)
    limit_impulse.mutable_data()[W.G.limit_dof[l]] += W.G.limit_sign[l] * W.w.z[3 * F + l];
  return py::make_tuple(geoms, bodies, points, normals, depths, mu, impulses, limit_impulse);
}

// a world's data (StepData) with its own workspace, tied to the engine (kept alive) and to the Python
// model's revision when made (its C++ model's copy of it): a changed model is refused at the next step
struct PyStepData {
  py::object engine_ref, model, warning;
  PyContactEngine* engine;
  const Model<double>* live;  // the Python model's C++ model (its revision)
  long long revision;
  double h, tolerance;
  std::unique_ptr<ContactWorld> world;
  StepData data;
  std::mutex busy;  // one step at a time (threads sharing a data: each step whole, in turn)
  PyStepData(py::object e, py::object m, double h_, double tol, py::object warn)
      : engine_ref(e),
        model(std::move(m)),
        warning(std::move(warn)),
        engine(e.cast<PyContactEngine*>()),
        live(model.attr("core").cast<const Model<double>*>()),
        revision(live->revision),
        h(h_),
        tolerance(tol),
        world(std::make_unique<ContactWorld>(engine->engine.model)),
        data(engine->engine.model.nq, engine->engine.model.nv, engine->engine.actuation.nu,
             engine->engine.actuation.na) {}
};

// a numpy view of x, alive as long as owner
py::array view(Eigen::VectorXd& x, py::handle owner) {
  return py::array_t<double>({x.size()}, {py::ssize_t(sizeof(double))}, x.data(), owner);
}

// the named error of a step that did not step (the Python side's step_failure)
[[noreturn]] void step_failed(const StepData& d, double h) {
  const std::string at = " at t = " + std::to_string(d.time);
  switch (d.stats.status) {
    case kTauNotFinite:
      throw py::value_error("StepData.step: tau is not finite" + at);
    case kStateNotFinite:
      throw py::value_error("StepData.step: the state has NaN or inf in q, v or act" + at);
    case kCtrlNotFinite:
      throw py::value_error("StepData.step: ctrl has NaN or inf" + at);
    default: {
      char buf[512];
      int j = 0;
      const double vmax = d.v.size() ? d.v.cwiseAbs().maxCoeff(&j) : 0.0;
      std::snprintf(buf, sizeof buf,
                    "StepData.step: the simulation diverged at t = %.6g (step %lld): the step %s (largest |force| "
                    "%.3g, largest |v| %.3g at coordinate %d); the state is left as it was. A smaller time step, "
                    "or integrator=\"implicitfast\" for stiff actuators and dampers, may hold it",
                    d.time, static_cast<long long>(std::llround(d.time / h)),
                    d.stats.status == kOverflow ? "overflowed" : "would take |q| or |v| past 1e10",
                    d.force.size() ? d.force.cwiseAbs().maxCoeff() : 0.0, vmax, j);
      throw py::value_error(buf);
    }
  }
}

}  // namespace

// solref (2) then solimp (5)
static Softness softness(const double* x) {
  Softness s;
  std::copy(x, x + 2, s.ref);
  std::copy(x + 2, x + 7, s.imp);
  return s;
}

void bind_contact(py::module_& m) {
  py::class_<PyContactEngine>(m, "ContactEngine", "The contact step of one model (treedyn.sim.contact)")
      .def(
          py::init([](const Model<double>& model, py::array_t<int> kinds, py::array_t<int> bodies, Arr rotations,
                      Arr translations, Arr sizes, Arr friction, py::array_t<int> pairs, py::array_t<int> limit_q,
                      py::array_t<int> limit_v, Arr limit_bound, Arr limit_sign, int integrator, int edges,
                      double stabilization, double slop, double push_out_limit, double tolerance, int max_iterations,
                      int delassus, py::object margins, py::object pair_params, py::object meshes, py::object condims) {
            const py::ssize_t G = kinds.size();
            if (bodies.size() != G || rotations.size() != 9 * G || translations.size() != 3 * G ||
                sizes.size() != 3 * G || (friction.size() != G && friction.size() != 3 * G))
              throw py::value_error("ContactEngine: the geom arrays' sizes disagree");
            const int fw = friction.size() == 3 * G && G > 0 ? 3 : 1;  // (G,) or (G, 3): sliding, torsional, rolling
            std::vector<GeomData> geoms(G);
            for (py::ssize_t k = 0; k < G; ++k) {
              GeomData& g = geoms[k];
              g.kind = ShapeKind(kinds.data()[k]);
              g.body = bodies.data()[k];
              if (g.body < 0 || g.body > model.N) throw py::value_error("ContactEngine: a geom's body is out of range");
              for (int r = 0; r < 3; ++r) {
                for (int c = 0; c < 3; ++c) g.R(r, c) = rotations.data()[9 * k + 3 * r + c];
                g.p[r] = translations.data()[3 * k + r];
                g.size[r] = sizes.data()[3 * k + r];
              }
              g.friction = friction.data()[fw * k];
              if (fw == 3) g.spin = friction.data()[3 * k + 1], g.roll = friction.data()[3 * k + 2];
              if (g.kind < ShapeKind::Plane || g.kind > ShapeKind::Mesh)
                throw py::value_error("ContactEngine: a geom's kind is not 0 to 6");
            }
            if (!meshes.is_none()) {  // per geom: a convex mesh (meshes.hpp), or None
              auto list = meshes.cast<py::sequence>();
              if (py::ssize_t(list.size()) != G)
                throw py::value_error("ContactEngine: meshes must have one entry per geom");
              for (py::ssize_t k = 0; k < G; ++k) {
                if (list[k].is_none()) continue;
                py_arrays::set_mesh(list[k], geoms[k], "ContactEngine: meshes[" + std::to_string(k) + "]");
              }
            }
            for (py::ssize_t k = 0; k < G; ++k)
              if (geoms[k].kind == ShapeKind::Mesh && !geoms[k].vertices)
                throw py::value_error("ContactEngine: a mesh geom has no vertices (meshes)");
            if (!condims.is_none()) {  // each geom's condim: 1, 3, 4 or 6
              auto cd = condims.cast<py::array_t<int, py::array::c_style | py::array::forcecast>>();
              if (cd.size() != G) throw py::value_error("ContactEngine: condims must have one value per geom");
              for (py::ssize_t k = 0; k < G; ++k) {
                const int c = cd.data()[k];
                if (c != 1 && c != 3 && c != 4 && c != 6)
                  throw py::value_error("ContactEngine: a geom's condim is not 1, 3, 4 or 6");
                geoms[k].condim = c;
              }
            }
            if (!margins.is_none()) {  // each geom's margin (m)
              auto mg = py_arrays::as_real<double>(margins, "margins");
              if (mg.size() != G) throw py::value_error("ContactEngine: margins must have one value per geom");
              for (py::ssize_t k = 0; k < G; ++k) geoms[k].margin = mg.data()[k];
            }
            std::vector<std::pair<int, int>> pr(pairs.size() / 2);
            for (std::size_t k = 0; k < pr.size(); ++k) {
              pr[k] = {pairs.data()[2 * k], pairs.data()[2 * k + 1]};
              if (pr[k].first < 0 || pr[k].first >= G || pr[k].second < 0 || pr[k].second >= G)
                throw py::value_error("ContactEngine: a pair's geom is out of range");
            }
            LimitTable lt;
            const py::ssize_t nb = limit_q.size();
            for (py::ssize_t k = 0; k < nb; ++k) {
              lt.qi.push_back(limit_q.data()[k]);
              lt.vi.push_back(limit_v.data()[k]);
              lt.bound.push_back(limit_bound.data()[k]);
              lt.sign.push_back(limit_sign.data()[k]);
            }
            ContactOptions o;
            if (integrator < 0 || integrator > 4)
              throw py::value_error("ContactEngine: integrator must be 0, 1, 2, 3 (implicitfast) or 4 (implicit)");
            o.integrator = integrator;
            o.edges = edges;
            o.stabilization = stabilization;
            o.slop = slop;
            o.push_out_limit = push_out_limit;
            o.admm.tolerance = tolerance;
            o.admm.max_iterations = max_iterations;
            if (delassus < 0 || delassus > 2) throw py::value_error("ContactEngine: delassus must be 0, 1 or 2");
            o.delassus = delassus;
            ContactEngine engine(model, std::move(geoms), std::move(pr), std::move(lt), o);
            if (!pair_params.is_none()) {  // (pairs, 2 or 5): each pair's friction, margin (condim, torsional
                                           // and rolling friction), NaN: the geoms' rule
              auto pp = py_arrays::as_real<double>(pair_params, "pair_params");
              const std::size_t n = engine.pairs.size();
              const std::size_t w = n && std::size_t(pp.size()) == 5 * n ? 5 : 2;
              if (std::size_t(pp.size()) != w * n)
                throw py::value_error("ContactEngine: pair_params must be (pairs, 2) or (pairs, 5)");
              engine.pair_friction.resize(n), engine.pair_margin.resize(n);
              for (std::size_t k = 0; k < n; ++k)
                engine.pair_friction[k] = pp.data()[w * k], engine.pair_margin[k] = pp.data()[w * k + 1];
              if (w == 5) {
                engine.pair_condim.resize(n), engine.pair_spin.resize(n), engine.pair_roll.resize(n);
                for (std::size_t k = 0; k < n; ++k) {
                  const double c = pp.data()[5 * k + 2];
                  if (!std::isnan(c) && c != 1 && c != 3 && c != 4 && c != 6)
                    throw py::value_error("ContactEngine: a pair's condim is not 1, 3, 4 or 6");
                  engine.pair_condim[k] = c, engine.pair_spin[k] = pp.data()[5 * k + 3];
                  engine.pair_roll[k] = pp.data()[5 * k + 4];
                }
              }
              engine.prepare_broad_phase();  // (the pairs' own margins)
            }
            return new PyContactEngine{std::move(engine), {}, {}};
          }),
          py::arg("model"), py::arg("kinds"), py::arg("bodies"), py::arg("rotations"), py::arg("translations"),
          py::arg("sizes"), py::arg("friction"), py::arg("pairs"), py::arg("limit_q"), py::arg("limit_v"),
          py::arg("limit_bound"), py::arg("limit_sign"), py::arg("integrator"), py::arg("edges"),
          py::arg("stabilization"), py::arg("slop"), py::arg("push_out_limit"), py::arg("tolerance"),
          py::arg("max_iterations"), py::arg("delassus") = 0, py::arg("margins") = py::none(),
          py::arg("pair_params") = py::none(), py::arg("meshes") = py::none(), py::arg("condims") = py::none())
      .def(
          "set_soft",
          [](PyContactEngine& e, double impratio, py::handle pair_soft, py::handle limit_soft,
             py::handle geom_invweight, py::handle dof_invweight) {
            ContactEngine& E = e.engine;
            auto ps = py_arrays::as_real<double>(pair_soft, "pair_soft");
            auto ls = py_arrays::as_real<double>(limit_soft, "limit_soft");
            auto bw = py_arrays::as_real<double>(geom_invweight, "geom_invweight");
            auto dw = py_arrays::as_real<double>(dof_invweight, "dof_invweight");
            if (ps.size() != 7 * py::ssize_t(E.pairs.size()) || ls.size() != 7 * py::ssize_t(E.limits.qi.size()))
              throw py::value_error("set_soft: pair_soft must be (pairs, 7) and limit_soft (bounds, 7)");
            if (bw.size() != py::ssize_t(E.geoms.size()) || dw.size() != E.model.nv)
              throw py::value_error("set_soft: geom_invweight must be (geoms,) and dof_invweight (nv,)");
            for (py::ssize_t k = 0; k < ps.size(); ++k)
              if (!std::isfinite(ps.data()[k])) throw py::value_error("set_soft: pair_soft must be finite");
            for (py::ssize_t k = 0; k < ls.size(); ++k)
              if (!std::isfinite(ls.data()[k])) throw py::value_error("set_soft: limit_soft must be finite");
            if (!(impratio > 0) || !std::isfinite(impratio)) throw py::value_error("set_soft: impratio must be > 0");
            E.pair_soft.resize(E.pairs.size());
            for (std::size_t k = 0; k < E.pairs.size(); ++k) E.pair_soft[k] = softness(ps.data() + 7 * k);
            E.limit_soft.resize(E.limits.qi.size());
            for (std::size_t k = 0; k < E.limits.qi.size(); ++k) E.limit_soft[k] = softness(ls.data() + 7 * k);
            E.geom_invweight.assign(bw.data(), bw.data() + bw.size());
            E.dof_invweight.assign(dw.data(), dw.data() + dw.size());
            E.opt.impratio = impratio;
            E.opt.soft = true;
            for (auto& W : e.worlds) {  // (their models back to M: a soft step damps after the solve)
              ContactEngine::start_cold(*W);
              W->model.armature = E.model.armature, W->model.has_armature = E.model.has_armature, W->h = -1;
            }
          },
          py::arg("impratio"), py::arg("pair_soft"), py::arg("limit_soft"), py::arg("geom_invweight"),
          py::arg("dof_invweight"),
          "Make the contacts and limits MuJoCo's soft constraints (contact/soft.hpp): each pair's and each limit "
          "bound's (solref, solimp) as 7 numbers, MuJoCo's impratio, body_invweight0's translation per geom (its "
          "body's) and dof_invweight0")
      .def(
          "new_data",
          [](py::object self, py::object model, double h, double tolerance, py::object warning) {
            if (!(h > 0) || !std::isfinite(h)) throw py::value_error("new_data: h must be > 0");
            return std::make_unique<PyStepData>(self, std::move(model), h, tolerance, std::move(warning));
          },
          py::arg("model"), py::arg("h"), py::arg("tolerance"), py::arg("warning"),
          "A world's StepData with a workspace of its own, for the Python model (treedyn.Model) as it is now: a "
          "change of the model (its core's revision) is refused at the next step")
      .def(
          "set_actuation",
          [](PyContactEngine& e, Arr tendon_q, Arr tendon_v, Arr k, Arr d, Arr rest, Arr moment_q, Arr moment_v,
             Arr gain, Arr bias, Arr ctrl_range, Arr force_range, py::array_t<int> act_of, py::array_t<int> integrator,
             Arr T, Arr act_range, Arr joint_range) {
            const Model<double>& M = e.engine.model;
            const py::ssize_t nt = k.size(), nu = gain.size() / 3, na = T.size();
            auto mat = [](const Arr& a, py::ssize_t r, py::ssize_t c, const char* name) {
              if (a.size() != r * c) throw py::value_error(std::string("set_actuation: ") + name + " has a wrong size");
              return Eigen::MatrixXd(
                  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(a.data(), r,
                                                                                                           c));
            };
            Actuation A;
            A.nq = M.nq, A.nv = M.nv, A.nu = int(nu), A.na = int(na);
            A.tendon_q = mat(tendon_q, nt, M.nq, "tendon_q"), A.tendon_v = mat(tendon_v, nt, M.nv, "tendon_v");
            A.k = mat(k, nt, 1, "k"), A.d = mat(d, nt, 1, "d");
            const Eigen::MatrixXd r = mat(rest, nt, 2, "rest");
            A.rest_lo = r.col(0), A.rest_hi = r.col(1);
            A.passive = (A.k.array() != 0).any() || (A.d.array() != 0).any();
            A.moment_q = mat(moment_q, nu, M.nq, "moment_q"), A.moment_v = mat(moment_v, nu, M.nv, "moment_v");
            A.gain = mat(gain, nu, 3, "gain"), A.bias = mat(bias, nu, 3, "bias");
            const Eigen::MatrixXd cr = mat(ctrl_range, nu, 2, "ctrl_range"),
                                  fr = mat(force_range, nu, 2, "force_range");
            A.ctrl_lo = cr.col(0), A.ctrl_hi = cr.col(1), A.force_lo = fr.col(0), A.force_hi = fr.col(1);
            if (act_of.size() != nu || integrator.size() != na)
              throw py::value_error("set_actuation: act_of, integrator");
            A.act_of.assign(act_of.data(), act_of.data() + nu);
            for (int a : A.act_of)
              if (a < -1 || a >= na) throw py::value_error("set_actuation: act_of out of range");
            A.integrator.assign(integrator.data(), integrator.data() + na);
            A.T = mat(T, na, 1, "T");
            const Eigen::MatrixXd ar = mat(act_range, na, 2, "act_range");
            A.act_lo = ar.col(0), A.act_hi = ar.col(1);
            const Eigen::MatrixXd jr = mat(joint_range, M.nv, 2, "joint_range");
            A.joint_lo = jr.col(0), A.joint_hi = jr.col(1);
            A.joint_clamp = nu > 0 && (A.joint_lo.array().isFinite().any() || A.joint_hi.array().isFinite().any());
            e.engine.set_actuation(std::move(A));
          },
          py::arg("tendon_q"), py::arg("tendon_v"), py::arg("k"), py::arg("d"), py::arg("rest"), py::arg("moment_q"),
          py::arg("moment_v"), py::arg("gain"), py::arg("bias"), py::arg("ctrl_range"), py::arg("force_range"),
          py::arg("act_of"), py::arg("integrator"), py::arg("T"), py::arg("act_range"), py::arg("joint_range"),
          "The model's tendons and actuators (model/actuation.hpp) for StepData's steps: the tendons' maps (nt, nq), "
          "(nt, nv), stiffness, damping, dead band (nt, 2); the actuators' maps (nu, nq), (nu, nv), gain and bias "
          "(nu, 3), ctrl and force ranges (nu, 2), each one's activation or -1; per activation whether an "
          "integrator, its time constant, its range (na, 2); per velocity coordinate the clamp of the actuators' total "
          "force (nv, 2; +-inf: none)")
      .def(
          "set_rows",
          [](PyContactEngine& e, py::object system, Arr equality, py::array_t<int> friction_dof, Arr friction_f,
             Arr tendon_friction, Arr tendon_f, Arr limit_q, Arr limit_v, Arr limit_range, Arr friction_soft,
             Arr limit_soft, double stabilization, double slop) {
            const Model<double>& M = e.engine.model;
            GeneralRows R;
            if (!system.is_none()) {
              const auto& sys = system.cast<const redmax::System<double>&>();
              if (sys.tree.nv != M.nv || sys.tree.nq != M.nq)
                throw py::value_error("set_rows: the system is of another model");
              if (sys.n_loop_rows()) R.system = std::make_shared<redmax::System<double>>(sys);
            }
            const int l = R.system ? R.system->n_loop_rows() : 0;
            if (equality.ndim() != 2 || equality.shape(0) != l || equality.shape(1) != 12)
              throw py::value_error("set_rows: equality must have shape (the system's rows, 12)");
            for (int r = 0; r < l; ++r) {
              const double* x = equality.data() + 12 * r;
              EqualityRow E;
              E.soft = x[0] != 0, E.jdot = x[1] != 0, E.A_hat = x[2], E.first = int(x[3]), E.count = int(x[4]);
              if (!(E.first >= 0 && E.count >= 1 && E.first + E.count <= l && E.first <= r && r < E.first + E.count))
                throw py::value_error("set_rows: a row's constraint (first, count) does not hold it");
              std::copy(x + 5, x + 7, E.softness.ref), std::copy(x + 7, x + 12, E.softness.imp);
              R.equality.push_back(E);
            }
            const py::ssize_t nf = friction_dof.size();
            if (friction_f.size() != nf) throw py::value_error("set_rows: friction_dof and friction_f differ in size");
            for (py::ssize_t k = 0; k < nf; ++k) {
              const int j = friction_dof.data()[k];
              if (j < 0 || j >= M.nv) throw py::value_error("set_rows: friction_dof out of range");
              R.friction_dof.push_back(j), R.friction_f.push_back(friction_f.data()[k]);
            }
            const py::ssize_t nt = tendon_f.size(), nl = limit_range.size() / 2;
            if (tendon_friction.size() != nt * M.nv || limit_q.size() != nl * M.nq || limit_v.size() != nl * M.nv)
              throw py::value_error("set_rows: the tendons' rows have the wrong shapes");
            using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
            R.tendon_friction = Eigen::Map<const RowMat>(tendon_friction.data(), nt, M.nv);
            R.tendon_f = Eigen::Map<const Eigen::VectorXd>(tendon_f.data(), nt);
            R.limit_q = Eigen::Map<const RowMat>(limit_q.data(), nl, M.nq);
            R.limit_v = Eigen::Map<const RowMat>(limit_v.data(), nl, M.nv);
            const RowMat range = Eigen::Map<const RowMat>(limit_range.data(), nl, 2);
            R.limit_lo = range.col(0), R.limit_hi = range.col(1);
            // (per row: Â, solref (2), solimp (5))
            auto soft_of = [](Arr a, py::ssize_t n, std::vector<double>& A, std::vector<Softness>& S,
                              const char* what) {
              if (a.size() != 8 * n)
                throw py::value_error(std::string("set_rows: ") + what + " must have shape (n, 8)");
              for (py::ssize_t k = 0; k < n; ++k) {
                const double* x = a.data() + 8 * k;
                Softness s;
                std::copy(x + 1, x + 3, s.ref), std::copy(x + 3, x + 8, s.imp);
                A.push_back(x[0]), S.push_back(s);
              }
            };
            soft_of(friction_soft, nf + nt, R.friction_A, R.friction_soft, "friction_soft");
            soft_of(limit_soft, nl, R.limit_A, R.limit_soft, "limit_soft");
            R.stabilization = stabilization, R.slop = slop;
            e.engine.general = std::move(R);
          },
          py::arg("system"), py::arg("equality"), py::arg("friction_dof"), py::arg("friction_f"),
          py::arg("tendon_friction"), py::arg("tendon_f"), py::arg("limit_q"), py::arg("limit_v"),
          py::arg("limit_range"), py::arg("friction_soft"), py::arg("limit_soft"), py::arg("stabilization"),
          py::arg("slop"),
          "The general rows the step makes itself (contact/rows.hpp): the model's constraints (a RedMaxSystem, "
          "or None) with per row (soft, J'v in a_ref, its approximate inverse inertia, its constraint's first "
          "row and row count, solref (2), solimp (5)); dry friction on coordinates (indices, f); fixed tendons' "
          "dry friction (rows (nt, nv), f) and limits (rows (nl, nq), (nl, nv), ranges (nl, 2)); the dry frictions' "
          "(coordinates', then tendons') and the limits' softness (n, 8: approximate inverse inertia, solref, "
          "solimp) for soft steps; Baumgarte's time constant and the slop")
      .def(
          "set_fluid",
          [](PyContactEngine& e, double density, double viscosity, Arr wind, Arr box, Arr axes, Arr com) {
            const Model<double>& M = e.engine.model;
            const py::ssize_t n = M.N + 1;
            if (wind.size() != 3 || box.size() != 3 * n || axes.size() != 9 * n || com.size() != 3 * n)
              throw py::value_error("set_fluid: wind (3,), box (N+1, 3), axes (N+1, 3, 3), com (N+1, 3)");
            if (!(density >= 0) || !(viscosity >= 0) || !std::isfinite(density) || !std::isfinite(viscosity))
              throw py::value_error("set_fluid: density and viscosity must be finite and >= 0");
            Fluid F;
            F.density = density, F.viscosity = viscosity;
            F.wind = Vec3<double>(wind.data()[0], wind.data()[1], wind.data()[2]);
            for (py::ssize_t i = 0; i < n; ++i) {
              F.box.emplace_back(box.data()[3 * i], box.data()[3 * i + 1], box.data()[3 * i + 2]);
              F.com.emplace_back(com.data()[3 * i], com.data()[3 * i + 1], com.data()[3 * i + 2]);
              F.axes.push_back(Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(axes.data() + 9 * i));
            }
            e.engine.fluid = std::move(F);
          },
          py::arg("density"), py::arg("viscosity"), py::arg("wind"), py::arg("box"), py::arg("axes"), py::arg("com"),
          "MuJoCo's inertia-box fluid (contact/fluid.hpp): the fluid's density, viscosity and wind (world), per "
          "body its box's dimensions (0: none), principal axes (columns, body coordinates) and centre of mass")
      .def(
          "actuation_force",
          [](PyContactEngine& e, Arr q, Arr v, Arr ctrl, Arr act, py::handle out, py::object kv) {
            const Actuation& A = e.engine.actuation;
            const Model<double>& M = e.engine.model;
            if (q.size() != M.nq || v.size() != M.nv || ctrl.size() != A.nu || act.size() != A.na)
              throw py::value_error("actuation_force: q, v, ctrl, act must have nq, nv, nu, na values");
            double* tau = inout(out, "out", 0, M.nv);
            double* gains = kv.is_none() ? nullptr : inout(kv, "kv", 0, A.nu);
            Actuation::Work work;
            if (A.any()) A.apply(q.data(), v.data(), ctrl.data(), act.data(), tau, work);
            if (gains && A.nu) std::copy(work.kv.data(), work.kv.data() + A.nu, gains);
          },
          py::arg("q"), py::arg("v"), py::arg("ctrl"), py::arg("act"), py::arg("out"), py::arg("kv") = py::none(),
          "out += the actuators' force at (q, v, ctrl, act) and the tendons' spring-dampers (model/actuation.hpp); "
          "kv (nu,), if given: each actuator's velocity gain -df/dl' (0 where forcerange clamps it), for step's kv")
      .def(
          "activate",
          [](PyContactEngine& e, py::handle act, Arr ctrl, double h) {
            const Actuation& A = e.engine.actuation;
            if (ctrl.size() != A.nu) throw py::value_error("activate: ctrl must have nu values");
            A.activate(inout(act, "act", 0, A.na), ctrl.data(), h);
          },
          py::arg("act"), py::arg("ctrl"), py::arg("h"),
          "The activations after a step h under ctrl, in place (explicit Euler, clamped to actrange)")
      .def(
          "set_solver",
          [](PyContactEngine& e, int solver, int newton_max_nv, double tolerance, int max_iterations) {
            if (solver < 0 || solver > 2) throw py::value_error("set_solver: solver must be 0, 1 or 2");
            e.engine.opt.solver = solver;
            e.engine.opt.newton_max_nv = newton_max_nv;
            e.engine.opt.newton.tolerance = tolerance;
            e.engine.opt.newton.max_iterations = max_iterations;
          },
          py::arg("solver"), py::arg("newton_max_nv"), py::arg("tolerance"), py::arg("max_iterations"),
          "The contact solver: 0 auto (Newton on soft problems of trees up to newton_max_nv coordinates), 1 ADMM, "
          "2 Newton wherever it applies (contact/newton.hpp: dense, or on the tree's sparsity past newton_max_nv); "
          "Newton's tolerance and iterations")
      .def(
          "step",
          [](PyContactEngine& e, py::handle q, py::handle v, py::handle tau, double h, int world, py::object extra,
             py::object rows, py::object targets, py::object bounds, py::object kv) {
            const Model<double>& M = e.engine.model;
            Arr gains;  // the actuators' velocity gains (actuation_force's kv), for implicitfast
            if (!kv.is_none()) {
              gains = py_arrays::as_real<double>(kv, "kv");
              if (gains.size() != e.engine.actuation.nu) throw py::value_error("kv must have nu values");
            }
            std::vector<ContactPoint> found;  // (geoms, bodies, points, normals, depths, friction) from Python
            if (!extra.is_none()) {
              auto t = extra.cast<py::tuple>();
              auto g = t[0].cast<py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>>();
              auto b = t[1].cast<py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>>();
              auto p = py_arrays::as_real<double>(t[2], "points");
              auto n = py_arrays::as_real<double>(t[3], "normals");
              auto d = py_arrays::as_real<double>(t[4], "depths");
              auto f = py_arrays::as_real<double>(t[5], "friction");
              const py::ssize_t P = d.size();
              if (g.size() != 2 * P || b.size() != 2 * P || p.size() != 3 * P || n.size() != 3 * P || f.size() != P)
                throw py::value_error("extra contacts: the arrays' sizes disagree");
              Arr sp;  // (P, 7): each contact's solref and solimp (the soft rows)
              if (t.size() > 6) {
                sp = py_arrays::as_real<double>(t[6], "softness");
                if (sp.size() != 7 * P) throw py::value_error("extra contacts: softness must be (P, 7)");
              }
              for (py::ssize_t k = 0; k < P; ++k) {
                ContactPoint c;
                for (int r = 0; r < 2; ++r) {
                  c.geom[r] = int(g.data()[2 * k + r]);
                  c.body[r] = int(b.data()[2 * k + r]);
                  if (c.body[r] < 0 || c.body[r] > M.N) throw py::value_error("extra contacts: a body is out of range");
                }
                c.point = Vec3<double>(p.data()[3 * k], p.data()[3 * k + 1], p.data()[3 * k + 2]);
                c.normal = Vec3<double>(n.data()[3 * k], n.data()[3 * k + 1], n.data()[3 * k + 2]);
                c.depth = d.data()[k];
                c.friction = f.data()[k];
                if (sp.size()) c.soft = softness(sp.data() + 7 * k);
                found.push_back(c);
              }
            }
            double* qa = inout(q, "q", 0, M.nq);
            double* va = inout(v, "v", 0, M.nv);
            auto ta = py_arrays::as_real<double>(tau, "tau");
            if (ta.size() != M.nv) throw py::value_error("tau must have nv values");
            Eigen::MatrixXd Gc;  // bilateral rows (nb, nv) and their targets
            Eigen::VectorXd bc, lo, hi;
            if (!rows.is_none()) {
              auto R = py_arrays::as_real<double>(rows, "rows");
              auto T = py_arrays::as_real<double>(targets, "targets");
              if (R.ndim() != 2 || R.shape(1) != M.nv || T.size() != R.shape(0))
                throw py::value_error("rows must have shape (nb, nv) and targets (nb,)");
              Gc = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                  R.data(), R.shape(0), R.shape(1));
              bc = Eigen::Map<const Eigen::VectorXd>(T.data(), T.size());
              if (!bounds.is_none()) {  // (nb, 2): lo ≤ λ ≤ hi per row
                auto B = py_arrays::as_real<double>(bounds, "bounds");
                if (B.ndim() != 2 || B.shape(0) != R.shape(0) || B.shape(1) != 2)
                  throw py::value_error("bounds must have shape (nb, 2)");
                lo.resize(B.shape(0)), hi.resize(B.shape(0));
                for (py::ssize_t r = 0; r < B.shape(0); ++r) {
                  lo[r] = B.data()[2 * r], hi[r] = B.data()[2 * r + 1];
                  if (std::isnan(lo[r]) || std::isnan(hi[r]) || lo[r] > hi[r] || lo[r] > 0 || hi[r] < 0)
                    throw py::value_error("bounds: each row needs lo <= 0 <= hi (not NaN)");
                }
              }
            }
            if (e.engine.opt.integrator == 2 &&
                (found.size() || Gc.rows() || e.engine.general.any() || !e.engine.opt.soft))
              throw py::value_error(
                  "the RK4 step needs soft constraints (set_soft), no outside contacts, no bilateral rows");
            ContactWorld& W = e.world(std::size_t(world));
            StepStats st;
            {
              py::gil_scoped_release release;
              e.engine.step(W, qa, va, ta.data(), h, qa, va, st, extra.is_none() ? nullptr : &found,
                            Gc.rows() ? &Gc : nullptr, Gc.rows() ? bc.data() : nullptr, lo.size() ? lo.data() : nullptr,
                            hi.size() ? hi.data() : nullptr, kv.is_none() ? nullptr : gains.data());
            }
            return stats_tuple(st);
          },
          py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("h"), py::arg("world") = 0, py::arg("extra") = py::none(),
          py::arg("rows") = py::none(), py::arg("targets") = py::none(), py::arg("bounds") = py::none(),
          py::arg("kv") = py::none(),
          "One step of world `world` from (q, v) under tau, in place; (status: 0 stepped, 1 tau not finite "
          "(nothing done), 2 overflowed (q, v left as they were), 3 q or v not finite (nothing done); contacts, "
          "limits, iterations, converged, primal, "
          "dual, max_penetration, seconds of the 5 phases, whether G was formed). rows (nb, nv), targets (nb,): the "
          "bilateral rows J v⁺ = target; bounds (nb, 2): their impulses' bounds lo <= 0 <= hi (default unbounded); kv "
          "(nu,): the actuators' velocity gains at this step (actuation_force), taken implicitly by implicitfast")
      .def(
          "step_batch",
          [](PyContactEngine& e, py::handle q, py::handle v, py::handle tau, double h, int threads, py::object kv) {
            const Model<double>& M = e.engine.model;
            auto qarr = py::reinterpret_borrow<py::array>(q);
            const py::ssize_t B = qarr.ndim() == 2 ? qarr.shape(0) : -1;
            if (B < 1) throw py::value_error("q must have shape (B, nq)");
            double* qa = inout(q, "q", B, M.nq);
            double* va = inout(v, "v", B, M.nv);
            auto ta = py_arrays::as_real<double>(tau, "tau");
            if (ta.size() != B * M.nv) throw py::value_error("tau must have shape (B, nv)");
            const int nu = e.engine.actuation.nu;
            Arr gains;
            if (!kv.is_none()) {
              gains = py_arrays::as_real<double>(kv, "kv");
              if (gains.size() != B * nu) throw py::value_error("kv must have shape (B, nu)");
            }
            if (e.engine.opt.integrator == 2 && (!e.engine.opt.soft || e.engine.general.any()))
              throw py::value_error("the RK4 step needs soft constraints (set_soft) and no general rows (set_rows)");
            e.world(std::size_t(B - 1));
            py::array_t<int> counts({B, py::ssize_t(4)});
            Arr res({B, py::ssize_t(2)});
            std::vector<StepStats> st(B);
            {
              py::gil_scoped_release release;
              parallel_for(int(B), threads, [&](int b, int) {
                e.engine.step(*e.worlds[b], qa + b * M.nq, va + b * M.nv, ta.data() + b * M.nv, h, qa + b * M.nq,
                              va + b * M.nv, st[b], nullptr, nullptr, nullptr, nullptr, nullptr,
                              kv.is_none() ? nullptr : gains.data() + b * nu);
              });
            }
            for (py::ssize_t b = 0; b < B; ++b) {
              counts.mutable_at(b, 0) = st[b].contacts;
              counts.mutable_at(b, 1) = st[b].iterations;
              counts.mutable_at(b, 2) = st[b].converged;
              counts.mutable_at(b, 3) = st[b].status;
              res.mutable_at(b, 0) = st[b].primal;
              res.mutable_at(b, 1) = st[b].dual;
            }
            return py::make_tuple(counts, res);
          },
          py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("h"), py::arg("threads"), py::arg("kv") = py::none(),
          "One step of B worlds (world b: row b of q, v, tau and kv (B, nu), its own warm start), in place; ((B, 4) "
          "contacts, "
          "iterations, converged, status; (B, 2) residuals)")
      .def(
          "delassus",
          [](PyContactEngine& e, double rho, int world, bool dense) {
            ContactWorld& W = e.world(std::size_t(world));
            std::lock_guard<std::mutex> lock(W.busy);
            const int m = W.G.rows();
            Arr G({m, m}), S({m, m}), D(m);
            {
              py::gil_scoped_release release;
              e.engine.factor(W);
              if (dense) {
                W.D.form(W.G);
                columns_of(W.D, m, rho, G.mutable_data(), S.mutable_data());
                std::copy(W.D.weights().data(), W.D.weights().data() + m, D.mutable_data());
              } else {
                W.G.weigh();
                columns_of(W.G, m, rho, G.mutable_data(), S.mutable_data());
                std::copy(W.G.weights().data(), W.G.weights().data() + m, D.mutable_data());
              }
            }
            return py::make_tuple(G, S, D);
          },
          py::arg("rho"), py::arg("world") = 0, py::arg("dense") = false,
          "The last step's Delassus operator (the tree's, or formed when dense), column by column: (G, (G + ρD)⁻¹, "
          "the rows' ADMM weights D) from its products and solves (G symmetric; for tests against the dense "
          "G = J M⁻¹ Jᵀ)")
      .def(
          "problem",
          [](PyContactEngine& e, int world) {
            ContactWorld& W = e.world(std::size_t(world));
            std::lock_guard<std::mutex> lock(W.busy);
            auto vec = [](const Eigen::VectorXd& x) { return Arr(x.size(), x.data()); };
            py::dict d;
            d["P"] = W.G.P(), d["L"] = int(W.G.limit_dof.size()), d["B"] = int(W.G.bilateral.rows());
            d["g"] = vec(W.w.g), d["b"] = vec(W.b), d["mu"] = vec(W.mu), d["turn"] = vec(W.angle);
            d["z"] = vec(W.w.z), d["y"] = vec(W.w.y), d["rho"] = W.rho, d["lambda_max"] = W.lambda_max;
            d["polished"] = W.polished;
            return d;
          },
          py::arg("world") = 0,
          "The last step's contact problem (for tests and solver studies): the rows' counts P (contacts), L "
          "(limits), B (bilateral), g = J v*, the targets b, μ, each contact's turn (cos, sin), the impulses z, "
          "the dual y, ρ, λ_max(G) and whether the solve ended by the active-set polish")
      .def(
          "contacts", [](PyContactEngine& e, int world) { return contacts_of(e.engine, e.world(std::size_t(world))); },
          py::arg("world") = 0,
          "The last step's contacts of world `world`: geoms, bodies, points, normals, depths, friction, impulses "
          "(on the second body, world N·s) and the limits' generalized impulse");

  py::class_<PyStepData>(m, "StepData",
                         "One world's state, inputs and last step's outcome, its arrays numpy views of C++ memory "
                         "(made by ContactSimulator.data)")
      .def_property_readonly(
          "q", [](py::object self) { return view(self.cast<PyStepData&>().data.q, self); }, "positions (nq,)")
      .def_property_readonly(
          "v", [](py::object self) { return view(self.cast<PyStepData&>().data.v, self); }, "velocities (nv,)")
      .def_property_readonly(
          "ctrl", [](py::object self) { return view(self.cast<PyStepData&>().data.ctrl, self); },
          "the actuators' controls (nu,), held until changed")
      .def_property_readonly(
          "act", [](py::object self) { return view(self.cast<PyStepData&>().data.act, self); },
          "the actuators' activations (na,)")
      .def_property_readonly(
          "tau", [](py::object self) { return view(self.cast<PyStepData&>().data.tau, self); },
          "the applied generalized force (nv,), held until changed (MuJoCo's qfrc_applied)")
      .def_property_readonly(
          "force", [](py::object self) { return view(self.cast<PyStepData&>().data.force, self); },
          "the last step's generalized force: tau plus the actuators' and tendons' (nv,)")
      .def_property(
          "time", [](const PyStepData& d) { return d.data.time; },
          [](PyStepData& d, double t) {
            if (!std::isfinite(t)) throw py::value_error("time must be finite");
            d.data.time = t;
          },
          "the simulated time (s)")
      .def_property_readonly(
          "dt", [](const PyStepData& d) { return d.h; }, "the time step (s)")
      .def_property_readonly(
          "q_start", [](const PyStepData& d) { return Arr(d.data.q_start.size(), d.data.q_start.data()); },
          "a copy of the positions the last step started from (nq,; empty before the first step)")
      .def_property_readonly(
          "v_start", [](const PyStepData& d) { return Arr(d.data.v_start.size(), d.data.v_start.data()); },
          "a copy of the velocities the last step started from (nv,; empty before the first step)")
      .def_property_readonly(
          "model", [](const PyStepData& d) { return d.model; }, "the model this data was made for")
      .def_property_readonly(
          "integrator",
          [](const PyStepData& d) {
            static const char* names[] = {"semi-implicit", "euler", "rk4", "implicitfast", "implicit"};
            return std::string(names[d.engine->engine.opt.integrator]);
          },
          "the integrator its steps take (ContactSimulator's)")
      .def_property_readonly(
          "n_contacts", [](const PyStepData& d) { return d.data.stats.contacts; }, "the last step's contacts")
      .def_property_readonly(
          "n_limits", [](const PyStepData& d) { return d.data.stats.limits; }, "the last step's limit rows")
      .def_property_readonly(
          "iterations", [](const PyStepData& d) { return d.data.stats.iterations; },
          "the last step's contact-solver iterations")
      .def_property_readonly(
          "converged", [](const PyStepData& d) { return d.data.stats.converged; },
          "whether the last step's contact solve converged")
      .def_property_readonly(
          "max_penetration", [](const PyStepData& d) { return d.data.stats.max_penetration; },
          "the last step's deepest contact (m)")
      .def(
          "step",
          [](PyStepData& d, int n) {
            if (n < 0) throw py::value_error("step: n must be >= 0");
            if (d.live->revision != d.revision)
              throw py::value_error(
                  "StepData.step: the model changed since this data was made; make a new one with sim.data()");
            ContactEngine& E = d.engine->engine;
            int unconverged = 0, worst = 0;
            double residual = 0;
            {
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(d.busy);
              for (int k = 0; k < n; ++k) {
                E.step_data(*d.world, d.data, d.h);
                if (d.data.stats.status != kStepped) break;
                if (!d.data.stats.converged) {
                  ++unconverged, worst = std::max(worst, d.data.stats.iterations);
                  residual = std::max(residual, d.data.stats.primal);
                }
              }
            }
            if (d.data.stats.status != kStepped) step_failed(d.data, d.h);
            if (unconverged) {
              const std::string msg = "StepData.step: " + std::to_string(unconverged) +
                                      " contact solve(s) did not converge (up to " + std::to_string(worst) +
                                      " iterations, residual " + std::to_string(residual) + " against " +
                                      std::to_string(d.tolerance) + "); their best iterates were used";
              if (PyErr_WarnEx(d.warning.ptr(), msg.c_str(), 1) != 0) throw py::error_already_set();
            }
          },
          py::arg("n") = 1,
          "Advance n steps of dt in place, the GIL released, one crossing into C++: each step's force is tau plus "
          "the actuators' at ctrl and the tendons', then the activations and the time advance. Raises ValueError "
          "(the state left as it was before the failing step) where a step cannot be taken")
      .def(
          "contacts", [](PyStepData& d) { return contacts_of(d.engine->engine, *d.world); },
          "The last step's contacts: geoms, bodies, points, normals, depths, friction, impulses (on the second "
          "body, world N·s) and the limits' generalized impulse");

  m.def(
      "rollout",
      [](py::list datas, py::array_t<double, py::array::c_style | py::array::forcecast> ctrl, int threads) {
        const py::ssize_t B = py::len(datas);
        if (ctrl.ndim() != 3 || ctrl.shape(0) != B)
          throw py::value_error("rollout: ctrl must have shape (B, T, nu), B = " + std::to_string(B) + " data");
        const py::ssize_t T = ctrl.shape(1), nu = ctrl.shape(2);
        std::vector<PyStepData*> d(B);
        py::ssize_t nq = 0, nv = 0;
        for (py::ssize_t b = 0; b < B; ++b) {
          d[b] = datas[b].cast<PyStepData*>();
          const Model<double>& M = d[b]->engine->engine.model;
          if (b == 0) nq = M.nq, nv = M.nv;
          if (M.nq != nq || M.nv != nv || d[b]->data.ctrl.size() != nu)
            throw py::value_error("rollout: every data must be of one model's size, with nu = ctrl.shape[2]");
          if (d[b]->live->revision != d[b]->revision)
            throw py::value_error("rollout: data " + std::to_string(b) + "'s model changed since it was made");
          for (py::ssize_t c = 0; c < b; ++c)
            if (d[c] == d[b]) throw py::value_error("rollout: a data appears twice (each world steps alone)");
        }
        Arr q({B, T, nq}), v({B, T, nv});
        std::vector<int> failed(B, -1), unconverged(B, 0);
        {
          py::gil_scoped_release release;
          const double* u = ctrl.data();
          double *qo = q.mutable_data(), *vo = v.mutable_data();
          parallel_for(int(B), threads, [&](int b, int) {
            PyStepData& D = *d[b];
            std::lock_guard<std::mutex> lock(D.busy);
            for (py::ssize_t t = 0; t < T; ++t) {
              std::copy(u + (b * T + t) * nu, u + (b * T + t + 1) * nu, D.data.ctrl.data());
              D.engine->engine.step_data(*D.world, D.data, D.h);
              if (D.data.stats.status != kStepped) {
                failed[b] = int(t);
                return;
              }
              unconverged[b] += !D.data.stats.converged;
              std::copy(D.data.q.data(), D.data.q.data() + nq, qo + (b * T + t) * nq);
              std::copy(D.data.v.data(), D.data.v.data() + nv, vo + (b * T + t) * nv);
            }
          });
        }
        for (py::ssize_t b = 0; b < B; ++b)
          if (failed[b] >= 0) {
            try {
              step_failed(d[b]->data, d[b]->h);
            } catch (py::value_error& e) {
              throw py::value_error("rollout: world " + std::to_string(b) + " at step " + std::to_string(failed[b]) +
                                    ": " + e.what() + " (the others stepped to the end)");
            }
          }
        py::array_t<int> counts(B);
        std::copy(unconverged.begin(), unconverged.end(), counts.mutable_data());
        return py::make_tuple(q, v, counts);
      },
      py::arg("datas"), py::arg("ctrl"), py::arg("threads"),
      "T steps of each of B StepData under controls ctrl (B, T, nu), the worlds spread over `threads` threads with "
      "the GIL released, each stepped as alone: (q (B, T, nq), v (B, T, nv) after each step, each world's "
      "unconverged solves)");
}
