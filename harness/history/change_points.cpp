// Change points of a results series (docs/history.md#change-points).
#include "harness/history/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <utility>

#include "harness/analysis/power.hpp"
#include "harness/analysis/stats.hpp"

namespace cuzk::history {

namespace {

constexpr size_t kAnySpan = static_cast<size_t>(-1);

// A window's test compares a split against the rest of its segment, which may hold other changes
// (a regression fixed a few commits later); candidates pass at this multiple of alpha, and the
// pruning then tests each against its neighbouring candidates at alpha (docs/history.md#algorithm).
constexpr double kCandidateAlphaFactor = 10;

// Noise or shifts below this many ln units (one part in a billion) are taken for the rounding of
// sums of ln values: a constant stretch must not split on the last bits of its sums.
constexpr double kRounding = 1e-9;

// The t-test from the summaries of two sides (ss: sum of squared deviations from the mean).
TTest pooled_t_test(size_t m, double mean_a, double ss_a, size_t n, double mean_b, double ss_b) {
  TTest r;
  r.diff = mean_b - mean_a;
  r.df = static_cast<double>(m) + static_cast<double>(n) - 2;
  if (m == 0 || n == 0 || r.df < 1) {
    r.se = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  const double pooled = std::max(0.0, ss_a + ss_b) / r.df;
  r.se = std::sqrt(pooled * (1.0 / static_cast<double>(m) + 1.0 / static_cast<double>(n)));
  if (std::sqrt(pooled) < kRounding) {
    // Constant sides (deterministic counts): a difference is certain, and one within rounding is
    // none (the sums of equal values differ in their last bits, and their ratio would be noise).
    const bool differ = std::fabs(r.diff) >= kRounding;
    r.t = differ ? std::copysign(std::numeric_limits<double>::infinity(), r.diff) : 0;
    r.p_value = differ ? 0 : 1;
    return r;
  }
  r.t = r.diff / r.se;
  // The lower tail at -|t| keeps small p-values precise (1 - cdf(|t|) would round them to 0).
  r.p_value = std::min(1.0, 2 * student_t_cdf(-std::fabs(r.t), r.df));
  return r;
}

uint64_t fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Direction direction_of(double diff, bool larger_is_worse) {
  return (diff > 0) == larger_is_worse ? Direction::kRegression : Direction::kImprovement;
}

// The sd of ln(median of `runs` values) whose relative sd is `spread`: the mean of two for two
// runs, the median's asymptotic sqrt(pi/2) sigma / sqrt(r) from three on.
double median_sd(double spread, int runs) {
  const double r = std::max(1, runs);
  return r <= 2 ? spread / std::sqrt(r) : spread * std::sqrt(std::numbers::pi / (2 * r));
}

}  // namespace

const char* direction_name(Direction d) { return d == Direction::kRegression ? "regression" : "improvement"; }

const char* pending_status_name(PendingStatus s) {
  switch (s) {
    case PendingStatus::kNeedsPoints: return "needs points";
    case PendingStatus::kBelowMagnitude: return "below magnitude";
    case PendingStatus::kOutOfReach: return "out of reach";
    case PendingStatus::kNoNoiseEstimate: return "no noise estimate";
  }
  return "?";
}

KnownChange known_change(const ChangePoint& c) { return {c.id, c.after_id, c.direction}; }

std::string change_point_id(std::string_view series_key, std::string_view point_id) {
  uint64_t h = fnv1a(0xcbf29ce484222325ULL, series_key);
  h = fnv1a(h, "\n");
  h = fnv1a(h, point_id);
  static const char* hex = "0123456789abcdef";
  std::string id = "cp-";
  for (int shift = 60; shift >= 0; shift -= 4) id.push_back(hex[(h >> shift) & 0xf]);
  return id;
}

// ---- the energy statistic ----

void EnergyTable::push(double y) {
  if (rows_.empty()) rows_.push_back({0.0});  // the empty prefix
  const size_t b = y_.size();  // the new value's index; its row is that of the prefix b + 1
  const size_t len = std::min(b + 1, span_) + 1;  // k = 0 .. min(b + 1, span)
  // within(a, b + 1) = within(a, b) + sum_{a <= i < b} |y_i - y|: one suffix sum, walking down.
  std::vector<double> row(len, 0.0);
  double to_new = 0;
  for (size_t k = 1; k < len; ++k) {
    const size_t a = b + 1 - k;  // row[k] = within(a, b + 1)
    const double prev = rows_[b][k - 1];  // within(a, b): k - 1 <= min(b, span)
    if (k >= 2) to_new += std::fabs(y_[a] - y);
    row[k] = prev + to_new;
  }
  y_.push_back(y);
  rows_.push_back(std::move(row));
}

double EnergyTable::within(size_t a, size_t b) const {
  if (b > y_.size() || a > b) throw std::out_of_range("EnergyTable::within: segment outside the series");
  if (b - a < 2) return 0;  // no pair
  if (b - a >= rows_[b].size())
    throw std::out_of_range("EnergyTable::within: segment outside the table's span");
  return rows_[b][b - a];
}

double EnergyTable::q(size_t begin, size_t tau, size_t end) const {
  const double m = static_cast<double>(tau - begin), n = static_cast<double>(end - tau);
  const double left = within(begin, tau), right = within(tau, end);
  const double cross = within(begin, end) - left - right;
  const double mean_left = m >= 2 ? left / (m * (m - 1) / 2) : 0.0;
  const double mean_right = n >= 2 ? right / (n * (n - 1) / 2) : 0.0;
  return m * n / (m + n) * (2 * cross / (m * n) - mean_left - mean_right);
}

std::optional<EnergySplit> EnergyTable::best(size_t begin, size_t end, size_t min_left, size_t min_right) const {
  if (end < begin || end - begin < min_left + min_right) return std::nullopt;
  std::optional<EnergySplit> top;
  for (size_t tau = begin + min_left; tau + min_right <= end; ++tau) {
    const double v = q(begin, tau, end);
    if (!top || v > top->q) top = EnergySplit{tau, v};
  }
  return top;
}

std::optional<EnergySplit> energy_best_split(const std::vector<double>& y, size_t begin, size_t end,
                                             size_t min_segment) {
  if (end > y.size() || begin > end) throw std::out_of_range("energy_best_split: segment outside the series");
  EnergyTable table(kAnySpan);
  for (size_t i = 0; i < end; ++i) table.push(y[i]);
  return table.best(begin, end, std::max<size_t>(min_segment, 1), std::max<size_t>(min_segment, 1));
}

TTest student_t_test(const std::vector<double>& a, const std::vector<double>& b) {
  auto summary = [](const std::vector<double>& v) {
    double mean = 0, ss = 0;
    for (double x : v) mean += x;
    if (!v.empty()) mean /= static_cast<double>(v.size());
    for (double x : v) ss += (x - mean) * (x - mean);
    return std::pair{mean, ss};
  };
  const auto [ma, sa] = summary(a);
  const auto [mb, sb] = summary(b);
  return pooled_t_test(a.size(), ma, sa, b.size(), mb, sb);
}

int points_needed_after(size_t before, double log_shift, double sd, double alpha, double power, size_t min_after) {
  const double shift = std::fabs(log_shift);
  if (before == 0 || !(shift > 0) || !(sd >= 0)) return -1;
  const double m = static_cast<double>(before);
  min_after = std::max<size_t>({min_after, 1, before >= 2 ? 1 : 3 - before});  // df >= 1
  auto reaches = [&](size_t n_after) {
    const double n = static_cast<double>(n_after), df = m + n - 2;
    const double needed = student_t_quantile(1 - alpha / 2, df) + student_t_quantile(power, df);
    return shift >= needed * sd * std::sqrt(1 / m + 1 / n);
  };
  // With endless points after, the test's statistic tends to shift sqrt(before) / sd and its
  // quantiles to the normal ones.
  const double limit = power::normal_quantile(1 - alpha / 2) + power::normal_quantile(power);
  if (sd > 0 && shift * std::sqrt(m) / sd < limit) return -1;
  if (reaches(min_after)) return static_cast<int>(min_after);
  constexpr size_t kMost = 10'000'000;
  size_t lo = min_after, hi = min_after;  // reaches(lo) is false; find a true hi
  while (!reaches(hi)) {
    lo = hi;
    if (hi >= kMost) return -1;
    hi = std::min(kMost, hi * 2);
  }
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    (reaches(mid) ? hi : lo) = mid;
  }
  return static_cast<int>(hi);
}

// ---- the detector ----

ChangePointDetector::ChangePointDetector(std::string series_key, ChangePointOptions options)
    : key_(std::move(series_key)), options_(options), energy_(options.window == 0 ? kAnySpan : options.window) {
  const auto& o = options_;
  if (!(o.alpha > 0 && o.alpha < 1)) throw std::invalid_argument("change points: alpha must be in (0, 1)");
  if (!(o.min_magnitude >= 0)) throw std::invalid_argument("change points: min_magnitude must be >= 0");
  if (o.min_segment < 2) throw std::invalid_argument("change points: min_segment must be >= 2");
  if (o.window != 0 && o.window < 2 * o.min_segment)
    throw std::invalid_argument("change points: window must be 0 or at least 2 * min_segment");
  if (!(o.level > 0 && o.level < 1)) throw std::invalid_argument("change points: level must be in (0, 1)");
  if (!(o.power >= 0.5 && o.power < 1)) throw std::invalid_argument("change points: power must be in [0.5, 1)");
}

void ChangePointDetector::remember(std::vector<KnownChange> known) { known_ = std::move(known); }

void ChangePointDetector::append(SeriesPoint point) {
  if (!(std::isfinite(point.value) && point.value > 0))
    throw std::invalid_argument("change points: point '" + point.id + "' has a value that is not finite and > 0");
  if (index_of_.count(point.id)) throw std::invalid_argument("change points: point '" + point.id + "' appears twice");
  const double y = y_.empty() ? 0.0 : std::log(point.value) - std::log(points_.front().value);
  index_of_.emplace(point.id, points_.size());
  points_.push_back(std::move(point));
  y_.push_back(y);
  energy_.push(y);
}

size_t ChangePointDetector::span() const { return options_.window == 0 ? kAnySpan : options_.window; }

// Two passes over the segment, not prefix sums of y and y^2: their difference loses the spread
// of a quiet segment to the rounding of the whole series' sums (about sqrt(n eps) of the level).
ChangePointDetector::SideStats ChangePointDetector::side(size_t a, size_t b) const {
  SideStats s;
  s.n = b - a;
  if (s.n == 0) return s;
  double sum = 0;
  for (size_t i = a; i < b; ++i) sum += y_[i];
  s.mean = sum / static_cast<double>(s.n);
  for (size_t i = a; i < b; ++i) s.ss += (y_[i] - s.mean) * (y_[i] - s.mean);
  return s;
}

TTest ChangePointDetector::test(size_t a, size_t tau, size_t b) const {
  const SideStats l = side(a, tau), r = side(tau, b);
  return pooled_t_test(l.n, l.mean, l.ss, r.n, r.mean, r.ss);
}

// Binary segmentation of one window: split each segment at its largest Q while the split passes
// the candidates' test, then split both parts the same way.
void ChangePointDetector::search(Window& w) const {
  const size_t k = options_.min_segment;
  const double candidate_alpha = std::min(1.0, kCandidateAlphaFactor * options_.alpha);
  std::vector<std::pair<size_t, size_t>> todo{{w.begin, w.end}};
  while (!todo.empty()) {
    const auto [s, e] = todo.back();
    todo.pop_back();
    const auto top = energy_.best(s, e, k, k);
    if (!top || !(test(s, top->index, e).p_value < candidate_alpha)) continue;
    w.splits.push_back(top->index);
    todo.emplace_back(s, top->index);
    todo.emplace_back(top->index, e);
  }
  std::sort(w.splits.begin(), w.splits.end());
}

// Windows of span() points from the series' start; the next starts half a window later, or at
// the last split found if that is later. Every window that ends before the series' end depends
// only on its own points, so it is kept across appends; only the one cut short by the end is
// searched again.
std::vector<size_t> ChangePointDetector::candidates() {
  const size_t n = points_.size();
  const size_t sp = span();
  const size_t step = sp == kAnySpan ? kAnySpan : std::max<size_t>(1, sp / 2);
  if (!windows_.empty()) {
    const Window& last = windows_.back();
    if (last.end != n && last.end - last.begin < sp) windows_.pop_back();
  }
  work_.windows_reused += windows_.size();
  auto next_start = [&](const Window& w) {
    const size_t half = w.begin + step;
    return std::max(w.splits.empty() ? w.begin : w.splits.back(), half);
  };
  if (n > 0 && (windows_.empty() || windows_.back().end != n)) {
    size_t start = windows_.empty() ? 0 : next_start(windows_.back());
    for (;;) {
      Window w;
      w.begin = start;
      w.end = n - start <= sp ? n : start + sp;
      search(w);
      ++work_.windows_searched;
      windows_.push_back(std::move(w));
      if (windows_.back().end == n) break;
      start = next_start(windows_.back());
    }
  }
  std::vector<size_t> all;
  for (const Window& w : windows_) all.insert(all.end(), w.splits.begin(), w.splits.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

// Removes candidates one at a time, each time the weakest, and tests its neighbours again:
// first any that leaves a segment shorter than min_segment, then the largest p-value while it is
// not below alpha, then the smallest magnitude while it is below min_magnitude, then (with a limit)
// the largest p-value while there are too many. Ties go to the smaller magnitude, then the later.
std::vector<size_t> ChangePointDetector::prune(std::vector<size_t> cps) const {
  const size_t n = points_.size();
  struct Judged {
    bool short_side;
    double p, magnitude;
    size_t index;
  };
  auto weaker = [](const Judged& a, const Judged& b) {  // true: a is weaker than b
    if (a.short_side != b.short_side) return a.short_side;
    if (a.p != b.p) return a.p > b.p;
    if (a.magnitude != b.magnitude) return a.magnitude < b.magnitude;
    return a.index > b.index;
  };
  while (!cps.empty()) {
    std::vector<Judged> judged;
    judged.reserve(cps.size());
    for (size_t i = 0; i < cps.size(); ++i) {
      const size_t a = i == 0 ? 0 : cps[i - 1], b = i + 1 == cps.size() ? n : cps[i + 1];
      const TTest t = test(a, cps[i], b);
      judged.push_back({cps[i] - a < options_.min_segment || b - cps[i] < options_.min_segment, t.p_value,
                        std::fabs(std::expm1(t.diff)), cps[i]});
    }
    size_t weakest = 0, smallest = 0;
    for (size_t i = 1; i < judged.size(); ++i) {
      if (weaker(judged[i], judged[weakest])) weakest = i;
      const auto& s = judged[smallest];
      if (judged[i].magnitude < s.magnitude || (judged[i].magnitude == s.magnitude && judged[i].index > s.index))
        smallest = i;
    }
    size_t drop;
    if (judged[weakest].short_side || !(judged[weakest].p < options_.alpha))
      drop = weakest;
    else if (judged[smallest].magnitude < options_.min_magnitude)
      drop = smallest;
    else if (options_.max_change_points != 0 && cps.size() > options_.max_change_points)
      drop = weakest;
    else
      break;
    cps.erase(cps.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  return cps;
}

ChangePoint ChangePointDetector::describe(size_t begin, size_t index, size_t end) const {
  ChangePoint c;
  c.index = index;
  c.before_id = points_[index - 1].id;
  c.after_id = points_[index].id;
  c.segment_begin = begin;
  c.segment_end = end;
  std::vector<double> before, after;
  for (size_t i = begin; i < index; ++i) before.push_back(points_[i].value);
  for (size_t i = index; i < end; ++i) after.push_back(points_[i].value);
  c.median_before = median(before);
  c.median_after = median(after);
  const TTest t = test(begin, index, end);
  c.ratio = std::exp(t.diff);
  c.t = t.t;
  c.p_value = t.p_value;
  if (t.df >= 1) {
    const double half = student_t_quantile((1 + options_.level) / 2, t.df) * t.se;
    c.ratio_low = std::exp(t.diff - half);
    c.ratio_high = std::exp(t.diff + half);
  } else {
    c.ratio_low = c.ratio_high = std::numeric_limits<double>::quiet_NaN();
  }
  c.direction = direction_of(t.diff, options_.larger_is_worse);
  return c;
}

double ChangePointDetector::spread_noise(size_t a, size_t b) const {
  std::vector<double> sds;
  for (size_t i = a; i < b; ++i)
    if (std::isfinite(points_[i].spread) && points_[i].spread >= 0)
      sds.push_back(median_sd(points_[i].spread, points_[i].runs));
  return median(sds);  // NaN when no point has a spread
}

// The newest segment's best split, searched over its last span() points (where new points
// change anything) with min_segment points before it where there are that many, and any number
// after it: the shift that more points would turn into a change.
std::optional<PendingShift> ChangePointDetector::pending(size_t begin) const {
  const size_t n = points_.size();
  const size_t from = n - begin > span() ? n - span() : begin;
  const size_t min_left = n - from >= options_.min_segment + 1 ? options_.min_segment : 1;
  const auto top = energy_.best(from, n, min_left, 1);
  if (!top) return std::nullopt;
  PendingShift p;
  p.index = top->index;
  p.points_before = top->index - begin;
  p.points_after = n - top->index;
  const SideStats l = side(begin, top->index), r = side(top->index, n);
  const TTest t = pooled_t_test(l.n, l.mean, l.ss, r.n, r.mean, r.ss);
  p.ratio = std::exp(t.diff);
  p.p_value = t.p_value;
  p.direction = direction_of(t.diff, options_.larger_is_worse);
  p.noise = t.df >= 2 ? std::sqrt((l.ss + r.ss) / t.df) : spread_noise(begin, n);
  if (std::fabs(std::expm1(t.diff)) < options_.min_magnitude || t.diff == 0) {
    p.status = PendingStatus::kBelowMagnitude;
  } else if (!std::isfinite(p.noise)) {
    p.status = PendingStatus::kNoNoiseEstimate;
  } else {
    const int total = points_needed_after(p.points_before, t.diff, p.noise, options_.alpha, options_.power,
                                          std::max(options_.min_segment, p.points_after));
    if (total < 0) {
      p.status = PendingStatus::kOutOfReach;
    } else {
      p.status = PendingStatus::kNeedsPoints;
      p.points_needed = total - static_cast<int>(p.points_after);
    }
  }
  return p;
}

// Identity (docs/history.md#identity): a known change at the same point and of the same direction
// gives its id first; then one at distance 1, 2, .. match_distance (the earlier point first);
// the rest get change_point_id(key, after_id), with "#2", "#3", .. appended to the point id when
// a kept id already holds that value.
void ChangePointDetector::assign_ids(std::vector<ChangePoint>& changes) const {
  struct Prior {
    const KnownChange* known;
    size_t index;
    bool used = false;
  };
  std::vector<Prior> prior;
  for (const KnownChange& k : known_)
    if (auto it = index_of_.find(k.point_id); it != index_of_.end()) prior.push_back({&k, it->second});
  std::vector<bool> named(changes.size(), false);
  auto take = [&](size_t ci, size_t at) {
    for (Prior& p : prior)
      if (!p.used && p.index == at && p.known->direction == changes[ci].direction) {
        p.used = true;
        changes[ci].id = p.known->id;
        named[ci] = true;
        return true;
      }
    return false;
  };
  for (size_t ci = 0; ci < changes.size(); ++ci) take(ci, changes[ci].index);
  for (size_t d = 1; d <= options_.match_distance; ++d)
    for (size_t ci = 0; ci < changes.size(); ++ci)
      if (!named[ci]) {
        const size_t at = changes[ci].index;
        if (!(at >= d && take(ci, at - d))) take(ci, at + d);
      }
  auto in_use = [&](const std::string& id) {
    for (size_t ci = 0; ci < changes.size(); ++ci)
      if (named[ci] && changes[ci].id == id) return true;
    return false;
  };
  for (size_t ci = 0; ci < changes.size(); ++ci) {
    if (named[ci]) continue;
    std::string id = change_point_id(key_, changes[ci].after_id);
    for (int k = 2; in_use(id); ++k) id = change_point_id(key_, changes[ci].after_id + "#" + std::to_string(k));
    changes[ci].id = std::move(id);
    named[ci] = true;
  }
}

ChangePointResult ChangePointDetector::analyse() {
  ChangePointResult r;
  const std::vector<size_t> cps = prune(candidates());
  const size_t n = points_.size();
  for (size_t i = 0; i < cps.size(); ++i)
    r.changes.push_back(describe(i == 0 ? 0 : cps[i - 1], cps[i], i + 1 == cps.size() ? n : cps[i + 1]));
  assign_ids(r.changes);
  if (n >= 2) r.pending = pending(cps.empty() ? 0 : cps.back());
  known_.clear();
  for (const ChangePoint& c : r.changes) known_.push_back(known_change(c));
  return r;
}

ChangePointResult detect_change_points(std::string series_key, const std::vector<SeriesPoint>& points,
                                       const ChangePointOptions& options, std::vector<KnownChange> known) {
  ChangePointDetector d(std::move(series_key), options);
  d.remember(std::move(known));
  for (const SeriesPoint& p : points) d.append(p);
  return d.analyse();
}

}  // namespace cuzk::history
