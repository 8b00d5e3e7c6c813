#include "cuda/diagnostics.hpp"

#include "cuda/check.cuh"
#include "cuda/gpu_phase.cuh"

namespace cuzk::cuda {
namespace {

// %globaltimer: the GPU's nanosecond timer (PTX ISA, "Special Registers: %globaltimer").
__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(uint64_t ns) {
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < ns) __nanosleep(1000);
}

}  // namespace

void sleep_phase(const char* name, uint64_t ns) {
  cudaStream_t s = nullptr;
  CUZK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  try {
    GpuPhase p(name, s);
    spin_kernel<<<1, 1, 0, s>>>(ns);
    CUZK_CUDA_CHECK_LAUNCH("spin_kernel");
  } catch (...) {
    cudaStreamDestroy(s);
    throw;
  }
  CUZK_CUDA_CHECK(cudaStreamDestroy(s));
}

}  // namespace cuzk::cuda
