// The GPU counters pass (docs/counters.md, "GPU counters"): after the timed repetitions, the
// same proof runs again under CUPTI's Range Profiler (cuda/gpu_counters.hpp), once per pass the
// metrics need, with one user range per GPU phase: the direct children of the proving stage
// (proof/prove/h2d, ntt_h, msm_*, pin_abc, assemble) opened on the thread that opened the stage,
// the one that drives the GPU. Phases on other threads (msm_b_g2 on the G2 thread) and deeper
// phases are not ranges. Nothing is timed in that pass: its values go to one line of type
// "gpu_counters" (docs/results-format.md), never into a sample, so counters never perturb the
// times they stand beside.
#pragma once
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cuzk {

// The metrics of a recording command: the flag when given, else $CUZK_GPU_COUNTERS, else none.
// "default" is the default set (SM and DRAM throughput, DRAM bytes, L2 hit rate, warps active,
// PCIe bytes); "" is none. Throws CounterError for an empty item.
std::vector<std::string> gpu_counters_from(const std::optional<std::string>& flag);

class GpuCounterPass {
 public:
  // Validates the metrics on this machine's GPU, before any work: throws CounterError for an
  // unknown metric, no GPU, no CUPTI in this build, or CUPTI refusing to profile (the reason).
  explicit GpuCounterPass(const std::vector<std::string>& metrics, std::string stage = "proof/prove");
  ~GpuCounterPass();
  GpuCounterPass(const GpuCounterPass&) = delete;
  GpuCounterPass& operator=(const GpuCounterPass&) = delete;

  size_t passes() const;  // how many times run() will run the proof
  // Runs `one_proof` once per pass with the range sink installed (no recorder may be installed
  // meanwhile) and returns the "gpu_counters" line without suite, case and parameters.
  nlohmann::json run(const std::function<void()>& one_proof);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk
