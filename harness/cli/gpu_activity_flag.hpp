// --gpu-activity: GPU time without gaps through CUPTI's Activity API, for the commands that
// prove on the GPU (run, prove; docs/counters.md, "GPU time without gaps").
#pragma once
#include <memory>
#include <string>

#include "prover/instr/gpu_activity.hpp"

namespace cuzk::cli {

// Refused (Error, exit 2) where this build has no CUPTI, or the backend runs no GPU work.
void check_gpu_activity(bool asked, const std::string& backend);

// CUPTI's collector, set up before any file is written or any work runs; Error when CUPTI
// cannot start.
std::shared_ptr<instr::gpu_activity::Collector> make_gpu_activity_collector();

}  // namespace cuzk::cli
