// `report` on a matrix folder: loading attribution.json and writing report.md / report.html.
// report_matrix.hpp; the forest plot's SVG and the heat map's colours are in report_forest.cpp.
#include "harness/analysis/report_matrix.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness/analysis/compare.hpp"
#include "harness/analysis/report_page.hpp"
#include "prover/interop/input_limits.hpp"

namespace cuzk::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kInjectedNote = "planted slowdowns (CUZK_INJECT_SLOWDOWN) were active: these are not real effects";

// nlohmann's messages start with "[json.exception.parse_error.101] ": drop that.
std::string json_message(const json::exception& e) {
  std::string m = e.what();
  if (auto p = m.find("] "); m.rfind("[json.exception", 0) == 0 && p != std::string::npos) m = m.substr(p + 2);
  return m;
}

json parse_file(const std::string& path, const char* what) {
  const std::string text = slurp(path, what);
  try {
    if (size_t depth = limits::json_nesting_depth(text); depth > limits::kMaxJsonDepth)
      throw CompareError(fmt::format("{}: JSON nested {} levels deep, over the limit of {}", path, depth, limits::kMaxJsonDepth));
    return json::parse(text);
  } catch (const json::exception& e) {
    throw CompareError(fmt::format("{}: not valid JSON ({})", path, json_message(e)));
  }
}

// Typed access to attribution.json with the key's full path in every error, e.g.
// `attribution.json: "cases[0].phases[2].variants[1].ratio" must be a number or null (it is a string)`.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw CompareError(fmt::format("{}: \"{}\" {}", file_, key, what));
  }
  static std::string join(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }
  static std::string index(const std::string& where, size_t i) { return fmt::format("{}[{}]", where, i); }

  const json& at(const json& obj, const std::string& where, const char* key) const {
    if (!obj.is_object()) fail(where.empty() ? "(top level)" : where, fmt::format("must be an object (it is {})", obj.type_name()));
    try {
      return obj.at(key);
    } catch (const json::exception&) {
      fail(join(where, key), "is missing");
    }
  }
  bool has(const json& obj, const char* key) const { return obj.is_object() && obj.contains(key); }

  template <class T>
  T typed(const json& v, const std::string& key, bool ok, const char* type) const {
    if (!ok) fail(key, fmt::format("must be {} (it is {})", type, v.type_name()));
    try {
      return v.get<T>();
    } catch (const json::exception& e) {
      fail(key, fmt::format("must be {} ({})", type, json_message(e)));
    }
  }
  std::string str(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    return typed<std::string>(v, join(where, key), v.is_string(), "a string");
  }
  double num(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    return typed<double>(v, join(where, key), v.is_number(), "a number");
  }
  double positive(const json& obj, const std::string& where, const char* key) const {
    const double v = num(obj, where, key);
    if (!(v > 0)) fail(join(where, key), fmt::format("must be a positive ratio (it is {})", v));
    return v;
  }
  int integer(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    return typed<int>(v, join(where, key), v.is_number_integer(), "an integer");
  }
  bool boolean(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    return typed<bool>(v, join(where, key), v.is_boolean(), "true or false");
  }
  // A number or null; an absent key reads as null only when `required` is false.
  std::optional<double> opt_num(const json& obj, const std::string& where, const char* key, bool required) const {
    if (!required && !has(obj, key)) return std::nullopt;
    const json& v = at(obj, where, key);
    if (v.is_null()) return std::nullopt;
    return typed<double>(v, join(where, key), v.is_number(), "a number or null");
  }
  const json& array(const json& obj, const std::string& where, const char* key) const {
    const json& v = at(obj, where, key);
    if (!v.is_array()) fail(join(where, key), fmt::format("must be an array (it is {})", v.type_name()));
    return v;
  }
  std::vector<std::string> strings(const json& obj, const std::string& where, const char* key) const {
    std::vector<std::string> out;
    const json& a = array(obj, where, key);
    for (size_t i = 0; i < a.size(); ++i)
      out.push_back(typed<std::string>(a[i], index(join(where, key), i), a[i].is_string(), "a string"));
    return out;
  }

 private:
  std::string file_;
};

