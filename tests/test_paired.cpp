// The paired design of compare (docs/compare.md, "Designs"): samples carry the round of the
// interleaved run that measured them ("round_id", from $CUZK_ROUND_ID), and compare pairs the two
// sides round by round: the Wilcoxon signed-rank test and the t interval over per-round log
// ratios. Checked here: the statistics against values scipy computed, a drifting machine whose
// drift pairing cancels, the choice of design and its errors, the round id the measuring process
// writes, and a counter named as the primary metric.
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/stats.hpp"
#include "harness/measure/results.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;
using nlohmann::json;

namespace {

// One side of an interleaved run: `rounds` rounds of one process each, `reps` repetitions per
// process. Each round's machine speed is drift(r), shared by A and B of that round; within a
// round every sample gets its own noise exp(N(0, sigma)).
struct RoundsSpec {
  int rounds = 12;
  int reps = 1;
  int first_round = 0;
  double factor = 1.0;                          // this side's slowdown of proof/synth
  double sigma = 0.003;                         // noise within a round
  double drift = 0.30;                          // amplitude of the per-round speed change
  bool round_ids = true;
  uint64_t seed = 1;
  std::map<std::string, double> only_phases;    // phases this side alone has: path -> ns
  std::string primary_metric;                   // "" = none
  double instructions = 1e9;                    // sim::instructions of proof/synth (deterministic)
};

double drift_of(int round, double amplitude) { return 1.0 + amplitude * std::sin(0.9 * round + 0.3); }

void write_rounds(const std::string& path, const RoundsSpec& s) {
  cuzk::ResultsWriter w(path, cuzk::ResultsWriter::Mode::kOverwrite);
  cuzk::test::SynthSpec header;
  header.edit_header = [](json& h) {  // proof/synth's records name it, so the header declares it
    h["counters"]["requested"].push_back("sim::instructions");
    h["counters"]["available"].push_back("sim::instructions");
  };
  w.write(cuzk::test::synth_header(header));
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> noise(0, s.sigma);
  int rep = 0;
  for (int r = s.first_round; r < s.first_round + s.rounds; ++r) {
    const double speed = drift_of(r, s.drift);
    for (int k = 0; k < s.reps; ++k) {
      auto rec = [&](double ns, std::optional<double> instructions = std::nullopt) {
        json c = json::object();
        if (instructions) c["sim::instructions"] = static_cast<int64_t>(std::llround(*instructions));
        return json{{"wall_ns", static_cast<int64_t>(std::llround(ns))},
                    {"count", 1},
                    {"gpu_ns", nullptr},
                    {"counters", c},
                    {"counter_errors", json::object()}};
      };
      const double synth = 60e6 * speed * s.factor * std::exp(noise(rng));
      const double prove = 40e6 * speed * std::exp(noise(rng));
      json phases = {{"proof/synth", rec(synth, s.instructions * s.factor)}, {"proof/prove", rec(prove)}};
      double total = synth + prove;
      for (const auto& [p, ns] : s.only_phases) {
        phases[p] = rec(ns * speed * std::exp(noise(rng)));
        total += ns;
      }
      phases["proof"] = rec(total);
      json line = {{"schema", "cuzk.results"}, {"version", 1},      {"type", "sample"},
                   {"suite", "synthetic"},     {"case", "c1"},      {"parameters", {{"size", 8}}},
                   {"variant", "default"},     {"repetition", rep++}, {"warmup", false},
                   {"process_id", fmt::format("{:016x}", s.seed * 1000 + uint64_t(r))},
                   {"phases", phases}};
      if (s.round_ids) line["round_id"] = r;
      if (!s.primary_metric.empty()) line["primary_metric"] = s.primary_metric;
      w.write(line);
    }
  }
}


// A side of a pair of files without round ids (not written by an interleaved run): `rounds`
// processes of `reps` repetitions each.
RoundsSpec unrounded(uint64_t seed, int rounds, int reps) {
  RoundsSpec s;
  s.seed = seed;
  s.round_ids = false;
  s.rounds = rounds;
  s.reps = reps;
  return s;
}

using cuzk::DesignChoice;

cuzk::CompareOptions with_design(DesignChoice design, double threshold = 0.01) {
  cuzk::CompareOptions o;
  o.analysis.design = design;
  o.noise_threshold = threshold;
  return o;
}

}  // namespace

