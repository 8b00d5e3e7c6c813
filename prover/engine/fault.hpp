// Test-only fault injection (docs/reliability.md): $CUZK_INJECT_FAULT makes one process fail the
// way real machines fail, at a chosen point, so that the tests can check that nothing is lost
// and nothing crashes. It lives in the prover (not the harness) because the engine and the CUDA
// backend fire some of these faults and must not depend on the harness.
//
//   CUZK_INJECT_FAULT="write_enospc_after:N"   results writer: after N lines, the next write fails (ENOSPC)
//   CUZK_INJECT_FAULT="write_short_after:N"    results writer: after N lines, the next write stops half-way (ENOSPC)
//   CUZK_INJECT_FAULT="write_torn_after:N"     as write_short_after, and cutting the torn line off fails too
//   CUZK_INJECT_FAULT="hang_in:PHASE"          the process sleeps forever when PHASE opens (harness phase sinks)
//   CUZK_INJECT_FAULT="fail_at:STAGE"          the engine's STAGE (proof/synth or proof/prove) throws, once
//   CUZK_INJECT_FAULT="cuda_oom_at:PHASE"      the CUDA backend runs out of device memory at PHASE, once
//   CUZK_INJECT_FAULT="cuda_error_at:PHASE"    the CUDA backend gets a CUDA error at PHASE, once
//
// Entries are comma-separated (one of each kind at most). PHASE matches a phase path exactly
// ("proof/prove/msm_h") or by its last components ("msm_h"). CUDA phases: h2d, ntt_h, msm_h,
// msm_l, msm_a, msm_b_g1, msm_b_g2 (CUZK_GPU_G2 builds; it never fires in others). The variable is parsed once per process; cuzk-bench refuses a
// malformed one before any work (exit 2, through inject::check_env), says on stderr when one is
// active, and records it in every results header it writes ("fault_injection": describe()).
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::fault {

constexpr const char* kEnvVar = "CUZK_INJECT_FAULT";

// A malformed specification.
class FaultError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The failure fail_at throws (so a test can tell it from a real one).
class InjectedFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Kind { kWriteEnospcAfter, kWriteShortAfter, kWriteTornAfter, kHangIn, kFailAt, kCudaOomAt, kCudaErrorAt };

struct Entry {
  Kind kind;
  std::string phase;  // hang_in, fail_at, cuda_*: the phase
  size_t after = 0;   // write_*: lines written before the fault
};

// Parses "kind:arg[,kind:arg...]"; "" gives no entry. Throws FaultError naming the entry at fault.
std::vector<Entry> parse_spec(const std::string& spec);
std::string format_spec(const std::vector<Entry>& entries);

// The process's parsed $CUZK_INJECT_FAULT (throws FaultError when malformed).
const std::vector<Entry>& from_env();
// Validates $CUZK_INJECT_FAULT (throws FaultError) and prints the stderr notice once when active.
void check_env();
bool active();
// {"spec": "..."} or null when none is active.
nlohmann::json describe();
// Tests only: replaces the process's entries (and re-arms the once-only faults).
void set_for_testing(const std::string& spec);

// What the results writer's next line write does, given the lines it has written.
enum class WriteFault { kNone, kEnospc, kShort, kTorn };
WriteFault on_write(size_t lines_written);

// Phase sinks call this when a phase opens: with a matching hang_in entry it never returns
// (sleeps; signals still end the process). Otherwise it costs one load and a branch.
void hang_point(const std::string& path);

// The once-only failure (fail_at, cuda_oom_at, cuda_error_at) that fires at `path` now, if any;
// the caller throws the matching exception (the engine InjectedFault, the CUDA backend
// DeviceOutOfMemory or CudaError). Each entry fires once per process.
std::optional<Kind> fire(const std::string& path);

// For the engine's stage boundaries: throws InjectedFault when a fail_at entry fires at `stage`.
void fail_point(const std::string& stage);

}  // namespace cuzk::fault
