#include "harness/analysis/report.hpp"

#include <fmt/core.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "harness/analysis/compare_detail.hpp"
#include "harness/analysis/report_matrix.hpp"
#include "harness/analysis/report_page.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/results.hpp"

namespace cuzk::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Cmd {
  int code = -1;
  std::string output;
};

Cmd run(const std::string& cmd) {
  Cmd r;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f)) r.output.append(buf, n);
  const int st = pclose(f);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return r;
}

std::string label_of(const json& header, const std::string& fallback) {
  const json& p = header.value("provenance", json::object());
  std::string preset = p.value("preset", std::string());
  if (preset.empty()) return fallback;
  return fmt::format("{} ({})", fallback, preset);
}

std::string build_line(const std::string& side, const std::string& path, const json& h) {
  const json& p = h.value("provenance", json::object());
  auto str = [&](const char* k) {
    const json& v = p.value(k, json(nullptr));
    return v.is_string() ? v.get<std::string>() : v.is_null() ? std::string("?") : v.dump();
  };
  return fmt::format("| {} | `{}` | {} | {} | {} | `{}` |", side, path, str("preset"), str("git_commit"),
                     str("git_dirty"), str("flags_string"));
}

std::string fmt_ms(double ns) { return fmt::format("{:.3f}", ns / 1e6); }

// The comparison in HTML, case by case: heading with the parameters once, the summary, the
// accounting of every parent phase whose change or some part of it is significant (waterfall
// and its one-line form), and the table.
std::string html_cases(const Comparison& c) {
  std::string h;
  std::vector<std::tuple<std::string, std::string, std::string>> cases;
  for (const auto& r : c.rows)
    if (std::find(cases.begin(), cases.end(), std::tuple{r.suite, r.case_name, r.params}) == cases.end())
      cases.emplace_back(r.suite, r.case_name, r.params);
  for (const auto& [suite, case_name, params] : cases) {
    h += fmt::format("<h3>{}/{}</h3>\n", html_escape(suite), html_escape(case_name));
    if (!params.empty() && params != "{}") h += "<p>Parameters: <code>" + html_escape(params) + "</code></p>\n";
    for (const auto& s : c.summaries)
      if (s.suite == suite && s.case_name == case_name && s.params == params)
        h += "<p class=\"summary\">" + html_escape(s.text) + "</p>\n";
    for (const auto& a : c.accounting) {
      if (a.suite != suite || a.case_name != case_name || a.params != params) continue;
      bool shown = a.significant;
      for (const auto& t : a.terms) shown = shown || (t.significant && t.kind != "remainder");
      if (!shown) continue;
      h += "<div class=\"accounting\">" + waterfall_svg(a) + "<p><code>" + html_escape(format_accounting_line(a)) +
           "</code></p></div>\n";
    }
    h += "<table><tr><th>phase</th><th>metric</th><th>n A</th><th>n B</th><th>median A ms</th><th>median B ms</th>"
         "<th>change ms</th><th>ratio B/A</th><th>95% CI</th><th>p</th><th>verdict</th><th>counters</th></tr>\n";
    for (const auto& row : c.rows) {
      if (row.suite != suite || row.case_name != case_name || row.params != params) continue;
      const bool only = row.only_in.has_value();
      const char* cls = row.verdict == "slower" || row.only_in == Side::kB   ? "slower"
                        : row.verdict == "faster" || row.only_in == Side::kA ? "faster"
                        : row.verdict == "too noisy"                    ? "noisy"
                                                                        : nullptr;
      std::string cn;
      for (const auto& cd : row.counters) cn += (cn.empty() ? "" : ", ") + cd.name + " " + cd.note;
      // A load case's throughput row is in jobs per second, not milliseconds (load_rows.hpp).
      const bool rate = row.kind == "throughput";
      auto value = [&](double v) { return rate ? compare_detail::value_text(row.metric, v) : fmt_ms(v); };
      h += "<tr>" + td(row.primary ? row.phase : row.phase + " (secondary)") + td(row.metric) +
           td(std::to_string(row.observations_a), "num") + td(std::to_string(row.observations_b), "num") +
           td(row.only_in == Side::kB ? "-" : value(row.median_a), "num") +
           td(row.only_in == Side::kA ? "-" : value(row.median_b), "num") +
           td(rate ? compare_detail::signed_value_text(row.metric, row.delta) : fmt::format("{:+.3f}", row.delta / 1e6),
              "num") +
           td(only ? "-" : fmt::format("{:.4f}", row.ratio), "num") +
           td(only ? fmt::format("cost [{:.3f}, {:.3f}] ms", std::fabs(row.delta_low) / 1e6, std::fabs(row.delta_high) / 1e6)
                   : fmt::format("[{:.4f}, {:.4f}]", row.ci_low, row.ci_high),
              "num") +
           td(fmt::format("{:.3g}", row.p_value), "num") +
           (cls ? fmt::format("<td class=\"{}\">{}</td>", cls, html_escape(row.verdict)) : td(row.verdict)) + td(cn) +
           "</tr>\n";
    }
    h += "</table>\n";
  }
  return h;
}

}  // namespace

std::string find_plot_script() {
  if (const char* e = std::getenv("CUZK_PLOT_SCRIPT"); e && *e) return fs::exists(e) ? std::string(e) : "";
  std::vector<fs::path> starts;
  std::error_code ec;
  if (auto exe = own_executable()) starts.push_back(fs::path(*exe).parent_path());
  starts.push_back(fs::current_path(ec));
  for (fs::path d : starts) {
    for (int up = 0; up < 8 && !d.empty(); ++up) {
      fs::path cand = d / "scripts" / "plot.py";
      if (fs::exists(cand, ec)) return cand.string();
      if (d == d.parent_path()) break;
      d = d.parent_path();
    }
  }
  return "";
}


Result write_report(const Options& in) {
  if (is_matrix_folder(in.dir)) {
    Result r;
    r.matrix = true;
    const MatrixPaths p = write_matrix_report(in.dir, in.out.empty() ? in.dir : in.out);
    r.md_path = p.md_path;
    r.html_path = p.html_path;
    return r;
  }
  Options o = in;
  if (o.a.empty()) o.a = (fs::path(o.dir) / "a.jsonl").string();
  if (o.b.empty()) o.b = (fs::path(o.dir) / "b.jsonl").string();
  if (o.out.empty()) o.out = o.dir;
  std::error_code ec;
  for (const auto& p : {o.a, o.b})
    if (!fs::exists(fs::symlink_status(p, ec)))  // a loop of links is the reader's to report, not a throw here
      throw CompareError(fmt::format("{}: no such file (an A/B folder holds a.jsonl and b.jsonl)", p));

  Result r;
  r.comparison = compare_files(o.a, o.b, o.compare);
  // Read before anything is written: a bad trace-diff.json is an error with no report replaced.
  const std::optional<TraceSection> traces = read_trace_section(o.dir);
  const Comparison& c = r.comparison;
  const json ha = read_results(o.a).header.value, hb = read_results(o.b).header.value;
  fs::create_directories(o.out);
  const std::string la = label_of(ha, "A"), lb = label_of(hb, "B");

  // ---- plots ----
  const std::string plot_dir = (fs::path(o.out) / "plots").string();
  if (o.python.empty() || o.python == "none") {
    r.plots_note = "plots skipped: no Python interpreter requested (--python none)";
  } else if (!fs::exists(o.python)) {
    r.plots_note = fmt::format("plots skipped: {} does not exist (install Debian's python3-matplotlib)", o.python);
  } else {
    const std::string script = o.plot_script.empty() ? find_plot_script() : o.plot_script;
    Cmd probe = run(shell_quote(o.python) + " -c 'import matplotlib'");
    if (script.empty() || !fs::exists(script)) {
      r.plots_note = "plots skipped: scripts/plot.py not found (set CUZK_PLOT_SCRIPT)";
    } else if (probe.code != 0) {
      std::string why = probe.output;
      while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
      if (auto nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
      r.plots_note = fmt::format("plots skipped: {} cannot import matplotlib ({}); install Debian's python3-matplotlib",
                                 o.python, why);
    } else {
      Cmd p = run(shell_quote(o.python) + " " + shell_quote(script) + " --a " + shell_quote(o.a) + " --b " + shell_quote(o.b) + " --out " +
                  shell_quote(plot_dir) + " --label-a " + shell_quote(la) + " --label-b " + shell_quote(lb));
      std::istringstream ss(p.output);
      std::string line;
      while (std::getline(ss, line))
        if (line.rfind("wrote ", 0) == 0) r.plots.push_back(line.substr(6));
      if (p.code != 0) r.plots_note = fmt::format("plots failed (plot.py exit status {}): {}", p.code, p.output);
    }
  }

  // ---- markdown ----
  std::string md = "# A/B report\n\n";
  md += fmt::format("A: `{}`  \nB: `{}`\n\n", o.a, o.b);
  md += "| side | file | preset | git commit | dirty | flags |\n| --- | --- | --- | --- | --- | --- |\n";
  md += build_line("A", o.a, ha) + "\n" + build_line("B", o.b, hb) + "\n\n";
  md += "## Comparison\n\n" + format_markdown(c) + "\n";
  std::string counters_md;
  for (const auto& row : c.rows)
    for (const auto& cd : row.counters)
      if (cd.median_a || cd.median_b)
        counters_md += fmt::format("| {} | {} | {} | {} | {} |\n", row.phase, cd.name,
                                   cd.median_a ? fmt::format("{:.0f}", *cd.median_a) : "null",
                                   cd.median_b ? fmt::format("{:.0f}", *cd.median_b) : "null", cd.note);
  md += "## Counters\n\n";
  md += counters_md.empty() ? "No counter has a value on both sides (counters unavailable or not requested).\n\n"
                            : "| phase | counter | median A | median B | change |\n| --- | --- | ---: | ---: | --- |\n" +
                                  counters_md + "\n";
  md += "## Plots\n\n";
  for (const auto& p : r.plots) {
    std::string rel = fs::relative(p, o.out).string();
    md += fmt::format("![{}]({})\n\n", fs::path(p).stem().string(), rel);
  }
  if (!r.plots_note.empty()) md += "> **Note:** " + r.plots_note + "\n\n";
  if (traces) md += trace_section_markdown(*traces);

  // ---- HTML ----
  std::string h = "<h1>A/B report</h1>\n<table><tr><th>side</th><th>file</th><th>preset</th><th>git commit</th><th>flags</th></tr>\n";
  for (auto [side, path, hd] : {std::tuple<std::string, std::string, json>{"A", o.a, ha}, {"B", o.b, hb}}) {
    const json& p = hd.value("provenance", json::object());
    h += "<tr>" + td(side) + td(path) + td(p.value("preset", std::string("?"))) +
         td(p.value("git_commit", std::string("?"))) + td(p.value("flags_string", std::string("?"))) + "</tr>\n";
  }
  h += "</table>\n<h2>Comparison</h2>\n";
  h += html_cases(c);
  std::string warn;
  for (const auto& w : c.warnings) warn += "<li>" + html_escape(w) + "</li>";
  for (const auto& row : c.rows)
    for (const auto& w : row.warnings) warn += "<li>" + html_escape(row.phase + ": " + w) + "</li>";
  if (!warn.empty()) h += "<h3>Warnings</h3><ul>" + warn + "</ul>\n";
  h += "<h2>Plots</h2>\n";
  for (const auto& p : r.plots)
    h += fmt::format("<h3>{}</h3><img alt=\"{}\" src=\"data:image/png;base64,{}\">\n",
                     html_escape(fs::path(p).stem().string()), html_escape(fs::path(p).stem().string()),
                     base64(slurp(p, "a plot image")));
  if (!r.plots_note.empty()) h += "<p class=\"note\"><b>Note:</b> " + html_escape(r.plots_note) + "</p>\n";
  if (traces) h += trace_section_html(*traces);

  r.md_path = (fs::path(o.out) / "report.md").string();
  r.html_path = (fs::path(o.out) / "report.html").string();
  write_text(r.md_path, md);
  write_text(r.html_path, html_page("cuzk A/B report", h));
  return r;
}

}  // namespace cuzk::report
