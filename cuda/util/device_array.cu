#include "cuda/util/device_array.cuh"

namespace cuzk::cuda {

void* device_alloc(size_t bytes, const char* what) {
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    throw DeviceOutOfMemory(what, bytes, free_b, total_b);
  }
  check(err, "cudaMalloc", __FILE__, __LINE__);
  return p;
}

}  // namespace cuzk::cuda
