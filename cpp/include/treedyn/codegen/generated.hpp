// Code generated for one model (featherstone-part3's symbolic simplification; src/codegen_aba.cpp
// writes it, treedyn/codegen.py compiles it) loaded as a shared library. The generated kernel is
// a fast path: a call whose guard fails (a pivot not positive) or whose result is not finite
// is redone by the generic kernel, which raises the error the user would otherwise get.
#pragma once
#include <dlfcn.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "treedyn/model/model.hpp"

namespace treedyn {

// bumped whenever the generated entry points change: a cached library of another version is
// refused (and rebuilt by the Python side)
constexpr int generated_abi_version = 1;

// what the generator reports about the code it wrote: its operation counts
struct GeneratedInfo {
  long multiplications = 0, additions = 0, divisions = 0, square_roots = 0, sines_cosines = 0, guards = 0;
  long traced_nodes = 0;
};

std::string generate_aba_source(const Model<double>& model, bool single, GeneratedInfo& info);
// the generic kernel's multiplications, additions and divisions on the same model (counting scalar)
GeneratedInfo generic_aba_op_counts(const Model<double>& model);

// the entry points of a compiled library, for the scalar S
template <class S> class GeneratedAba {
 public:
  using Single = int (*)(const S*, const S*, const S*, S*, S*);
  using Batch = void (*)(int, const S*, const S*, const S*, S*, unsigned char*, S*);

  GeneratedAba(const std::string& path, const Model<S>& model) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw std::runtime_error("cannot load the generated kernel " + path + ": " + dlerror());
    try {
      auto version = reinterpret_cast<int (*)()>(symbol("treedyn_generated_version"));
      auto sizes = reinterpret_cast<int (*)(int*, int*)>(symbol("treedyn_generated_sizes"));
      auto lanes = reinterpret_cast<int (*)()>(symbol("treedyn_generated_lanes"));
      int nq = -1, nv = -1;
      const int bytes = sizes(&nq, &nv);
      if (version() != generated_abi_version || bytes != int(sizeof(S)) || nq != model.nq || nv != model.nv)
        throw std::runtime_error("the generated kernel " + path + " was made for another model, scalar or version");
      lanes_ = lanes();
      scratch_ = reinterpret_cast<int (*)()>(symbol("treedyn_generated_scratch"))();
      single_ = reinterpret_cast<Single>(symbol("treedyn_generated_fd"));
      batch_ = reinterpret_cast<Batch>(symbol("treedyn_generated_fd_batch"));
    } catch (...) {
      dlclose(handle_);
      throw;
    }
  }
  ~GeneratedAba() { dlclose(handle_); }
  GeneratedAba(const GeneratedAba&) = delete;
  GeneratedAba& operator=(const GeneratedAba&) = delete;

  // 0, or nonzero: redo generically. w: scratch of scratch() values
  int forward_dynamics(const S* q, const S* qd, const S* tau, S* qdd, S* w) const {
    return single_(q, qd, tau, qdd, w);
  }
  // w: scratch of scratch() * lanes() values, aligned to 64 bytes
  void forward_dynamics_batch(int B, const S* q, const S* qd, const S* tau, S* qdd, unsigned char* bad, S* w) const {
    batch_(B, q, qd, tau, qdd, bad, w);
  }
  int lanes() const { return lanes_; }
  int scratch() const { return scratch_; }

 private:
  void* symbol(const char* name) {
    void* p = dlsym(handle_, name);
    if (!p) throw std::runtime_error(std::string("the generated kernel lacks ") + name);
    return p;
  }
  void* handle_ = nullptr;
  Single single_ = nullptr;
  Batch batch_ = nullptr;
  int lanes_ = 1, scratch_ = 1;
};

}  // namespace treedyn
