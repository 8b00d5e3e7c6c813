// main() of the GPU test binary: without a usable GPU it prints why and exits 77, which ctest
// reports as "Skipped" (SKIP_RETURN_CODE), never as passed.
#include <cstdio>

#include "cuda/stage/cuda_backend.hpp"

#if defined(CUZK_CATCH3)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

int main(int argc, char** argv) {
  const cuzk::cuda::DeviceInfo d = cuzk::cuda::probe_device();
  if (!d.available) {
    std::printf("SKIPPED: no usable GPU: %s\n", d.reason.c_str());
    return 77;
  }
  std::printf("GPU: %s, %d SMs, compute capability %d.%d, %.1f GiB\n", d.name.c_str(), d.sm_count, d.cc_major,
              d.cc_minor, double(d.total_bytes) / (1ull << 30));
  std::printf("msm_b_g2 of the CUDA backend: %s\n",
              cuzk::cuda::msm_b_g2_on_gpu() ? "on the GPU (CUZK_GPU_G2=ON)" : "on CPU threads (CUZK_GPU_G2=OFF)");
  return Catch::Session().run(argc, argv);
}
