// The gate's [kernels."phase"] table (docs/gating.md#kernels-inside-a-phase): limits on a
// kernel's time, or the GPU idle time, inside a phase, judged on trace-diff's comparison of two
// sets of nsys exports. It lives beside trace-diff because the gate's own library cannot read
// traces (this one depends on it).
#pragma once
#include <string>

#include "harness/analysis/gate.hpp"
#include "harness/trace/diff.hpp"

namespace cuzk::trace {

// trace-diff's options for the gate: its alpha, and max_slowdown as the verdicts' threshold.
DiffOptions kernel_diff_options(const GateThresholds& t);

// Judges every limit of t.kernel_limits on `d` and adds to g: an alarm (kind "kernel") per limit
// whose verdict is "slower" with its ratio above the limit, the p-values Holm-adjusted over the
// limits named (their own family); an error per named phase or kernel that a side lacks, or
// when a side has fewer than 2 traces; a warning per kernel only B has under a named phase.
// Then settles g's result.
void gate_kernels(GateResult& g, const Diff& d, const GateThresholds& t);

// The gate's traces: every *.sqlite in dir_a (baseline) and dir_b (candidate), both or neither.
// Without [kernels] in g's thresholds the traces are an error, and the table without them too;
// bad traces are errors. Does nothing when the thresholds could not be read.
void gate_traces(GateResult& g, const std::string& dir_a, const std::string& dir_b);

}  // namespace cuzk::trace
