// GPU time of work on one stream, from a pair of CUDA events.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace cuzk::cuda {

// A pair of events around GPU work on one stream, giving its GPU time.
class GpuTimer {
 public:
  GpuTimer();
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  void start(cudaStream_t s);
  void stop(cudaStream_t s);
  // Nanoseconds between start and stop (synchronizes on the stop event).
  uint64_t elapsed_ns();

 private:
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

}  // namespace cuzk::cuda
