// `compare`, the summary paragraph that opens each case (docs/compare.md): the significant
// changes by absolute size, then the end-to-end phase's verdict with its CI, then, when that
// verdict is "too noisy", how many observations per side calibrate's formula says would settle
// it with this run's spread (paired design: how many rounds, from the sd of the per-round log
// ratios).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "harness/measure/clock.hpp"
#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/power.hpp"

namespace cuzk::compare_detail {
namespace {

constexpr size_t kListed = 5;    // significant changes named in the paragraph
constexpr double kPower = 0.90;  // as calibrate's default

bool is_change(const PhaseComparison& r) {
  return r.verdict == "faster" || r.verdict == "slower" || r.only_in.has_value();
}

// "proof/prove/h2d -70.2 ms (-33.3%, GPU time)", "proof/prove/pin_abc +90.4 ms (only in B)".
std::string change_text(const PhaseComparison& r) {
  std::string what = r.only_in ? only_in_text(*r.only_in) : output::change_pct(r.ratio);
  if (r.metric == "gpu_ns") what += ", GPU time";
  if (r.metric == "gpu_kernel_ns") what += ", GPU kernel time";
  if (!is_time_metric(r.metric)) what += ", " + r.metric;
  return fmt::format("{} {} ({})", r.phase, signed_value_text(r.metric, r.delta), what);
}

// The case's end-to-end phase: "proof" when present, else the root phase with the largest
// median. nullptr when no phase is a root (Google Benchmark names, or none).
const PhaseComparison* end_to_end(const std::vector<const PhaseComparison*>& rows) {
  const PhaseComparison* best = nullptr;
  for (const auto* r : rows) {
    if (!r->primary || r->kind != "phase" || r->phase.find('/') != std::string::npos || r->only_in.has_value()) continue;
    if (r->phase == "proof") return r;
    if (!best || r->median_a > best->median_a) best = r;
  }
  return best;
}

double robust_cv(double mad, double med) { return med > 0 ? 1.4826 * mad / med : 0; }

// " Under load: request p99 4.210 s -> 6.030 s (+43.2%): slower; throughput 0.512/s -> 0.431/s
// (time between completions +18.8%): slower." The load rows (load_rows.hpp) in a sentence of
// their own, since they are not phases.
std::string load_sentence(const std::vector<const PhaseComparison*>& rows) {
  std::string s;
  for (const auto* r : rows) {
    if (r->kind == "phase") continue;
    const std::string change = std::isfinite(r->ratio) ? output::change_pct(r->ratio) : "n/a";
    s += fmt::format("{}{} {} -> {} ({}{}): {}", s.empty() ? "" : "; ",
                     r->kind == "throughput" ? std::string(r->metric) : r->phase + " " + r->metric,
                     value_text(r->metric, r->median_a), value_text(r->metric, r->median_b),
                     r->kind == "throughput" ? "time between completions " : "", change, r->verdict);
  }
  return s.empty() ? s : " Under load: " + s + ".";
}

}  // namespace

CaseSummary summarize_case(const Comparison& c, const std::string& suite, const std::string& case_name,
                           const std::string& params, const CompareOptions& o) {
  CaseSummary s;
  s.suite = suite;
  s.case_name = case_name;
  s.params = params;
  std::vector<const PhaseComparison*> rows;
  for (const auto& r : c.rows)
    if (r.suite == suite && r.case_name == case_name && r.params == params) rows.push_back(&r);
  const PhaseComparison* e2e = end_to_end(rows);
  if (e2e) {
    s.end_to_end = e2e->phase;
    s.verdict = e2e->verdict;
  }

  // Changes that stand when every phase compared is allowed for, then those that may be chance.
  std::vector<const PhaseComparison*> changes, maybe;
  size_t others = 0, family = 0;
  for (const auto* r : rows) {
    if (!r->primary || r->kind != "phase" || r == e2e) continue;
    family = r->family;
    if (!is_change(*r)) ++others;
    else (r->change_stands() ? changes : maybe).push_back(r);
  }
  auto by_size = [](const auto* x, const auto* y) { return std::fabs(x->delta) > std::fabs(y->delta); };
  std::stable_sort(changes.begin(), changes.end(), by_size);
  std::stable_sort(maybe.begin(), maybe.end(), by_size);

  std::string text = fmt::format("{} against {}", c.label_b, c.label_a);
  if (e2e) text += e2e->unit == "rounds" ? fmt::format(", {} rounds", e2e->observations_b) : fmt::format(", {} {} per side", e2e->observations_b, e2e->unit);
  text += ": ";
  auto list = [](const std::vector<const PhaseComparison*>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < kListed; ++i) s += (i ? "; " : "") + change_text(*v[i]);
    if (v.size() > kListed) s += fmt::format("; and {} more", v.size() - kListed);
    return s;
  };
  if (changes.empty() && maybe.empty()) text += "no phase changed significantly";
  if (!changes.empty()) text += "significant changes, largest first: " + list(changes);
  if (!maybe.empty())
    text += fmt::format("{}significant alone, but may be chance among the {} phases compared (the CI widened for "
                        "{} comparisons includes no change): {}",
                        changes.empty() ? "" : ". Also ", family, family, list(maybe));
  text += others ? fmt::format(" ({} other phase{} unchanged or too noisy).", others, others == 1 ? "" : "s") : ".";

