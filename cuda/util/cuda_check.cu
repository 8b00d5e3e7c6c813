#include <cstdio>
#include <string>

#include "cuda/util/cuda_check.cuh"
#include "cuda/util/cuda_error.hpp"

namespace cuzk::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  // Clear a sticky launch error so that a caller who recovers is not hit again by it.
  (void)cudaGetLastError();
  // (fmt is not used in .cu files: its consteval format strings do not compile under nvcc)
  std::string msg = std::string("CUDA error: ") + call + " failed: " + cudaGetErrorName(err) + ": " +
                    cudaGetErrorString(err) + " (" + file + ":" + std::to_string(line) + ")";
  if (err == cudaErrorMemoryAllocation) {
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    throw DeviceOutOfMemory(msg, 0, free_b, total_b);
  }
  throw CudaError(msg);
}

static std::string mib(size_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(b) / (1 << 20));
  return buf;
}

DeviceOutOfMemory::DeviceOutOfMemory(const std::string& what, size_t needed_, size_t free_, size_t total_)
    : CudaError(needed_ ? "device out of memory: " + what + " needs " + mib(needed_) + ", " + mib(free_) + " free of " +
                              mib(total_)
                        : what + " (" + mib(free_) + " free of " + mib(total_) + ")"),
      needed(needed_),
      free_bytes(free_),
      total_bytes(total_) {}

}  // namespace cuzk::cuda
