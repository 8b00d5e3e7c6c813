// Device memory for the backend's .cu files: an owning array whose allocation reports an
// out-of-memory as DeviceOutOfMemory.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/util/cuda_check.cuh"

namespace cuzk::cuda {

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

}  // namespace cuzk::cuda
