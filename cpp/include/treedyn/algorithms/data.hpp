// The per-instance workspace (Pinocchio's Data, MuJoCo's mjData): everything a kernel writes,
// preallocated once; O(N) except the mass matrix, which only CRBA users allocate.
#pragma once
#include <Eigen/Cholesky>
#include <vector>

#include "treedyn/model/joint.hpp"

// An algorithm's entry point (aba, rnea, crba, ...) stays a function of its own: inlined into an
// engine's small wrapper it would spend the inlining budget its passes' steps need, which then
// become calls inside the loops over the bodies (measured: aba +10% on a 100-link chain)
#if defined(__GNUC__)
#define TREEDYN_ENTRY __attribute__((noinline))
#else
#define TREEDYN_ENTRY
#endif

namespace treedyn {

template <class T> struct Data {  // T: the scalar (S is the motion subspace)
  using MatX = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
  using VecX = Eigen::Matrix<T, Eigen::Dynamic, 1>;
  using Small = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;  // no heap

  std::vector<typename ParentTransform<T>::type> Xup;  // ^iX_λ(i)
  std::vector<Motion<T>> v, c, a;                      // velocity, velocity-product acceleration, acceleration
  std::vector<ArticulatedInertia<T>> IA;               // articulated inertia I^A_i
  std::vector<Mat6<T>> pivot_terms;  // aba_refined_scales (only where a pivot's coarse test failed): B_i
  int pivot_from = 0;                // bodies ≥ pivot_from have their B complete and sent up; 0: none yet
  std::vector<Force<T>> pA, f;       // bias force p^A_i; RNEA body force f_i
  std::vector<RigidInertia<T>> Ic;   // composite inertia I^c_i (CRBA)
  std::vector<Small> D, Dinv;        // D_i = S_iᵀ U_i (the joint-space pivots) and D_i⁻¹
  std::vector<Small> Dtilde;         // modified ABA: D̃_i = S_iᵀ M̃_i S_i from the children
  VecX Dscale;                       // nv: the modified ABA's pivot scales (pivots.hpp)
  std::vector<Motion<T>> S;          // nv: the columns of the motion subspaces S_i
  std::vector<Force<T>> U;           // nv: the columns of U_i = I^A_i S_i
  VecX u, bias;                      // nv
  MatX M;                            // nv x nv (only with_mass_matrix)
  std::vector<Mat3<T>> Er;           // crba_root_axes (only with_mass_matrix): ^iE_r, r the
  std::vector<Vec3<T>> dr;           // root of i's tree; i's origin seen from its parent's,
  std::vector<Motion<T>> Sr;         // in r's axes; nv: S_i in r's axes
  Eigen::LLT<MatX> llt;

  explicit Data(const Model<T>& model, bool with_mass_matrix = false)
      : Xup(model.N + 1, ParentTransform<T>::make(Transform<T>::identity(), Transform<T>::identity())),
        v(model.N + 1, Motion<T>::zero()),
        c(model.N + 1, Motion<T>::zero()),
        a(model.N + 1, Motion<T>::zero()),
        IA(model.N + 1, ArticulatedInertia<T>::zero()),
        pA(model.N + 1, Force<T>::zero()),
        f(model.N + 1, Force<T>::zero()),
        Ic(model.N + 1, RigidInertia<T>::zero()),
        D(model.N + 1),
        Dinv(model.N + 1),
        Dtilde(model.N + 1),
        S(model.nv, Motion<T>::zero()),
        U(model.nv, Force<T>::zero()),
        u(VecX::Zero(model.nv)),
        bias(VecX::Zero(model.nv)),
        Dscale(VecX::Zero(model.nv)),
        llt(with_mass_matrix ? model.nv : 0) {  // built in place: copying an LLT not yet computed reads its
                                                // uninitialised info() (UB, found by .ci/sanitize)
    for (int i = 0; i <= model.N; ++i) {
      D[i].setZero(model.nv_i[i], model.nv_i[i]);
      Dinv[i].setZero(model.nv_i[i], model.nv_i[i]);
      Dtilde[i].setZero(model.nv_i[i], model.nv_i[i]);
    }
    if (with_mass_matrix) {
      M.setZero(model.nv, model.nv);
      Er.assign(model.N + 1, Mat3<T>::Identity());
      dr.assign(model.N + 1, Vec3<T>::Zero());
      Sr.assign(model.nv, Motion<T>::zero());
    }
  }
};

// a_0 = −g: the base's fictitious upward acceleration that stands for gravity
template <class S> inline Motion<S> gravity_acceleration(const Model<S>& model) {
  return {Vec3<S>::Zero(), -model.gravity};
}

// S_i x for the n columns of S_i and the n coordinates starting at x
template <class S> inline Motion<S> subspace_times(const Motion<S>* Si, int n, const S* x) {
  if (n == 1) return Si[0] * x[0];
  Motion<S> m = Motion<S>::zero();
  for (int k = 0; k < n; ++k) m += Si[k] * x[k];
  return m;
}

// external force on body i ([n; f] in body coordinates), zero when none is given
template <class S> inline Force<S> external_force(const S* fext, int i) {
  if (!fext) return Force<S>::zero();
  const S* f = fext + 6 * i;
  return {Vec3<S>(f[0], f[1], f[2]), Vec3<S>(f[3], f[4], f[5])};
}

}  // namespace treedyn
