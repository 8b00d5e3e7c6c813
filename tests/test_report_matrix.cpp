// `cuzk-bench report DIR` on a matrix folder (harness/analysis/report_matrix.hpp): from a fixture
// manifest.json + attribution.json (factorial over two flags, and variants mode) it writes
// report.md and report.html with a forest plot whose markers sit where the ratios say, a heat map
// coloured by direction and significance, the injected-slowdown note only when injected, and for
// a malformed attribution.json one clear error and no files.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>

#include "catch.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/report.hpp"
#include "harness/analysis/report_matrix.hpp"
#include "test_util.hpp"

namespace {
using nlohmann::json;

json variant(const std::string& name, double ratio, const std::string& verdict) {
  return {{"name", name},          {"ratio", ratio}, {"low", ratio * 0.99},
          {"high", ratio * 1.01},  {"verdict", verdict}, {"counters", json::array()}};
}

json only_in_b(const std::string& name, double delta_ns) {
  return {{"name", name},         {"ratio", nullptr},          {"low", nullptr},
          {"high", nullptr},      {"verdict", "only in B"},    {"delta_ns", delta_ns},
          {"delta_low_ns", delta_ns * 0.9}, {"delta_high_ns", delta_ns * 1.1}, {"counters", json::array()}};
}

json effect(const std::string& name, double ratio, double low, double high, bool significant) {
  std::vector<std::string> flags;
  if (name == "pinned x smallvec")
    flags = {"pinned", "smallvec"};
  else
    flags = {name};
  return {{"name", name},
          {"flags", flags},
          {"order", static_cast<int>(flags.size())},
          {"ratio", ratio},
          {"low", low},
          {"high", high},
          {"p", significant ? 0.0001 : 0.8},
          {"significant", significant},
          {"share", significant ? 0.4 : 0.001},
          {"counters", name == "pinned" ? json::array({{{"name", "os::minflt"}, {"a", 1200}, {"b", 45000}, {"note", "x37"}}})
                                        : json::array()}};
}

json factorial_block(std::vector<json> effects) {
  return {{"effects", effects},     {"share_higher_order", 0.0}, {"share_blocks", 0.01},
          {"share_noise", 0.1},     {"mde_main_ratio", 1.02},    {"mde_interaction_ratio", 1.04},
          {"df", 20},               {"s_e", 0.01}};
}

// Factorial over pinned and smallvec, one case with three phases:
//   proof (root): pinned +6.4% (significant), smallvec -7% (significant), interaction n.s.;
//   proof/synth: nothing significant (left out of the forest);
//   proof/prove/pin_abc: only in the pinned builds, pinned x1.5 significant.
json factorial_fixture(bool injected) {
  const std::vector<std::string> vs = {"baseline", "fx-pinned", "fx-smallvec", "fx-pinned+smallvec"};
  json proof = {{"phase", "proof"},
                {"metric", "wall_ns"},
                {"baseline_median_ns", 1.23e8},
                {"variants",
                 {variant("fx-pinned", 1.064, "slower"), variant("fx-smallvec", 0.93, "faster"),
                  variant("fx-pinned+smallvec", 0.995, "unchanged")}},
                {"factorial", factorial_block({effect("pinned", 1.064, 1.05, 1.08, true),
                                               effect("smallvec", 0.93, 0.91, 0.95, true),
                                               effect("pinned x smallvec", 0.998, 0.98, 1.02, false)})}};
  json synth = {{"phase", "proof/synth"},
                {"metric", "wall_ns"},
                {"baseline_median_ns", 4e7},
                {"variants",
                 {variant("fx-pinned", 1.01, "unchanged"), variant("fx-smallvec", 0.99, "too noisy"),
                  variant("fx-pinned+smallvec", 1.0, "unchanged")}},
                {"factorial", factorial_block({effect("pinned", 1.01, 0.99, 1.03, false),
                                               effect("smallvec", 0.99, 0.97, 1.01, false),
                                               effect("pinned x smallvec", 1.0, 0.98, 1.02, false)})}};
  json pin = {{"phase", "proof/prove/pin_abc"},
              {"metric", "wall_ns"},
              {"baseline_median_ns", nullptr},
              {"variants",
               {only_in_b("fx-pinned", 9e6), variant("fx-smallvec", 1.0, "unchanged"),
                only_in_b("fx-pinned+smallvec", 9.5e6)}},
              {"factorial", factorial_block({effect("pinned", 1.5, 1.4, 1.6, true),
                                             effect("smallvec", 1.0, 0.98, 1.02, false),
                                             effect("pinned x smallvec", 1.01, 0.99, 1.03, false)})}};
  return {{"kind", "cuzk-matrix-attribution"},
          {"version", 1},
          {"mode", "factorial"},
          {"flags", {"pinned", "smallvec"}},
          {"baseline", "baseline"},
          {"variants", vs},
          {"rounds", 5},
          {"level", 0.95},
          {"injected", injected},
          {"cases",
           {{{"suite", "e2e"},
             {"case", "small"},
             {"params", "{\"constraints\":1024}"},
             {"summary", "proof +19.2% [17.8%, 20.5%] (all flags vs baseline): pinned +6.4% (prove/pin_abc)"},
             {"phases", {proof, synth, pin}}}}}};
}

// Variants mode: three variants against the baseline, no factorial block; proof/prove/pin_abc is
// only in the presize build.
json variants_fixture() {
  json proof = {{"phase", "proof"},
                {"metric", "wall_ns"},
                {"baseline_median_ns", 2e8},
                {"variants",
                 {variant("presize", 0.85, "faster"), variant("spare-core", 1.12, "slower"),
                  variant("smallvec", 1.003, "unchanged")}},
                {"factorial", nullptr}};
  json ntt = {{"phase", "proof/prove/ntt_h"},
              {"metric", "wall_ns"},
              {"baseline_median_ns", 3e7},
              {"variants",
               {variant("presize", 1.0, "unchanged"), variant("spare-core", 1.01, "too noisy"),
                variant("smallvec", 0.99, "unchanged")}},
              {"factorial", nullptr}};
  json pin = {{"phase", "proof/prove/pin_abc"},
              {"metric", "wall_ns"},
              {"baseline_median_ns", nullptr},
              {"variants",
               {only_in_b("presize", 9e6), variant("spare-core", 1.0, "unchanged"), variant("smallvec", 1.0, "unchanged")}},
              {"factorial", nullptr}};
  return {{"kind", "cuzk-matrix-attribution"},
          {"version", 1},
          {"mode", "variants"},
          {"flags", json::array()},
          {"baseline", "baseline"},
          {"variants", {"baseline", "presize", "spare-core", "smallvec"}},
          {"rounds", 3},
          {"level", 0.95},
          {"injected", false},
          {"cases",
           {{{"suite", "e2e"},
             {"case", "medium"},
             {"params", "{\"constraints\":4096}"},
             {"summary", "proof: presize -15.0%, spare-core +12.0%"},
             {"phases", {proof, ntt, pin}}}}}};
}

void write_folder(const cuzk::test::TempDir& d, const json& attribution) {
  cuzk::test::spit(d.file("manifest.json"), json{{"kind", "cuzk-matrix"}, {"version", 1}}.dump(2));
  cuzk::test::spit(d.file("attribution.json"), attribution.dump(2));
}

cuzk::report::Result report_of(const cuzk::test::TempDir& d) {
  cuzk::report::Options o;
  o.dir = d.path();
  o.python = "none";
  return cuzk::report::write_report(o);
}

std::string forest_of(const std::string& html) {
  const auto from = html.find("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"forest\"");
  if (from == std::string::npos) return "";
  return html.substr(from, html.find("</svg>", from) + 6 - from);
}

std::vector<double> attr_values(const std::string& svg, const std::string& re) {
  std::vector<double> out;
  const std::regex r(re);
  for (std::sregex_iterator it(svg.begin(), svg.end(), r), end; it != end; ++it) out.push_back(std::stod((*it)[1]));
  return out;
}

std::vector<double> marker_xs(const std::string& svg) {
  return attr_values(svg, R"re(<circle class="effect" cx="([-0-9.]+)")re");
}

double unity_x(const std::string& svg) {
  const auto v = attr_values(svg, R"re(<line class="unity" x1="([-0-9.]+)")re");
  REQUIRE(v.size() == 1);
  return v[0];
}

// The background colour of the heat-map cell of (phase, variant), as {r, g, b}.
std::vector<int> cell_rgb(const std::string& html, const std::string& phase, const std::string& variant) {
  const std::regex r("data-phase=\"" + phase + "\" data-variant=\"" + variant +
                     "\" style=\"background:#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})\"");
  std::smatch m;
  if (!std::regex_search(html, m, r)) return {};
  return {std::stoi(m[1], nullptr, 16), std::stoi(m[2], nullptr, 16), std::stoi(m[3], nullptr, 16)};
}

std::string line_with(const std::string& text, const std::string& needle) {
  for (const auto& l : cuzk::test::lines_of(text))
    if (l.find(needle) != std::string::npos) return l;
  return "";
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("report_matrix: a factorial matrix folder gets report.md and report.html", "[report_matrix]") {
  cuzk::test::TempDir d;
  write_folder(d, factorial_fixture(false));
  const auto r = report_of(d);
  CHECK(r.matrix);
  REQUIRE(cuzk::test::exists(d.file("report.md")));
  REQUIRE(cuzk::test::exists(d.file("report.html")));
  const std::string md = cuzk::test::slurp(d.file("report.md")), html = cuzk::test::slurp(d.file("report.html"));
  for (const std::string* doc : {&md, &html}) {
    CHECK(doc->find("e2e/small") != std::string::npos);
    CHECK(doc->find("proof +19.2% [17.8%, 20.5%] (all flags vs baseline)") != std::string::npos);
    CHECK(doc->find("Matrix report") != std::string::npos);
  }
  // The A/B report's stylesheet, not a copy of it.
  CHECK(html.find("td.num{text-align:right}") != std::string::npos);
  // Markdown forest table: the significant main effect with its CI, share and counter.
  const std::string row = line_with(md, "| proof | pinned |");
  INFO(row);
  CHECK(row.find("+6.4%") != std::string::npos);
  CHECK(row.find("[+5.0%, +8.0%]") != std::string::npos);
  CHECK(row.find("40.0%") != std::string::npos);
  CHECK(row.find("os::minflt x37") != std::string::npos);
  CHECK(line_with(md, "| proof | pinned x smallvec |").find("(n.s.)") != std::string::npos);
  // proof/synth has no significant effect: not in the forest table, but in the heat map.
  CHECK(line_with(md, "| proof/synth | pinned |").empty());
  CHECK(line_with(md, "| proof/synth | 40.000 |").find("+1.0% (n.s.)") != std::string::npos);
  CHECK(md.find("1 other phase with no significant effect is not drawn") != std::string::npos);
  // The "only in B" heat-map cell shows the delta in ms.
  CHECK(line_with(md, "| proof/prove/pin_abc | not in baseline |").find("only in B: +9.0 ms") != std::string::npos);
}

TEST_CASE("report_matrix: the forest plot's markers sit where the ratios say", "[report_matrix]") {
  cuzk::test::TempDir d;
  const json fx = factorial_fixture(false);
  write_folder(d, fx);
  report_of(d);
  const std::string svg = forest_of(cuzk::test::slurp(d.file("report.html")));
  INFO(svg);
  REQUIRE(!svg.empty());
  // One marker per effect of the shown phases: proof (root) and pin_abc (significant), 3 each.
  const auto xs = marker_xs(svg);
  const auto att = cuzk::report::read_attribution(d.file("attribution.json"));
  const auto rows = cuzk::report::forest_rows(att, att.cases[0]);
  REQUIRE(rows.size() == 6);
  REQUIRE(xs.size() == rows.size());
  CHECK(svg.find("proof: pinned x smallvec") != std::string::npos);
  CHECK(svg.find("proof/prove/pin_abc: pinned") != std::string::npos);
  CHECK(svg.find("proof/synth") == std::string::npos);
  // x ordered as the ratios (log axis is monotone).
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < rows.size(); ++j)
      if (rows[i].ratio < rows[j].ratio) {
        INFO(rows[i].effect << " " << rows[i].ratio << " vs " << rows[j].effect << " " << rows[j].ratio);
        CHECK(xs[i] < xs[j]);
      }
  // No change (ratio 1) lies between the faster smallvec (0.93) and the slower pinned (1.064).
  REQUIRE(rows[0].effect == "pinned");
  REQUIRE(rows[1].effect == "smallvec");
  const double u = unity_x(svg);
  CHECK(xs[1] < u);
  CHECK(u < xs[0]);
  // Log scale centred on 1: the same factor up and down is the same distance.
  const std::string sym_svg = cuzk::report::forest_svg(
      {{"p", "up", 1.25, 1.25, 1.25, true, {}, {}, {}, ""}, {"p", "down", 0.8, 0.8, 0.8, true, {}, {}, {}, ""}}, "t");
  const auto sym = marker_xs(sym_svg);
  REQUIRE(sym.size() == 2);
  CHECK(sym[0] - unity_x(sym_svg) == Approx(unity_x(sym_svg) - sym[1]).margin(0.2));
  // Significant effects in colour, n.s. in grey (proof's interaction, pin_abc's smallvec and
  // interaction); tick labels are percent changes.
  CHECK(count(svg, "<circle class=\"effect\" cx=") == 6);
  CHECK(count(svg, "fill=\"#9a9a9a\"") == 3);
  CHECK(svg.find(">0</text>") != std::string::npos);
  CHECK(std::regex_search(svg, std::regex(R"(>\+[0-9]+%</text>)")));
  CHECK(std::regex_search(svg, std::regex(R"(>-[0-9]+%</text>)")));
}

TEST_CASE("report_matrix: heat-map cells are red when slower, blue when faster, neutral when n.s.", "[report_matrix]") {
  cuzk::test::TempDir d;
  write_folder(d, factorial_fixture(false));
  report_of(d);
  const std::string html = cuzk::test::slurp(d.file("report.html"));
  const auto slower = cell_rgb(html, "proof", "fx-pinned");
  const auto faster = cell_rgb(html, "proof", "fx-smallvec");
  const auto unchanged = cell_rgb(html, "proof", "fx-pinned\\+smallvec");
  const auto noisy = cell_rgb(html, "proof/synth", "fx-smallvec");
  REQUIRE(slower.size() == 3);
  REQUIRE(faster.size() == 3);
  REQUIRE(unchanged.size() == 3);
  REQUIRE(noisy.size() == 3);
  CHECK(slower[0] > slower[1] + 30);
  CHECK(slower[0] > slower[2] + 30);
  CHECK(faster[2] > faster[0] + 30);
  CHECK(unchanged[0] == unchanged[1]);
  CHECK(unchanged[1] == unchanged[2]);
  CHECK(noisy[0] == noisy[1]);
  CHECK(noisy[1] == noisy[2]);
  // Cell text is the percent change.
  CHECK(std::regex_search(html, std::regex(R"(data-variant="fx-pinned" style="[^"]*" title="[^"]*">\+6\.4%</td>)")));
  // Intensity grows with the magnitude and stops at 30%.
  cuzk::report::MatrixVariant v;
  v.verdict = "slower";
  auto red_of = [&](double ratio) {
    v.ratio = ratio;
    return std::stoi(cuzk::report::heat_colour(v).substr(3, 2), nullptr, 16);  // green falls as red deepens
  };
  CHECK(red_of(1.05) > red_of(1.20));
  CHECK(red_of(1.30) == red_of(2.0));
}

TEST_CASE("report_matrix: the injected note appears only when injected is true", "[report_matrix]") {
  const std::string note = "planted slowdowns (CUZK_INJECT_SLOWDOWN) were active: these are not real effects";
  for (bool injected : {false, true}) {
    INFO("injected " << injected);
    cuzk::test::TempDir d;
    write_folder(d, factorial_fixture(injected));
    report_of(d);
    const std::string md = cuzk::test::slurp(d.file("report.md")), html = cuzk::test::slurp(d.file("report.html"));
    CHECK((md.find(note) != std::string::npos) == injected);
    CHECK((html.find(note) != std::string::npos) == injected);
    // At the top: before the first case.
    if (injected) CHECK(md.find(note) < md.find("## e2e/small"));
  }
}

TEST_CASE("report_matrix: a matrix that did not complete, or was resumed, says so at the top", "[report_matrix]") {
  const std::string statement =
      "Interrupted by SIGTERM in round 3 of baseline: analysed the 7 of 8 measured runs that finished (baseline 3 of 4, "
      "pinned 4 of 4). Left out: baseline round 3 (discarded: in flight when the signal came).";
  for (bool partial : {false, true}) {
    INFO("partial " << partial);
    cuzk::test::TempDir d;
    json a = variants_fixture();
    if (partial) a["partial"] = {{"status", "interrupted"}, {"statement", statement}};
    write_folder(d, a);
    report_of(d);
    const std::string md = cuzk::test::slurp(d.file("report.md")), html = cuzk::test::slurp(d.file("report.html"));
    CHECK((md.find("> **Partial:** " + statement) != std::string::npos) == partial);
    CHECK((html.find("<b>Partial:</b> Interrupted by SIGTERM in round 3 of baseline") != std::string::npos) == partial);
    if (partial) CHECK(md.find("Partial:") < md.find("## "));
  }
  // A resumed matrix says so beside it, in both outputs.
  {
    cuzk::test::TempDir d;
    json a = variants_fixture();
    const std::string resumed = "Resumed once (2026-12-07T20:41Z, 4 runs): rounds ran in two sittings.";
    a["resumed"] = {{"statement", resumed}, {"sittings", 2}, {"resumptions", json::array()}};
    write_folder(d, a);
    report_of(d);
    const std::string md = cuzk::test::slurp(d.file("report.md")), html = cuzk::test::slurp(d.file("report.html"));
    CHECK(md.find("> **Resumed:** " + resumed) < md.find("## "));
    CHECK(html.find("<b>Resumed:</b> " + resumed) != std::string::npos);
  }
  // A "partial" without its statement is the reader's clear error, as any malformed key.
  cuzk::test::TempDir d;
  json a = variants_fixture();
  a["partial"] = {{"status", "interrupted"}};
  write_folder(d, a);
  auto r = cuzk::test::run_bench("report .", d.path());
  CHECK(r.code == 2);
  CHECK(r.err.find("\"partial.statement\" is missing") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(d.file("report.md")));
}

TEST_CASE("report_matrix: variants mode draws one row per variant", "[report_matrix]") {
  cuzk::test::TempDir d;
  write_folder(d, variants_fixture());
  auto r = cuzk::test::run_bench("report .", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("report.html") != std::string::npos);
  const std::string md = cuzk::test::slurp(d.file("report.md")), html = cuzk::test::slurp(d.file("report.html"));
  const std::string svg = forest_of(html);
  INFO(svg);
  // The root phase (presize 0.85, spare-core 1.12, smallvec 1.003) and pin_abc's two variants
  // that have a ratio; ntt_h has nothing significant. pin_abc's "only in B" row has no marker
  // and is listed under the plot instead.
  const auto xs = marker_xs(svg);
  REQUIRE(xs.size() == 5);
  CHECK(md.find("Not drawn, measured on one side only: proof/prove/pin_abc in presize: +9.0 ms (only in B).") !=
        std::string::npos);
  CHECK(md.find("1 other phase with no significant change is not drawn") != std::string::npos);
  CHECK(xs[0] < xs[2]);
  CHECK(xs[2] < xs[1]);
  const double u = unity_x(svg);
  CHECK(xs[0] < u);
  CHECK(u < xs[1]);
  CHECK(svg.find("proof: spare-core") != std::string::npos);
  CHECK(svg.find("ntt_h") == std::string::npos);
  CHECK(line_with(md, "| proof | spare-core |").find("+12.0%") != std::string::npos);
  CHECK(line_with(md, "| proof | spare-core |").find("slower") != std::string::npos);
  CHECK(line_with(md, "| proof | smallvec |").find("(n.s.)") != std::string::npos);
  const auto red = cell_rgb(html, "proof", "spare-core");
  REQUIRE(red.size() == 3);
  CHECK(red[0] > red[2] + 30);
  CHECK(md.find("planted slowdowns") == std::string::npos);
}

TEST_CASE("report_matrix: a malformed attribution.json is one clear error and writes nothing", "[report_matrix]") {
  struct Bad {
    const char* what;
    std::string text;  // "" -> no attribution.json at all
    std::vector<std::string> in_message;
  };
  json missing = factorial_fixture(false);
  missing["cases"][0]["phases"][1]["variants"][0].erase("ratio");
  json wrong_type = factorial_fixture(false);
  wrong_type["rounds"] = "five";
  json no_factorial = factorial_fixture(false);
  no_factorial["cases"][0]["phases"][0]["factorial"] = "none";
  json unknown_variant = variants_fixture();
  unknown_variant["cases"][0]["phases"][0]["variants"][0]["name"] = "presise";
  const std::vector<Bad> bad = {
      {"no attribution.json", "", {"attribution.json", "no such file"}},
      {"not JSON", "{\"kind\": ", {"attribution.json", "not valid JSON"}},
      {"missing key", missing.dump(), {"attribution.json", "cases[0].phases[1].variants[0].ratio", "is missing"}},
      {"wrong type", wrong_type.dump(), {"attribution.json", "\"rounds\"", "must be an integer", "string"}},
      {"factorial neither an object nor null", no_factorial.dump(), {"cases[0].phases[0].factorial", "must be an object or null"}},
      {"unknown variant", unknown_variant.dump(), {"cases[0].phases[0].variants[0].name", "presise"}},
      {"top level not an object", "[1, 2]", {"attribution.json", "must be an object"}},
  };
  for (const auto& b : bad) {
    INFO(b.what);
    cuzk::test::TempDir d;
    write_folder(d, json::object());
    if (b.text.empty())
      std::remove(d.file("attribution.json").c_str());
    else
      cuzk::test::spit(d.file("attribution.json"), b.text);
    std::string message;
    try {
      report_of(d);
    } catch (const cuzk::CompareError& e) {
      message = e.what();
    }
    INFO(message);
    for (const auto& m : b.in_message) CHECK(message.find(m) != std::string::npos);
    CHECK_FALSE(cuzk::test::exists(d.file("report.md")));
    CHECK_FALSE(cuzk::test::exists(d.file("report.html")));
    // The CLI: exit status 2, the message on stderr, nothing written.
    auto r = cuzk::test::run_bench("report .", d.path());
    CHECK(r.code == 2);
    CHECK(r.err.find(b.in_message[0]) != std::string::npos);
    CHECK_FALSE(cuzk::test::exists(d.file("report.md")));
    CHECK_FALSE(cuzk::test::exists(d.file("report.html")));
  }
}

TEST_CASE("report_matrix: a folder whose manifest is not a matrix's is still an A/B folder", "[report_matrix]") {
  cuzk::test::TempDir d;
  cuzk::test::spit(d.file("manifest.json"), R"({"kind": "something-else"})");
  CHECK_FALSE(cuzk::report::is_matrix_folder(d.path()));
  cuzk::test::spit(d.file("manifest.json"), R"({"kind": "cuzk-matrix"})");
  CHECK(cuzk::report::is_matrix_folder(d.path()));
  std::remove(d.file("manifest.json").c_str());
  CHECK_FALSE(cuzk::report::is_matrix_folder(d.path()));
  // No manifest, no a.jsonl: the A/B error, not the matrix one.
  auto r = cuzk::test::run_bench("report .", d.path());
  CHECK(r.code == 2);
  CHECK(r.err.find("a.jsonl") != std::string::npos);
}

TEST_CASE("report_matrix: a phase the factorial could not analyse (factorial null) is still drawn", "[report_matrix]") {
  // pin_abc exists only where pinned is on: matrix writes "factorial": null and "only_with".
  cuzk::test::TempDir d;
  json att = factorial_fixture(false);
  bool nulled = false;
  for (auto& ph : att["cases"][0]["phases"])
    if (ph["phase"] == "proof/prove/pin_abc") {
      ph["factorial"] = nullptr;
      nulled = true;
    }
  REQUIRE(nulled);
  write_folder(d, att);
  const auto r = report_of(d);
  CHECK(r.matrix);
  const std::string md = cuzk::test::slurp(d.file("report.md"));
  CHECK(line_with(md, "| proof/prove/pin_abc | not in baseline |").find("only in B: +9.0 ms") != std::string::npos);
}

TEST_CASE("report_matrix: a one-flag factorial (no interaction, its power threshold null) is drawn", "[report_matrix]") {
  cuzk::test::TempDir d;
  json att = factorial_fixture(false);
  for (auto& c : att["cases"])
    for (auto& ph : c["phases"])
      if (ph["factorial"].is_object()) ph["factorial"]["mde_interaction_ratio"] = nullptr;
  write_folder(d, att);
  const auto r = report_of(d);
  CHECK(r.matrix);
  const std::string md = cuzk::test::slurp(d.file("report.md"));
  CHECK(md.find("for a flag (df") != std::string::npos);
  CHECK(md.find("nan") == std::string::npos);
}
