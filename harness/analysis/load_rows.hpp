// Rows of `compare` that judge a load run (suite "load", written by `cuzk-bench load`) by its
// tail and its throughput, beside the phase rows that judge medians (docs/compare.md, "Load
// runs"). Each is a PhaseComparison, so gate judges them like phase rows (docs/gating.md).
//
// - A tail row (kind "tail", metric "p90", "p99", ...): one phase's q-quantile over each side's
//   measured jobs (unit "jobs"); B/A of the quantiles; p from Mood's quantile test
//   (stats.hpp); the CI of the ratio from each side's distribution-free CI of its quantile at
//   level 1 - (1 - 0.95) / 2, as [B.lo / A.hi, B.hi / A.lo]: both side intervals hold with
//   probability >= 1 - 2 x 0.025 (a union bound), so the ratio's does with >= 95%. An end
//   without an order statistic (a p99 of fewer than 367 jobs has no upper bound) makes the
//   ratio's end 0 or +inf, and the row reads "too noisy" unless the test alone settles it.
// - A throughput row (kind "throughput", phase "request", unit "rounds"): each round's
//   completions per second, (n - 1) / (last done_s - first done_s) over that round's jobs of
//   the case, warm-ups included (load's own figure). Its ratio is that of the mean time between
//   completions, B/A = throughput A / throughput B, so that > 1 reads "slower" as in every other
//   row; its medians are each side's median throughput (jobs per second), and so read the
//   other way. Rounds both sides ran (load's A/B gives them one schedule per round) are paired:
//   a t interval and test over the per-round log ratios; otherwise Welch's t over the sides' log
//   throughputs.
#pragma once
#include <optional>
#include <string>

namespace cuzk {

// The metric name of a quantile: "p" and its percent, "p90" for 0.9, "p99.9" for 0.999.
std::string quantile_metric(double q);
// The quantile a metric name stands for ("p99" -> 0.99); nullopt for a name that is not "p"
// and a percent strictly between 0 and 100 in plain decimal digits.
std::optional<double> metric_quantile(const std::string& metric);

inline constexpr const char* kThroughputMetric = "throughput";
// The phase a throughput row carries: the rate at which requests complete.
inline constexpr const char* kThroughputPhase = "request";

// The jobs a side needs for its distribution-free CI of the q-quantile at `level` (quantile_ci)
// to have an upper end: 453 for a p99 at 0.975, 42 for a p90. At least ln(1 - level) / ln(q)
// (367 for the p99), where all n jobs fall below the quantile with probability 1 - level;
// more, because the interval's lower end takes its share of the coverage too.
size_t jobs_for_upper_bound(double q, double level);

}  // namespace cuzk
