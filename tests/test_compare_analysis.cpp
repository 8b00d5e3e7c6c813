// The analysis choices of compare (harness/analysis/compare.hpp): GPU time as the primary metric of GPU
// phases, processes as the units of observation (block design, checked against scipy), and
// samples disturbed by throttling or load (environment readings).
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/gate.hpp"
#include "subprocess.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::test::SynthSpec;
using cuzk::test::TempDir;
using nlohmann::json;

namespace {

const char* kMsm = "proof/prove/msm_h";


// B's msm_h GPU time 10% slower while its wall time stays as A's.
SynthSpec gpu_slower_spec(uint64_t seed) {
  SynthSpec s;
  s.seed = seed;
  s.edit_sample = [](json& sample, int) {
    auto& rec = sample["phases"][kMsm];
    rec["gpu_ns"] = static_cast<int64_t>(rec["gpu_ns"].get<double>() * 1.10);
  };
  return s;
}

}  // namespace

TEST_CASE("a GPU phase is judged by its GPU time; its wall time is shown, not judged") {
  TempDir d;
  SynthSpec a;
  a.seed = 11;
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), gpu_slower_spec(12));
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const auto* gpu = cuzk::find_row(c, kMsm, "gpu_ns");
  const auto* wall = cuzk::find_row(c, kMsm, "wall_ns");
  REQUIRE(gpu);
  REQUIRE(wall);
  CHECK(gpu->primary);
  CHECK_FALSE(wall->primary);
  CHECK(gpu->verdict == "slower");
  CHECK(wall->verdict != "slower");
  CHECK(cuzk::primary_row(c, kMsm) == gpu);
  // The GPU row comes first and the wall row is marked secondary in every output.
  const std::string table = cuzk::format_table(c);
  CHECK(table.find("(wall)") != std::string::npos);
  CHECK(table.find("judged by it") != std::string::npos);
  json j = cuzk::to_json(c);
  CHECK(j["metric"] == "auto");
  // A phase without GPU time keeps wall time as its primary metric.
  REQUIRE(cuzk::primary_row(c, "proof/synth"));
  CHECK(cuzk::primary_row(c, "proof/synth")->metric == "wall_ns");

  SECTION("--metric wall judges the wall time") {
    cuzk::CompareOptions o;
    o.analysis.metric_choice = cuzk::MetricChoice::kWall;
    auto w = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), o);
    CHECK(cuzk::primary_row(w, kMsm)->metric == "wall_ns");
    CHECK(cuzk::primary_row(w, kMsm)->verdict != "slower");
  }
  SECTION("gate fails on the GPU time, and passes with --metric wall") {
    cuzk::test::spit(d.file("t.toml"), "[default]\nmax_slowdown = 0.05\n");
    cuzk::GateOptions go;
    auto g = cuzk::run_gate(d.file("a.jsonl"), d.file("b.jsonl"), d.file("t.toml"), go);
    CHECK(g.exit_code == 1);
    REQUIRE(g.regressions.size() == 1);
    CHECK(g.regressions[0].find("gpu_ns") != std::string::npos);
    go.analysis.metric_choice = cuzk::MetricChoice::kWall;
    CHECK(cuzk::run_gate(d.file("a.jsonl"), d.file("b.jsonl"), d.file("t.toml"), go).exit_code == 0);
  }
}

TEST_CASE("a GPU phase with GPU time missing in some samples is judged by wall time") {
  TempDir d;
  SynthSpec a, b = gpu_slower_spec(22);
  a.seed = 21;
  auto edit = b.edit_sample;
  b.edit_sample = [edit](json& s, int rep) {
    edit(s, rep);
    if (rep == 3) s["phases"][kMsm]["gpu_ns"] = nullptr;
  };
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  REQUIRE(cuzk::primary_row(c, kMsm));
  CHECK(cuzk::primary_row(c, kMsm)->metric == "wall_ns");
  CHECK_FALSE(cuzk::find_row(c, kMsm, "gpu_ns")->primary);
}

