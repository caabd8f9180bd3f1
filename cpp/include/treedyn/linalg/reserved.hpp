#pragma once
// A dynamic Eigen vector or matrix whose storage is kept when it shrinks.
//
// An Eigen::VectorXd frees and allocates on any change of size, shrinking too; the contact step's rows
// (3 a contact, 1 a limit) change in number from step to step, so its per-row vectors would allocate in
// the step. Reserved<Plain> reallocates only past the largest size it has held: once a world has met its
// largest problem, a step allocates nothing. It is an Eigen::Map over its own buffer (re-seated on resize,
// as Eigen's documentation does with a Map), so every Eigen expression takes it, and assigning an
// expression resizes it first, as a VectorXd's assignment does. Two differences from a plain matrix:
// resize() keeps no contents (as VectorXd::resize), and noalias() is reached through map() after sizing
// (Eigen's noalias() on a Map does not resize it).
#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <new>
#include <vector>

namespace treedyn {

template <class Plain>
class Reserved : public Eigen::Map<Plain, Eigen::AlignedMax> {
 public:
  using Base = Eigen::Map<Plain, Eigen::AlignedMax>;
  using Scalar = typename Plain::Scalar;
  using Index = Eigen::Index;
  static constexpr bool kColumn = Plain::ColsAtCompileTime == 1;

  Reserved() : Base(nullptr, kColumn ? 0 : Plain::RowsAtCompileTime == 1 ? 1 : 0, kColumn ? 1 : 0) {}
  Reserved(const Reserved& o) : Reserved() { *this = o; }
  Reserved(Reserved&& o) noexcept : Reserved() { swap(o); }
  Reserved& operator=(const Reserved& o) {
    if (this != &o) resize(o.rows(), o.cols()), Base::operator=(o);
    return *this;
  }
  Reserved& operator=(Reserved&& o) noexcept {
    swap(o);
    return *this;
  }
  template <class D> Reserved& operator=(const Eigen::DenseBase<D>& e) {
    resize(e.rows(), e.cols());
    Base::operator=(e.derived());
    return *this;
  }

  void resize(Index n) { kColumn ? resize(n, 1) : resize(1, n); }
  void resize(Index rows, Index cols) {
    const std::size_t need = std::size_t(rows) * std::size_t(cols);
    if (need > store_.size()) store_.resize(std::max(need, store_.size() + store_.size() / 2));
    seat(rows, cols);
  }
  using Base::setZero;
  void setZero(Index n) { resize(n), Base::setZero(); }
  void setZero(Index rows, Index cols) { resize(rows, cols), Base::setZero(); }
  void swap(Reserved& o) noexcept {  // the buffers, not the entries
    store_.swap(o.store_);
    const Index r = this->rows(), c = this->cols();
    seat(o.rows(), o.cols()), o.seat(r, c);
  }
  Base& map() { return *this; }  // for noalias(), once sized
  Eigen::NoAlias<Base, Eigen::MatrixBase> noalias() = delete;

 private:
  void seat(Index rows, Index cols) { new (static_cast<Base*>(this)) Base(store_.data(), rows, cols); }
  std::vector<Scalar, Eigen::aligned_allocator<Scalar>> store_;
};

using ReservedVector = Reserved<Eigen::VectorXd>;
using ReservedMatrix = Reserved<Eigen::MatrixXd>;

}  // namespace treedyn
