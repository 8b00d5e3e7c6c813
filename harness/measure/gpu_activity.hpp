// GPU time without gaps in the records: a collector's attribution (prover/instr/gpu_activity.hpp)
// put into a sample's phase records as gpu_kernel_ns, gpu_copy_ns and gpu_idle_ns
// (docs/counters.md, "GPU time without gaps").
#pragma once
#include <string>

#include "harness/measure/recorder.hpp"
#include "prover/instr/gpu_activity.hpp"

namespace cuzk {

// Sets the three fields on every phase record of `s` that the attribution has times for, and
// returns ""; when the batch is incomplete (dropped records, an error) nothing is set and the
// returned warning says so, since times from an incomplete batch would read as too little work.
std::string apply_gpu_activity(Sample& s, const instr::gpu_activity::Batch& batch);

}  // namespace cuzk