TEST_CASE("Wilcoxon signed-rank, t interval and Hodges-Lehmann match values scipy computed") {
  // d1: 10 differences without ties or zeros. Expected values from scipy 1.10.1:
  //   scipy.stats.wilcoxon(d1, alternative="two-sided", zero_method="wilcox", correction=False,
  //                        method="exact")  -> statistic 3.0, pvalue 0.009765625
  //   ... method="approx"                   -> statistic 3.0, pvalue 0.012515318690073973
  //   scipy.stats.t.interval(0.95, 9, loc=mean, scale=sd/sqrt(10)) -> (0.004187239305713743, 0.019012760694286257)
  //   numpy.median of the Walsh averages    -> 0.0115
  const std::vector<double> d1 = {0.012, -0.004, 0.021, 0.008, 0.015, -0.002, 0.03, 0.011, 0.019, 0.006};
  const cuzk::WilcoxonResult w = cuzk::wilcoxon_signed_rank(d1);
  CHECK(w.exact);
  CHECK(w.statistic == 3.0);
  CHECK(w.p_value == Approx(0.009765625).epsilon(1e-12));
  CHECK(cuzk::wilcoxon_p_normal(d1) == Approx(0.012515318690073973).epsilon(1e-10));
  const cuzk::MeanCI ci = cuzk::t_interval(d1, 0.95);
  CHECK(ci.mean == Approx(0.0116).epsilon(1e-12));
  CHECK(ci.sd == Approx(0.010362324921453572).epsilon(1e-10));
  CHECK(ci.low == Approx(0.004187239305713743).epsilon(1e-8));
  CHECK(ci.high == Approx(0.019012760694286257).epsilon(1e-8));
  CHECK(cuzk::hodges_lehmann(d1) == Approx(0.0115).epsilon(1e-12));
  // Ties and a zero force the normal approximation with the tie correction (the zero dropped):
  //   wilcoxon([1,-2,3,3,-1,4,5,0,2,6,7,-3,8,2], ..., method="approx") -> 12.5, 0.0207452657440037
  const cuzk::WilcoxonResult wt = cuzk::wilcoxon_signed_rank({1, -2, 3, 3, -1, 4, 5, 0, 2, 6, 7, -3, 8, 2});
  CHECK_FALSE(wt.exact);
  CHECK(wt.n == 13);
  CHECK(wt.statistic == 12.5);
  CHECK(wt.p_value == Approx(0.0207452657440037).epsilon(1e-10));
  // Five values, exact: wilcoxon([0.5,-0.25,1.5,2.5,-3.5], ..., method="exact") -> 6.0, 0.8125
  const cuzk::WilcoxonResult w5 = cuzk::wilcoxon_signed_rank({0.5, -0.25, 1.5, 2.5, -3.5});
  CHECK(w5.exact);
  CHECK(w5.statistic == 6.0);
  CHECK(w5.p_value == Approx(0.8125).epsilon(1e-12));
  // scipy.stats.t.ppf(0.975, 9), t.ppf(0.975, 1), t.ppf(0.995, 3), t.cdf(1.5, 4).
  CHECK(cuzk::student_t_quantile(0.975, 9) == Approx(2.2621571627409915).epsilon(1e-8));
  CHECK(cuzk::student_t_quantile(0.975, 1) == Approx(12.706204736432095).epsilon(1e-8));
  CHECK(cuzk::student_t_quantile(0.995, 3) == Approx(5.84090929975643).epsilon(1e-8));
  CHECK(cuzk::student_t_cdf(1.5, 4) == Approx(0.896).epsilon(1e-10));
  // No non-zero difference: nothing to test (scipy raises), p = 1.
  CHECK(cuzk::wilcoxon_signed_rank({0, 0, 0}).p_value == 1.0);
}

