// `cuzk-bench report DIR` (harness/analysis/report.hpp): on a synthetic A/B folder (selfmeasure, B with
// an injected slowdown of proof/prove/ntt_h) it writes report.md and report.html with the phase
// rows, and the plot PNGs when /usr/bin/python3 has matplotlib.
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "catch.hpp"
#include "harness/analysis/report.hpp"
#include "story_results.hpp"
#include "test_util.hpp"

namespace {
bool has_matplotlib() { return std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0; }

std::string line_with(const std::string& text, const std::string& needle) {
  for (const auto& l : cuzk::test::lines_of(text))
    if (l.find(needle) != std::string::npos) return l;
  return "";
}
}  // namespace

TEST_CASE("report: base64 and html escaping", "[report]") {
  CHECK(cuzk::report::base64("") == "");
  CHECK(cuzk::report::base64("f") == "Zg==");
  CHECK(cuzk::report::base64("fo") == "Zm8=");
  CHECK(cuzk::report::base64("foo") == "Zm9v");
  CHECK(cuzk::report::base64("foobar") == "Zm9vYmFy");
  CHECK(cuzk::report::html_escape("<a & \"b\">") == "&lt;a &amp; &quot;b&quot;&gt;");
}

TEST_CASE("report: an A/B folder gets report.md, report.html and plots", "[report]") {
  cuzk::test::TempDir d;
  const std::string common = "selfmeasure --reps 5 --warmup 1 --touch-mib 1 --no-spans --out ";
  auto a = cuzk::test::run_bench(common + "ab/a.jsonl", d.path(), "mkdir -p ab && env -u CUZK_INJECT_SLOWDOWN");
  REQUIRE(a.code == 0);
  // +300%: five samples a side are called "slower" only when the sides barely overlap, and A and B
  // run one after the other, so other work on a loaded 2-core machine (or -O0 under ASan) can
  // slow some A samples by half or more; +100% was not enough there.
  auto b = cuzk::test::run_bench(common + "ab/b.jsonl", d.path(), "CUZK_INJECT_SLOWDOWN='proof/prove/ntt_h=300%'");
  REQUIRE(b.code == 0);

  SECTION("with plots when matplotlib is there") {
    // B was written under an injected slowdown, A not: the report needs --allow-injected.
    auto r = cuzk::test::run_bench("report ab --out rep --allow-injected", d.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("rep/report.html") != std::string::npos);
    const std::string md = cuzk::test::slurp(d.file("rep/report.md"));
    const std::string html = cuzk::test::slurp(d.file("rep/report.html"));
    for (const char* ph : {"proof/synth", "proof/prove/ntt_h", "proof/prove/msm_h"}) {
      INFO(ph);
      CHECK(md.find(ph) != std::string::npos);
      CHECK(html.find(ph) != std::string::npos);
    }
    // The injected +300% on ntt_h shows as slower in its row.
    const std::string row = line_with(md, "| proof/prove/ntt_h |");
    INFO(row);
    CHECK(row.find("slower") != std::string::npos);
    CHECK(html.find("<html") != std::string::npos);
    if (has_matplotlib()) {
      CHECK(cuzk::test::exists(d.file("rep/plots/stacked.png")));
      CHECK(cuzk::test::exists(d.file("rep/plots/dist.png")));
      CHECK(html.find("data:image/png;base64,") != std::string::npos);
      CHECK(md.find("plots/dist.png") != std::string::npos);
    } else {
      WARN("/usr/bin/python3 has no matplotlib: the PNG assertions are skipped");
      CHECK(md.find("plots skipped") != std::string::npos);
    }
  }
  SECTION("without plots the report is still written, with a note") {
    auto r = cuzk::test::run_bench("report ab --python none --allow-injected", d.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(cuzk::test::exists(d.file("ab/report.md")));
    CHECK(cuzk::test::exists(d.file("ab/report.html")));
    CHECK(cuzk::test::slurp(d.file("ab/report.md")).find("plots skipped") != std::string::npos);
    CHECK(cuzk::test::slurp(d.file("ab/report.html")).find("plots skipped") != std::string::npos);
  }
  SECTION("without --allow-injected the injected B is refused (exit status 2)") {
    auto r = cuzk::test::run_bench("report ab --python none", d.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("pass --allow-injected") != std::string::npos);
  }
  SECTION("a folder without a.jsonl is exit status 2") {
    auto r = cuzk::test::run_bench("report nowhere", d.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("a.jsonl") != std::string::npos);
  }
}

TEST_CASE("report: the summary and the accounting waterfall of the pinning story", "[report]") {
  cuzk::test::TempDir d;
  cuzk::test::StorySpec a, b;
  a.seed = 11;
  b.seed = 22;
  b.pinned = true;
  b.preset = "pinned";
  b.h2d_ms = 140;
  std::filesystem::create_directories(d.file("ab"));
  cuzk::test::write_story(d.file("ab/a.jsonl"), a);
  cuzk::test::write_story(d.file("ab/b.jsonl"), b);
  auto r = cuzk::test::run_bench("report ab --python none", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const std::string html = cuzk::test::slurp(d.file("ab/report.html")), md = cuzk::test::slurp(d.file("ab/report.md"));
  for (const std::string* doc : {&html, &md}) {
    CHECK(doc->find("B (pinned) against A (baseline)") != std::string::npos);
    CHECK(doc->find("pin_abc +") != std::string::npos);
  }
  // The summary comes before the table; the stage's accounting is drawn.
  CHECK(html.find("class=\"summary\"") < html.find("<th>phase</th>"));
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("proof/prove: +") != std::string::npos);
}

TEST_CASE("report: a waterfall's total bar ends where its last term ends") {
  cuzk::Accounting acc;
  acc.parent = "proof/prove";
  acc.delta = 20e6;
  acc.ci_low = 15e6;
  acc.ci_high = 25e6;
  acc.significant = true;
  auto term = [](const char* kind, const char* phase, double delta, bool sig) {
    cuzk::AccountingTerm t;
    t.kind = kind;
    t.phase = phase;
    t.delta = delta;
    t.ci_low = delta - 2e6;
    t.ci_high = delta + 2e6;
    t.significant = sig;
    return t;
  };
  acc.terms = {term("child", "proof/prove/pin_abc", 90e6, true), term("child", "proof/prove/h2d", -70e6, true),
               term("remainder", "", 0, false)};
  acc.terms[0].only_in = cuzk::Side::kB;
  const std::string svg = cuzk::report::waterfall_svg(acc);
  INFO(svg);
  // Three term bars and one total, pale where not significant.
  size_t rects = 0;
  for (size_t p = svg.find("<rect"); p != std::string::npos; p = svg.find("<rect", p + 1)) ++rects;
  CHECK(rects == 4);
  CHECK(svg.find("pin_abc (only in B)") != std::string::npos);
  CHECK(svg.find("fill-opacity=\"0.3\"") != std::string::npos);
  // The total bar spans [x(0), x(+20 ms)]: from where pin_abc's bar starts to where h2d's (and
  // the remainder's, +0) ends.
  std::vector<std::pair<double, double>> spans;
  const std::regex rect(R"re(<rect class="(?:term|total)" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)")re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), rect), end; it != end; ++it)
    spans.emplace_back(std::stod((*it)[1]), std::stod((*it)[1]) + std::stod((*it)[2]));
  REQUIRE(spans.size() == 4);
  CHECK(spans[3].first == Approx(spans[0].first).margin(0.2));
  CHECK(spans[3].second == Approx(spans[1].first).margin(0.2));  // h2d's bar runs from +20 ms to +90 ms
}
