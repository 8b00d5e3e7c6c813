#include "prover/util/thread_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <system_error>

#include "prover/util/cpu_placement.hpp"

namespace cuzk {
namespace {
thread_local bool t_on_worker = false;
std::atomic<bool> g_global_exists{false};

// The global pool's size() from the placement and CUZK_THREADS (0: the core count).
unsigned global_threads() {
  unsigned env = 0;
  if (const char* e = std::getenv("CUZK_THREADS")) {
    try {
      int v = std::stoi(e);
      if (v > 0) env = static_cast<unsigned>(v);
    } catch (...) {
    }
  }
  if (auto p = placement::current()) {
    const auto workers = static_cast<unsigned>(p->worker_cpus.size());
    return env ? std::min(env, workers) : workers;
  }
  return env;
}
}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // The calling thread takes part in parallel_for, so one fewer worker is started. Each worker
  // reports whether it could place itself before the pool is handed out.
  std::vector<std::promise<void>> started(threads - 1);
  std::exception_ptr first_error;
  size_t created = 0;
  try {
    for (auto& s : started) {
      workers_.emplace_back([this, &s] { worker_loop(s); });
      ++created;
    }
  } catch (const std::system_error& e) {
    // Unwinding here would destroy cv_ under the waiting workers, and glibc's
    // pthread_cond_destroy waits for its waiters: a hang. The workers are joined below instead.
    first_error = std::make_exception_ptr(std::system_error(
        e.code(), "cannot start worker thread " + std::to_string(created + 1) + " of " + std::to_string(threads - 1) +
                      " of a " + std::to_string(threads) + "-thread pool (CUZK_THREADS, else the core count): the " +
                      "system refused it, usually a limit on processes (ulimit -u, a container's pids.max)"));
  }
  // Every started worker touches its promise once; `started` must outlive that.
  for (size_t i = 0; i < created; ++i) {
    try {
      started[i].get_future().get();
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) {
    stop_and_join();  // the workers that did start
    std::rethrow_exception(first_error);
  }
}

ThreadPool::~ThreadPool() { stop_and_join(); }

void ThreadPool::stop_and_join() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
}

bool ThreadPool::on_worker() { return t_on_worker; }

ThreadPool& ThreadPool::global() {
  static ThreadPool pool([] {
    g_global_exists = true;
    return global_threads();
  }());
  return pool;
}

bool ThreadPool::global_exists() { return g_global_exists; }

unsigned ThreadPool::planned_global_size() {
  const unsigned t = global_threads();
  return t ? t : std::max(1u, std::thread::hardware_concurrency());
}

void ThreadPool::enqueue(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    jobs_.push(std::move(job));
  }
  cv_.notify_one();
}

void ThreadPool::worker_loop(std::promise<void>& started) {
  t_on_worker = true;
  try {
    placement::pin_current_thread_to_workers();
  } catch (...) {
    started.set_exception(std::current_exception());
    return;
  }
  started.set_value();  // `started` may be gone after this: not touched again
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [this] { return stop_ || !jobs_.empty(); });
      if (stop_ && jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop();
    }
    job();
  }
}

void ThreadPool::parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn, size_t max_chunks) {
  if (n == 0) return;
  if (workers_.empty() || t_on_worker || n == 1) {
    fn(0, n);
    return;
  }
  size_t chunks = max_chunks ? max_chunks : size_t(size()) * 4;
  chunks = std::min(chunks, n);
  const size_t step = (n + chunks - 1) / chunks;
  chunks = (n + step - 1) / step;

  // Shared state outlives this call: a helper job dequeued after the work is done only sees
  // next >= chunks and returns without touching `fn`.
  struct State {
    std::atomic<size_t> next{0};
    std::atomic<size_t> done{0};
    std::exception_ptr first_error;
    std::mutex mu;
    std::condition_variable cv;
  };
  auto st = std::make_shared<State>();
  const auto* fnp = &fn;
  auto drain = [st, fnp, chunks, step, n] {
    for (;;) {
      size_t c = st->next.fetch_add(1);
      if (c >= chunks) return;
      size_t b = c * step, e = std::min(n, b + step);
      try {
        (*fnp)(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lk(st->mu);
        if (!st->first_error) st->first_error = std::current_exception();
      }
      if (st->done.fetch_add(1) + 1 == chunks) {
        std::lock_guard<std::mutex> lk(st->mu);
        st->cv.notify_all();
      }
    }
  };
  const size_t helpers = std::min(workers_.size(), chunks - 1);
  for (size_t i = 0; i < helpers; ++i) enqueue(drain);
  drain();
  std::exception_ptr first_error;
  {
    std::unique_lock<std::mutex> lk(st->mu);
    st->cv.wait(lk, [&] { return st->done.load() == chunks; });
    first_error = st->first_error;
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace cuzk
