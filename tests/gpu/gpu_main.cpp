// The GPU test binary's step before its tests: without a usable GPU it prints why and exits 77,
// which ctest reports as "Skipped" (SKIP_RETURN_CODE), never as passed.
#include <cstdio>

#include "catch_preamble.hpp"
#include "cuda/stage/cuda_backend.hpp"

namespace cuzk {
int test_preamble() {
  const cuda::DeviceInfo d = cuda::probe_device();
  if (!d.available) {
    std::printf("SKIPPED: no usable GPU: %s\n", d.reason.c_str());
    return 77;
  }
  std::printf("GPU: %s, %d SMs, compute capability %d.%d, %.1f GiB\n", d.name.c_str(), d.sm_count, d.cc_major,
              d.cc_minor, double(d.total_bytes) / (1ull << 30));
  std::printf("msm_b_g2 of the CUDA backend: %s\n",
              cuda::msm_b_g2_on_gpu() ? "on the GPU (CUZK_GPU_G2=ON)" : "on CPU threads (CUZK_GPU_G2=OFF)");
  return -1;
}
}  // namespace cuzk
