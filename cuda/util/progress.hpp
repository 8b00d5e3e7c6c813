// A count that one thread raises as it gets work done and others wait for (plain C++: no CUDA
// types). The overlapped proving stage (cuda/stage/backend.cu) and the staged MSM upload
// (cuda/testing/entry_points.cu) use it to order two host threads: an event may be waited on by
// a stream only after it was recorded, so the thread that records upload events raises the
// count once they are, and the thread that launches the kernels waits for it first.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace cuzk::cuda {

class Progress {
 public:
  // Raises the count to v (never lowers it).
  void reach(size_t v) {
    {
      std::lock_guard lk(mu_);
      if (v > v_) v_ = v;
    }
    cv_.notify_all();
  }
  // Waits until the count is at least v; false when the other side failed instead (fail()).
  bool wait(size_t v) const {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return v_ >= v || failed_; });
    return v_ >= v;
  }
  // Releases every waiter, now and later, with false: the side that raises the count stopped.
  void fail() {
    {
      std::lock_guard lk(mu_);
      failed_ = true;
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  size_t v_ = 0;
  bool failed_ = false;
};

}  // namespace cuzk::cuda
