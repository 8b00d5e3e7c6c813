#include "cuda/util/gpu_timer.cuh"

#include "cuda/util/cuda_check.cuh"

namespace cuzk::cuda {

GpuTimer::GpuTimer() {
  CUZK_CUDA_CHECK(cudaEventCreate(&a_));
  CUZK_CUDA_CHECK(cudaEventCreate(&b_));
}
GpuTimer::~GpuTimer() {
  cudaEventDestroy(a_);
  cudaEventDestroy(b_);
}
void GpuTimer::start(cudaStream_t s) { CUZK_CUDA_CHECK(cudaEventRecord(a_, s)); }
void GpuTimer::stop(cudaStream_t s) { CUZK_CUDA_CHECK(cudaEventRecord(b_, s)); }
uint64_t GpuTimer::elapsed_ns() {
  CUZK_CUDA_CHECK(cudaEventSynchronize(b_));
  float ms = 0;
  CUZK_CUDA_CHECK(cudaEventElapsedTime(&ms, a_, b_));
  return uint64_t(double(ms) * 1e6);
}

}  // namespace cuzk::cuda
