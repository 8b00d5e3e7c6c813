// Calibration-only injected slowdowns (harness/measure/inject.hpp): spec parsing, and that an injected
// phase gets longer by about the given percentage while its siblings do not.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "harness/measure/clock.hpp"
#include "harness/measure/gpu_activity.hpp"
#include "harness/measure/inject.hpp"
#include "harness/measure/recorder.hpp"
#include "harness/measure/results.hpp"
#include "prover/instr/phase.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

using cuzk::inject::InjectError;
using cuzk::inject::parse_spec;
using nlohmann::json;

TEST_CASE("inject: valid specs parse", "[inject]") {
  auto one = parse_spec("proof/prove/msm_h=20%");
  REQUIRE(one.size() == 1);
  CHECK(one[0].phase == "proof/prove/msm_h");
  CHECK(one[0].pct == 20);
  auto two = parse_spec(" proof = 3 , proof/synth=12.5% ");
  REQUIRE(two.size() == 2);
  CHECK(two[0].phase == "proof");
  CHECK(two[0].pct == 3);
  CHECK(two[1].phase == "proof/synth");
  CHECK(two[1].pct == 12.5);
  CHECK(parse_spec("").empty());
  CHECK(cuzk::inject::format_spec(two) == "proof=3%,proof/synth=12.5%");
  // ":gpu": the phase's reported GPU time is scaled instead of its wall time waited for.
  auto gpu = parse_spec("proof/prove/msm_h=2%:gpu,proof=1");
  REQUIRE(gpu.size() == 2);
  CHECK(gpu[0].gpu);
  CHECK(gpu[0].pct == 2);
  CHECK_FALSE(gpu[1].gpu);
  CHECK(cuzk::inject::format_spec(gpu) == "proof/prove/msm_h=2%:gpu,proof=1%");
}

TEST_CASE("inject: malformed specs are errors", "[inject]") {
  for (const char* bad : {"proof", "proof=", "proof=abc", "proof=-5%", "proof=0", "=5%", "proof=5%%", "proof=5,",
                          "proof=5,proof=6", "/proof=5", "proof=2000", "proof=5x", "proof=5%:cpu", "proof=:gpu"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_spec(bad), InjectError);
  }
  try {
    parse_spec("proof/prove=abc");
    FAIL("no throw");
  } catch (const InjectError& e) {
    CHECK(std::string(e.what()).find("proof/prove=abc") != std::string::npos);
  }
}

TEST_CASE("inject: not active without the variable; spin_until waits", "[inject]") {
  // ctest does not set CUZK_INJECT_SLOWDOWN for this binary.
  REQUIRE_FALSE(cuzk::inject::active());
  CHECK(cuzk::inject::on_phase_end("proof", cuzk::now_ns()) == 0);
  const uint64_t t0 = cuzk::now_ns();
  cuzk::inject::spin_until(t0 + 2'000'000);
  CHECK(cuzk::now_ns() - t0 >= 2'000'000);
}

namespace {
std::map<std::string, std::vector<double>> phase_ms(const std::string& path) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& s : cuzk::read_results(path).samples) {
    if (s.value.value("warmup", false)) continue;
    for (auto& [p, rec] : s.value["phases"].items()) out[p].push_back(rec["wall_ns"].get<double>() / 1e6);
  }
  return out;
}
// The minimum over samples: load from other processes only adds time, so the minimum of a
// sleep-based phase is stable across processes where the median is not.
double lo(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
}  // namespace

