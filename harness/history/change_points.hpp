// Change points of one results series (one machine, case, phase and metric; one point per
// commit): E-divisive means with a Student t-test and a minimum relative magnitude, as Hunter
// does, computed incrementally as points arrive, with identities that survive recomputation.
// docs/history.md#change-points has the algorithm, its defaults and the formulas.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cuzk::history {

// One commit's measurement of the series.
struct SeriesPoint {
  std::string id;  // the commit (its sha) or any label unique within the series
  // The per-commit median of the metric (ns, counts), > 0 and finite. Detection runs on
  // ln(value), so every shift is relative: a 3% change weighs the same at 1 ms and at 1 s.
  double value = 0;
  // Relative spread of the runs behind the point (sd / median); NaN when unknown. Read only as
  // the noise of a series too short to estimate it (PendingShift::noise).
  double spread = std::numeric_limits<double>::quiet_NaN();
  int runs = 0;  // how many runs the median is of; 0 when unknown (taken as 1 with a spread)
};

enum class Direction { kRegression, kImprovement };
const char* direction_name(Direction d);  // "regression", "improvement"

struct ChangePointOptions {
  // Significance of the two-sided Student t-test (on ln values, between the segments either side)
  // that accepts a change. 0.001: a dashboard watches many series over many commits, and the
  // test is applied at the best split found, not at a fixed one, so a series gives a false change
  // far more often than alpha (docs/history.md#parameters).
  double alpha = 0.001;
  // A change is reported only when |ratio - 1| >= min_magnitude. 0.02: below compare's default
  // 3% threshold, so whatever compare would call slower can show, with room for the estimate's
  // error; above the 0.2-0.5% steps that very quiet series make significant but nobody acts on.
  double min_magnitude = 0.02;
  // Fewest points on each side of a change (at least 2: the energy statistic needs a pair on
  // each side). 4: a few disturbed commits in a row must not become a change; with 3, segments of
  // three made half of the false changes (docs/history.md#parameters).
  size_t min_segment = 4;
  // Points per E-divisive search window; windows overlap by half (docs/history.md#algorithm).
  // 0: one window over the whole series (cost and memory grow with the square of its length).
  // Else at least 2 * min_segment.
  size_t window = 50;
  // Most change points reported (the weakest are dropped first); 0: no limit.
  size_t max_change_points = 0;
  double level = 0.95;  // confidence level of the ratio's interval
  double power = 0.90;  // power assumed by PendingShift::points_needed (as compare's rounds needed)
  // A change found within this many points of a previously known change of the same direction
  // keeps that change's id (docs/history.md#identity).
  size_t match_distance = 1;
  // Larger values are worse (times, counts): a rise is a regression. False for throughputs.
  bool larger_is_worse = true;
};

// A change in the series: the segment [segment_begin, index) before it and [index, segment_end)
// after it, the neighbouring change points (or the series' ends) bounding both.
struct ChangePoint {
  // Stable identity: change_point_id(series key, after_id) when first found, kept while the
  // change stays within match_distance points (docs/history.md#identity).
  std::string id;
  size_t index = 0;        // the first point after the change
  std::string before_id;   // the last point before the change: points[index - 1].id
  std::string after_id;    // the first point after it: points[index].id
  size_t segment_begin = 0, segment_end = 0;
  double median_before = 0, median_after = 0;  // medians of the segments' values
  // exp(mean ln after - mean ln before): the ratio of the segments' geometric means, the quantity
  // the t-test tests; and its t interval at `level` (pooled sd, df = points - 2).
  double ratio = 1, ratio_low = 1, ratio_high = 1;
  double t = 0;        // the t statistic (after - before, in ln units)
  double p_value = 1;  // two-sided
  Direction direction = Direction::kRegression;
};

// Why a pending shift is not (yet) a change point.
enum class PendingStatus {
  kNeedsPoints,      // points_needed more points at the same level should make it significant
  kBelowMagnitude,   // |ratio - 1| < min_magnitude: never reported, however many points come
  kOutOfReach,       // even endless points after it would not make it significant (too few before)
  kNoNoiseEstimate,  // too few points, and no per-point spread to estimate the noise from
};
const char* pending_status_name(PendingStatus s);  // "needs points", "below magnitude", ...

// The strongest shift in the newest segment (after the last change point) that is not a change
// point: where a new change would appear, and how many more points it needs.
struct PendingShift {
  size_t index = 0;                   // the first point after the shift
  size_t points_before = 0, points_after = 0;
  double ratio = 1;                   // as ChangePoint::ratio
  double p_value = 1;                 // the t-test as it stands (1 where it has no degrees of freedom)
  double noise = 0;                   // sd of ln values used: pooled within the sides, else from spreads
  PendingStatus status = PendingStatus::kNeedsPoints;
  // With status kNeedsPoints: more points (after the current last one, at the level after the
  // shift) for the t-test to reach alpha with probability `power` (points_needed_after()); 0 when
  // it already would. -1 otherwise.
  int points_needed = -1;
  Direction direction = Direction::kRegression;
};

struct ChangePointResult {
  std::vector<ChangePoint> changes;     // in index order
  std::optional<PendingShift> pending;  // none for a series of fewer than 2 points
};

// A change known from an earlier analysis (what a store keeps), for identities.
struct KnownChange {
  std::string id;
  std::string point_id;  // ChangePoint::after_id when it was found
  Direction direction = Direction::kRegression;
};
KnownChange known_change(const ChangePoint& c);

// "cp-" and 16 hex digits of the FNV-1a 64-bit hash of series_key, '\n', point_id: the same on
// every machine and build (std::hash is not).
std::string change_point_id(std::string_view series_key, std::string_view point_id);

