// GPU time without gaps: per-phase kernel, copy and idle time from GPU activity records
// (docs/counters.md, "GPU time without gaps").
//
// Pure host code: the input is plain records (filled on the GPU machine by the CUPTI collector,
// cuda/profiling/gpu_activity_cupti.hpp, and by hand in the tests), the output plain numbers.
// It sits here, below both harness/ and cuda/, because the collector in cuda/ fills its input and
// the harness consumes its output, and nothing includes upward.
//
// The rules:
// - an activity (kernel, memcpy, memset) belongs to the phase opening that was innermost on the
//   launching thread when the launching API call ran (by its correlation id), wherever it runs
//   in time: a kernel launched in one phase that runs on into the next stays the launcher's, and
//   does not reduce the next phase's idle time;
// - a parent includes its children's activities, as its wall time includes theirs; the parent
//   of an opening is the one its collector named, else the latest-opened opening of the parent
//   path that was open when it opened (worker threads open phases under another thread's one);
// - kernel_ns: the union of the kernels' and memsets' intervals, so that work overlapping on
//   several streams counts once (memsets run as kernels on the device); copy_ns: the union of
//   the copies' intervals; a kernel and a copy that overlap count once in each;
// - the span of an opening: from its open to its close, or to the end of its last activity when
//   that is later; idle_ns: the span less the union of all its activities' intervals within it;
// - several openings of one path (one per circuit of a batch): their times are summed, as wall
//   time is.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "prover/instr/phase.hpp"

namespace cuzk::instr::gpu_activity {

enum class Kind { kKernel, kMemcpy, kMemset };

// One record of GPU work, timestamps on the collector's clock (the same as the openings').
struct Activity {
  Kind kind = Kind::kKernel;
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t stream = 0, device = 0;
  uint64_t correlation = 0;  // the id of the API call that launched it
};

// One opening of a phase.
struct Opening {
  uint64_t id = 0;        // unique within a Batch, never 0 (the external correlation id pushed at open)
  std::string path;       // "proof/prove/msm_h"
  uint64_t parent = 0;    // the enclosing opening on the same thread; 0: resolve by path and time
  uint64_t open_ns = 0, close_ns = 0;
};

// What a collector gathered over one sample.
struct Batch {
  std::vector<Activity> activities;
  std::unordered_map<uint64_t, uint64_t> launched_in;  // correlation id -> Opening::id
  std::vector<Opening> openings;
  uint64_t dropped = 0;  // records the collector lost (full buffers); the times are then incomplete
  std::string error;     // why the batch is incomplete otherwise (a failed flush); "" when complete
};

struct PhaseTimes {
  uint64_t kernel_ns = 0, copy_ns = 0, idle_ns = 0;
  uint64_t activities = 0;  // records counted, its children's included
};

struct Attribution {
  // Phases with at least one activity (their own or a child's), summed over their openings.
  std::map<std::string, PhaseTimes> phases;
  uint64_t unattributed = 0;  // activities launched outside every opening (or by an unknown one)
};

Attribution attribute(const Batch& batch);

// A collector of GPU activity over a window of work (a sample): the harness attaches it around
// the timed work and takes its Batch afterwards, outside the timed region.
class Collector {
 public:
  virtual ~Collector() = default;
  // Starts a window: becomes the phase sink, forwarding every call to the sink installed now
  // (install that one first); forgets anything gathered before.
  virtual void attach() = 0;
  // Ends the window: gives the sink back to the one it wrapped (when it is still the installed
  // sink), then flushes what the GPU recorded. Call after every phase of the window closed.
  virtual void detach() = 0;
  // What the window gathered (after detach).
  virtual Batch take() = 0;
};

// The phase-sink half of a collector: numbers each phase opening, keeps its open and close
// times on the collector's clock and its enclosing opening on the same thread, and tells the
// subclass when an opening starts and ends on the calling thread (where CUPTI's external
// correlation ids are pushed and popped). Thread-safe; forwards everything to the wrapped sink.
class OpeningSink : public PhaseSink {
 public:
  void* begin(const std::string& path) override;
  void end(void* token) override;
  void gpu_time(const std::string& path, uint64_t gpu_ns) override;

 protected:
  // Installs this sink over the one installed now, and forgets earlier openings.
  void wrap();
  // Restores the wrapped sink if this one is still installed.
  void unwrap();
  // The openings since wrap(), in opening order.
  std::vector<Opening> take_openings();
  virtual uint64_t now_ns() = 0;                 // the activity records' clock
  virtual void opened(uint64_t /*id*/) {}        // on the opening thread, before the wrapped sink's begin
  virtual void closing(uint64_t /*id*/) {}       // on the same thread, after the wrapped sink's end

 private:
  PhaseSink* inner_ = nullptr;
  std::mutex mu_;
  uint64_t next_id_ = 1;
  std::vector<Opening> openings_;
};

// Length of the union of half-open intervals [first, second): overlaps count once.
uint64_t union_length(std::vector<std::pair<uint64_t, uint64_t>> intervals);

}  // namespace cuzk::instr::gpu_activity
