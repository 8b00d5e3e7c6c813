// `compare`, cost accounting: where a parent phase's change comes from (docs/compare.md).
//
// In one sample, a parent's wall time is the sum of its direct children's wall times, minus the
// time two or more children ran at once (counted in each of them: msm_b_g2 on its own thread
// beside the GPU phases, the synthesis partitions on the pool), plus the parent's own time that
// no child covers:
//
//     parent = sum(children) - overlap + remainder
//
// The overlap comes from the spans the sample recorded (each child's intervals, clipped to the
// parent's). A side without complete spans has overlap 0: its children are taken as serial, and
// the accounting says so. A child one side does not have costs 0 there.
//
// Between the sides, each term is the change of its median (per-process medians under the block
// design; under the paired design the mean over rounds of the per-round medians, as the rows), so a child's term is the change its own row shows; the remainder is what
// is left of the parent's change, and so also holds what medians do not add up to. Each term's CI
// comes from one bootstrap: the observations of each side are resampled together (every phase of
// a resampled sample goes with it), and all terms are computed from the same resample; under the
// paired design whole rounds are resampled, the same ones on both sides.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "harness/analysis/compare_detail.hpp"
#include "harness/measure/phases.hpp"
#include "harness/analysis/stats.hpp"

namespace cuzk::compare_detail {
namespace {

struct Interval {
  double start, end;
};

// Merges intervals in place and returns their total length.
double union_length(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& x, const Interval& y) { return x.start < y.start; });
  double total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& iv : v) {
    if (!open || iv.start > cur_e) {
      if (open) total += cur_e - cur_s;
      cur_s = iv.start;
      cur_e = iv.end;
      open = true;
    } else {
      cur_e = std::max(cur_e, iv.end);
    }
  }
  if (open) total += cur_e - cur_s;
  return total;
}

std::vector<Interval> clip(const Interval& x, const std::vector<Interval>& within) {
  std::vector<Interval> out;
  for (const auto& w : within) {
    const double s = std::max(x.start, w.start), e = std::min(x.end, w.end);
    if (e > s) out.push_back({s, e});
  }
  return out;
}

// What one sample says about a parent: the overlapped time of its children, and which children
// ran on another thread than the parent's. Only meaningful when the sample's spans are complete.
struct SampleOverlap {
  double overlap = 0;
  std::vector<bool> concurrent;  // per child
};

SampleOverlap overlap_of(const SampleRecord& rec, const std::string& parent, const std::vector<std::string>& children) {
  SampleOverlap r;
  r.concurrent.assign(children.size(), false);
  std::vector<Interval> parent_iv;
  int64_t parent_tid = 0;
  for (const auto& sp : rec.spans)
    if (sp.path == parent) {
      if (parent_iv.empty()) parent_tid = sp.tid;
      parent_iv.push_back({sp.start, sp.end});
    }
  if (parent_iv.empty()) return r;
  std::vector<Interval> all;
  double sum = 0;
  for (const auto& sp : rec.spans) {
    auto it = std::find(children.begin(), children.end(), sp.path);
    if (it == children.end()) continue;
    if (sp.tid != parent_tid) r.concurrent[static_cast<size_t>(it - children.begin())] = true;
    for (const auto& iv : clip({sp.start, sp.end}, parent_iv)) {
      all.push_back(iv);
      sum += iv.end - iv.start;
    }
  }
  r.overlap = std::max(0.0, sum - union_length(all));
  return r;
}

// One side's observations of a parent: rows of [parent, child 1..k, overlap].
struct SideTable {
  std::vector<std::vector<double>> rows;
  bool spans = true;                    // every sample had complete spans
  std::vector<size_t> concurrent_count;  // per child: samples in which it ran on another thread
  size_t samples = 0;
};