// "counters" lists are optional (absent: none); when present every entry is checked.
std::vector<MatrixCounter> read_counters(const Reader& rd, const json& obj, const std::string& where) {
  std::vector<MatrixCounter> out;
  if (!rd.has(obj, "counters")) return out;
  const json& a = rd.array(obj, where, "counters");
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string w = Reader::index(Reader::join(where, "counters"), i);
    MatrixCounter c;
    c.name = rd.str(a[i], w, "name");
    c.a = rd.opt_num(a[i], w, "a", false);
    c.b = rd.opt_num(a[i], w, "b", false);
    c.note = rd.has(a[i], "note") ? rd.str(a[i], w, "note") : "";
    out.push_back(std::move(c));
  }
  return out;
}

const std::vector<std::string> kVerdicts = {"faster", "slower", "unchanged", "too noisy", "only in A", "only in B"};

MatrixVariant read_variant(const Reader& rd, const json& j, const std::string& w, const Attribution& att) {
  MatrixVariant v;
  v.name = rd.str(j, w, "name");
  if (v.name == att.baseline || std::find(att.variants.begin(), att.variants.end(), v.name) == att.variants.end())
    rd.fail(Reader::join(w, "name"), fmt::format("names \"{}\", which is not one of the non-baseline variants", v.name));
  v.verdict = rd.str(j, w, "verdict");
  if (std::find(kVerdicts.begin(), kVerdicts.end(), v.verdict) == kVerdicts.end())
    rd.fail(Reader::join(w, "verdict"),
            fmt::format("is \"{}\" (expected faster, slower, unchanged, too noisy, only in A or only in B)", v.verdict));
  const bool only = v.verdict.rfind("only in ", 0) == 0;
  if (only) {
    v.ratio = rd.opt_num(j, w, "ratio", false);
    v.low = rd.opt_num(j, w, "low", false);
    v.high = rd.opt_num(j, w, "high", false);
    v.delta_ns = rd.num(j, w, "delta_ns");
    v.delta_low_ns = rd.opt_num(j, w, "delta_low_ns", false);
    v.delta_high_ns = rd.opt_num(j, w, "delta_high_ns", false);
  } else {
    v.ratio = rd.positive(j, w, "ratio");
    v.low = rd.positive(j, w, "low");
    v.high = rd.positive(j, w, "high");
  }
  v.counters = read_counters(rd, j, w);
  return v;
}

MatrixFactorial read_factorial(const Reader& rd, const json& j, const std::string& w) {
  MatrixFactorial f;
  const json& effects = rd.array(j, w, "effects");
  for (size_t i = 0; i < effects.size(); ++i) {
    const std::string we = Reader::index(Reader::join(w, "effects"), i);
    const json& e = effects[i];
    MatrixEffect x;
    x.name = rd.str(e, we, "name");
    x.flags = rd.strings(e, we, "flags");
    x.order = rd.integer(e, we, "order");
    x.ratio = rd.positive(e, we, "ratio");
    x.low = rd.positive(e, we, "low");
    x.high = rd.positive(e, we, "high");
    x.p = rd.num(e, we, "p");
    x.significant = rd.boolean(e, we, "significant");
    x.share = rd.num(e, we, "share");
    x.counters = read_counters(rd, e, we);
    f.effects.push_back(std::move(x));
  }
  f.share_higher_order = rd.num(j, w, "share_higher_order");
  f.share_blocks = rd.num(j, w, "share_blocks");
  f.share_noise = rd.num(j, w, "share_noise");
  // null where there is no such term (no interaction with one flag; factorial.hpp)
  f.mde_main_ratio = rd.opt_num(j, w, "mde_main_ratio", false).value_or(NAN);
  f.mde_interaction_ratio = rd.opt_num(j, w, "mde_interaction_ratio", false).value_or(NAN);
  f.df = rd.num(j, w, "df");
  f.s_e = rd.num(j, w, "s_e");
  return f;
}

bool is_root(const std::string& phase) { return phase.find('/') == std::string::npos; }
bool variant_significant(const MatrixVariant& v) { return v.verdict == "faster" || v.verdict == "slower"; }

// The forest shows the case's root phase and every phase with a significant effect (factorial)
// or a significant change or a side missing (variants mode).
bool phase_shown(const Attribution& att, const MatrixPhase& ph) {
  if (is_root(ph.phase)) return true;
  if (att.mode == "factorial")
    return ph.factorial && std::any_of(ph.factorial->effects.begin(), ph.factorial->effects.end(),
                                       [](const MatrixEffect& e) { return e.significant; });
  return std::any_of(ph.variants.begin(), ph.variants.end(),
                     [](const MatrixVariant& v) { return variant_significant(v) || !v.ratio; });
}

std::string share_text(double s) { return fmt::format("{:.1f}%", s * 100); }

std::string counters_text(const std::vector<MatrixCounter>& cs) {
  std::string out;
  for (const auto& c : cs) {
    std::string what = c.note;
    if (what.empty() && (c.a || c.b))
      what = fmt::format("{} -> {}", c.a ? fmt::format("{:.0f}", *c.a) : "not read", c.b ? fmt::format("{:.0f}", *c.b) : "not read");
    out += (out.empty() ? "" : ", ") + c.name + (what.empty() ? "" : " " + what);
  }
  return out;
}

// A heat-map cell as text: "+6.4%" (significant), "+0.3% (n.s.)", "+2.0% (too noisy)",
// "only in B: +12.3 ms".
std::string cell_text(const MatrixVariant& v) {
  if (!v.ratio) return fmt::format("{}: {}", v.verdict, v.delta_ns ? signed_ms(*v.delta_ns) : "no time");
  const std::string p = percent_change(*v.ratio);
  if (variant_significant(v)) return p;
  return p + (v.verdict == "too noisy" ? " (too noisy)" : " (n.s.)");
}

const MatrixVariant* find_variant(const MatrixPhase& ph, const std::string& name) {
  for (const auto& v : ph.variants)
    if (v.name == name) return &v;
  return nullptr;
}

std::vector<std::string> others(const Attribution& att) {
  std::vector<std::string> out;
  for (const auto& v : att.variants)
    if (v != att.baseline) out.push_back(v);
  return out;
}

// The design in one sentence; `name` formats a flag or variant name (markdown: `x`, HTML: <code>).
template <class Name>
std::string design_line(const Attribution& att, Name name) {
  auto list = [&](const std::vector<std::string>& xs) {
    std::string out;
    for (const auto& x : xs) out += (out.empty() ? "" : ", ") + name(x);
    return out;
  };
  if (att.mode == "factorial")
    return fmt::format("Factorial design over {} flags ({}): {} variants, the baseline {}; {} rounds; {:g}% confidence.",
                       att.flags.size(), list(att.flags), att.variants.size(), name(att.baseline), att.rounds,
                       att.level * 100);
  return fmt::format("{} variants ({}) against the baseline {}; {} rounds; {:g}% confidence.", att.variants.size() - 1,
                     list(others(att)), name(att.baseline), att.rounds, att.level * 100);
}

// What the forest leaves out, as sentences: phases with nothing significant, "only in" rows.
std::vector<std::string> forest_notes(const Attribution& att, const MatrixCase& c, const std::vector<ForestRow>& rows) {
  std::vector<std::string> notes;
  const auto hidden = static_cast<size_t>(
      std::count_if(c.phases.begin(), c.phases.end(), [&](const MatrixPhase& ph) { return !phase_shown(att, ph); }));
  if (hidden)
    notes.push_back(fmt::format("{} other phase{} with no significant {} {} not drawn (see the heat map).", hidden,
                                hidden == 1 ? "" : "s", att.mode == "factorial" ? "effect" : "change",
                                hidden == 1 ? "is" : "are"));
  std::string only;  // variants mode: rows without a ratio (factorial mode draws effects, which all have one)
  if (att.mode == "variants")
    for (const auto& ph : c.phases)
      for (const auto& v : ph.variants)
        if (!v.ratio && phase_shown(att, ph))
          only += fmt::format("{}{} in {}: {} ({})", only.empty() ? "" : "; ", ph.phase, v.name,
                              v.delta_ns ? signed_ms(*v.delta_ns) : "no time", v.verdict);
  if (!only.empty()) notes.push_back("Not drawn, measured on one side only: " + only + ".");
  if (att.mode == "factorial")
    for (const auto& ph : c.phases)
      if (is_root(ph.phase) && ph.factorial) {
        const MatrixFactorial& f = *ph.factorial;
        const std::string inter = std::isfinite(f.mde_interaction_ratio)
                                      ? fmt::format(" and ±{:.1f}% for an interaction", std::fabs(f.mde_interaction_ratio - 1) * 100)
                                      : "";
        notes.push_back(fmt::format(
            "{}: the smallest detectable effects at this noise are ±{:.1f}% for a flag{} (df {:g}); of its variance, "
            "higher-order interactions explain {}, rounds {}, noise {}.",
            ph.phase, std::fabs(f.mde_main_ratio - 1) * 100, inter, f.df, share_text(f.share_higher_order),
            share_text(f.share_blocks), share_text(f.share_noise)));
      }
  return notes;
}

std::string case_title(const MatrixCase& c) { return c.suite + "/" + c.case_name; }
bool has_params(const MatrixCase& c) { return !c.params.empty() && c.params != "{}"; }

std::string markdown(const Attribution& att, const std::string& att_path) {
  const bool fac = att.mode == "factorial";
  std::string md = "# Matrix report\n\n";
  if (att.injected) md += fmt::format("> **Note:** {}.\n\n", kInjectedNote);
  if (!att.partial.empty()) md += fmt::format("> **Partial:** {}\n\n", att.partial);
  if (!att.resumed.empty()) md += fmt::format("> **Resumed:** {}\n\n", att.resumed);
  md += fmt::format("`{}`  \n{}\n\n", att_path, design_line(att, [](const std::string& x) { return "`" + x + "`"; }));
  const std::string level = fmt::format("{:g}% CI", att.level * 100);
  const auto vs = others(att);
  for (const auto& c : att.cases) {
    md += fmt::format("## {}\n\n", case_title(c));
    if (has_params(c)) md += fmt::format("Parameters: `{}`\n\n", c.params);
    if (!c.summary.empty()) md += c.summary + "\n\n";
    const auto rows = forest_rows(att, c);
    md += fac ? "### Effects of the flags\n\n" : "### Variants against the baseline\n\n";
    if (rows.empty()) {
      md += "No phase to draw.\n\n";
    } else {
      md += fmt::format("| phase | {} | change | {} | {} | counters |\n| --- | --- | ---: | --- | ---: | --- |\n",
                        fac ? "effect" : "variant", level, fac ? "share" : "verdict");
      for (const auto& r : rows)
        md += fmt::format("| {} | {} | {}{} | [{}, {}] | {} | {} |\n", r.phase, r.effect, percent_change(r.ratio),
                          r.significant ? "" : " (n.s.)", percent_change(r.low), percent_change(r.high),
                          r.share ? share_text(*r.share) : r.verdict, counters_text(r.counters));
      md += "\n";
    }
    for (const auto& n : forest_notes(att, c, rows)) md += n + "\n\n";
    md += "### Phase x variant\n\n| phase | baseline median ms |";
    for (const auto& v : vs) md += " " + v + " |";
    md += "\n| --- | ---: |";
    for (size_t i = 0; i < vs.size(); ++i) md += " ---: |";
    md += "\n";
    for (const auto& ph : c.phases) {
      md += fmt::format("| {} | {} |", ph.phase,
                        ph.baseline_median_ns ? fmt::format("{:.3f}", *ph.baseline_median_ns / 1e6) : "not in baseline");
      for (const auto& v : vs) {
        const MatrixVariant* mv = find_variant(ph, v);
        md += fmt::format(" {} |", mv ? cell_text(*mv) : std::string("not measured"));
      }
      md += "\n";
    }
    md += "\nEach cell: the variant's median against the baseline's; (n.s.) its CI includes no change.\n\n";
  }
  return md;
}