  if (e2e) {
    const PhaseComparison& r = *e2e;
    std::string ci = std::isnan(r.ci_low) ? "CI undefined"
                                          : fmt::format("95% CI [{}, {}]", output::change_pct(r.ci_low), output::change_pct(r.ci_high));
    text += fmt::format(" End to end, {}{} went {} -> {}: {} ({}, {}): {}.", r.phase,
                        is_time_metric(r.metric) ? "" : " (" + r.metric + ")", value_text(r.metric, r.median_a),
                        value_text(r.metric, r.median_b), signed_value_text(r.metric, r.delta), output::change_pct(r.ratio), ci,
                        r.verdict);
    // Where the exact test's floor, not the spread, sets the number (power::min_runs_rank_test,
    // min_rounds_signed_rank): `per` is "rounds" or "<unit> per side".
    auto floor_sentence = [&](const std::string& per, size_t now, const char* test, const char* why) {
      return fmt::format(
          " To call a change of this size ({}) {} would take at least {} {} (now {}): with fewer, the exact {} "
          "test's p-value cannot fall below alpha {:g}, {}.",
          output::change_pct(r.ratio), r.ratio > 1 ? "slower" : "faster", s.rounds_needed, per, now, test, o.alpha, why);
    };
    if (r.verdict == "too noisy" && r.unit == "rounds" && r.log_ratios && std::isfinite(r.sd_log_ratio)) {
      const double e = std::fabs(std::log(r.ratio));
      s.rounds_needed = power::paired_rounds_needed(r.ratio, r.sd_log_ratio, o.alpha, kPower, r.threshold);
      if (s.rounds_needed < 0)
        text += fmt::format(" The change sits at the {:g}% threshold: no number of rounds settles it.", 100 * r.threshold);
      else if (e > std::log1p(r.threshold) && s.rounds_needed == power::min_rounds_signed_rank(o.alpha) &&
               r.observations_a < size_t(s.rounds_needed))
        text += floor_sentence("rounds", r.observations_a, "signed-rank", "however steady the rounds");
      else
        text += fmt::format(
            " To {} with 90% power would take about {} rounds (now {}; the paired formula with this run's sd of the "
            "per-round log ratios, {:.2f}%).",
            e > std::log1p(r.threshold) ? fmt::format("call a change of this size ({}) {}", output::change_pct(r.ratio),
                                                      r.ratio > 1 ? "slower" : "faster")
                                        : fmt::format("show it within the {:g}% threshold (unchanged)", 100 * r.threshold),
            s.rounds_needed, r.observations_a, 100 * r.sd_log_ratio);
    } else if (r.verdict == "too noisy" && r.median_a > 0) {
      const double cv_a = robust_cv(r.mad_a, r.median_a), cv_b = robust_cv(r.mad_b, r.median_b);
      const double cv = std::sqrt((cv_a * cv_a + cv_b * cv_b) / 2);
      const double effect = std::fabs(r.ratio - 1);
      const size_t now = std::min(r.observations_a, r.observations_b);
      if (effect > r.threshold) {
        s.rounds_needed = power::runs_needed(effect, cv, o.alpha, kPower, r.threshold);
        if (s.rounds_needed == power::min_runs_rank_test(o.alpha) && now < size_t(s.rounds_needed))
          text += floor_sentence(r.unit + " per side", now, "rank", "however small the spread");
        else
          text += fmt::format(
            " To call a change of this size ({}) {} with 90% power would take about {} {} per side (now {}; "
            "calibrate's formula with this run's spread, cv {:.1f}%).",
            output::change_pct(r.ratio), r.ratio > 1 ? "slower" : "faster", s.rounds_needed, r.unit, now, 100 * cv);
      } else {
        s.rounds_needed = power::runs_to_rule_out(effect, cv, o.alpha, kPower, r.threshold);
        if (s.rounds_needed < 0)
          text += fmt::format(" The change sits at the {:g}% threshold: no number of {} settles it.",
                              100 * r.threshold, r.unit);
        else
          text += fmt::format(
              " To show it within the {:g}% threshold (unchanged) with 90% power would take about {} {} per side "
              "(now {}; calibrate's formula with this run's spread, cv {:.1f}%).",
              100 * r.threshold, s.rounds_needed, r.unit, now, 100 * cv);
      }
    }
  }
  s.text = text + load_sentence(rows);
  return s;
}

}  // namespace cuzk::compare_detail
