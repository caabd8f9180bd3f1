// The C++ ABI a plugin compiles against (docs/plugins.md, "ABI versioning").
// TREEDYN_ABI_VERSION goes up by one whenever a change to the headers changes what a plugin built
// against the old ones would read from treedyn's objects: the layout of Model<double> (its members,
// their order and types, and those of Transform, RigidInertia, Vec3), the joint kinds' numbering,
// or the capsule's contents. Algorithms, workspaces (Data) and kernels are compiled into the plugin
// itself and may change freely within one ABI version.
#pragma once

// 2: Model<S> carries the joints' passive terms (armature, stiffness, damping, q_rest)
#define TREEDYN_ABI_VERSION 2

// A Model holds std::vector and std::string, so the C++ standard library's own ABI is part of
// treedyn's: libstdc++'s two std::string layouts (_GLIBCXX_USE_CXX11_ABI), libc++, MSVC's STL
// (whose containers differ between debug and release iterator levels).
#if defined(_LIBCPP_VERSION)
#define TREEDYN_STDLIB_ABI "libc++"
#elif defined(__GLIBCXX__)
#if _GLIBCXX_USE_CXX11_ABI
#define TREEDYN_STDLIB_ABI "libstdc++-cxx11"
#else
#define TREEDYN_STDLIB_ABI "libstdc++-cxx98"
#endif
#elif defined(_MSC_VER)
#if defined(_ITERATOR_DEBUG_LEVEL) && _ITERATOR_DEBUG_LEVEL > 0
#define TREEDYN_STDLIB_ABI "msvc-debug"
#else
#define TREEDYN_STDLIB_ABI "msvc"
#endif
#else
#define TREEDYN_STDLIB_ABI "unknown"
#endif

#define TREEDYN_STRINGIFY_(x) #x
#define TREEDYN_STRINGIFY(x) TREEDYN_STRINGIFY_(x)

// The name of the PyCapsule that carries a `const treedyn::Model<double>*` from treedyn to a plugin
// (treedyn.sdk.model_capsule): a capsule of another ABI or standard library has another name, and
// PyCapsule_GetPointer refuses it instead of handing over a pointer to a layout it does not have.
#define TREEDYN_MODEL_CAPSULE_NAME \
  "treedyn.Model<double>;abi=" TREEDYN_STRINGIFY(TREEDYN_ABI_VERSION) ";stdlib=" TREEDYN_STDLIB_ABI