TEST_CASE("processes are the units when repetitions share a process: per-process medians, as scipy computes") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 31;
  b.seed = 32;
  for (SynthSpec* s : {&a, &b}) {
    s->reps = 30;
    s->processes = 6;
    s->process_sigma = 0.03;
    s->sigma = 0.005;
  }
  b.slowdown = {{"proof", 1.04}};
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  for (const char* metric : {"wall_ns", "gpu_ns"}) {
    const std::string phase = std::string(metric) == "gpu_ns" ? kMsm : "proof";
    const auto* r = cuzk::find_row(c, phase, metric);
    REQUIRE(r);
    CHECK(r->unit == "processes");
    CHECK(r->observations_a == 6);
    CHECK(r->observations_b == 6);
    CHECK(r->samples_a == 30);
    auto py = cuzk::testing::run_command("/usr/bin/python3 " + std::string(CUZK_SOURCE_DIR) +
                                      "/tests/support/blocks_crosscheck.py " + d.file("a.jsonl") + " " +
                                      d.file("b.jsonl") + " " + phase + " " + metric);
    INFO(py.output);
    REQUIRE(py.status == 0);  // needs python3-numpy and python3-scipy (scripts/setup.sh installs them)
    json ref = json::parse(py.output);
    CHECK(ref["n_a"] == r->observations_a);
    CHECK(ref["n_b"] == r->observations_b);
    CHECK(ref["median_a"].get<double>() == Approx(r->median_a).epsilon(1e-12));
    CHECK(ref["median_b"].get<double>() == Approx(r->median_b).epsilon(1e-12));
    CHECK(ref["exact"].get<bool>() == r->exact_test);
    CHECK(ref["p"].get<double>() == Approx(r->p_value).epsilon(1e-9));
  }
  CHECK(cuzk::format_table(c).find("6x5/6x5") != std::string::npos);

  SECTION("--blocks off: every sample is an observation") {
    cuzk::CompareOptions o;
    o.analysis.design = cuzk::DesignChoice::kSamples;
    auto s = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), o);
    CHECK(cuzk::find_row(s, "proof", "wall_ns")->unit == "samples");
    CHECK(cuzk::find_row(s, "proof", "wall_ns")->observations_a == 30);
  }
}

TEST_CASE("one repetition per process, or no process ids: samples are the units") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 41;
  b.seed = 42;
  a.processes = b.processes = 10;  // 10 reps over 10 processes: one each
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  CHECK(cuzk::find_row(c, "proof", "wall_ns")->unit == "samples");
  SynthSpec plain;
  cuzk::test::write_synth(d.file("p.jsonl"), plain);
  CHECK(cuzk::find_row(cuzk::compare_files(d.file("p.jsonl"), d.file("b.jsonl"), {}), "proof", "wall_ns")->unit == "samples");
}

TEST_CASE("samples taken while the GPU throttled or the host was loaded are flagged, and dropped on request") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 51;
  b.seed = 52;
  auto env = [](double throttle_ns, double others) {
    return json{{"interval_ns", 1e8},
                {"values", {{"gpu.throttle_ns", throttle_ns}, {"host.others_busy_cores", others},
                            {"host.others_busy_resolution", 0.2}, {"host.steal_cores", 0.0}}},
                {"errors", json::object()}};
  };
  b.edit_sample = [&](json& s, int rep) {
    s["env"] = rep == 2 ? env(12e6, 0) : rep == 5 ? env(0, 3.5) : env(0, 0.1);  // simulated readings
  };
  a.edit_sample = [&](json& s, int) { s["env"] = env(0, 0.1); };
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  CHECK(c.env_a.throttled + c.env_a.loaded == 0);
  CHECK(c.env_b.throttled == 1);
  CHECK(c.env_b.loaded == 1);
  CHECK(c.env_b.dropped == 0);
  std::string warn;
  for (const auto& w : c.warnings) warn += w + "\n";
  INFO(warn);
  CHECK(warn.find("B: 2 of 10 samples") != std::string::npos);
  CHECK(warn.find("repetition 2") != std::string::npos);
  CHECK(warn.find("kept") != std::string::npos);
  CHECK(cuzk::find_row(c, "proof", "wall_ns")->observations_b == 10);

  cuzk::CompareOptions o;
  o.analysis.drop_disturbed = true;
  auto dropped = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), o);
  CHECK(dropped.env_b.dropped == 2);
  CHECK(cuzk::find_row(dropped, "proof", "wall_ns")->observations_b == 8);
  warn.clear();
  for (const auto& w : dropped.warnings) warn += w + "\n";
  CHECK(warn.find("2 left out (--drop-disturbed)") != std::string::npos);
  CHECK(cuzk::to_json(dropped)["environment"]["b"]["dropped"] == 2);
}

TEST_CASE("cuzk-bench compare and gate: bad analysis flags are exit status 2") {
  TempDir d;
  SynthSpec a;
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::spit(d.file("t.toml"), "[default]\nmax_slowdown = 0.05\n");
  for (const char* args : {"compare a.jsonl a.jsonl --metric gpu-ish", "compare a.jsonl a.jsonl --blocks maybe",
                           "compare a.jsonl a.jsonl --max-other-load -1",
                           "gate --baseline a.jsonl --candidate a.jsonl --thresholds t.toml --metric x"}) {
    auto r = cuzk::test::run_bench(args, d.path());
    INFO(args << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("--") != std::string::npos);
  }
  auto ok = cuzk::test::run_bench("compare a.jsonl a.jsonl --drop-disturbed --blocks off --metric wall", d.path());
  INFO(ok.err);
  CHECK(ok.code == 0);
}
