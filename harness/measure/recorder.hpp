// The harness's PhaseSink: what a cuzk::instr::Phase records while a Recorder is installed.
//
// Per phase path, over the occurrences in one sample: wall-clock ns (sum, steady clock) and
// the number of occurrences; GPU ns reported through PhaseSink::gpu_time (sum; absent when
// none was reported); the requested counters (sum of per-occurrence deltas over the counted
// threads, see counters.hpp); and, for traces, one span per occurrence (start offset from the
// sample's start, duration, OS thread id). Each scope also emits an NVTX push/pop range in
// domain "cuzk" with the path as message (when NVTX is compiled in and options.nvtx is set).
//
// Thread-safe: phases may open and close concurrently on any thread. A Phase object closes
// on the thread that opened it (it is a scoped object), which push/pop ranges rely on.
// Install before the work starts and uninstall (or destroy) only after every phase that
// opened under this Recorder has closed: an open Phase keeps a pointer to its sink.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/measure/counters.hpp"
#include "prover/instr/phase.hpp"

namespace cuzk {

struct PhaseRecord {
  uint64_t wall_ns = 0;  // sum over occurrences
  uint64_t count = 0;    // occurrences closed in the sample
  std::optional<uint64_t> gpu_ns;
  // GPU time without gaps (--gpu-activity; prover/instr/gpu_activity.hpp): the union of the
  // phase's kernels and memsets, of its copies, and its span's idle time; absent when not collected.
  std::optional<uint64_t> gpu_kernel_ns, gpu_copy_ns, gpu_idle_ns;
  std::map<std::string, std::optional<int64_t>> counters;  // every requested event; null = unavailable
  std::map<std::string, std::string> counter_errors;       // the reason of each null
  std::string counter_scope;                               // "" when no counters were requested
};

struct Span {
  std::string path;
  int64_t start_ns = 0;  // from the sample's start (negative: opened before the sample began)
  uint64_t dur_ns = 0;
  uint64_t tid = 0;      // OS thread id
};

struct Sample {
  std::map<std::string, PhaseRecord> phases;
  std::vector<Span> spans;  // in closing order
  uint64_t spans_dropped = 0;
  uint64_t wall_ns = 0;     // from the sample's start to take_sample()
};

struct RecorderOptions {
  std::vector<std::string> counters;  // PAPI event names (CounterSet validates them)
  bool nvtx = true;                   // emit NVTX ranges (when compiled in)
  bool spans = true;                  // keep spans for traces
  size_t max_spans = size_t(1) << 20; // per sample; beyond this spans are counted as dropped
  bool enlist_global_pool = true;     // enlist ThreadPool::global()'s threads for counters
};

class Recorder final : public instr::PhaseSink {
 public:
  explicit Recorder(RecorderOptions options = {});  // throws CounterError on unknown event names
  ~Recorder() override;

  void install();    // becomes the process-wide sink; starts the first sample
  void uninstall();  // removes it if it is the installed sink
  // The records since install() or the previous take_sample(); starts the next sample.
  Sample take_sample();

  const std::vector<CounterStatus>& counter_status() const;
  // The header's "sim" object when sim counters were requested, else null (CounterSet::sim_header).
  nlohmann::json sim_header() const { return counters_->sim_header(); }
  const RecorderOptions& options() const { return opts_; }

  void* begin(const std::string& path) override;
  void end(void* token) override;
  void gpu_time(const std::string& path, uint64_t gpu_ns) override;

 private:
  struct Open;
  struct Agg {
    uint64_t wall_ns = 0, count = 0, gpu_ns = 0;
    bool has_gpu = false;
    std::vector<int64_t> counters;  // per counted event
    bool counter_read_failed = false;
    std::string counter_error;
    int threads = 0, retired = 0;
  };
  RecorderOptions opts_;
  std::unique_ptr<CounterSet> counters_;
  bool counting_ = false;
  int sim_instructions_ = -1;  // sim::instructions' position in a reading (planted work); -1: not counted
  bool installed_ = false;
  std::mutex mu_;
  uint64_t sample_t0_ = 0;
  std::unordered_map<std::string, Agg> agg_;
  std::vector<Span> spans_;
  uint64_t spans_dropped_ = 0;
};

}  // namespace cuzk
