// Fork-join for independent items (columns of M⁻¹R, items of a batch, chunks of M⁻¹) that never
// waits for a thread that has not started. OpenMP's parallel region ends at a barrier that every
// thread of the team must reach, so a call pays the wake-up of a sleeping worker (a futex wake,
// milliseconds on a busy VM) or its wait for a time slice on a loaded machine, and a 2-thread
// call after a pause costs far more than a 1-thread one. Here the caller and the workers claim
// items from a shared counter; the caller works from the start, and at the end waits only for
// the items in progress: a worker that wakes late finds nothing left and sleeps again. A call
// costs at most about its serial time plus one item, however late the workers come. Workers are
// bound to the caller's allowed CPUs other than the caller's own (parallel.cpp: a scheduler that
// packs woken threads would queue them behind the caller); idle
// workers poll for at most TREEDYN_SPIN_US (50 µs by default, at most 200: parallel.cpp) and then sleep
// on a condition variable. Each item must compute the same result
// on whichever thread runs it (per-thread scratch only), so results do not depend on the number
// of threads.
#pragma once
#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace treedyn {

// the threads the kernels use (td.set_num_threads): process-wide, whichever thread calls
int max_threads();
void set_threads(int n);

// A non-owning reference to the callable body(item, slot) of parallel_for, which outlives the call:
// two pointers, where a std::function would allocate for a lambda of more than two captures (once
// per parallel_range, i.e. per level of odd–even elimination and scan)
class ItemBody {
 public:
  template <class F, class = std::enable_if_t<!std::is_same<std::decay_t<F>, ItemBody>::value>>
  ItemBody(const F& f)  // NOLINT(google-explicit-constructor): lambdas convert, as to std::function
      : obj_(&f), call_([](const void* obj, int item, int slot) { (*static_cast<const F*>(obj))(item, slot); }) {}
  void operator()(int item, int slot) const { call_(obj_, item, slot); }

 private:
  const void* obj_;
  void (*call_)(const void*, int, int);
};

// body(item, slot) for every item in [0, n), on up to `threads` threads: slot 0 is the caller,
// slots 1 .. threads-1 are workers (per-slot scratch is safe). One job runs at a time; a call
// made while another is running (another solver in another thread, or from inside an item) runs
// serially on its caller. An exception thrown by an item is rethrown in the caller (the one of
// the lowest item) after every item has run.
void parallel_for(int n, int threads, ItemBody body);

// one step of a short busy wait (the x86 `pause`: tells the core it spins)
inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// chunk(i0, i1, slot) over [begin, end) cut into one contiguous range per thread, on the pool, when
// there are more than `serial_up_to` items; else chunk(begin, end, 0) on the caller. OpenMP's
// `parallel for schedule(static) if (n > serial_up_to)`, with the pool's placement and late workers.
template <class F> void parallel_chunks(std::ptrdiff_t begin, std::ptrdiff_t end, std::ptrdiff_t serial_up_to,
                                        const F& chunk) {
  const std::ptrdiff_t n = end - begin;
  const int threads = n > serial_up_to ? int(std::min<std::ptrdiff_t>(max_threads(), n)) : 1;
  if (threads <= 1) {
    if (n > 0) chunk(begin, end, 0);
    return;
  }
  parallel_for(threads, threads,
               [&](int c, int slot) { chunk(begin + n * c / threads, begin + n * (c + 1) / threads, slot); });
}

// body(i) for i in [begin, end), as parallel_chunks spreads them: each i's work must touch only its
// own outputs
template <class F> void parallel_range(std::ptrdiff_t begin, std::ptrdiff_t end, std::ptrdiff_t serial_up_to,
                                       const F& body) {
  parallel_chunks(begin, end, serial_up_to, [&](std::ptrdiff_t i0, std::ptrdiff_t i1, int) {
    for (std::ptrdiff_t i = i0; i < i1; ++i) body(i);
  });
}

// threads for m independent columns of n coordinates: never more than the columns, and one when
// the whole job is too small to pay for waking the others
int column_threads(int m, int n);

}  // namespace treedyn