TEST_CASE("pairing by round cancels a drift of +-30% that hides a 2% slowdown from the unpaired designs") {
  TempDir d;
  RoundsSpec a, b;
  a.seed = 3;
  b.seed = 4;
  b.factor = 1.02;
  write_rounds(d.file("a.jsonl"), a);
  write_rounds(d.file("b.jsonl"), b);
  const auto paired = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kAuto));
  const auto samples = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kSamples));
  const auto* p = cuzk::find_row(paired, "proof/synth", "wall_ns");
  const auto* s = cuzk::find_row(samples, "proof/synth", "wall_ns");
  REQUIRE(p);
  REQUIRE(s);
  CHECK(p->design == "paired");
  CHECK(p->unit == "rounds");
  CHECK(p->observations_a == 12);
  CHECK(s->design == "samples");
  // Both intervals hold the truth; the paired one is far narrower.
  CHECK(p->ci_low < 1.02);
  CHECK(p->ci_high > 1.02);
  CHECK(s->ci_low < 1.02);
  CHECK(s->ci_high > 1.02);
  CHECK((p->ci_high - p->ci_low) * 10 < s->ci_high - s->ci_low);
  CHECK(p->ratio == Approx(1.02).epsilon(0.003));
  CHECK(p->hodges_lehmann == Approx(1.02).epsilon(0.003));
  CHECK(p->boot_low < 1.02);
  CHECK(p->boot_high > 1.02);
  CHECK(p->exact_test);
  CHECK(p->p_value < 0.001);
  CHECK(p->verdict == "slower");
  CHECK(s->verdict == "too noisy");
  // The untouched phase stays unchanged under pairing.
  CHECK(cuzk::find_row(paired, "proof/prove", "wall_ns")->verdict == "unchanged");
  // A change that stands among the case's phases gets its widened CI.
  CHECK(p->change_stands());
  // Each output says which design was used and why.
  REQUIRE(paired.summaries.size() == 1);
  CHECK(paired.summaries[0].design == "paired");
  CHECK(paired.summaries[0].design_reason.find("paired by round (12 rounds on both sides") == 0);
  CHECK(cuzk::format_table(paired).find("design: paired by round (12 rounds") != std::string::npos);
  CHECK(cuzk::format_table(paired).find("12 rounds") != std::string::npos);
  CHECK(cuzk::format_markdown(paired).find("Design: paired by round") != std::string::npos);
  const json j = cuzk::to_json(paired);
  CHECK(j["summaries"][0]["design_reason"].get<std::string>().find("paired by round") == 0);
  CHECK(j["rows"][0]["design"] == "paired");
  CHECK(j["rows"][0]["ci_method"] == "t");
  // The accounting pairs whole rounds too; its terms add up to the parent's change.
  bool proof_accounted = false;
  for (const auto& acc : paired.accounting)
    if (acc.parent == "proof") {
      proof_accounted = true;
      CHECK(acc.unit == "rounds");
      double sum = 0;
      for (const auto& t : acc.terms) sum += t.delta;
      CHECK(sum == Approx(acc.delta).epsilon(1e-9));
    }
  CHECK(proof_accounted);
}

