// The summary of a `matrix --variants` case (harness/analysis/matrix_summary.cpp) where rounds are
// few: with 3 rounds the exact rank test cannot call any change (its smallest p is 0.10), and the
// summary says so and how many rounds would settle each "too noisy" variant; with 8 rounds a 30%
// slowdown is called and neither is said. Synthetic results: one sample a process, one process a
// round, as a matrix writes them.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "harness/analysis/matrix.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;
using nlohmann::json;

namespace {

// A variants matrix of `rounds` rounds: the baseline and "slow", whose proof/synth is 30% slower
// (proof about 18% slower). Each side's processes differ by about 3%.
cuzk::matrix::Input two_variants(const TempDir& d, int rounds) {
  cuzk::matrix::Input in;
  in.baseline = "baseline";
  for (const std::string name : {"baseline", "slow"}) {
    cuzk::test::SynthSpec s;
    s.seed = name == "slow" ? 7 : 3;
    s.reps = rounds;
    s.warmup = 0;
    s.processes = rounds;
    s.process_sigma = 0.03;
    s.sigma = 0.002;
    if (name == "slow") s.slowdown = {{"proof/synth", 1.3}, {"proof", 1.18}};
    const std::string path = d.file(name + ".jsonl");
    cuzk::test::write_synth(path, s);
    in.variants.push_back({name, {}, path, std::vector<std::string>(size_t(rounds), path), {}});
  }
  return in;
}

const cuzk::matrix::VariantCell& root_cell(const cuzk::matrix::Attribution& a) {
  for (const auto& p : a.cases.at(0).phases)
    if (p.phase == "proof") return p.variants.at(0);
  FAIL("no proof phase");
  throw;
}

}  // namespace

TEST_CASE("matrix summary: too few rounds for a verdict are said, with the rounds that would settle it") {
  TempDir d;
  const auto a = cuzk::matrix::attribute(two_variants(d, 3));
  const std::string& s = a.cases.at(0).summary;
  INFO(s);
  const auto& c = root_cell(a);
  CHECK(c.verdict == "too noisy");
  CHECK(c.rounds_needed >= 4);
  CHECK(s.find("slow +") != std::string::npos);
  CHECK(s.find(fmt::format("too noisy, about {} rounds would settle it", c.rounds_needed)) != std::string::npos);
  CHECK(s.find("With 3 rounds no change can be called: the exact rank test's smallest p with 3 values a side is 0.1, "
               "above alpha 0.05; it takes at least 4 rounds.") != std::string::npos);
  // The JSON carries the number beside the verdict.
  const json j = cuzk::matrix::to_json(a);
  bool found = false;
  for (const auto& p : j.at("cases").at(0).at("phases"))
    if (p.at("phase") == "proof") found = p.at("variants").at(0).at("rounds_needed") == c.rounds_needed;
  CHECK(found);
}

TEST_CASE("matrix summary: enough rounds call the change and say nothing of rounds") {
  TempDir d;
  const auto a = cuzk::matrix::attribute(two_variants(d, 8));
  const std::string& s = a.cases.at(0).summary;
  INFO(s);
  CHECK(root_cell(a).verdict == "slower");
  CHECK(root_cell(a).rounds_needed == 0);
  CHECK(s.find("would settle it") == std::string::npos);
  CHECK(s.find("no change can be called") == std::string::npos);
}
