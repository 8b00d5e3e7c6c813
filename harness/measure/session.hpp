// A measurement session: one results file, one Recorder, samples written as they finish.
//
// Each sample line carries the environment readings of its window ("env": other processes'
// CPU use, GPU clocks, throttling; harness/measure/env_readings.hpp) and the process id (results.hpp).
// Everything that can be wrong with the request (counter names, output path) fails in the
// constructor, before any work runs; each measured repetition is written (one write + fsync)
// the moment it ends, so a killed run keeps every finished sample. A run that fails before its
// first sample leaves no file (header only: ResultsWriter::drop_if_header_only). Under
// interrupt::install(), measure() stops the run after a signal (interrupt::Interrupted) and the
// watchdog's last words write the summary line saying the sample in flight was discarded.
#pragma once
#include <atomic>
#include <functional>
#include <mutex>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/measure/duet.hpp"
#include "harness/measure/env_readings.hpp"
#include "harness/measure/recorder.hpp"
#include "harness/measure/results.hpp"
#include "prover/instr/gpu_activity.hpp"

namespace cuzk {

struct SessionOptions {
  std::string suite;
  std::string out;                            // "" -> results/local/<suite>-<UTC time>-<pid>.jsonl
  bool overwrite = false;                     // allow replacing an existing --out
  std::optional<std::string> counters;        // --counters; nullopt -> $CUZK_COUNTERS or defaults
  std::vector<std::string> default_counters;  // used when neither is given
  bool spans = true;
  nlohmann::json header_extra = nlohmann::json::object();  // keys merged into the header line
  // GPU time without gaps (--gpu-activity): attached around each measured sample's work, its
  // batch attributed after the sample's time was taken (harness/measure/gpu_activity.hpp).
  std::shared_ptr<instr::gpu_activity::Collector> gpu_activity;
};

class Session {
 public:
  explicit Session(const SessionOptions& o);  // throws ResultsError / CounterError
  ~Session();

  // Runs fn with the recorder installed and writes one sample line, with the environment
  // readings taken around fn ("env"); returns it.
  nlohmann::json measure(const SampleInfo& info, const std::function<void()>& fn);
  // Writes one sample line from phase records measured outside a recorder window; returns it.
  // For work whose units overlap in time (the pipelined engine's jobs), where no recorder
  // window is one unit. `extra` (an object) adds top-level fields to the line. "env" holds
  // point-in-time readings only (its window values are null: the samples overlap).
  nlohmann::json record(const SampleInfo& info, const Sample& sample,
                        const nlohmann::json& extra = nlohmann::json::object());
  // Writes the summary line (per-phase medians over the non-warm-up samples) with extra's keys
  // merged in (an object; throws ResultsError if one would replace a summary field); returns it.
  nlohmann::json finish(const nlohmann::json& extra = nlohmann::json::object());
  // After SIGINT/SIGTERM (harness/measure/interrupt.hpp): the summary line with
  // "interrupted": {"signal", "exit_code", "in_flight": "completed"|"discarded"|"none"}.
  // The Session registers it (with "discarded") as the interrupt watchdog's last words.
  nlohmann::json finish_interrupted(int sig, const std::string& in_flight, nlohmann::json extra = nlohmann::json::object());
  // Writes a "gpu_counters" line (results.hpp make_gpu_counters_line) from `body`.
  void write_gpu_counters(const nlohmann::json& body);
  // Fields added to every later sample line (an object; {} for none), e.g. a suite case's
  // {"primary_metric": "sim::instructions"}; a field that would replace one of the sample's own
  // throws ResultsError when the sample is written.
  void set_sample_fields(nlohmann::json fields) { sample_fields_ = std::move(fields); }
  const nlohmann::json& sample_fields() const { return sample_fields_; }

  const std::string& path() const { return writer_->path(); }
  const std::vector<CounterStatus>& counter_status() const { return recorder_->counter_status(); }
  const std::vector<nlohmann::json>& samples() const { return samples_; }
  // Whether a sample was being measured when the process got its stop signal.
  bool measuring() const { return measuring_; }

 private:
  void write_sample(const nlohmann::json& line);
  std::unique_ptr<duet::Member> duet_;  // one side of a duet run: a barrier before every sample
  std::unique_ptr<Recorder> recorder_;
  std::shared_ptr<instr::gpu_activity::Collector> gpu_activity_;
  std::unique_ptr<ResultsWriter> writer_;
  EnvProbe env_;
  std::vector<nlohmann::json> samples_;
  nlohmann::json sample_fields_ = nlohmann::json::object();
  uint64_t t0_ = 0;
  bool finished_ = false;
  std::atomic<bool> measuring_{false};
  std::mutex mu_;  // samples_ and finished_: the interrupt watchdog may write the summary
};

// The process's own command line (from /proc/self/cmdline).
std::vector<std::string> own_command_line();
// results/local/<prefix>-<UTC time>-<pid>.jsonl, creating results/local/ when missing.
std::string default_results_path(const std::string& prefix);
// A per-phase table of a summary line: phase, n, median/min/max ms, available counters.
void print_summary_table(const nlohmann::json& summary, const std::vector<CounterStatus>& counters);

}  // namespace cuzk
