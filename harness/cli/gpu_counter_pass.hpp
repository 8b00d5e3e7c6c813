// The GPU counters pass (docs/counters.md, "GPU counters"): after the timed repetitions, the
// same proof runs again under CUPTI's Range Profiler (cuda/profiling/gpu_counters.hpp), once per pass the
// metrics need, with one user range per GPU phase: the direct children of the proving stage
// (proof/prove/h2d, ntt_h, msm_*, pin_abc, assemble) opened on the thread that opened the stage,
// the one that drives the GPU (msm_b_g2 too with CUZK_GPU_G2). Phases on other threads (msm_b_g2
// on the G2 thread otherwise) and deeper phases are not ranges. Nothing is timed in that pass:
// its values go to one line of type "gpu_counters" (docs/results-format.md), never into a
// sample, so counters never perturb the times they stand beside.
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

class GpuCounterPass;

// The pass a recording command asked for (--gpu-counters, else $CUZK_GPU_COUNTERS), checked on
// this GPU now; nullptr when none was asked for. Throws CounterError when one was asked for
// with a backend other than cuda, or cannot run here.
std::shared_ptr<GpuCounterPass> gpu_counter_pass_for(const std::optional<std::string>& flag, const std::string& backend);
// The hook of PorepJob::gpu_counters that runs `pass` (nullptr -> an empty hook); `who` prefixes
// its progress line on stderr.
std::function<nlohmann::json(const std::function<void()>&)> gpu_counters_hook(std::shared_ptr<GpuCounterPass> pass,
                                                                             const std::string& who);

class GpuCounterPass {
 public:
  // Validates the metrics on this machine's GPU, before any work: throws CounterError for an
  // unknown metric, no GPU, no CUPTI in this build, or CUPTI refusing to profile (the reason).
  explicit GpuCounterPass(const std::vector<std::string>& metrics, std::string stage = "proof/prove");
  ~GpuCounterPass();
  GpuCounterPass(const GpuCounterPass&) = delete;
  GpuCounterPass& operator=(const GpuCounterPass&) = delete;

  size_t passes() const;  // how many times run() will run the proof
  struct Status {
    std::string name;
    bool available = false;
    std::string reason;
  };
  const std::vector<Status>& status() const;  // each metric, as checked on this GPU
  std::string chip() const;
  // Runs `one_proof` once per pass with the range sink installed (no recorder may be installed
  // meanwhile) and returns the "gpu_counters" line without suite, case and parameters.
  nlohmann::json run(const std::function<void()>& one_proof);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk
