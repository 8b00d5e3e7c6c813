// The summary paragraph of a matrix case (matrix_detail.hpp): the end-to-end change, each flag's
// (or variant's) effect on it and the phase where most of it lands, the interactions, and what the
// design could have found.
#include <fmt/core.h>

#include <cmath>

#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/matrix_detail.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/power.hpp"

namespace cuzk::matrix::detail {
namespace {

using compare_detail::signed_ns;

bool is_parent_of(const std::string& parent, const std::string& child) {
  return child.size() > parent.size() && child.compare(0, parent.size(), parent) == 0 && child[parent.size()] == '/' &&
         child.find('/', parent.size() + 1) == std::string::npos;
}

// Where a change lands: the phase (other than the root) with the largest significant change in
// time, then, while exactly one of its children carries at least half of it in the same direction,
// that child (when several do, as partitions synthesized side by side, the parent says it best). `size` gives a phase's significant change in ns (NaN: none).
template <class SizeOf>
std::string where_it_lands(const CaseAttribution& k, const std::string& root, SizeOf size, double& out_ns) {
  const PhaseAttribution* best = nullptr;
  double best_ns = 0;
  for (const auto& p : k.phases) {
    if (p.phase == root) continue;
    const double s = size(p);
    if (std::isfinite(s) && std::fabs(s) > std::fabs(best_ns)) {
      best = &p;
      best_ns = s;
    }
  }
  if (!best) return "";
  for (bool moved = true; moved;) {
    moved = false;
    const PhaseAttribution* only = nullptr;
    int carriers = 0;  // several children each carrying half: the change is spread (partitions in parallel)
    for (const auto& p : k.phases) {
      if (!is_parent_of(best->phase, p.phase)) continue;
      const double s = size(p);
      if (std::isfinite(s) && s * best_ns > 0 && std::fabs(s) >= 0.5 * std::fabs(best_ns)) {
        only = &p;
        ++carriers;
      }
    }
    if (carriers == 1) {
      best = only;
      best_ns = size(*only);
      moved = true;
    }
  }
  out_ns = best_ns;
  return best->phase;
}

const EffectRow* effect_on(const PhaseAttribution& p, const std::string& name) {
  for (const auto& e : p.effects)
    if (e.effect.name == name) return &e;
  return nullptr;
}

const VariantCell* cell_on(const PhaseAttribution& p, const std::string& name) {
  for (const auto& c : p.variants)
    if (c.name == name) return &c;
  return nullptr;
}

bool cell_changed(const VariantCell& c) {
  if (c.verdict == "faster" || c.verdict == "slower") return true;
  if (c.verdict == "only in A" || c.verdict == "only in B") return c.delta_low > 0 || c.delta_high < 0;
  return false;
}

std::string factorial_summary(const Attribution& a, const Input& in, const CaseAttribution& k) {
  const std::string root = root_phase(k);
  const PhaseAttribution* rp = nullptr;
  for (const auto& p : k.phases)
    if (p.phase == root) rp = &p;
  if (!rp) return "No phase to attribute.";
  std::string text;
  // End to end: the variant with every flag on against the baseline.
  for (const auto& v : in.variants) {
    if (std::find(v.flags.begin(), v.flags.end(), false) != v.flags.end()) continue;
    if (const VariantCell* c = cell_on(*rp, v.name))
      text += std::isfinite(c->ratio)
                  ? fmt::format("{} {} with every flag on ({}) against {}: {}.", root, ratio_ci(c->ratio, c->low, c->high),
                                v.name, a.baseline, c->verdict)
                  : fmt::format("{} with every flag on ({}): {}.", root, v.name, c->verdict);
  }
  if (!rp->fx) return text + fmt::format(" No factorial analysis of {}: {}.", root, rp->fx_note);
  // Each flag on the root, and where it lands.
  std::string flags;
  for (size_t f = 0; f < a.flags.size(); ++f) {
    const std::string& name = a.flags[f];
    const EffectRow* e = effect_on(*rp, name);
    if (!e) continue;
    auto size_of = [&](const PhaseAttribution& p) {
      if (p.only_with.size() == 1 && p.only_with[0] == name) return p.only_cost;
      const EffectRow* pe = effect_on(p, name);
      return pe && pe->effect.significant ? pe->delta_ns : NAN;
    };
    double ns = 0;
    const std::string lands = where_it_lands(k, root, size_of, ns);
    std::string s = name + " ";
    if (e->effect.significant) {
      s += ratio_ci(e->effect.ratio, e->effect.low, e->effect.high);
      if (!lands.empty()) s += fmt::format(" (mostly {} {})", short_phase(lands, root), signed_ns(ns));
    } else {
      s += output::change_pct(e->effect.ratio) + " (n.s.";
      if (!lands.empty()) s += fmt::format("; {} {}", short_phase(lands, root), signed_ns(ns));
      s += ")";
    }
    flags += (flags.empty() ? "" : ", ") + s;
  }
  text += " By flag, on " + root + ": " + flags + ".";
  // Interactions: the significant ones anywhere, else a statement of none.
  std::string inter;
  for (const auto& p : k.phases)
    for (const auto& e : p.effects)
      if (e.effect.order == 2 && e.effect.significant)
        inter += (inter.empty() ? "" : ", ") +
                 fmt::format("{} {} on {}", e.effect.name, ratio_ci(e.effect.ratio, e.effect.low, e.effect.high),
                             short_phase(p.phase, root));
  if (a.flags.size() >= 2) {
    if (inter.empty())
      text += fmt::format(" Interactions: none found (on {}, one of {} would be found with 90% power).", root,
                          output::change_pct(rp->fx->mde_interaction_ratio));
    else
      text += " Interactions: " + inter + ".";
  }
  text += fmt::format(" Noise is {:.0f}% of {}'s variation; a flag's effect of {} would be found with 90% power.",
                      100 * rp->fx->share_noise, root, output::change_pct(rp->fx->mde_main_ratio));
  return text;
}

// Said where the rounds are too few for any verdict of change (power::rank_test_smallest_p).
std::string too_few_rounds(const Attribution& a, const Input& in) {
  const int need = power::min_runs_rank_test(in.compare.alpha);
  if (a.rounds == 0 || a.rounds >= size_t(need)) return "";
  return fmt::format(
      " With {} round{} no change can be called: the exact rank test's smallest p with {} value{} a side is {:.2g}, "
      "above alpha {:g}; it takes at least {} rounds.",
      a.rounds, a.rounds == 1 ? "" : "s", a.rounds, a.rounds == 1 ? "" : "s",
      power::rank_test_smallest_p(static_cast<int>(a.rounds)), in.compare.alpha, need);
}

std::string variants_summary(const Attribution& a, const Input& in, const CaseAttribution& k) {
  const std::string root = root_phase(k);
  const PhaseAttribution* rp = nullptr;
  for (const auto& p : k.phases)
    if (p.phase == root) rp = &p;
  if (!rp) return "No phase to compare.";
  std::string s;
  for (const auto& c : rp->variants) {
    std::string one = c.name + " ";
    one += std::isfinite(c.ratio) ? ratio_ci(c.ratio, c.low, c.high) + " " + c.verdict : c.verdict;
    auto size_of = [&](const PhaseAttribution& p) {
      const VariantCell* pc = cell_on(p, c.name);
      return pc && cell_changed(*pc) ? pc->delta : NAN;
    };
    double ns = 0;
    const std::string lands = where_it_lands(k, root, size_of, ns);
    if (!lands.empty()) one += fmt::format(" ({} {} {})", cell_changed(c) ? "mostly" : "yet", short_phase(lands, root), signed_ns(ns));
    if (c.verdict == "too noisy" && c.rounds_needed > 0)
      one += fmt::format(", about {} rounds would settle it", c.rounds_needed);
    s += (s.empty() ? "" : "; ") + one;
  }
  return fmt::format("{} against {}: {}.{}", root, a.baseline, s, too_few_rounds(a, in));
}

}  // namespace

std::string root_phase(const CaseAttribution& k) {
  for (const auto& p : k.phases)
    if (p.phase.find('/') == std::string::npos) return p.phase;
  return k.phases.empty() ? "" : k.phases.front().phase;
}

std::string short_phase(const std::string& phase, const std::string& root) {
  if (phase.size() > root.size() + 1 && phase.compare(0, root.size(), root) == 0 && phase[root.size()] == '/')
    return phase.substr(root.size() + 1);
  return phase;
}

std::string ratio_ci(double ratio, double low, double high) {
  return fmt::format("{} [{}, {}]", output::change_pct(ratio), output::change_pct(low), output::change_pct(high));
}

std::string summarize(const Attribution& a, const Input& in, const CaseAttribution& k) {
  return a.mode == "factorial" ? factorial_summary(a, in, k) : variants_summary(a, in, k);
}

}  // namespace cuzk::matrix::detail
