// Small-sample statistics for `compare`, `gate` and `calibrate` (docs/compare.md):
// order statistics, robust spread, the two-sided Mann-Whitney U test and a bootstrap
// confidence interval of the ratio of medians.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuzk {

// Quantile with linear interpolation between order statistics (type 7, as numpy's default and
// R's default): q in [0, 1]. Empty input -> NaN.
double quantile(std::vector<double> v, double q);
double median(const std::vector<double>& v);
// Median absolute deviation from the median (raw, not scaled by 1.4826).
double mad(const std::vector<double>& v);
// Interquartile range: quantile(0.75) - quantile(0.25).
double iqr(const std::vector<double>& v);

// Result of the U test with the details the tests and docs talk about.
struct MannWhitneyResult {
  double u_a = 0;          // U statistic of sample a: pairs (x in a, y in b) with x > y, ties 1/2
  double p_value = 1;      // two-sided
  bool exact = false;      // exact null distribution (no ties, both n <= kMannWhitneyExactMax)
};
constexpr size_t kMannWhitneyExactMax = 20;

// Two-sided Mann-Whitney U test. Exact distribution (dynamic programming over the number of
// arrangements with a given U) when both samples have at most 20 values and there are no
// ties; otherwise the normal approximation with tie correction of the variance and a
// continuity correction of 0.5. Either side empty -> p = 1.
MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);
double mann_whitney_u_p(const std::vector<double>& a, const std::vector<double>& b);
// The same forcing one branch (for tests): exact ignores ties' effect on the distribution.
double mann_whitney_u_p_exact(const std::vector<double>& a, const std::vector<double>& b);
double mann_whitney_u_p_normal(const std::vector<double>& a, const std::vector<double>& b);

struct RatioCI {
  double low = 1, high = 1;
};
// Percentile bootstrap CI of median(b)/median(a): resample each side with replacement
// `resamples` times (deterministic: std::mt19937_64 seeded with `seed`), take the
// (1-level)/2 and (1+level)/2 quantiles of the ratios. Empty side or a zero median -> NaN.
RatioCI bootstrap_ratio_ci(const std::vector<double>& a, const std::vector<double>& b,
                           int resamples = 2000, uint64_t seed = 1, double level = 0.95);

struct DiffCI {
  double low = 0, high = 0;
};
// The same percentile bootstrap for median(b) - median(a) (an absolute change, defined where
// the ratio is not: a phase that costs 0 on one side). Empty side -> NaN.
DiffCI bootstrap_diff_ci(const std::vector<double>& a, const std::vector<double>& b, int resamples = 2000,
                         uint64_t seed = 1, double level = 0.95);

}  // namespace cuzk
