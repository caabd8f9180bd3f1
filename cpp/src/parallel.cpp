// The worker pool behind parallel_for (support/parallel.hpp).
#include "treedyn/support/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif
#if defined(__linux__)
#include <sched.h>
#endif

namespace treedyn {
namespace {

thread_local bool in_job = false;  // this thread is running an item

// How long an idle worker polls for the next job before it sleeps, and a caller for the items in
// progress: TREEDYN_SPIN_US in the environment when the pool starts (0 to 200 µs; 0: sleep at
// once), 50 by default. Bounded, so an idle pool never holds a core: a call that follows within
// it finds the workers awake; one after a longer pause wakes them (60-130 µs on the 2-vCPU VM, on
// a CPU of their own: place_workers), and the caller starts alone meanwhile.
int spin_microseconds() {
  static const int us = [] {
    const char* env = std::getenv("TREEDYN_SPIN_US");
    if (!env || !*env) return 50;
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    return *end ? 50 : int(std::clamp(v, 0L, 200L));
  }();
  return us;
}

class Pool {
 public:
  void run(int n, int threads, const ItemBody& body) {
    std::unique_lock<std::mutex> job(busy_, std::defer_lock);
    if (threads <= 1 || n <= 1 || in_job || !job.try_lock()) {  // serial: same items, same order
      for (int i = 0; i < n; ++i) body(i, 0);
      return;
    }
    {
      std::lock_guard<std::mutex> lk(m_);
      for (; workers_ < threads - 1; ++workers_) {
        const int slot = workers_ + 1;
        std::thread worker([this, slot] { work(slot); });
        handles_.push_back(worker.native_handle());
#if defined(__linux__)
        pthread_setname_np(handles_.back(), "treedyn-worker");  // (as top -H and py-spy show it)
#endif
        worker.detach();  // the pool lives as long as the process
        placed_for_ = -1;
      }
      place_workers();
      body_ = &body;
      n_ = n;
      slots_ = threads;
      next_.store(0);
      error_ = nullptr;
      error_item_ = n;
      ++generation_;
    }
    wake_.notify_all();
    claim(body, n, 0);
    std::unique_lock<std::mutex> lk(m_);
    body_ = nullptr;  // a worker that comes now finds no job: running_ can only fall from here
    if (running_ > 0) {
      // the items still in progress run on workers that have started: poll briefly for their end
      // (a next parallel_for, say the second pass of M⁻¹, then starts at once), then sleep
      lk.unlock();
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_microseconds());
      while (running_.load(std::memory_order_acquire) > 0 && std::chrono::steady_clock::now() < until) spin_pause();
      lk.lock();
    }
    done_.wait(lk, [this] { return running_ == 0; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Keep the workers off the caller's CPU (under m_). A scheduler that packs woken threads onto
  // busy CPUs (measured on this project's 2-vCPU VMs: a worker woken after a 50 ms pause landed on
  // the caller's CPU 30 times in 30, and the call ran slower on 2 threads than on 1) would queue
  // the worker behind its caller. So each worker is bound to one of the caller's allowed CPUs other
  // than the one the caller runs on, spread over them; rebound only when the caller is seen on
  // another CPU or its allowed CPUs change (os.sched_setaffinity, taskset), and allowed all of the
  // caller's CPUs when it has only one.
  void place_workers() {
#if defined(__linux__)
    const int cpu = sched_getcpu();
    cpu_set_t allowed;
    if (cpu < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    if (cpu == placed_for_ && CPU_EQUAL(&allowed, &placed_in_)) return;
    placed_for_ = cpu;
    placed_in_ = allowed;
    const int others = CPU_COUNT(&allowed) - (CPU_ISSET(cpu, &allowed) ? 1 : 0);
    int k = 0;  // worker k: the (k mod others)-th allowed CPU after the caller's, cyclically
    for (int c = cpu + 1; others > 0 && k < int(handles_.size()); ++c) {
      if (c == CPU_SETSIZE) c = 0;
      if (c == cpu || !CPU_ISSET(c, &allowed)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(c, &one);
      pthread_setaffinity_np(handles_[k++], sizeof one, &one);  // (a failure leaves it where it was)
    }
    for (; k < int(handles_.size()); ++k) pthread_setaffinity_np(handles_[k], sizeof allowed, &allowed);
#endif
  }

  void claim(const ItemBody& body, int n, int slot) {
    in_job = true;  // a parallel_for inside an item runs serially
    for (int i; (i = next_.fetch_add(1)) < n;) {
      try {
        body(i, slot);
      } catch (...) {
        std::lock_guard<std::mutex> lk(error_mutex_);
        if (i < error_item_) {
          error_item_ = i;
          error_ = std::current_exception();
        }
      }
    }
    in_job = false;
  }

  void work(int slot) {
    std::unique_lock<std::mutex> lk(m_);
    std::uint64_t seen = generation_.load();
    for (;;) {
      // a short, bounded spin (a call that follows at once, or the second pass of M⁻¹, finds
      // the worker awake), then sleep until the next job
      lk.unlock();
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_microseconds());
      while (generation_.load(std::memory_order_relaxed) == seen && std::chrono::steady_clock::now() < until)
        spin_pause();
      lk.lock();
      wake_.wait(lk, [&] { return generation_.load() != seen; });
      seen = generation_.load();
      if (!body_ || slot >= slots_) continue;  // too late for that job, or not needed
      const ItemBody* body = body_;
      const int n = n_;
      ++running_;
      lk.unlock();
      claim(*body, n, slot);
      lk.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }

  std::mutex busy_;  // held by the caller of the running job
  std::mutex m_;     // guards the job's description and running_
  std::condition_variable wake_, done_;
  int workers_ = 0;
  std::vector<std::thread::native_handle_type> handles_;  // the workers, slots 1 ..
  int placed_for_ = -1;                                   // the caller's CPU the workers were bound for
#if defined(__linux__)
  cpu_set_t placed_in_{};  // and the CPUs the caller was allowed then
#endif
  const ItemBody* body_ = nullptr;
  int n_ = 0, slots_ = 0;
  std::atomic<int> running_{0};               // written under m_; polled by the caller without it
  std::atomic<std::uint64_t> generation_{0};  // written under m_; read by spinning workers without it
  std::atomic<int> next_{0};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  int error_item_ = 0;
};

// The pool is never destroyed: its workers sleep until the process ends. A child made by fork()
// has none of the parent's threads, and maybe a mutex held by one of them: it starts a new pool.
Pool*& the_pool() {
  static Pool* pool = [] {
#if defined(__unix__) || defined(__APPLE__)
    pthread_atfork(nullptr, nullptr, [] { the_pool() = new Pool(); });
#endif
    return new Pool();
  }();
  return pool;
}

}  // namespace

void parallel_for(int n, int threads, ItemBody body) { the_pool()->run(n, threads, body); }

int column_threads(int m, int n) {
  if (std::int64_t(m) * n * n < 20000) return 1;
  return std::max(1, std::min(max_threads(), m));
}

}  // namespace treedyn
