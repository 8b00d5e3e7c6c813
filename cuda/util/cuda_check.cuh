// CUDA error checking for the backend's .cu files: every CUDA call goes through CUZK_CUDA_CHECK,
// which throws CudaError naming the call, the file and the line.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "cuda/util/cuda_error.hpp"

namespace cuzk::cuda {

// Throws CudaError("<call> failed: <error name>: <description> (file:line)").
void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line);
}

#define CUZK_CUDA_CHECK(call) ::cuzk::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch-configuration errors surface here, faults at the next sync.
#define CUZK_CUDA_CHECK_LAUNCH(what) ::cuzk::cuda::check(cudaGetLastError(), what, __FILE__, __LINE__)

// The launch grid for n threads of `block` each.
inline unsigned grid_for(size_t n, unsigned block) { return unsigned((n + block - 1) / block); }

}  // namespace cuzk::cuda