TEST_CASE("--paired-ci bootstrap reports the round bootstrap; --design blocks and --blocks off still apply") {
  TempDir d;
  RoundsSpec a, b;
  a.seed = 5;
  b.seed = 6;
  b.factor = 1.02;
  a.reps = b.reps = 3;
  write_rounds(d.file("a.jsonl"), a);
  write_rounds(d.file("b.jsonl"), b);
  auto o = with_design(DesignChoice::kPaired);
  o.analysis.paired_ci = cuzk::PairedCi::kBootstrap;
  const auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), o);
  const auto* r = cuzk::find_row(c, "proof/synth", "wall_ns");
  REQUIRE(r);
  CHECK(r->ci_method == "bootstrap");
  CHECK(r->ci_low == r->boot_low);
  CHECK(r->ci_high == r->boot_high);
  const auto blocks = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kBlocks));
  CHECK(cuzk::find_row(blocks, "proof/synth", "wall_ns")->unit == "processes");
  CHECK(blocks.summaries[0].design_reason == "processes as blocks (--design blocks)");
  // --blocks off, the older spelling of --design samples, is folded in by the command line.
  const auto off = cuzk::test::run_bench("compare --blocks off --json a.jsonl b.jsonl", d.path());
  REQUIRE(off.code == 0);
  CHECK(nlohmann::json::parse(off.out)["design"] == "samples");
  const auto clash = cuzk::test::run_bench("compare --blocks off --design paired a.jsonl b.jsonl", d.path());
  CHECK(clash.code == 2);
  CHECK(clash.err.find("--blocks off means --design samples, which contradicts --design paired") != std::string::npos);
}

TEST_CASE("one process a side is compared sample by sample, and the reason says so") {
  TempDir d;
  // One process each, 10 repetitions in it.
  RoundsSpec a = unrounded(7, 1, 10), b = unrounded(8, 1, 10);
  write_rounds(d.file("a.jsonl"), a);
  write_rounds(d.file("b.jsonl"), b);
  const auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kAuto));
  CHECK(cuzk::find_row(c, "proof/synth", "wall_ns")->design == "samples");
  CHECK(c.summaries[0].design_reason ==
        "every sample (no round ids: the files were not written by an interleaved run; 1 process a side: processes "
        "as blocks need 2 or more a side)");
  // Two processes of one repetition on A, one of 10 on B.
  a.rounds = 2;
  a.reps = 1;
  write_rounds(d.file("a2.jsonl"), a);
  const auto m = cuzk::compare_files(d.file("a2.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kAuto));
  CHECK(m.summaries[0].design_reason.find("; 2 and 1 processes: processes as blocks need 2 or more a side)") !=
        std::string::npos);
}

TEST_CASE("without round ids auto falls back to processes as blocks, and --design paired is refused") {
  TempDir d;
  const RoundsSpec a = unrounded(7, RoundsSpec{}.rounds, 3), b = unrounded(8, RoundsSpec{}.rounds, 3);
  write_rounds(d.file("a.jsonl"), a);
  write_rounds(d.file("b.jsonl"), b);
  const auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kAuto));
  CHECK(cuzk::find_row(c, "proof/synth", "wall_ns")->design == "blocks");
  CHECK(c.summaries[0].design_reason ==
        "processes as blocks (no round ids: the files were not written by an interleaved run)");
  try {
    (void)cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kPaired));
    FAIL("--design paired accepted files without rounds");
  } catch (const cuzk::CompareError& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("--design paired: A (" + d.file("a.jsonl") + ") case synthetic/c1 has no round_id in its samples; "
                   "pairing needs results written by ab, matrix, calibrate or bisect") == 0);
  }
  // The CLI: exit 2, one line on stderr, nothing on stdout.
  const auto r = cuzk::test::run_bench("compare --design paired a.jsonl b.jsonl", d.path());
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("cuzk-bench: error: --design paired: A (a.jsonl) case synthetic/c1 has no round_id", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  const auto bad = cuzk::test::run_bench("compare --design pairs a.jsonl b.jsonl", d.path());
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--design must be paired, blocks, samples or auto") != std::string::npos);
}

TEST_CASE("ab-shaped files (one process per round, warm-up round first) are paired by auto") {
  TempDir d;
  // As ab writes them: round 0 is the warm-up (merge_rounds marks it), rounds 1..n-1 are
  // measured, and a round whose B run failed (4) is missing from B.
  auto write_ab = [&](int rounds, const std::string& dir) {
    std::filesystem::create_directories(d.file(dir));
    for (const char* side : {"a", "b"}) {
      RoundsSpec s;
      s.seed = side[0] == 'a' ? 9 : 10;
      s.rounds = rounds;
      s.drift = 0.1;
      const std::string raw = d.file(dir + "/" + side + "0.jsonl");
      write_rounds(raw, s);
      std::string text;
      for (auto& l : cuzk::test::lines_of(cuzk::test::slurp(raw))) {
        json v = json::parse(l);
        if (v["type"] == "sample") {
          if (v["round_id"] == 0) v["warmup"] = true;
          if (side[0] == 'b' && v["round_id"] == 4) continue;
        }
        text += v.dump() + "\n";
      }
      cuzk::test::spit(d.file(dir + "/" + side + ".jsonl"), text);
    }
  };
  write_ab(8, "six");
  const auto r = cuzk::test::run_bench("compare --json six/a.jsonl six/b.jsonl", d.path());
  INFO(r.err);
  REQUIRE(r.code == 0);
  const json j = json::parse(r.out);
  CHECK(j["design"] == "auto");
  CHECK(j["summaries"][0]["design"] == "paired");
  CHECK(j["summaries"][0]["design_reason"] ==
        "paired by round (6 rounds on both sides, 1 round(s) with one side only left out; per-round log ratios of the "
        "per-process medians)");
  for (const auto& row : j["rows"]) {
    CHECK(row["unit"] == "rounds");
    CHECK(row["n_a"] == 6);
  }
  // With 5 shared rounds the signed-rank test's smallest p (2/2^5) cannot reach alpha 0.05: auto
  // does not pair, and says why; --design paired still can.
  write_ab(7, "five");
  const auto five = cuzk::test::run_bench("compare --json five/a.jsonl five/b.jsonl", d.path());
  INFO(five.err);
  REQUIRE(five.code == 0);
  const json f = json::parse(five.out);
  CHECK(f["summaries"][0]["design"] != "paired");
  CHECK(f["summaries"][0]["design_reason"].get<std::string>().find(
            "only 5 rounds on both sides: the signed-rank test's smallest p, 0.0625, cannot fall below alpha 0.05; "
            "pairing needs 6") != std::string::npos);
  const auto forced = cuzk::test::run_bench("compare --json --design paired five/a.jsonl five/b.jsonl", d.path());
  REQUIRE(forced.code == 0);
  CHECK(json::parse(forced.out)["summaries"][0]["design"] == "paired");
}

TEST_CASE("a phase only B has is compared per round as a cost under the paired design") {
  TempDir d;
  RoundsSpec a, b;
  a.seed = 11;
  b.seed = 12;
  b.only_phases = {{"proof/prove/pin_abc", 5e6}};
  write_rounds(d.file("a.jsonl"), a);
  write_rounds(d.file("b.jsonl"), b);
  const auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kAuto));
  const auto* r = cuzk::find_row(c, "proof/prove/pin_abc", "wall_ns");
  REQUIRE(r);
  CHECK(r->verdict == "only in B");
  CHECK(r->unit == "rounds");
  CHECK_FALSE(r->log_ratios);
  CHECK(r->delta > 4e6);
  CHECK(r->delta_low > 0);
  CHECK(r->p_value < 0.01);
  CHECK(r->change_stands());
}