TEST_CASE("inject: lengthens exactly the named phase by about the percentage", "[inject]") {
  cuzk::test::TempDir d;
  const std::string common = "selfmeasure --reps 6 --warmup 1 --counters '' --no-spans --touch-mib 1 --out ";
  // Two processes of each, interleaved, and the minimum over both: a fresh-clone run on an
  // oversubscribed machine once gave the injected process's minimum 20.6 ms against 10.1 ms plain
  // (2.03), its every sample slowed by load that the plain process had escaped.
  std::map<std::string, std::vector<double>> p, q;
  double ratio = 0;
  // The ratio's upper bound is a timing that load can break (the wait is 50% of the phase as it
  // was measured, sleep included): measured again, up to three times in all, while it is out.
  for (int attempt = 0; attempt < 3 && !(ratio > 0 && ratio < 1.9); ++attempt) {
    p.clear();
    q.clear();
    for (int k = 0; k < 2; ++k) {
      const std::string pf = "plain" + std::to_string(k) + ".jsonl", qf = "inj" + std::to_string(k) + ".jsonl";
      std::filesystem::remove(d.file(pf));
      std::filesystem::remove(d.file(qf));
      auto plain = cuzk::test::run_bench(common + pf, d.path(), "env -u CUZK_INJECT_SLOWDOWN");
      REQUIRE(plain.code == 0);
      // proof/prove/ntt_h sleeps 10 ms: +50% -> at least 15 ms in every sample.
      auto inj = cuzk::test::run_bench(common + qf, d.path(), "CUZK_INJECT_SLOWDOWN='proof/prove/ntt_h=50%'");
      INFO(inj.out << inj.err);
      REQUIRE(inj.code == 0);
      CHECK(inj.err.find("CUZK_INJECT_SLOWDOWN=proof/prove/ntt_h=50% is active") != std::string::npos);
      for (auto& [phase, v] : phase_ms(d.file(pf))) p[phase].insert(p[phase].end(), v.begin(), v.end());
      for (auto& [phase, v] : phase_ms(d.file(qf))) q[phase].insert(q[phase].end(), v.begin(), v.end());
    }
    REQUIRE(q["proof/prove/ntt_h"].size() == 12);
    ratio = lo(q["proof/prove/ntt_h"]) / lo(p["proof/prove/ntt_h"]);
  }
  // Every injected sample: at least 1.5 x the 10 ms sleep (the wait is 50% of the measured
  // duration, and a sleep never returns early).
  for (double v : q["proof/prove/ntt_h"]) CHECK(v >= 15.0);
  INFO("ntt_h ratio of minima " << ratio);
  // 1.5 expected (a 20 ms phase would be 30 ms); allow scheduler noise on 2 busy cores.
  CHECK(ratio > 1.35);
  // On an oversubscribed machine (more runnable work than cores over the last minute) the
  // upper bound is not judged: the test says what it met instead of failing on it.
  const double load = cuzk::test::load_per_core();
  if (ratio >= 1.9 && load > 1.0)
    WARN("ntt_h ratio of minima " << ratio << " after 3 measurements at a load of " << load
                                  << " per core: the upper bound 1.9 is not judged on an oversubscribed machine");
  else
    CHECK(ratio < 1.9);
  // Siblings: unchanged (sleeps of 1-4 ms; allow scheduler jitter).
  for (const char* sib : {"proof/prove/msm_h", "proof/prove/msm_l", "proof/prove/assemble", "proof/srs_load"}) {
    // A 50% injection there would add 0.5-2 ms to the minimum.
    INFO(sib << ": plain min " << lo(p[sib]) << " ms, injected min " << lo(q[sib]) << " ms");
    CHECK(std::abs(lo(q[sib]) - lo(p[sib])) < 0.2 * lo(p[sib]) + 0.3);
  }
}

TEST_CASE("inject: a malformed variable stops cuzk-bench with exit status 2", "[inject]") {
  cuzk::test::TempDir d;
  auto r = cuzk::test::run_bench("selfmeasure --reps 1 --warmup 0 --counters '' --out x.jsonl", d.path(),
                                 "CUZK_INJECT_SLOWDOWN='proof/prove/msm_h=abc'");
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("CUZK_INJECT_SLOWDOWN") != std::string::npos);
  CHECK(r.err.find("not a number") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(d.file("x.jsonl")));
}

