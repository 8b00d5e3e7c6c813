// `ab --duet` (docs/ab.md, "Duet"): each round runs A and B at the same time, each on its own
// half of the CPUs (harness/measure/duet.hpp), the halves swapped every round, every sample
// started together by the barrier. cmd_ab.cpp does the rest (builds, provenance, merge, compare).
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/cli/run_failures.hpp"
#include "harness/measure/duet.hpp"

namespace cuzk::cli {

// Checks a duet request before anything is built or written: at least 2 CPUs in this process's
// mask, and not with --stable (which places the GPU thread and the pool over every CPU itself).
// Throws Error (exit 2). Returns the halves.
duet::Halves check_duet_request(bool stable);

struct DuetAbRequest {
  std::string bin_a, bin_b, name_a, name_b;
  std::string suite_path, extra;  // as the interleaved rounds run the suite
  std::string dir;                // the A/B folder (rounds/ inside)
  int reps = 1, warmup_rounds = 0, rounds = 1;
  double run_timeout = 0;
  OnFailure on_failure = OnFailure::kStop;
  duet::Halves halves;
};
struct DuetAbRounds {
  std::vector<std::string> files_a, files_b;
  int warm_a = 0, warm_b = 0;  // warm-up rounds that succeeded
};
// Runs the warm-up and measured rounds. Records each round's CPUs in meta["duet"]["rounds"] and
// failed runs in meta["failed_runs"] (write_meta(status) saves the manifest); on a signal throws
// stop_interrupted(sig, round, who); a failed round under --on-failure stop throws Error (exit 1).
DuetAbRounds run_duet_rounds(const DuetAbRequest& q, nlohmann::json& meta,
                             const std::function<void(const std::string&)>& write_meta,
                             const std::function<Error(int, int, const std::string&)>& stop_interrupted);

}  // namespace cuzk::cli
