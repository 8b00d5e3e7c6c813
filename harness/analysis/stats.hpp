// Small-sample statistics for `compare`, `gate` and `calibrate` (docs/compare.md):
// order statistics, robust spread, the two-sided Mann-Whitney U test and a bootstrap
// confidence interval of the ratio of medians.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cuzk {

// Quantile with linear interpolation between order statistics (type 7, as numpy's default and
// R's default): q in [0, 1]. Empty input -> NaN.
double quantile(std::vector<double> v, double q);
double median(const std::vector<double>& v);
// Arithmetic mean. Empty input -> NaN.
double mean(const std::vector<double>& v);
// Median absolute deviation from the median (raw, not scaled by 1.4826).
double mad(const std::vector<double>& v);
// Interquartile range: quantile(0.75) - quantile(0.25).
double iqr(const std::vector<double>& v);

// Distribution-free confidence interval of the q-quantile: the order statistics x_(l), x_(u)
// whose ranks come from Binomial(n, q), widened until they cover at least `level` (Hahn and
// Meeker, Statistical Intervals, 1991, section 5.2). With too few samples for that level an
// end is infinite (a p99 of 20 latencies has no upper bound): `lo_open` / `hi_open` say so.
struct QuantileCI {
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;
  double coverage = 0;  // the interval's exact coverage
};
QuantileCI quantile_ci(std::vector<double> v, double q, double level = 0.95);

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

// ---- paired samples (the paired design of compare: one difference per round) ----

// Result of the two-sided Wilcoxon signed-rank test on differences d.
struct WilcoxonResult {
  double statistic = 0;  // min(R+, R-), the sums of the ranks of |d| over positive and negative d
  double p_value = 1;    // two-sided
  bool exact = false;    // exact null distribution (no zeros, no ties, at most kWilcoxonExactMax values)
  size_t n = 0;          // non-zero differences (zeros are dropped: zero_method "wilcox")
};
constexpr size_t kWilcoxonExactMax = 25;

// Two-sided Wilcoxon signed-rank test, as scipy.stats.wilcoxon(d, alternative="two-sided",
// zero_method="wilcox", correction=False) with method="exact" when the differences have no zeros
// and no ties and there are at most 25 of them, method="approx" otherwise: zeros are dropped,
// |d| ranked with mid-ranks for ties, T = min(R+, R-); exact: p = min(1, 2 min(P(R+ <= r), P(R+ >= r)))
// under the distribution of R+ over the 2^n sign patterns (p = 1 at its centre); approx:
// z = (T - n(n+1)/4) / sqrt((n(n+1)(2n+1) - sum(t^3 - t)/2) / 24) over tie groups of size t,
// p = 2 (1 - Phi(|z|)). No differences, or all zero: p = 1 (scipy raises an error there).
WilcoxonResult wilcoxon_signed_rank(const std::vector<double>& d);
// The same forcing one branch (for tests).
double wilcoxon_p_exact(const std::vector<double>& d);
double wilcoxon_p_normal(const std::vector<double>& d);

// Student's t distribution with df > 0 degrees of freedom (Boost.Math): CDF, and quantile for p
// in (0, 1); NaN outside.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// Mean of d with its t interval: mean -+ t_{n-1, (1+level)/2} sd / sqrt(n) (sd with n-1). Fewer
// than 2 values: the interval is NaN.
struct MeanCI {
  double mean = 0, sd = 0, low = 0, high = 0;
  size_t n = 0;
};
MeanCI t_interval(const std::vector<double>& d, double level = 0.95);
// Percentile bootstrap CI of the mean of d (d resampled with replacement, std::mt19937_64 seeded
// with `seed`). Empty d -> NaN.
DiffCI bootstrap_mean_ci(const std::vector<double>& d, int resamples = 2000, uint64_t seed = 1, double level = 0.95);
// The Hodges-Lehmann estimate of the centre of d: the median of the Walsh averages
// (d_i + d_j) / 2, i <= j. Empty d -> NaN.
double hodges_lehmann(const std::vector<double>& d);

// ---- quantiles and rates of load runs (load_rows.hpp) ----

