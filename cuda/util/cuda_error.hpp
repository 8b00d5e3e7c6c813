// The CUDA backend's errors (a plain C++ header: no CUDA types). Every CUDA call goes through
// CUZK_CUDA_CHECK (cuda/util/cuda_check.cuh), which throws CudaError naming the call, the file
// and the line; a failed device allocation throws DeviceOutOfMemory with what was needed and what
// was free. Nothing in the CUDA backend aborts the process.
#pragma once
#include <cstddef>
#include <stdexcept>
#include <string>

namespace cuzk::cuda {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DeviceOutOfMemory : public CudaError {
 public:
  DeviceOutOfMemory(const std::string& what, size_t needed, size_t free_bytes, size_t total_bytes);
  size_t needed = 0, free_bytes = 0, total_bytes = 0;
};

}  // namespace cuzk::cuda
