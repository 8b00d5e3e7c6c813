#include "harness/cli/gpu_activity_flag.hpp"

#include <fmt/core.h>

#include "harness/cli/commands.hpp"
#if CUZK_HAVE_GPU_ACTIVITY
#include "cuda/profiling/gpu_activity_cupti.hpp"
#endif

namespace cuzk::cli {

void check_gpu_activity(bool asked, const std::string& backend) {
  if (!asked) return;
#if !CUZK_HAVE_GPU_ACTIVITY
  throw Error("--gpu-activity needs CUPTI: this build has no CUDA backend, or CMake did not find CUPTI "
              "(docs/counters.md, \"GPU time without gaps\")");
#endif
  if (backend != "cuda")
    throw Error(fmt::format("--gpu-activity measures GPU phases: it needs --backend cuda, not --backend {}", backend));
}

std::shared_ptr<instr::gpu_activity::Collector> make_gpu_activity_collector() {
#if CUZK_HAVE_GPU_ACTIVITY
  try {
    return cuda::gpu_activity::make_cupti_collector();
  } catch (const cuda::gpu_activity::GpuActivityError& e) {
    throw Error(e.what());
  }
#else
  throw Error("--gpu-activity needs CUPTI (this build has none)");
#endif
}

}  // namespace cuzk::cli