// The E-divisive energy statistic (Matteson & James 2014, with alpha = 1) of the split of
// y[begin, end) at tau, m = tau - begin and n = end - tau points a side:
//   Q(tau) = m n / (m + n) * (2/(m n) sum |x_i - z_j| - sum_{i<k} |x_i - x_k| / C(m, 2)
//                                                   - sum_{j<k} |z_j - z_k| / C(n, 2))
// where x are the first part's values and z the second's (a within term is 0 for a side of one).
struct EnergySplit {
  size_t index = 0;  // tau, the first point of the second part
  double q = 0;
};

// The sums of distances Q needs, kept as values arrive: pushing the n-th value costs
// O(min(n, span)) and then every Q of a segment of at most `span` values costs O(1).
class EnergyTable {
 public:
  // span: the longest segment that will be asked about (SIZE_MAX: any, memory O(n^2)).
  explicit EnergyTable(size_t span) : span_(span) {}
  void push(double y);
  size_t size() const { return y_.size(); }
  // sum_{a <= i < j < b} |y_i - y_j|, for b - a <= span.
  double within(size_t a, size_t b) const;
  double q(size_t begin, size_t tau, size_t end) const;  // begin < tau < end
  // The tau in [begin + min_left, end - min_right] with the largest Q (the first on ties);
  // nullopt when that range is empty.
  std::optional<EnergySplit> best(size_t begin, size_t end, size_t min_left, size_t min_right) const;

 private:
  size_t span_;
  std::vector<double> y_;
  // rows_[b][k] = within(b - k, b) for k = 0 .. min(b, span): one row per prefix length.
  std::vector<std::vector<double>> rows_;
};

// The best split of y[begin, end) with at least min_segment values a side, by an EnergyTable over
// y: what the detector computes, exposed for tests and tools.
std::optional<EnergySplit> energy_best_split(const std::vector<double>& y, size_t begin, size_t end,
                                             size_t min_segment);

// Pooled two-sample Student t-test of b against a (summaries of ln values).
struct TTest {
  double diff = 0;  // mean b - mean a
  double se = 0;    // pooled sd * sqrt(1/m + 1/n)
  double df = 0;    // m + n - 2
  double t = 0;
  // Two-sided; 1 when df < 1; 0 or 1 when both sides are constant (to one part in a billion).
  double p_value = 1;
};
TTest student_t_test(const std::vector<double>& a, const std::vector<double>& b);

// How many points after a shift a two-sided t-test at `alpha` needs to find a shift of
// `log_shift` (ln of the ratio) with noise sd `sd` (ln units) and `before` points before it, with
// probability `power`: the smallest n >= min_after with
//   |log_shift| / (sd sqrt(1/before + 1/n)) >= t_{1-alpha/2, before+n-2} + t_{power, before+n-2}.
// -1 when no n reaches it: |log_shift| sqrt(before) / sd < z_{1-alpha/2} + z_power.
int points_needed_after(size_t before, double log_shift, double sd, double alpha, double power,
                        size_t min_after);

// The detector of one series. Append points in commit order and analyse() whenever a result is
// wanted; appending and analysing after each point gives exactly (bit for bit) the change points
// that one analysis of the whole series gives (docs/history.md#incremental-analysis).
class ChangePointDetector {
 public:
  // Throws std::invalid_argument on options out of range.
  explicit ChangePointDetector(std::string series_key, ChangePointOptions options = {});

  // Changes known from an earlier analysis (a store's), whose ids the next analysis keeps.
  void remember(std::vector<KnownChange> known);
  // Throws std::invalid_argument on a value that is not finite and > 0, or an id already present.
  void append(SeriesPoint point);
  // The change points of the points so far, with ids matched to the known changes (the last
  // analysis's, or those remembered since); they become the known changes.
  ChangePointResult analyse();

  const std::vector<SeriesPoint>& points() const { return points_; }
  const std::string& series_key() const { return key_; }
  const ChangePointOptions& options() const { return options_; }

  // What the analyses did: windows searched anew and windows taken from earlier analyses.
  struct Work {
    size_t windows_searched = 0;
    size_t windows_reused = 0;
  };
  const Work& work() const { return work_; }

 private:
  struct Window {
    size_t begin = 0, end = 0;
    std::vector<size_t> splits;  // sorted
  };
  struct SideStats {
    size_t n = 0;
    double mean = 0, ss = 0;  // ss: sum of squared deviations from the mean
  };

  size_t span() const;  // the window length in use
  SideStats side(size_t a, size_t b) const;
  TTest test(size_t a, size_t tau, size_t b) const;
  void search(Window& w) const;
  std::vector<size_t> candidates();
  std::vector<size_t> prune(std::vector<size_t> cps) const;
  ChangePoint describe(size_t begin, size_t index, size_t end) const;
  std::optional<PendingShift> pending(size_t begin) const;
  void assign_ids(std::vector<ChangePoint>& changes) const;
  double spread_noise(size_t a, size_t b) const;

  std::string key_;
  ChangePointOptions options_;
  std::vector<SeriesPoint> points_;
  std::unordered_map<std::string, size_t> index_of_;  // point id -> index
  std::vector<double> y_;  // ln(value) - ln(first value)
  EnergyTable energy_;
  std::vector<Window> windows_;      // the windows searched so far, in scan order
  std::vector<KnownChange> known_;
  Work work_;
};

// One analysis of a whole series (a fresh detector: append every point, analyse once).
ChangePointResult detect_change_points(std::string series_key, const std::vector<SeriesPoint>& points,
                                       const ChangePointOptions& options = {},
                                       std::vector<KnownChange> known = {});

}  // namespace cuzk::history
