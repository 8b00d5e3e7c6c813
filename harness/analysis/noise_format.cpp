// The terminal, Markdown and JSON renderings of a noise Analysis (noise.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "harness/analysis/noise.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"
#include "harness/measure/clock.hpp"

namespace cuzk::noise {

using json = nlohmann::json;

namespace {

json num_or_null(double v, const std::string& why) { return why.empty() && std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

namespace {

// The table with its footnotes, legend, diagnosis and environment notes: rendered for the
// terminal or as markdown.
struct Page {
  output::Table table{{{"phase"},
                       {"metric"},
                       {"n (P x R)", output::Align::right},
                       {"median", output::Align::right},
                       {"cv", output::Align::right},
                       {"within", output::Align::right},
                       {"between", output::Align::right},
                       {"between share", output::Align::right},
                       {"F p", output::Align::right},
                       {"first rep", output::Align::right},
                       {"trend %/rep [95% CI]", output::Align::right},
                       {"top env correlate"}}};
  std::vector<std::string> footnotes;
  std::vector<std::string> legend;
  std::vector<std::string> diagnosis;
  std::vector<std::string> env_lines;
};

Page page(const Analysis& a) {
  Page m;
  // One footnote per distinct reason, shared by every cell it explains.
  auto dash = [&](const std::string& why) {
    auto it = std::find(m.footnotes.begin(), m.footnotes.end(), why);
    if (it == m.footnotes.end()) it = m.footnotes.insert(m.footnotes.end(), why);
    return fmt::format("-[{}]", it - m.footnotes.begin() + 1);
  };
  for (const PhaseNoise& r : a.rows) {
    std::vector<output::Cell> c;
    c.push_back(r.label);
    c.push_back(r.metric);
    c.push_back(r.reps_min == r.reps_max ? fmt::format("{} x {}", r.processes, r.reps_min)
                                         : fmt::format("{} x {}-{}", r.processes, r.reps_min, r.reps_max));
    c.push_back(fmt_ns(r.median_ns));
    c.push_back(r.cv_why.empty() ? output::pct_digits(r.cv) + "%" : dash(r.cv_why));
    if (r.anova.why.empty()) {
      c.push_back(output::pct_digits(r.anova.sd_within) + "%");
      c.push_back(output::pct_digits(r.anova.sd_between) + "%");
      c.push_back(output::pct_digits(r.anova.between_share) + "%");
      c.push_back(output::pval(r.anova.p));
    } else {
      const std::string d = dash(r.anova.why);
      c.insert(c.end(), 4, output::Cell(d));
    }
    c.push_back(r.first.why.empty()
                    ? fmt::format("{}% ({}/{})", output::signed_pct_digits(r.first.median_effect), r.first.slower, r.first.processes)
                    : dash(r.first.why));
    c.push_back(r.trend.why.empty() ? fmt::format("{:+.3f} [{:+.3f}, {:+.3f}]", 100 * r.trend.slope,
                                                  100 * r.trend.ci_low, 100 * r.trend.ci_high)
                                    : dash(r.trend.why));
    c.push_back(r.env.empty() ? dash(r.env_why)
                              : fmt::format("{} {:+.2f} (p {})", r.env.front().name, r.env.front().rho,
                                            output::pval(r.env.front().p_adjusted)));
    m.table.add_row(std::move(c));
    m.diagnosis.push_back(r.diagnosis);
  }
  m.legend = {
      "metric: gpu_kernel_ns when every analysed sample of the phase has GPU kernel time (--gpu-activity) and "
      "kernels are most of its GPU work, else gpu_ns when every one has GPU time, else wall_ns. n: P processes x R "
      "repetitions each; median and cv (1.4826 MAD / median) over every analysed sample.",
      "within, between: sd of ln(time) x 100 (~cv%) inside a process and between process means (one-way "
      "random-effects ANOVA); between share: between variance / total; F p: the ANOVA's F test.",
      "first rep: first / median(later) - 1 per process, median over processes (slower/processes); the first "
      "repetition is left out of within, between, F p, trend and env.",
      "trend: pooled within-process slope of ln(time) per repetition, x 100 (~% per repetition). top env "
      "correlate: strongest Spearman rho of the time with an environment reading, p Bonferroni-adjusted over the "
      "readings tested.",
      a.options.include_warmup ? "warm-up samples are included as the earliest repetitions of their process."
      : a.warmup_skipped       ? fmt::format("{} warm-up samples skipped (--include-warmup counts them as the first "
                                                   "repetitions).",
                                             a.warmup_skipped)
                               : "no warm-up samples in the input.",
  };
  if (!a.env_seen) m.env_lines.push_back("the samples carry no environment readings (\"env\"): no correlations");
  for (const auto& [name, why] : a.env_null)
    m.env_lines.push_back(fmt::format("{}: null in every sample ({})", name, why));
  for (const auto& [name, v] : a.env_constant)
    m.env_lines.push_back(fmt::format("{}: constant {} in every sample (no correlation possible)", name, v));
  for (const auto& [name, rho] : a.env_window_derived)
    m.env_lines.push_back(fmt::format(
        "{}: follows the sample's window length (rho {:+.3f} with env.interval_ns): a function of the sample's own "
        "duration, not tested",
        name, rho));
  return m;
}

// `prefix` + `text` broken at spaces into lines of at most `width` columns; continuation lines
// start with `indent`.
std::string wrap(const std::string& prefix, const std::string& text, size_t width, const std::string& indent) {
  std::string out, line = prefix;
  bool fresh = true;  // nothing but the prefix or indent on `line` yet
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (!fresh && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
      fresh = true;
    }
    line += (fresh ? "" : " ") + word;
    fresh = false;
    pos = end + 1;
  }
  return out + line + "\n";
}

std::string inputs_line(const Analysis& a) {
  std::string s = fmt::format("noise: {} process{}, {} file{}", a.processes.size(), a.processes.size() == 1 ? "" : "es",
                              a.files.size(), a.files.size() == 1 ? "" : "s");
  if (!a.files.empty()) s += " (" + a.files.front() + (a.files.size() > 1 ? ", ..." : "") + ")";
  return s;
}

}  // namespace

std::string format_table(const Analysis& a) {
  const Page m = page(a);
  std::string out = inputs_line(a) + "\n\n" + output::text(m.table);
  out += "\n";
  for (size_t i = 0; i < m.footnotes.size(); ++i) out += fmt::format("[{}] {}\n", i + 1, m.footnotes[i]);
  if (!m.footnotes.empty()) out += "\n";
  for (const auto& l : m.legend) out += wrap("", l, 110, "  ");
  out += "\ndiagnosis:\n";
  for (const auto& d : m.diagnosis) out += wrap("  ", d, 110, "    ");
  if (!m.env_lines.empty()) {
    out += "\nenvironment readings:\n";
    for (const auto& l : m.env_lines) out += "  " + l + "\n";
  }
  return out;
}

std::string format_markdown(const Analysis& a) {
  const Page m = page(a);
  std::string out = inputs_line(a) + "\n\n" + output::markdown(m.table);
  out += "\n";
  for (size_t i = 0; i < m.footnotes.size(); ++i) out += fmt::format("[{}] {}  \n", i + 1, output::markdown_escape(m.footnotes[i]));
  if (!m.footnotes.empty()) out += "\n";
  for (const auto& l : m.legend) out += "- " + l + "\n";
  out += "\n**Diagnosis**\n\n";
  for (const auto& d : m.diagnosis) out += "- " + d + "\n";
  if (!m.env_lines.empty()) {
    out += "\n**Environment readings**\n\n";
    for (const auto& l : m.env_lines) out += "- " + l + "\n";
  }
  return out;
}

json to_json(const Analysis& a) {
  json j = {{"schema", kNoiseSchema}, {"version", kNoiseVersion}};
  j["options"] = {
      {"phases", a.options.phases}, {"include_warmup", a.options.include_warmup}, {"alpha", a.options.alpha}};
  j["run"] = a.run;
  j["inputs"] = a.files;
  j["processes"] = json::array();
  for (const auto& p : a.processes) j["processes"].push_back({{"id", p.id}, {"file", p.file}, {"samples", p.samples}});
  j["warmup_skipped"] = a.warmup_skipped;
  j["rows"] = json::array();
  for (const PhaseNoise& r : a.rows) {
    const Anova& an = r.anova;
    const FirstRep& f = r.first;
    const Trend& t = r.trend;
    json env = json::array();
    for (const auto& e : r.env)
      env.push_back({{"name", e.name}, {"n", e.n}, {"rho", e.rho}, {"p", e.p}, {"p_adjusted", e.p_adjusted}});
    auto why = [](const std::string& w) { return w.empty() ? json(nullptr) : json(w); };
    j["rows"].push_back({
        {"case", r.case_key},
        {"phase", r.phase},
        {"label", r.label},
        {"metric", r.metric},
        {"processes", r.processes},
        {"reps_min", r.reps_min},
        {"reps_max", r.reps_max},
        {"samples", r.samples},
        {"median_ns", r.median_ns},
        {"cv", num_or_null(r.cv, r.cv_why)},
        {"cv_unavailable", why(r.cv_why)},
        {"anova",
         {{"unavailable", why(an.why)},
          {"groups", an.groups},
          {"n", an.n},
          {"df_between", num_or_null(an.df_between, an.why)},
          {"df_within", num_or_null(an.df_within, an.why)},
          {"ms_between", num_or_null(an.ms_between, an.why)},
          {"ms_within", num_or_null(an.ms_within, an.why)},
          {"n0", num_or_null(an.n0, an.why)},
          {"sd_within_log", num_or_null(an.sd_within, an.why)},
          {"sd_between_log", num_or_null(an.sd_between, an.why)},
          {"between_share", num_or_null(an.between_share, an.why)},
          {"f", num_or_null(an.f, an.why)},
          {"p", num_or_null(an.p, an.why)}}},
        {"first_rep",
         {{"unavailable", why(f.why)},
          {"processes", f.processes},
          {"slower", f.slower},
          {"median_effect", num_or_null(f.median_effect, f.why)},
          {"t", num_or_null(f.t, f.why)},
          {"p", num_or_null(f.p, f.why)}}},
        {"trend",
         {{"unavailable", why(t.why)},
          {"n", t.n},
          {"df", num_or_null(t.df, t.why)},
          {"slope_log_per_rep", num_or_null(t.slope, t.why)},
          {"se", num_or_null(t.se, t.why)},
          {"ci95_low", num_or_null(t.ci_low, t.why)},
          {"ci95_high", num_or_null(t.ci_high, t.why)}}},
        {"env", {{"unavailable", why(r.env_why)}, {"tested", r.env.size()}, {"correlations", env}}},
        {"diagnosis", r.diagnosis},
    });
  }
  j["env_seen"] = a.env_seen;
  j["env_null"] = a.env_null;
  j["env_constant"] = a.env_constant;
  j["env_window_derived"] = a.env_window_derived;
  return j;
}

}  // namespace cuzk::noise