// Runs in a child process started by the next case, with CUZK_INJECT_SLOWDOWN set (the variable
// is read once per process): hidden from normal runs by the "[.]" tag.
TEST_CASE("inject child: a :gpu entry scales the reported GPU times and waits for nothing", "[.][gpu-child]") {
  cuzk::RecorderOptions ro;
  ro.nvtx = false;
  cuzk::Recorder rec(ro);
  rec.install();
  rec.take_sample();
  const uint64_t t0 = cuzk::now_ns();
  {
    cuzk::instr::Phase p("x");
    cuzk::instr::report_gpu_time(p.path(), 1'000'000);
  }
  const uint64_t took = cuzk::now_ns() - t0;
  cuzk::Sample s = rec.take_sample();
  rec.uninstall();
  REQUIRE(s.phases["x"].gpu_ns.has_value());
  CHECK(*s.phases["x"].gpu_ns == 1'500'000);
  CHECK(took < 1'000'000);  // a wall-time injection would have waited 50% of the phase, not this
  // The kernel time without gaps scales alike (compare judges a phase by it where collected);
  // copies and idle gaps stay as measured. A phase the entry does not name keeps its times.
  namespace ga = cuzk::instr::gpu_activity;
  ga::Batch b;
  b.openings.push_back({1, "x", 0, 1000, 9000});
  b.openings.push_back({2, "y", 0, 10000, 12000});
  b.activities.push_back({ga::Kind::kKernel, 2000, 6000, 1, 0, 10});
  b.activities.push_back({ga::Kind::kMemcpy, 7000, 8000, 1, 0, 11});
  b.activities.push_back({ga::Kind::kKernel, 10000, 11000, 1, 0, 12});
  b.launched_in = {{10, 1}, {11, 1}, {12, 2}};
  s.phases["y"].wall_ns = 2000;
  s.phases["y"].count = 1;
  REQUIRE(cuzk::apply_gpu_activity(s, b).empty());
  CHECK(s.phases["x"].gpu_kernel_ns == 6000u);  // 4000 ns of kernels, +50%
  CHECK(s.phases["x"].gpu_copy_ns == 1000u);
  CHECK(s.phases["x"].gpu_idle_ns == 3000u);    // 8000 ns span - 5000 ns of activity
  CHECK(s.phases["y"].gpu_kernel_ns == 1000u);
}

TEST_CASE("inject: a :gpu entry scales the phase's GPU time (child process)", "[inject]") {
  std::string self = "/proc/self/exe";
  char buf[4096];
  const ssize_t n = readlink(self.c_str(), buf, sizeof buf - 1);
  REQUIRE(n > 0);
  self.assign(buf, size_t(n));
  auto r = cuzk::testing::run_command("CUZK_INJECT_SLOWDOWN='x=50%:gpu' '" + self + "' '[gpu-child]'");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("x=50%:gpu is active") != std::string::npos);
}

TEST_CASE("inject: a results file written under the variable says so in its header; a plain one has no key", "[inject]") {
  cuzk::test::TempDir d;
  const std::string common = "selfmeasure --reps 1 --warmup 0 --counters '' --no-spans --touch-mib 1 --out ";
  auto plain = cuzk::test::run_bench(common + "plain.jsonl", d.path(), "env -u CUZK_INJECT_SLOWDOWN");
  REQUIRE(plain.code == 0);
  auto inj = cuzk::test::run_bench(common + "inj.jsonl", d.path(),
                                   "CUZK_INJECT_SLOWDOWN='proof/prove/ntt_h=5%,proof/prove/msm_h=2%:gpu'");
  INFO(inj.out << inj.err);
  REQUIRE(inj.code == 0);
  const json h = cuzk::read_results(d.file("inj.jsonl")).header.value;
  REQUIRE(h.contains("injected"));
  CHECK(h["injected"]["spec"] == "proof/prove/ntt_h=5%,proof/prove/msm_h=2%:gpu");
  REQUIRE(h["injected"]["slowdowns"].size() == 2);
  CHECK(h["injected"]["slowdowns"][0] == json({{"phase", "proof/prove/ntt_h"}, {"pct", 5.0}, {"metric", "wall_ns"}}));
  CHECK(h["injected"]["slowdowns"][1]["metric"] == "gpu_ns");
  CHECK_FALSE(cuzk::read_results(d.file("plain.jsonl")).header.value.contains("injected"));
  // In this process (no variable) make_header adds no key either.
  CHECK_FALSE(cuzk::make_header({"unit", {"test_inject"}, {}}).contains("injected"));
}

TEST_CASE("inject: a header's \"injected\" must be null or an object with a spec", "[inject]") {
  json h = cuzk::make_header({"unit", {"test_inject"}, {}});
  auto parse = [](const json& header) { return cuzk::parse_results(header.dump() + "\n", "x.jsonl"); };
  CHECK_NOTHROW(parse(h));
  h["injected"] = nullptr;
  CHECK_NOTHROW(parse(h));
  h["injected"] = {{"spec", "proof=5%"}, {"slowdowns", json::array()}};
  CHECK_NOTHROW(parse(h));
  h["injected"] = "proof=5%";
  CHECK_THROWS_AS(parse(h), cuzk::ResultsError);
  h["injected"] = {{"slowdowns", json::array()}};
  CHECK_THROWS_AS(parse(h), cuzk::ResultsError);
}