SideTable side_table(const CaseData& cd, const std::string& parent, const std::vector<std::string>& children,
                     const CaseDesign& design) {
  SideTable t;
  t.concurrent_count.assign(children.size(), 0);
  for (const auto& rec : cd.records) t.spans = t.spans && rec.spans_complete;
  std::vector<std::vector<double>> per_sample;
  std::vector<std::string> process;
  std::vector<int64_t> round;
  for (const auto& rec : cd.records) {
    std::vector<double> row;
    auto wall = [&](const std::string& p) {
      auto it = rec.wall.find(p);
      return it == rec.wall.end() ? 0.0 : it->second;
    };
    row.push_back(wall(parent));
    for (const auto& ch : children) row.push_back(wall(ch));
    double overlap = 0;
    if (t.spans) {
      SampleOverlap so = overlap_of(rec, parent, children);
      overlap = so.overlap;
      for (size_t i = 0; i < children.size(); ++i) t.concurrent_count[i] += so.concurrent[i];
    }
    row.push_back(overlap);
    per_sample.push_back(std::move(row));
    process.push_back(rec.process);
    round.push_back(rec.round);
  }
  t.samples = per_sample.size();
  if (design.design == Design::kSamples) {
    t.rows = std::move(per_sample);
    return t;
  }
  // Block design: each process's median, column by column; paired: each round's median, in the
  // order of design.rounds (the rounds both sides have), so that row i of A and of B is one round.
  std::map<std::string, std::vector<size_t>> by;
  if (design.design == Design::kPaired) {
    std::map<int64_t, std::vector<size_t>> by_round;
    for (size_t i = 0; i < round.size(); ++i) by_round[round[i]].push_back(i);
    for (size_t k = 0; k < design.rounds.size(); ++k)
      by[fmt::format("{:020}", k)] = by_round[design.rounds[k]];
  } else {
    for (size_t i = 0; i < process.size(); ++i) by[process[i]].push_back(i);
  }
  const size_t cols = children.size() + 2;
  for (const auto& [id, idx] : by) {
    std::vector<double> row(cols);
    for (size_t c = 0; c < cols; ++c) {
      std::vector<double> v;
      for (size_t i : idx) v.push_back(per_sample[i][c]);
      row[c] = median(v);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

// Each column's centre: the median, or under the paired design the mean over rounds, as the
// paired rows' change is the mean per-round difference (and means add up exactly).
std::vector<double> column_centres(const std::vector<std::vector<double>>& rows, size_t cols, bool mean) {
  std::vector<double> out(cols);
  std::vector<double> v(rows.size());
  for (size_t c = 0; c < cols; ++c) {
    double sum = 0;
    for (size_t i = 0; i < rows.size(); ++i) sum += v[i] = rows[i][c];
    out[c] = mean ? sum / static_cast<double>(rows.size()) : median(v);
  }
  return out;
}

// Terms from the column medians of both sides: [parent, child 1..k, -overlap, remainder].
std::vector<double> terms_of(const std::vector<double>& ma, const std::vector<double>& mb) {
  const size_t k = ma.size() - 2;
  std::vector<double> t(k + 3);
  t[0] = mb[0] - ma[0];
  double explained = 0;
  for (size_t i = 0; i < k; ++i) {
    t[i + 1] = mb[i + 1] - ma[i + 1];
    explained += t[i + 1];
  }
  t[k + 1] = -(mb[k + 1] - ma[k + 1]);
  explained += t[k + 1];
  t[k + 2] = t[0] - explained;
  return t;
}

}  // namespace

std::vector<Accounting> account_case(const CaseData& a, const CaseData& b, const CaseDesign& design,
                                     const CompareOptions& o) {
  const bool paired = design.design == Design::kPaired;
  std::vector<Accounting> out;
  if (a.records.empty() || b.records.empty()) return out;
  std::set<std::string> phases;
  for (const auto& [p, d] : a.phases) phases.insert(p);
  for (const auto& [p, d] : b.phases) phases.insert(p);
  for (const auto& parent : phases) {
    if (!a.phases.count(parent) || !b.phases.count(parent)) continue;
    std::vector<std::string> children;
    for (const auto& p : phases)
      if (is_direct_child(parent, p)) children.push_back(p);
    if (children.empty()) continue;
    const SideTable ta = side_table(a, parent, children, design), tb = side_table(b, parent, children, design);
    if (ta.rows.empty() || tb.rows.empty()) continue;
    Accounting acc;
    acc.suite = a.suite;
    acc.case_name = a.case_name;
    acc.params = a.params;
    acc.parent = parent;
    acc.unit = paired ? "rounds" : design.design == Design::kBlocks ? "processes" : "samples";
    acc.observations_a = ta.rows.size();
    acc.observations_b = tb.rows.size();
    acc.overlap_measured = ta.spans && tb.spans;
    const size_t cols = children.size() + 2;
    const std::vector<double> ma = column_centres(ta.rows, cols, paired), mb = column_centres(tb.rows, cols, paired);
    const std::vector<double> point = terms_of(ma, mb);

    // One bootstrap for every term (rows resampled whole, each side on its own; paired: whole
    // rounds, the same rounds on both sides).
    std::mt19937_64 rng(o.bootstrap_seed);
    std::uniform_int_distribution<size_t> pa(0, ta.rows.size() - 1), pb(0, tb.rows.size() - 1);
    std::vector<std::vector<double>> draws(point.size());
    std::vector<std::vector<double>> ra(ta.rows.size()), rb(tb.rows.size());
    for (int i = 0; i < o.bootstrap_resamples; ++i) {
      if (paired) {
        for (size_t k = 0; k < ra.size(); ++k) {
          const size_t pick = pa(rng);
          ra[k] = ta.rows[pick];
          rb[k] = tb.rows[pick];
        }
      } else {
        for (auto& r : ra) r = ta.rows[pa(rng)];
        for (auto& r : rb) r = tb.rows[pb(rng)];
      }
      const std::vector<double> t = terms_of(column_centres(ra, cols, paired), column_centres(rb, cols, paired));
      for (size_t j = 0; j < t.size(); ++j) draws[j].push_back(t[j]);
    }
    const double tail = (1.0 - o.ci_level) / 2.0;
    auto ci = [&](size_t j) { return std::pair{quantile(draws[j], tail), quantile(draws[j], 1.0 - tail)}; };
    auto significant = [](double lo, double hi) { return lo > 0 || hi < 0; };

    acc.median_a = ma[0];
    acc.median_b = mb[0];
    acc.delta = point[0];
    std::tie(acc.ci_low, acc.ci_high) = ci(0);
    acc.significant = significant(acc.ci_low, acc.ci_high);
    for (size_t i = 0; i < children.size(); ++i) {
      AccountingTerm t;
      t.kind = "child";
      t.phase = children[i];
      if (!a.phases.count(children[i])) t.only_in = Side::kB;
      if (!b.phases.count(children[i])) t.only_in = Side::kA;
      t.median_a = ma[i + 1];
      t.median_b = mb[i + 1];
      t.delta = point[i + 1];
      std::tie(t.ci_low, t.ci_high) = ci(i + 1);
      t.significant = significant(t.ci_low, t.ci_high);
      t.concurrent = acc.overlap_measured && (2 * ta.concurrent_count[i] >= std::max<size_t>(1, ta.samples) ||
                                              2 * tb.concurrent_count[i] >= std::max<size_t>(1, tb.samples));
      acc.terms.push_back(t);
    }
    std::stable_sort(acc.terms.begin(), acc.terms.end(),
                     [](const AccountingTerm& x, const AccountingTerm& y) { return std::fabs(x.delta) > std::fabs(y.delta); });
    const size_t k = children.size();
    AccountingTerm ov;
    ov.kind = "overlap";
    ov.median_a = ma[k + 1];
    ov.median_b = mb[k + 1];
    ov.delta = point[k + 1];
    std::tie(ov.ci_low, ov.ci_high) = ci(k + 1);
    ov.significant = significant(ov.ci_low, ov.ci_high);
    if (acc.overlap_measured && (ov.median_a > 0 || ov.median_b > 0)) acc.terms.push_back(ov);
    AccountingTerm rest;
    rest.kind = "remainder";
    rest.delta = point[k + 2];
    std::tie(rest.ci_low, rest.ci_high) = ci(k + 2);
    rest.significant = significant(rest.ci_low, rest.ci_high);
    acc.terms.push_back(rest);
    out.push_back(std::move(acc));
  }
  return out;
}

}  // namespace cuzk::compare_detail
