// `cuzk-bench report DIR` (harness/report.hpp): on a synthetic A/B folder (selfmeasure, B with
// an injected slowdown of proof/prove/ntt_h) it writes report.md and report.html with the phase
// rows, and the plot PNGs when /usr/bin/python3 has matplotlib.
#include <cstdlib>

#include "catch.hpp"
#include "harness/report.hpp"
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
  auto b = cuzk::test::run_bench(common + "ab/b.jsonl", d.path(), "CUZK_INJECT_SLOWDOWN='proof/prove/ntt_h=50%'");
  REQUIRE(b.code == 0);

  SECTION("with plots when matplotlib is there") {
    auto r = cuzk::test::run_bench("report ab --out rep", d.path());
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
    // The injected +50% on ntt_h shows as slower in its row.
    const std::string row = line_with(md, "proof/prove/ntt_h");
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
    auto r = cuzk::test::run_bench("report ab --python none", d.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(cuzk::test::exists(d.file("ab/report.md")));
    CHECK(cuzk::test::exists(d.file("ab/report.html")));
    CHECK(cuzk::test::slurp(d.file("ab/report.md")).find("plots skipped") != std::string::npos);
    CHECK(cuzk::test::slurp(d.file("ab/report.html")).find("plots skipped") != std::string::npos);
  }
  SECTION("a folder without a.jsonl is exit status 2") {
    auto r = cuzk::test::run_bench("report nowhere", d.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("a.jsonl") != std::string::npos);
  }
}
