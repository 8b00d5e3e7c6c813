// compare's story-telling parts (harness/analysis/compare_accounting.cpp, compare_summary.cpp,
// compare_format.cpp): phases only one side has, the accounting of a parent's change into its
// children's with overlap from spans, the summary paragraph, and readable tables. Fixtures
// shaped like the pinning story: tests/support/story_results.hpp.
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "catch.hpp"
#include "harness/analysis/power.hpp"
#include "harness/analysis/compare.hpp"
#include "story_results.hpp"
#include "test_util.hpp"

using cuzk::test::StorySpec;
using cuzk::test::TempDir;

namespace {

const cuzk::PhaseComparison* row(const cuzk::Comparison& c, const std::string& phase) {
  for (const auto& r : c.rows)
    if (r.phase == phase && r.primary) return &r;
  return nullptr;
}

const cuzk::Accounting* accounting(const cuzk::Comparison& c, const std::string& parent) {
  for (const auto& a : c.accounting)
    if (a.parent == parent) return &a;
  return nullptr;
}

const cuzk::AccountingTerm* term(const cuzk::Accounting& a, const std::string& kind, const std::string& phase = "") {
  for (const auto& t : a.terms)
    if (t.kind == kind && t.phase == phase) return &t;
  return nullptr;
}

double sum_of_terms(const cuzk::Accounting& a) {
  double s = 0;
  for (const auto& t : a.terms) s += t.delta;
  return s;
}

// The pair of the story: baseline against pinned (pin_abc +90 ms, h2d 210 -> 140 ms).
void write_pair(const TempDir& d, bool spans = true) {
  StorySpec a, b;
  a.seed = 11;
  b.seed = 22;
  b.pinned = true;
  b.preset = "pinned";
  b.h2d_ms = 140;
  a.spans = b.spans = spans;
  cuzk::test::write_story(d.file("a.jsonl"), a);
  cuzk::test::write_story(d.file("b.jsonl"), b);
}

// Compares `actual` with tests/fixtures/snapshots/NAME; CUZK_UPDATE_SNAPSHOTS=1 rewrites it.
void check_snapshot(const std::string& name, const std::string& actual) {
  const std::string path = std::string(CUZK_SOURCE_DIR) + "/tests/fixtures/snapshots/" + name;
  if (const char* u = std::getenv("CUZK_UPDATE_SNAPSHOTS"); u && std::string(u) == "1") cuzk::test::spit(path, actual);
  INFO("snapshot " << path << " (CUZK_UPDATE_SNAPSHOTS=1 rewrites it)");
  REQUIRE(cuzk::test::exists(path));
  CHECK(actual == cuzk::test::slurp(path));
}

}  // namespace

TEST_CASE("a phase only B has is compared as a cost of 0 on A's side") {
  TempDir d;
  write_pair(d);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const auto* pin = row(c, "proof/prove/pin_abc");
  REQUIRE(pin);
  CHECK(pin->only_in == cuzk::Side::kB);
  CHECK(pin->verdict == "only in B");
  CHECK(pin->observations_a == 10);
  CHECK(pin->observations_b == 10);
  CHECK(pin->median_a == 0);
  CHECK(pin->median_b == Approx(90e6).epsilon(0.02));
  CHECK(pin->delta == Approx(pin->median_b));
  CHECK(pin->delta_low > 80e6);
  CHECK(pin->delta_low <= pin->delta);
  CHECK(pin->delta_high >= pin->delta);
  CHECK(pin->p_value < 0.001);
  // The reverse direction: only in A.
  auto rev = cuzk::compare_files(d.file("b.jsonl"), d.file("a.jsonl"), {});
  REQUIRE(row(rev, "proof/prove/pin_abc"));
  CHECK(row(rev, "proof/prove/pin_abc")->verdict == "only in A");
  CHECK(row(rev, "proof/prove/pin_abc")->delta == Approx(-pin->median_b));
  // The text shows its median and cost CI, not a row of dashes.
  const std::string t = cuzk::format_table(c);
  INFO(t);
  CHECK(t.find("only in B") != std::string::npos);
  CHECK(t.find("cost [") != std::string::npos);
}