// Two-sided Fisher exact test of the 2x2 table [[a, b], [c, d]]: with the margins fixed, the
// first cell is hypergeometric; p sums the probabilities of every table no more likely than the
// observed one (as scipy.stats.fisher_exact, with a relative tolerance of 1e-7 so that tables
// as likely as the observed one in exact arithmetic count despite rounding). An empty table: 1.
double fisher_exact_p(size_t a, size_t b, size_t c, size_t d);

// Mood's two-sample test of equal q-quantiles (Mood, Introduction to the Theory of Statistics,
// 1950; the "median test" at q = 0.5): pool both samples, take the pooled q-quantile m (type 7,
// as `quantile`), count each side's values above m, and test the 2x2 table of counts above and
// not above with Fisher's exact test. Distribution-free; either side empty: p = 1.
struct MoodResult {
  double pooled = 0;            // m
  size_t above_a = 0, above_b = 0, n_a = 0, n_b = 0;
  double p_value = 1;           // two-sided
};
MoodResult mood_quantile_test(const std::vector<double>& a, const std::vector<double>& b, double q);

// A t test of a difference of means with its CI at `level`: paired (the mean of d against 0,
// df = n - 1) or Welch's (mean(x) - mean(y), Welch-Satterthwaite df). Fewer than 2 values on a
// side: p = 1 and the interval NaN. A zero standard error: p = 0 unless the estimate is 0 (then
// 1), and the interval is the estimate.
struct TTest {
  double estimate = 0, low = 0, high = 0, p_value = 1, df = 0;
};
TTest paired_t_test(const std::vector<double>& d, double level = 0.95);
TTest welch_t_test(const std::vector<double>& x, const std::vector<double>& y, double level = 0.95);

// ---- between and within processes (the noise diagnosis, noise.hpp) ----

// Every statistic below carries `why`: "" when it was computed, else the reason it could not be.

// One-way random-effects ANOVA of y = ln(time), groups = processes, first repetitions excluded.
struct Anova {
  std::string why;
  size_t groups = 0, n = 0;  // k processes with at least one value, N values
  double ms_between = 0, ms_within = 0;
  double df_between = 0, df_within = 0;
  double n0 = 0;             // effective group size: (N - sum n_i^2 / N) / (k - 1)
  double sd_within = 0;      // sqrt(MSW), in ln units (x100 ~ cv%)
  double sd_between = 0;     // sqrt(max(0, (MSB - MSW) / n0))
  double between_share = 0;  // sd_between^2 / (sd_between^2 + sd_within^2)
  double f = 0, p = 1;       // F = MSB / MSW, P(F(k-1, N-k) > F)
};
// `groups`: the values of each group (groups with no value are skipped).
Anova one_way_anova(const std::vector<std::vector<double>>& groups);

// First repetition against the later ones of the same process.
struct FirstRep {
  std::string why;
  size_t processes = 0;      // processes with a first and at least one later repetition
  size_t slower = 0;         // of which the first was slower than the median of the later ones
  double median_effect = 0;  // median over processes of first / median(later) - 1
  double t = 0, p = 1;       // one-sample t-test of ln(first) - mean(ln later), df = processes - 1
};
// `series`: each process's times in repetition order (index 0 = the first repetition).
FirstRep first_repetition(const std::vector<std::vector<double>>& series);

// Pooled within-process regression of ln(time) on the repetition index.
struct Trend {
  std::string why;
  size_t n = 0;
  double df = 0;                   // N - k - 1 (k process means and the slope)
  double slope = 0, se = 0;        // ln units per repetition (x100 ~ % per repetition)
  double ci_low = 0, ci_high = 0;  // 95% CI from Student's t with df degrees of freedom
};
// `groups`: per process, (repetition index, ln time) pairs.
Trend pooled_trend(const std::vector<std::vector<std::pair<double, double>>>& groups);

struct Spearman {
  std::string why;
  size_t n = 0;
  double rho = 0, p = 1;  // two-sided, t approximation with n - 2 degrees of freedom
};
Spearman spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace cuzk
