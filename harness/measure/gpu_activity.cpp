#include "harness/measure/gpu_activity.hpp"

#include <fmt/format.h>

#include "harness/measure/inject.hpp"

namespace cuzk {

std::string apply_gpu_activity(Sample& s, const instr::gpu_activity::Batch& batch) {
  if (batch.dropped > 0 || !batch.error.empty())
    return fmt::format("GPU activity: {}; this sample has no gpu_kernel_ns, gpu_copy_ns or gpu_idle_ns",
                       batch.dropped > 0 ? fmt::format("{} records were dropped (CUPTI's buffers were full)", batch.dropped)
                                         : batch.error);
  const instr::gpu_activity::Attribution a = instr::gpu_activity::attribute(batch);
  for (const auto& [path, t] : a.phases) {
    auto it = s.phases.find(path);
    if (it == s.phases.end()) continue;  // an opening the recorder did not see (opened before its window)
    // Calibration's ":gpu" injection scales the kernel time as it scales the event time (inject.hpp);
    // copies and idle gaps stay as measured.
    it->second.gpu_kernel_ns = inject::scale_gpu_time(path, t.kernel_ns);
    it->second.gpu_copy_ns = t.copy_ns;
    it->second.gpu_idle_ns = t.idle_ns;
  }
  return "";
}

}  // namespace cuzk