TEST_CASE("the parent's change adds up: children + only-in-one-side + overlap + remainder") {
  TempDir d;
  write_pair(d);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const auto* prove = accounting(c, "proof/prove");
  REQUIRE(prove);
  INFO(cuzk::format_accounting_line(*prove));
  CHECK(prove->overlap_measured);
  CHECK(sum_of_terms(*prove) == Approx(prove->delta).margin(1));
  // +90 (pin_abc) - 70 (h2d): the stage grew by about 20 ms.
  CHECK(prove->delta == Approx(20e6).margin(6e6));
  const auto* pin = term(*prove, "child", "proof/prove/pin_abc");
  REQUIRE(pin);
  CHECK(pin->only_in == cuzk::Side::kB);
  CHECK(pin->significant);
  CHECK(pin->delta == Approx(90e6).epsilon(0.02));
  const auto* h2d = term(*prove, "child", "proof/prove/h2d");
  REQUIRE(h2d);
  CHECK(h2d->significant);
  CHECK(h2d->delta == Approx(-70e6).epsilon(0.05));
  const auto* g2 = term(*prove, "child", "proof/prove/msm_b_g2");
  REQUIRE(g2);
  CHECK(g2->concurrent);
  CHECK_FALSE(g2->significant);
  const auto* rest = term(*prove, "remainder");
  REQUIRE(rest);
  CHECK(std::fabs(rest->delta) < 5e6);
  // The largest term comes first; the line names it as docs/ab.md's example does.
  CHECK(prove->terms.front().phase == "proof/prove/pin_abc");
  CHECK(std::regex_search(cuzk::format_accounting_line(*prove), std::regex(R"(= pin_abc \+(89|90)\.\d ms \(only in B\) \+ h2d -7\d\.\d ms)")));
  CHECK_FALSE(term(*prove, "child", "proof/prove/h2d")->concurrent);  // on the parent's thread
}

