// Progress of a command's repetitions on stderr, one line before each, in the format `run`
// prints: "[prove] repetition 2/5 (elapsed 9.2s, about 14.1s left)". stderr, so that stdout
// stays the command's result.
#pragma once
#include <functional>
#include <string>

#include "harness/measure/stable.hpp"

namespace cuzk::cli {

// "12.3s" below a minute, else "4m05s".
std::string format_seconds(double seconds);

// The on_rep hook of a PorepJob (harness/suite/porep_job.hpp): called before each repetition
// (warm-ups first) and once after the last, for the job's warm-ups and `reps`. Prints nothing
// when the whole job is a single repetition.
std::function<void(int rep, bool warm)> rep_progress(const std::string& label, const WarmupPlan& plan, int reps);

}  // namespace cuzk::cli