std::string html(const Attribution& att, const std::string& att_path) {
  const bool fac = att.mode == "factorial";
  std::string h = "<h1>Matrix report</h1>\n";
  if (att.injected) h += fmt::format("<p class=\"note injected\"><b>Note:</b> {}.</p>\n", html_escape(kInjectedNote));
  if (!att.partial.empty()) h += "<p class=\"note partial\"><b>Partial:</b> " + html_escape(att.partial) + "</p>\n";
  if (!att.resumed.empty()) h += "<p class=\"note resumed\"><b>Resumed:</b> " + html_escape(att.resumed) + "</p>\n";
  h += "<p><code>" + html_escape(att_path) + "</code><br>" +
       design_line(att, [](const std::string& x) { return "<code>" + html_escape(x) + "</code>"; }) + "</p>\n";
  const auto vs = others(att);
  for (const auto& c : att.cases) {
    h += fmt::format("<h2>{}</h2>\n", html_escape(case_title(c)));
    if (has_params(c)) h += "<p>Parameters: <code>" + html_escape(c.params) + "</code></p>\n";
    if (!c.summary.empty()) h += "<p class=\"summary\">" + html_escape(c.summary) + "</p>\n";
    const auto rows = forest_rows(att, c);
    h += fac ? "<h3>Effects of the flags</h3>\n" : "<h3>Variants against the baseline</h3>\n";
    if (rows.empty()) {
      h += "<p>No phase to draw.</p>\n";
    } else {
      h += "<div class=\"forest\">" +
           forest_svg(rows, fac ? "effect of each flag and interaction (on / off)" : "each variant against the baseline") +
           "</div>\n";
      h += fmt::format("<table><tr><th>phase</th><th>{}</th><th>change</th><th>{:g}% CI</th>{}<th>{}</th>"
                       "<th>counters</th></tr>\n",
                       fac ? "effect" : "variant", att.level * 100, fac ? "<th>p</th>" : "", fac ? "share" : "verdict");
      for (const auto& r : rows) {
        h += "<tr>" + td(r.phase) + td(r.effect) +
             td(percent_change(r.ratio) + (r.significant ? "" : " (n.s.)"), r.significant ? "num" : "num ns") +
             td(fmt::format("[{}, {}]", percent_change(r.low), percent_change(r.high)), "num");
        if (r.p) h += td(fmt::format("{:.3g}", *r.p), "num");
        h += td(r.share ? share_text(*r.share) : r.verdict, r.share ? "num" : nullptr) + td(counters_text(r.counters)) +
             "</tr>\n";
      }
      h += "</table>\n";
    }
    for (const auto& n : forest_notes(att, c, rows)) h += "<p>" + html_escape(n) + "</p>\n";
    h += "<h3>Phase x variant</h3>\n<table class=\"heatmap\"><tr><th>phase</th><th>baseline median ms</th>";
    for (const auto& v : vs) h += "<th>" + html_escape(v) + "</th>";
    h += "</tr>\n";
    for (const auto& ph : c.phases) {
      h += "<tr>" + td(ph.phase) +
           td(ph.baseline_median_ns ? fmt::format("{:.3f}", *ph.baseline_median_ns / 1e6) : "not in baseline", "num");
      for (const auto& v : vs) {
        const MatrixVariant* mv = find_variant(ph, v);
        if (!mv) {
          h += "<td class=\"heat ns\">not measured</td>";
          continue;
        }
        std::string text = mv->ratio ? percent_change(*mv->ratio) : cell_text(*mv);
        std::string tip = mv->verdict;
        if (mv->ratio && mv->low && mv->high)
          tip += fmt::format(": ratio {:.4f} [{:.4f}, {:.4f}]", *mv->ratio, *mv->low, *mv->high);
        if (mv->delta_low_ns && mv->delta_high_ns)
          tip += fmt::format(": [{}, {}]", signed_ms(*mv->delta_low_ns), signed_ms(*mv->delta_high_ns));
        if (!mv->counters.empty()) tip += "; " + counters_text(mv->counters);
        h += fmt::format("<td class=\"heat{}\" data-phase=\"{}\" data-variant=\"{}\" style=\"background:{}\" "
                         "title=\"{}\">{}</td>",
                         variant_significant(*mv) || !mv->ratio ? "" : " ns", html_escape(ph.phase), html_escape(v),
                         heat_colour(*mv), html_escape(tip), html_escape(text));
      }
      h += "</tr>\n";
    }
    h += "</table>\n<p>Each cell: the variant's median against the baseline's; red slower, blue faster (full colour "
         "at 30%), white when the CI includes no change (grey text).</p>\n";
  }
  return h;
}

}  // namespace