TEST_CASE("concurrent children are accounted as overlapping, not summed as if serial") {
  TempDir d;
  // msm_b_g2 runs beside the main thread and finishes first on both sides: making it 50 ms
  // faster changes nothing end to end. The children's sum (h2d 210 + msm_h 100 + msm_b_g2 300
  // + assemble 5 = 615 ms) exceeds the stage (315 ms).
  StorySpec a, b;
  a.seed = 31;
  b.seed = 32;
  b.g2_ms = 250;
  cuzk::test::write_story(d.file("a.jsonl"), a);
  cuzk::test::write_story(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const auto* prove = accounting(c, "proof/prove");
  REQUIRE(prove);
  INFO(cuzk::format_accounting_line(*prove));
  const auto* g2 = term(*prove, "child", "proof/prove/msm_b_g2");
  const auto* ov = term(*prove, "overlap");
  const auto* rest = term(*prove, "remainder");
  REQUIRE(g2);
  REQUIRE(ov);
  REQUIRE(rest);
  CHECK(ov->median_a == Approx(300e6).epsilon(0.03));  // the time msm_b_g2 ran beside the others
  CHECK(g2->delta == Approx(-50e6).epsilon(0.1));
  CHECK(ov->delta == Approx(50e6).epsilon(0.1));        // less overlap: the saving is hidden
  CHECK(std::fabs(rest->delta) < 3e6);                  // nothing left unexplained
  CHECK_FALSE(prove->significant);
  CHECK(sum_of_terms(*prove) == Approx(prove->delta).margin(1));

  // Without spans the overlap cannot be seen: the children count as serial, the remainder
  // takes the hidden saving, and the line says so.
  TempDir e;
  a.spans = b.spans = false;
  cuzk::test::write_story(e.file("a.jsonl"), a);
  cuzk::test::write_story(e.file("b.jsonl"), b);
  auto s = cuzk::compare_files(e.file("a.jsonl"), e.file("b.jsonl"), {});
  const auto* serial = accounting(s, "proof/prove");
  REQUIRE(serial);
  CHECK_FALSE(serial->overlap_measured);
  CHECK(term(*serial, "overlap") == nullptr);
  CHECK(term(*serial, "remainder")->delta == Approx(50e6).epsilon(0.15));
  CHECK(cuzk::format_accounting_line(*serial).find("children counted as serial") != std::string::npos);
}

TEST_CASE("the summary names the changes by size and the end-to-end verdict (snapshot)") {
  TempDir d;
  write_pair(d);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  REQUIRE(c.summaries.size() == 1);
  const auto& s = c.summaries[0];
  CHECK(s.end_to_end == "proof");
  CHECK(c.label_b == "B (pinned)");
  const auto pin = s.text.find("proof/prove/pin_abc +"), h2d = s.text.find("proof/prove/h2d -");
  CHECK(pin != std::string::npos);
  CHECK(h2d != std::string::npos);
  CHECK(pin < h2d);  // largest first
  check_snapshot("story_summary.txt", s.text + "\n");
}

namespace {
// Two stories of `reps` samples with noise `sigma` in every phase, B's synthesis `synth_ms`,
// compared (seeds 41 and 43).
cuzk::Comparison compare_stories(const TempDir& d, double sigma, int reps, double synth_ms) {
  StorySpec a, b;
  a.seed = 41;
  b.seed = 43;
  a.sigma = b.sigma = sigma;
  a.reps = b.reps = reps;
  b.synth_ms = synth_ms;
  cuzk::test::write_story(d.file("a.jsonl"), a);
  cuzk::test::write_story(d.file("b.jsonl"), b);
  return cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
}
}  // namespace

TEST_CASE("a too-noisy end-to-end verdict says how many rounds would settle it") {
  TempDir d;
  auto c = compare_stories(d, 0.06, 6, 408);  // proof about +1%, beside 6% noise in every phase
  REQUIRE(c.summaries.size() == 1);
  const auto& s = c.summaries[0];
  INFO(s.text);
  REQUIRE(s.verdict == "too noisy");
  const auto* proof = row(c, "proof");
  REQUIRE(proof);
  const double cv_a = 1.4826 * proof->mad_a / proof->median_a, cv_b = 1.4826 * proof->mad_b / proof->median_b;
  const double cv = std::sqrt((cv_a * cv_a + cv_b * cv_b) / 2), effect = std::fabs(proof->ratio - 1);
  const int expected = effect > proof->threshold
                           ? cuzk::power::runs_needed(effect, cv, 0.05, 0.9, proof->threshold)
                           : cuzk::power::runs_to_rule_out(effect, cv, 0.05, 0.9, proof->threshold);
  CHECK(s.rounds_needed == expected);
  CHECK(s.rounds_needed > 6);
  CHECK(s.text.find(fmt::format("about {} samples per side (now 6", s.rounds_needed)) != std::string::npos);
}

TEST_CASE("runs to rule out a change: more when the change is near the threshold, none at it") {
  using cuzk::power::runs_to_rule_out;
  CHECK(runs_to_rule_out(0.03, 0.02, 0.05, 0.9, 0.03) == -1);
  CHECK(runs_to_rule_out(0.04, 0.02, 0.05, 0.9, 0.03) == -1);
  const int far = runs_to_rule_out(0.0, 0.02, 0.05, 0.9, 0.03), near = runs_to_rule_out(0.02, 0.02, 0.05, 0.9, 0.03);
  CHECK(far >= 2);
  CHECK(near > far);
  // (pi/2) 2 (1.95996 + 1.28155)^2 0.02^2 / 0.01^2 = 132.1...
  CHECK(near == 133);
}

TEST_CASE("a table with counters unread on both sides says the reason once (snapshot)") {
  TempDir d;
  write_pair(d);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  std::string t = cuzk::format_table(c);
  t = std::regex_replace(t, std::regex(d.path()), "<dir>");
  INFO(t);
  size_t mentions = 0;
  for (size_t p = t.find("perf_event' is disabled"); p != std::string::npos; p = t.find("perf_event' is disabled", p + 1))
    ++mentions;
  CHECK(mentions == 1);
  check_snapshot("story_table.txt", t);
  // Markdown: the case's parameters once, in the heading, not in every row.
  const std::string md = cuzk::format_markdown(c);
  size_t params = 0;
  for (size_t p = md.find("\"constraints\""); p != std::string::npos; p = md.find("\"constraints\"", p + 1)) ++params;
  CHECK(params == 1);
  CHECK(md.find("### e2e/story") != std::string::npos);
}

TEST_CASE("cuzk-bench compare: the narrow table by default, every column with --wide") {
  TempDir d;
  write_pair(d);
  auto narrow = cuzk::test::run_bench("compare a.jsonl b.jsonl", d.path());
  INFO(narrow.out << narrow.err);
  CHECK(narrow.code == 0);
  CHECK(narrow.out.find("MAD/IQR") == std::string::npos);
  CHECK(narrow.out.find("Where the time went") != std::string::npos);
  // The summary comes before the table.
  CHECK(narrow.out.find("B (pinned) against A (baseline)") < narrow.out.find("median A"));
  auto wide = cuzk::test::run_bench("compare a.jsonl b.jsonl --wide", d.path());
  CHECK(wide.code == 0);
  CHECK(wide.out.find("MAD/IQR A") != std::string::npos);
  auto md = cuzk::test::run_bench("compare a.jsonl b.jsonl --markdown --wide", d.path());
  CHECK(md.code == 0);
  CHECK(md.out.find("| MAD/IQR A |") != std::string::npos);
  auto js = cuzk::test::run_bench("compare a.jsonl b.jsonl --json", d.path());
  REQUIRE(js.code == 0);
  auto j = nlohmann::json::parse(js.out);
  CHECK(j["summaries"].size() == 1);
  CHECK(j["accounting"].size() >= 2);  // proof and proof/prove
  CHECK(cuzk::test::run_bench("compare a.jsonl b.jsonl --json --wide", d.path()).code != 0);
}

TEST_CASE("the summary sets apart changes that may be chance among the phases compared") {
  TempDir d;
  // assemble 7% slower beside 6% noise, 5 samples a side: significant alone (p < 0.05), but
  // the CI widened for the 8 phases compared includes no change. pin_abc stands.
  StorySpec a, b;
  a.seed = 51;
  b.seed = 56;
  a.reps = b.reps = 5;
  a.sigma = b.sigma = 0.06;
  b.pinned = true;
  b.assemble_ms = 5.35;
  cuzk::test::write_story(d.file("a.jsonl"), a);
  cuzk::test::write_story(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const auto* as = row(c, "proof/prove/assemble");
  const auto* pin = row(c, "proof/prove/pin_abc");
  REQUIRE(as);
  REQUIRE(pin);
  INFO(c.summaries.at(0).text << "\nassemble " << as->verdict << " p " << as->p_value << " family CI [" << as->family_low
                              << ", " << as->family_high << "]");
  REQUIRE(as->verdict == "slower");
  CHECK(as->family == 8);
  CHECK_FALSE(as->change_stands());
  CHECK(pin->change_stands());
  const std::string& t = c.summaries.at(0).text;
  const auto chance = t.find("may be chance among the 8 phases compared");
  REQUIRE(chance != std::string::npos);
  CHECK(t.find("proof/prove/assemble") > chance);
  CHECK(t.find("proof/prove/pin_abc") < chance);
}

TEST_CASE("a large change on too few samples for the rank test: at least 4 per side, not the formula's 2") {
  TempDir d;
  auto c = compare_stories(d, 0.01, 3, 800);  // proof about +50%, beside 1% noise
  REQUIRE(c.summaries.size() == 1);
  const auto& s = c.summaries[0];
  INFO(s.text);
  // With 3 per side the exact test's smallest p is 2 / C(6, 3) = 0.1: no verdict can be called.
  REQUIRE(s.verdict == "too noisy");
  CHECK(s.rounds_needed == 4);
  CHECK(s.text.find("would take at least 4 samples per side (now 3): with fewer, the exact rank test's p-value "
                    "cannot fall below alpha 0.05") != std::string::npos);
}
