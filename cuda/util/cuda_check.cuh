// CUDA error handling and device memory for the backend's .cu files.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "cuda/stage/cuda_backend.hpp"

namespace cuzk::cuda {

// Throws CudaError("<call> failed: <error name>: <description> (file:line)").
void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line);
}

#define CUZK_CUDA_CHECK(call) ::cuzk::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, faults at the next sync.
#define CUZK_CUDA_CHECK_LAUNCH(what) ::cuzk::cuda::check(cudaGetLastError(), what, __FILE__, __LINE__)

// Device allocation that reports an out-of-memory as DeviceOutOfMemory (what, needed, free).
void* device_alloc(size_t bytes, const char* what);

// An owning device array (uninitialized).
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(size_t n, const char* what) : n_(n) {
    if (n) p_ = static_cast<T*>(device_alloc(n * sizeof(T), what));
  }
  ~DeviceArray() {
    if (p_) cudaFree(p_);
  }
  DeviceArray(DeviceArray&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      if (p_) cudaFree(p_);
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return p_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

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

// The launch grid for n threads of `block` each.
inline unsigned grid_for(size_t n, unsigned block) { return unsigned((n + block - 1) / block); }

}  // namespace cuzk::cuda