TEST_CASE("a counter named as the primary metric judges the phase: identical counts are unchanged, +0.5% is slower") {
  TempDir d;
  RoundsSpec a, b;
  a.seed = 13;
  b.seed = 14;
  a.primary_metric = b.primary_metric = "sim::instructions";
  a.drift = b.drift = 0.3;
  write_rounds(d.file("a.jsonl"), a);
  write_rounds(d.file("b.jsonl"), b);
  for (const DesignChoice design : {DesignChoice::kAuto, DesignChoice::kSamples}) {
    INFO(cuzk::choice_name(design));
    const auto same = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(design, 0.002));
    const auto* r = cuzk::primary_row(same, "proof/synth");
    REQUIRE(r);
    CHECK(r->metric == "sim::instructions");
    CHECK(r->ratio == 1.0);
    CHECK(r->verdict == "unchanged");
    CHECK_FALSE(cuzk::find_row(same, "proof/synth", "wall_ns")->primary);
    CHECK(cuzk::primary_row(same, "proof/prove")->metric == "wall_ns");  // no counter there
  }
  b.instructions = 1e9 * 1.005;
  write_rounds(d.file("b.jsonl"), b);
  for (const DesignChoice design : {DesignChoice::kAuto, DesignChoice::kSamples}) {
    INFO(cuzk::choice_name(design));
    const auto more = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(design, 0.002));
    const auto* r = cuzk::primary_row(more, "proof/synth");
    REQUIRE(r);
    CHECK(r->metric == "sim::instructions");
    CHECK(r->ratio == Approx(1.005).epsilon(1e-9));
    CHECK(r->verdict == "slower");
  }
  const std::string table =
      cuzk::format_table(cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), with_design(DesignChoice::kAuto, 0.002)));
  CHECK(table.find("sim::instructions") != std::string::npos);
  INFO(table);
  CHECK(table.find("+5000000") != std::string::npos);  // the change as a count, not a time
}

TEST_CASE("the results reader checks round_id and primary_metric") {
  TempDir d;
  RoundsSpec a;
  a.rounds = 2;
  write_rounds(d.file("a.jsonl"), a);
  const std::string text = cuzk::test::slurp(d.file("a.jsonl"));
  struct Bad {
    const char* from;
    const char* to;
    const char* error;
  };
  for (const Bad& b : {Bad{"\"round_id\":1", "\"round_id\":-1", "field 'round_id' must be a non-negative integer, not -1"},
                       Bad{"\"round_id\":1", "\"round_id\":\"1\"", "field 'round_id' must be a non-negative integer"},
                       Bad{"\"round_id\":1", "\"round_id\":1.5", "field 'round_id' must be a non-negative integer"},
                       Bad{"\"round_id\":1", "\"round_id\":1,\"primary_metric\":\"\"",
                           "field 'primary_metric' must be a non-empty string"}}) {
    std::string t = text;
    const size_t at = t.find(b.from);
    REQUIRE(at != std::string::npos);
    t.replace(at, std::string(b.from).size(), b.to);
    try {
      (void)cuzk::parse_results(t, "x.jsonl");
      FAIL("accepted " << b.to);
    } catch (const cuzk::ResultsError& e) {
      CHECK(std::string(e.what()).find("x.jsonl:3: " + std::string(b.error)) == 0);
    }
  }
}

TEST_CASE("CUZK_ROUND_ID is written into every sample; a malformed one stops the process before work") {
  TempDir d;
  auto r = cuzk::test::run_bench("selfmeasure --reps 2 --warmup 0 --touch-mib 1 --out s.jsonl", d.path(),
                                 "CUZK_ROUND_ID=7");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto f = cuzk::read_results(d.file("s.jsonl"));
  REQUIRE(f.samples.size() == 2);
  for (const auto& s : f.samples) CHECK(s.value["round_id"] == 7);
  r = cuzk::test::run_bench("selfmeasure --reps 1 --warmup 0 --touch-mib 1 --out u.jsonl", d.path());
  REQUIRE(r.code == 0);
  CHECK_FALSE(cuzk::read_results(d.file("u.jsonl")).samples.at(0).value.contains("round_id"));
  for (const char* bad : {"-1", "x", "1.5", "", " 3"}) {
    INFO(bad);
    r = cuzk::test::run_bench("selfmeasure --reps 1 --warmup 0 --touch-mib 1 --out bad.jsonl", d.path(),
                              std::string("CUZK_ROUND_ID='") + bad + "'");
    CHECK(r.code == 2);
    CHECK(r.err.rfind("cuzk-bench: error: CUZK_ROUND_ID=\"", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(cuzk::test::exists(d.file("bad.jsonl")));
  }
}