bool is_matrix_folder(const std::string& dir) {
  const std::string path = (fs::path(dir) / "manifest.json").string();
  std::error_code ec;
  // A manifest.json that is there but not a regular file (a FIFO, a link loop) is refused by
  // parse_file, not taken for an A/B folder.
  if (!fs::exists(fs::symlink_status(path, ec))) return false;
  const json m = parse_file(path, "a matrix manifest");
  if (!m.is_object()) throw CompareError(fmt::format("{}: must be a JSON object (it is {})", path, m.type_name()));
  const auto it = m.find("kind");
  return it != m.end() && it->is_string() && it->get<std::string>() == "cuzk-matrix";
}

Attribution read_attribution(const std::string& path) {
  const json j = parse_file(path, "an attribution");
  const Reader rd(path);
  Attribution att;
  if (const std::string kind = rd.str(j, "", "kind"); kind != "cuzk-matrix-attribution")
    rd.fail("kind", fmt::format("is \"{}\" (expected \"cuzk-matrix-attribution\")", kind));
  if (const int version = rd.integer(j, "", "version"); version != 1)
    rd.fail("version", fmt::format("is {} (this cuzk-bench reads version 1)", version));
  att.mode = rd.str(j, "", "mode");
  if (att.mode != "factorial" && att.mode != "variants")
    rd.fail("mode", fmt::format("is \"{}\" (expected \"factorial\" or \"variants\")", att.mode));
  att.flags = rd.strings(j, "", "flags");
  att.baseline = rd.str(j, "", "baseline");
  att.variants = rd.strings(j, "", "variants");
  if (std::find(att.variants.begin(), att.variants.end(), att.baseline) == att.variants.end())
    rd.fail("variants", fmt::format("does not list the baseline \"{}\"", att.baseline));
  att.rounds = rd.integer(j, "", "rounds");
  att.level = rd.num(j, "", "level");
  att.injected = rd.boolean(j, "", "injected");
  if (rd.has(j, "partial")) att.partial = rd.str(rd.at(j, "", "partial"), "partial", "statement");
  if (rd.has(j, "resumed")) att.resumed = rd.str(rd.at(j, "", "resumed"), "resumed", "statement");
  const bool fac = att.mode == "factorial";
  const json& cases = rd.array(j, "", "cases");
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const std::string wc = Reader::index("cases", ci);
    MatrixCase c;
    c.suite = rd.str(cases[ci], wc, "suite");
    c.case_name = rd.str(cases[ci], wc, "case");
    c.params = rd.str(cases[ci], wc, "params");
    c.summary = rd.str(cases[ci], wc, "summary");
    const json& phases = rd.array(cases[ci], wc, "phases");
    for (size_t pi = 0; pi < phases.size(); ++pi) {
      const std::string wp = Reader::index(Reader::join(wc, "phases"), pi);
      const json& pj = phases[pi];
      MatrixPhase ph;
      ph.phase = rd.str(pj, wp, "phase");
      ph.metric = rd.str(pj, wp, "metric");
      ph.baseline_median_ns = rd.opt_num(pj, wp, "baseline_median_ns", true);
      const json& vs = rd.array(pj, wp, "variants");
      for (size_t vi = 0; vi < vs.size(); ++vi)
        ph.variants.push_back(read_variant(rd, vs[vi], Reader::index(Reader::join(wp, "variants"), vi), att));
      if (fac) {
        // null: a phase the factorial could not put on log time (it exists only where some flags
        // are on, "only_with"); the variant columns and the heat map still show it.
        const json& f = rd.at(pj, wp, "factorial");
        if (!f.is_object() && !f.is_null())
          rd.fail(Reader::join(wp, "factorial"), fmt::format("must be an object or null (it is {})", f.type_name()));
        if (f.is_object()) ph.factorial = read_factorial(rd, f, Reader::join(wp, "factorial"));
      }
      c.phases.push_back(std::move(ph));
    }
    att.cases.push_back(std::move(c));
  }
  return att;
}

