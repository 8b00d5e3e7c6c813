// A fixed-size thread pool for the prover's CPU work (synthesis, NTT, MSM, parameters).
//
// parallel_for splits [0, n) into chunks run by the workers and the calling thread; it
// returns when all chunks are done and rethrows the first exception. Nested parallel_for
// from inside a worker runs inline (no deadlock, no oversubscription).
//
// With a CPU placement set (prover/util/cpu_placement.hpp) every worker pins itself to the
// placement's worker CPUs when it starts, and the global pool is sized to that set.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace cuzk {

class ThreadPool {
 public:
  // threads == 0: std::thread::hardware_concurrency(). Returns once every worker has started;
  // a worker that cannot pin itself to the placement's CPUs makes it throw that error, and a
  // thread the system refuses (a limit on processes) throws std::system_error naming the
  // pool's size; either way the workers already started are joined first.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }  // + caller

  // fn(begin, end) over chunks of [0, n); at most `max_chunks` chunks (0: 4 per thread).
  void parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn, size_t max_chunks = 0);

  // Runs fn on a worker; the future carries its result or exception.
  template <class F>
  auto submit(F&& fn) -> std::future<decltype(fn())> {
    using R = decltype(fn());
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(fn));
    auto fut = task->get_future();
    enqueue([task] { (*task)(); });
    return fut;
  }

  // The process-wide pool, created on first use. Its size(): with a placement set, the number
  // of worker CPUs (capped by CUZK_THREADS when given), since the calling thread takes part in
  // parallel_for too; without one, CUZK_THREADS or the core count.
  static ThreadPool& global();
  // Whether global() has created the pool (a placement set later would not reach it).
  static bool global_exists();
  // The size() global() gives the pool when it creates it now (checks before work use it).
  static unsigned planned_global_size();
  static bool on_worker();

 private:
  void enqueue(std::function<void()> job);
  void worker_loop(std::promise<void>& started);
  void stop_and_join();
  std::vector<std::thread> workers_;
  std::queue<std::function<void()>> jobs_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace cuzk
