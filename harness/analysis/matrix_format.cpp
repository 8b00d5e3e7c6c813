// The outputs of the matrix attribution (matrix.hpp): a terminal table, markdown and JSON.
//
// Per case: the summary paragraph, then a grid phase x effect (factorial: each flag's main effect
// and each interaction; variants: each variant against the baseline) with the change where one
// was found and "." where none was, then the list of the effects found with their CIs, their
// share of the phase's variation and the counters that moved with them. The grid stays narrow
// (one short cell per effect) so that five flags fit a terminal; --wide puts each CI in its cell.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/matrix_detail.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"
#include "harness/measure/clock.hpp"

namespace cuzk::matrix {
namespace {

using compare_detail::signed_ns;
using detail::ratio_ci;
using json = nlohmann::json;

std::string counters_text(const std::vector<CounterDelta>& cs) {
  std::string s;
  for (const auto& c : cs) s += (s.empty() ? "" : ", ") + c.name + " " + c.note;
  return s;
}

// The grid's cell of one effect of one phase.
std::string effect_cell(const EffectRow& e, bool wide) {
  if (!e.effect.significant) return wide ? fmt::format("({})", ratio_ci(e.effect.ratio, e.effect.low, e.effect.high)) : ".";
  return wide ? ratio_ci(e.effect.ratio, e.effect.low, e.effect.high) : output::change_pct(e.effect.ratio);
}

std::string variant_cell(const VariantCell& c, bool wide) {
  if (c.verdict == "only in A" || c.verdict == "only in B") return "only: " + signed_ns(c.delta);
  if (c.verdict == "too noisy") return wide ? fmt::format("? {}", ratio_ci(c.ratio, c.low, c.high)) : "?";
  if (c.verdict == "unchanged") return wide ? fmt::format("({})", ratio_ci(c.ratio, c.low, c.high)) : ".";
  return wide ? ratio_ci(c.ratio, c.low, c.high) : output::change_pct(c.ratio);
}

struct Grid {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

Grid grid_of(const Attribution& a, const CaseAttribution& k, const FormatOptions& f) {
  Grid g;
  g.header = {"phase", "baseline"};
  const bool fx = a.mode == "factorial";
  std::vector<std::string> cols;
  if (fx) {
    for (const auto& p : k.phases)
      if (p.fx) {
        for (const auto& e : p.effects) cols.push_back(e.effect.name);
        break;
      }
  } else {
    for (const auto& v : a.variants)
      if (v != a.baseline) cols.push_back(v);
  }
  for (auto& c : cols) g.header.push_back(c);
  if (fx) g.header.push_back("noise");
  for (const auto& p : k.phases) {
    std::vector<std::string> row = {p.phase + (p.metric == "gpu_ns" ? " (gpu)" : p.metric == "gpu_kernel_ns" ? " (kernel)" : ""),
                                    std::isfinite(p.baseline_median) ? fmt_ns(p.baseline_median) : "-"};
    if (fx) {
      if (!p.fx) {  // a phase some variants lack: its cost is listed under "found", the reason below the grid
        for (size_t i = 0; i < cols.size(); ++i) row.push_back(p.only_with.empty() ? "-" : i == 0 ? "only" : "");
        row.push_back("");
      } else {
        for (auto& c : cols) {
          auto it = std::find_if(p.effects.begin(), p.effects.end(), [&](const EffectRow& e) { return e.effect.name == c; });
          row.push_back(it == p.effects.end() ? "" : effect_cell(*it, f.wide));
        }
        row.push_back(fmt::format("{:.0f}%", 100 * p.fx->share_noise));
      }
    } else {
      for (auto& c : cols) {
        auto it = std::find_if(p.variants.begin(), p.variants.end(), [&](const VariantCell& v) { return v.name == c; });
        row.push_back(it == p.variants.end() ? "" : variant_cell(*it, f.wide));
      }
    }
    g.rows.push_back(std::move(row));
  }
  return g;
}

// The effects found, one line each: "proof/synth  smallvec  +10.1% [8.2%, 12.0%]  share 71%  os::minflt x3.0".
std::vector<std::vector<std::string>> findings(const Attribution& a, const CaseAttribution& k) {
  std::vector<std::vector<std::string>> out;
  for (const auto& p : k.phases) {
    if (a.mode == "factorial") {
      for (const auto& e : p.effects)
        if (e.effect.significant)
          out.push_back({p.phase, e.effect.name, ratio_ci(e.effect.ratio, e.effect.low, e.effect.high),
                         std::isfinite(e.delta_ns) ? signed_ns(e.delta_ns) : "-",
                         fmt::format("{:.0f}%", 100 * e.effect.share), counters_text(e.counters)});
      if (!p.only_with.empty())
        out.push_back({p.phase, "only with " + p.only_with.front(), fmt::format("cost [{}, {}]", fmt_ns(p.only_low), fmt_ns(p.only_high)),
                       signed_ns(p.only_cost), "-", ""});
    } else {
      for (const auto& c : p.variants) {
        const bool only = c.verdict == "only in A" || c.verdict == "only in B";
        if (c.verdict != "faster" && c.verdict != "slower" && !only) continue;
        out.push_back({p.phase, c.name,
                       only ? fmt::format("{} [{}, {}]", c.verdict, signed_ns(c.delta_low), signed_ns(c.delta_high))
                            : ratio_ci(c.ratio, c.low, c.high),
                       signed_ns(c.delta), "-", counters_text(c.counters)});
      }
    }
  }
  return out;
}

// The grid and the findings as the output model's table: the first two columns are names, the rest
// figures (right-aligned in Markdown).
output::Table table_of(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  output::Table t;
  for (size_t i = 0; i < header.size(); ++i) t.columns.push_back({header[i], i < 2 ? output::Align::left : output::Align::right});
  t.rule = output::Rule::none;
  for (const auto& r : rows) t.add_row({r.begin(), r.end()});
  return t;
}

std::string heading(const CaseAttribution& k) {
  return fmt::format("{}/{}{}", k.suite, k.case_name, k.params.empty() || k.params == "{}" ? "" : " " + k.params);
}

std::string grid_legend(const Attribution& a) {
  return a.mode == "factorial"
             ? fmt::format("Each cell: the phase's change with the flag on against off (an interaction: the extra change "
                           "with both on), where its {:.0f}% CI, simultaneous over the phase's effects, excludes no "
                           "change; \".\" where none was found. noise: the share of the phase's variation left unexplained.",
                           100 * a.level)
             : "Each cell: the variant against the baseline, as `compare` judges it; \".\" unchanged, \"?\" too noisy, "
               "\"only\" a phase one side lacks (its cost).";
}

// The phases the factorial could not put on log time, each with why ("only": where some flags are on).
std::string unanalysed(const CaseAttribution& k, const std::string& bullet) {
  std::string s;
  for (const auto& p : k.phases)
    if (!p.fx && !p.fx_note.empty()) s += bullet + p.phase + ": " + p.fx_note + "\n";
  return s.empty() ? s : (bullet.empty() ? "\n" : "") + s + (bullet.empty() ? "" : "\n");
}

const std::vector<std::string> kFindingsHeader = {"phase", "effect", "change [CI]", "in time", "share", "counters"};

json cell_json(const VariantCell& c) {
  auto num = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
  json cs = json::array();
  for (auto& d : c.counters) cs.push_back({{"name", d.name}, {"a", *d.median_a}, {"b", *d.median_b}, {"note", d.note}});
  return {{"name", c.name}, {"verdict", c.verdict},       {"ratio", num(c.ratio)},          {"low", num(c.low)},
          {"high", num(c.high)}, {"delta_ns", c.delta}, {"delta_low_ns", c.delta_low}, {"delta_high_ns", c.delta_high},
          {"rounds_needed", c.rounds_needed}, {"counters", cs}};
}

}  // namespace

std::string format_table(const Attribution& a, const FormatOptions& f) {
  std::string s;
  if (a.injected) s += "NOTE: planted slowdowns (CUZK_INJECT_SLOWDOWN) were active: these are not real effects.\n";
  for (const auto& k : a.cases) {
    s += fmt::format("\n== {}\n{}\n\n", heading(k), k.summary);
    Grid g = grid_of(a, k, f);
    s += output::text(table_of(g.header, g.rows));
    s += unanalysed(k, "");
    auto fs = findings(a, k);
    if (!fs.empty()) s += "\nfound:\n" + output::text(table_of(kFindingsHeader, fs));
  }
  if (!a.warnings.empty()) {
    s += "\nwarnings:\n";
    for (auto& w : a.warnings) s += "  " + w + "\n";
  }
  return s;
}

std::string format_markdown(const Attribution& a, const FormatOptions& f) {
  std::string s = fmt::format("# Matrix: {} ({} variants, {} rounds, baseline {})\n\n", a.mode, a.variants.size(), a.rounds,
                              a.baseline);
  if (a.injected) s += "> **Planted slowdowns (CUZK_INJECT_SLOWDOWN) were active: these are not real effects.**\n\n";
  for (const auto& k : a.cases) {
    s += fmt::format("## {}\n\n{}\n\n", heading(k), k.summary);
    Grid g = grid_of(a, k, f);
    s += output::markdown(table_of(g.header, g.rows)) + "\n" + grid_legend(a) + "\n\n" + unanalysed(k, "- ");
    auto fs = findings(a, k);
    if (!fs.empty()) s += "Effects found:\n\n" + output::markdown(table_of(kFindingsHeader, fs)) + "\n";
  }
  if (!a.warnings.empty()) {
    s += "## Warnings\n\n";
    for (auto& w : a.warnings) s += "- " + w + "\n";
  }
  return s;
}

namespace {

// "round 4", "rounds 3-4", "rounds 1, 3-4" (indices ascending).
std::string rounds_text(const std::vector<int>& rounds) {
  std::string s;
  for (size_t i = 0; i < rounds.size();) {
    size_t j = i;
    while (j + 1 < rounds.size() && rounds[j + 1] == rounds[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + (j == i ? std::to_string(rounds[i]) : fmt::format("{}-{}", rounds[i], rounds[j]));
    i = j + 1;
  }
  return (rounds.size() == 1 ? "round " : "rounds ") + s;
}

// The statement of format_unfinished, without its paragraph break.
std::string unfinished_statement(const Unfinished& u) {
  std::string counts;
  for (const auto& v : u.variants) counts += fmt::format("{}{} {} of {}", counts.empty() ? "" : ", ", v.name, v.finished, v.of);
  std::string s = fmt::format("{}: analysed the {} of {} measured runs that finished ({}).", u.how, u.finished(), u.of(), counts);
  using Rounds = std::vector<int> Unfinished::Variant::*;
  const std::pair<Rounds, const char*> kinds[] = {
      {&Unfinished::Variant::discarded, "discarded: in flight when the signal came"},
      {&Unfinished::Variant::partial, "partial: its round file does not end with a finished run's summary"},
      {&Unfinished::Variant::not_run, "never run"},
      {&Unfinished::Variant::failed, "failed"}};
  std::string left;
  for (const auto& [rounds, what] : kinds) {
    std::string items;
    for (const auto& v : u.variants)
      if (!(v.*rounds).empty()) items += fmt::format("{}{} {}", items.empty() ? "" : ", ", v.name, rounds_text(v.*rounds));
    if (!items.empty()) left += fmt::format("{}{} ({})", left.empty() ? "" : "; ", items, what);
  }
  return left.empty() ? s : s + " Left out: " + left + ".";
}

}  // namespace

std::string format_unfinished(const Unfinished& u) { return unfinished_statement(u) + "\n\n"; }

json unfinished_json(const Unfinished& u) {
  json vs = json::object();
  for (const auto& v : u.variants)
    vs[v.name] = {{"finished", v.finished}, {"of", v.of},           {"failed", v.failed},
                  {"discarded", v.discarded}, {"partial", v.partial}, {"not_run", v.not_run}};
  json j = {{"status", u.status},
            {"statement", unfinished_statement(u)},
            {"runs", {{"finished", u.finished()}, {"of", u.of()}}},
            {"variants", vs}};
  if (u.interrupted.is_object()) j["interrupted"] = u.interrupted;
  if (!u.failure.empty()) j["failure"] = u.failure;
  return j;
}

namespace {

// "2026-12-07T20:41Z" from a UTC stamp "20261207T204105Z" (any other text as it is).
std::string stamp_text(const std::string& s) {
  const bool stamp = s.size() == 16 && s[8] == 'T' && s[15] == 'Z' &&
                     std::all_of(s.begin(), s.begin() + 8, [](char c) { return c >= '0' && c <= '9'; });
  return stamp ? fmt::format("{}-{}-{}T{}:{}Z", s.substr(0, 4), s.substr(4, 2), s.substr(6, 2), s.substr(9, 2), s.substr(11, 2))
               : s;
}

// "two", "three", ... for the small counts a statement spells out.
std::string count_word(size_t n) {
  static const char* const words[] = {"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"};
  return n < std::size(words) ? words[n] : std::to_string(n);
}

}  // namespace

std::string resumed_statement(const std::vector<Resumption>& r) {
  if (r.empty()) return "";
  const std::string times = r.size() == 1 ? "once" : r.size() == 2 ? "twice" : fmt::format("{} times", r.size());
  std::string each;
  for (const auto& x : r) {
    each += fmt::format("{}{}, {} run{}", each.empty() ? "" : "; ", stamp_text(x.started), x.runs, x.runs == 1 ? "" : "s");
    if (!x.other_machine.empty()) each += fmt::format(", on another machine [{}] (--allow-machine-mismatch)", x.other_machine);
  }
  return fmt::format("Resumed {} ({}): rounds ran in {} sittings.", times, each, count_word(r.size() + 1));
}

json resumed_json(const std::vector<Resumption>& r) {
  if (r.empty()) return nullptr;
  json each = json::array();
  for (const auto& x : r) {
    json j = {{"started", x.started}, {"runs", x.runs}};
    if (!x.other_machine.empty()) j["other_machine"] = x.other_machine;
    each.push_back(j);
  }
  return {{"statement", resumed_statement(r)}, {"sittings", r.size() + 1}, {"resumptions", each}};
}

json to_json(const Attribution& a) {
  auto num = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
  json cases = json::array();
  for (const auto& k : a.cases) {
    json phases = json::array();
    for (const auto& p : k.phases) {
      json vs = json::array();
      for (auto& c : p.variants) vs.push_back(cell_json(c));
      json fx = nullptr;
      if (p.fx) {
        fx = p.fx->to_json();
        json effects = json::array();
        for (const auto& e : p.effects) {
          json flags = json::array();
          for (int i : e.effect.flags) flags.push_back(a.flags.at(static_cast<size_t>(i)));
          json cs = json::array();
          for (auto& d : e.counters) cs.push_back({{"name", d.name}, {"a", *d.median_a}, {"b", *d.median_b}, {"note", d.note}});
          effects.push_back({{"name", e.effect.name}, {"flags", flags}, {"order", e.effect.order}, {"ratio", e.effect.ratio},
                             {"low", e.effect.low}, {"high", e.effect.high}, {"p", e.effect.p},
                             {"significant", e.effect.significant}, {"share", e.effect.share},
                             {"delta_ns", num(e.delta_ns)}, {"counters", cs}});
        }
        fx["effects"] = effects;
      }
      json ph = {{"phase", p.phase}, {"metric", p.metric}, {"baseline_median_ns", num(p.baseline_median)},
                 {"variants", vs},   {"factorial", fx}};
      if (!p.fx_note.empty()) ph["factorial_note"] = p.fx_note;
      if (!p.only_with.empty())
        ph["only_with"] = {{"flags", p.only_with}, {"cost_ns", num(p.only_cost)}, {"low_ns", num(p.only_low)},
                           {"high_ns", num(p.only_high)}};
      phases.push_back(ph);
    }
    cases.push_back({{"suite", k.suite}, {"case", k.case_name}, {"params", k.params}, {"summary", k.summary},
                     {"phases", phases}});
  }
  return {{"kind", "cuzk-matrix-attribution"}, {"version", 1},        {"mode", a.mode},
          {"flags", a.flags},                  {"baseline", a.baseline}, {"variants", a.variants},
          {"rounds", a.rounds},                {"level", a.level},    {"injected", a.injected},
          {"cases", cases},                    {"warnings", a.warnings}};
}

}  // namespace cuzk::matrix