std::vector<ForestRow> forest_rows(const Attribution& att, const MatrixCase& c) {
  std::vector<ForestRow> rows;
  for (const auto& ph : c.phases) {
    if (!phase_shown(att, ph)) continue;
    if (att.mode == "factorial" && ph.factorial) {
      for (const auto& e : ph.factorial->effects) {
        ForestRow r;
        r.phase = ph.phase;
        r.effect = e.name;
        r.ratio = e.ratio;
        r.low = e.low;
        r.high = e.high;
        r.significant = e.significant;
        r.share = e.share;
        r.p = e.p;
        r.counters = e.counters;
        rows.push_back(std::move(r));
      }
    } else if (att.mode == "variants") {
      for (const auto& v : ph.variants) {
        if (!v.ratio || !v.low || !v.high) continue;
        ForestRow r;
        r.phase = ph.phase;
        r.effect = v.name;
        r.ratio = *v.ratio;
        r.low = *v.low;
        r.high = *v.high;
        r.significant = variant_significant(v);
        r.counters = v.counters;
        r.verdict = v.verdict;
        rows.push_back(std::move(r));
      }
    }
  }
  return rows;
}

MatrixPaths write_matrix_report(const std::string& dir, const std::string& out) {
  const std::string path = (fs::path(dir) / "attribution.json").string();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)))
    throw CompareError(fmt::format("{}: no such file (a matrix folder holds manifest.json and attribution.json, which "
                                   "`cuzk-bench matrix` writes when it finishes; of one that did not, `cuzk-bench matrix "
                                   "--from DIR` analyses the runs that finished)",
                                   path));
  const Attribution att = read_attribution(path);
  // Both documents are complete before anything is written.
  const std::string md = markdown(att, path), h = html_page("cuzk matrix report", html(att, path));
  MatrixPaths p;
  fs::create_directories(out, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", out, ec.message()));
  p.md_path = (fs::path(out) / "report.md").string();
  p.html_path = (fs::path(out) / "report.html").string();
  write_text(p.md_path, md);
  write_text(p.html_path, h);
  return p;
}

}  // namespace cuzk::report
