// The prover's only instrumentation interface: scoped phases with slash names.
//
// The prover opens coarse scopes around its stages (never inside hot loops); whoever links
// the prover decides what a scope records by installing a PhaseSink (the harness records
// wall clock, counters, NVTX ranges and GPU time). With no sink installed a scope only keeps
// the thread's current path, so a prover built without the harness still runs.
//
// Names: a Phase opened with a leaf name ("synth") nests under the innermost open phase of
// the same thread ("proof" -> "proof/synth"); a name that starts with '/' is absolute
// ("/proof/prove" -> "proof/prove"). Worker threads have no open phase of their own: capture
// the parent's path with current_path() and open the worker's scope with Phase(child, parent).
#pragma once
#include <cstdint>
#include <string>

namespace cuzk::instr {

class PhaseSink {
 public:
  virtual ~PhaseSink() = default;
  // Called when a scope opens/closes on the calling thread. `token` is what begin returned.
  virtual void* begin(const std::string& path) = 0;
  virtual void end(void* token) = 0;
  // GPU time of a phase, measured with CUDA events by the backend after the work completed.
  virtual void gpu_time(const std::string& path, uint64_t gpu_ns) = 0;
};

// Installs the process-wide sink (nullptr removes it). Not thread-safe against open scopes:
// install before the work starts.
void set_sink(PhaseSink* sink);
PhaseSink* sink();

// Full path of the innermost open phase on this thread ("" when none).
const std::string& current_path();

class Phase {
 public:
  explicit Phase(const char* name);
  Phase(const std::string& name, const std::string& parent);  // worker-thread form
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;
  const std::string& path() const { return path_; }

 private:
  void open(std::string path);
  std::string path_;
  std::string saved_parent_;
  PhaseSink* sink_ = nullptr;
  void* token_ = nullptr;
};

// Reports GPU nanoseconds for `path` (absolute, no leading '/'); a no-op without a sink.
void report_gpu_time(const std::string& path, uint64_t gpu_ns);

}  // namespace cuzk::instr
