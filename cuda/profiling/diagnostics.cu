#include "cuda/profiling/diagnostics.hpp"

#include "cuda/util/cuda_check.cuh"
#include "cuda/stage/gpu_phase.cuh"

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

__global__ void read_kernel(const uint4* p, size_t n, unsigned* flag) {
  uint4 acc{0, 0, 0, 0};
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    acc.x ^= v.x;
    acc.y ^= v.y;
    acc.z ^= v.z;
    acc.w ^= v.w;
  }
  // Never true for a buffer of equal bytes (memset): keeps the loads without writing.
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678u) *flag = 1;
}

__global__ void fma_kernel(float* out, int iterations) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f;
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, b, c);
    b = fmaf(b, c, a);
    c = fmaf(c, a, b);
  }
  if (a == 12345.f) out[0] = a + b + c;
}

int sm_count() {
  int dev = 0, sms = 0;
  CUZK_CUDA_CHECK(cudaGetDevice(&dev));
  CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

}  // namespace

ReadBuffer::ReadBuffer(size_t bytes) : bytes_(bytes) {
  CUZK_CUDA_CHECK(cudaMalloc(&buf_, bytes));
  CUZK_CUDA_CHECK(cudaMalloc(&flag_, sizeof(unsigned)));
  CUZK_CUDA_CHECK(cudaMemset(buf_, 1, bytes));
  CUZK_CUDA_CHECK(cudaMemset(flag_, 0, sizeof(unsigned)));
  CUZK_CUDA_CHECK(cudaDeviceSynchronize());
}

ReadBuffer::~ReadBuffer() {
  cudaFree(buf_);
  cudaFree(flag_);
}

void ReadBuffer::read_once() {
  read_kernel<<<sm_count() * 8, 256>>>(static_cast<const uint4*>(buf_), bytes_ / sizeof(uint4), flag_);
  CUZK_CUDA_CHECK_LAUNCH("read_kernel");
  CUZK_CUDA_CHECK(cudaDeviceSynchronize());
}

void compute_bound(int iterations) {
  float* out = nullptr;
  CUZK_CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
  fma_kernel<<<sm_count() * 16, 256>>>(out, iterations);
  const cudaError_t launch = cudaGetLastError();
  const cudaError_t sync = cudaDeviceSynchronize();
  cudaFree(out);
  CUZK_CUDA_CHECK(launch);
  CUZK_CUDA_CHECK(sync);
}

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
