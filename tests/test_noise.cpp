// The noise diagnosis (harness/analysis/noise.hpp, `cuzk-bench noise`) on synthetic processes with known
// structure: between-process offsets, a +20% first repetition, a small trend, and environment
// readings of which one drives the time. The statistics are checked against scipy
// (tests/support/noise_crosscheck.py), the effects against the truth they were built from.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "harness/analysis/noise.hpp"
#include "harness/measure/results.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;
using nlohmann::json;

namespace {

struct Synth {
  uint64_t seed = 7;
  int processes = 6, reps = 8, warmup = 1;
  double within = 0.02;                                                 // sd of ln(time) inside a process
  std::vector<double> offsets = {-0.06, -0.03, 0.0, 0.02, 0.04, 0.07};  // ln offset of each process
  double first = 0.20;         // the first measured repetition is (1 + first) x slower
  double trend = 0.002;        // ln time per repetition
  double warmup_factor = 1.5;  // warm-up repetitions are this much slower
  bool process_ids = true;     // else: one file per process, no process_id
  std::vector<int> reps_of;    // measured repetitions of each process (default: reps)
  // > 0: msm_h also gets gpu_kernel_ns (18 ms times the process's offset, with this sd of ln
  // inside the process), as a run with --gpu-activity records it; kernel_missing names one
  // measured sample (process, repetition) written without it.
  double kernel_within = 0;
  std::pair<int, int> kernel_missing = {-1, -1};
};

// A process id as the recorder writes it: 16 hex digits.
std::string fmt_pid(int p) {
  char b[17];
  std::snprintf(b, sizeof b, "%016x", 0xabc000 + p);
  return b;
}

json record(double wall, const json& gpu) {
  return {{"wall_ns", int64_t(std::llround(wall))},
          {"count", 1},
          {"gpu_ns", gpu},
          {"counters", json::object()},
          {"counter_scope", ""}};
}

// The sample lines of process `p`. Phases: proof (wall only), proof/prove/msm_h (with GPU
// time, which is the metric analysed), proof/srs_load (0 after the first repetition). Env:
// host.cpu_pressure follows the noise (within and between processes), host.loadavg_1m is independent of it,
// gpu.sm_clock_mhz is constant, host.steal_cores is null with a reason, and
// host.others_busy_resolution is a function of the window's length (ticks / wall).
std::vector<json> process_samples(const Synth& s, int p, std::mt19937_64& rng) {
  std::normal_distribution<double> nd(0, 1);
  std::uniform_real_distribution<double> ud(0.2, 1.8);
  std::vector<json> out;
  const double offset = s.offsets.empty() ? 0 : s.offsets[p];
  for (int w = 0; w < 2; ++w) {
    const int n = w == 0 ? s.warmup : s.reps_of.empty() ? s.reps : s.reps_of[p];
    for (int r = 0; r < n; ++r) {
      const double e = s.within * nd(rng);
      double f = std::exp(offset + e + s.trend * r);
      if (w == 0) f *= s.warmup_factor;
      if (w == 1 && r == 0) f *= 1 + s.first;
      const double gpu_f = f * std::exp(s.within * 0.5 * nd(rng));
      json phases = {{"proof", record(100e6 * f, nullptr)},
                     {"proof/prove/msm_h", record(25e6 * gpu_f, json(int64_t(std::llround(20e6 * gpu_f))))},
                     {"proof/srs_load", record(w == 0 || r == 0 ? 5e6 : 0, nullptr)}};
      if (s.kernel_within > 0 && !(w == 1 && std::make_pair(p, r) == s.kernel_missing)) {
        json& m = phases["proof/prove/msm_h"];
        m["gpu_kernel_ns"] = int64_t(std::llround(18e6 * std::exp(offset + s.kernel_within * nd(rng))));
        m["gpu_copy_ns"] = 0;
        m["gpu_idle_ns"] = std::max<int64_t>(0, std::llround(20e6 * gpu_f) - m["gpu_kernel_ns"].get<int64_t>());
      }
      const double interval_ns = 100e6 * f;  // the window is the whole sample
      json env = {{"interval_ns", int64_t(interval_ns)},
                  {"values",
                   {{"host.cpu_pressure", 10 + 150 * (offset + e) + 0.5 * nd(rng)},
                    {"host.others_busy_resolution", 2 * 0.01 / (interval_ns / 1e9)},
                    {"host.loadavg_1m", ud(rng)},
                    {"gpu.sm_clock_mhz", 1980},
                    {"host.steal_cores", nullptr}}},
                  {"errors", {{"host.steal_cores", "no steal field in /proc/stat"}}}};
      json line = {{"schema", "cuzk.results"}, {"version", 1},    {"type", "sample"},
                   {"suite", "prove"},         {"case", "porep"}, {"parameters", {{"partitions", 2}}},
                   {"variant", "default"},     {"repetition", r}, {"warmup", w == 0},
                   {"phases", phases},         {"env", env}};
      if (s.process_ids) line["process_id"] = fmt_pid(p);
      out.push_back(line);
    }
  }
  return out;
}

void write_lines(const std::string& path, const std::vector<json>& samples) {
  cuzk::ResultsWriter w(path, cuzk::ResultsWriter::Mode::kOverwrite);
  w.write(cuzk::make_header({"prove", {"test"}, {}}));
  for (const auto& l : samples) w.write(l);
}

// All processes in one file, told apart by process_id.
void write_one_file(const std::string& path, const Synth& s) {
  std::mt19937_64 rng(s.seed);
  std::vector<json> all;
  for (int p = 0; p < s.processes; ++p)
    for (auto& l : process_samples(s, p, rng)) all.push_back(l);
  write_lines(path, all);
}

// One file per process (no process_id): <dir>/p-<i>.jsonl, i from 1.
std::vector<std::string> write_files(const TempDir& d, Synth s) {
  s.process_ids = false;
  std::mt19937_64 rng(s.seed);
  std::vector<std::string> paths;
  for (int p = 0; p < s.processes; ++p) {
    paths.push_back(d.file("p-" + std::to_string(p + 1) + ".jsonl"));
    write_lines(paths.back(), process_samples(s, p, rng));
  }
  return paths;
}

const cuzk::noise::PhaseNoise& row(const cuzk::noise::Analysis& a, const std::string& phase) {
  for (const auto& r : a.rows)
    if (r.phase == phase) return r;
  FAIL("no row for " << phase);
  static const cuzk::noise::PhaseNoise none;
  return none;
}

bool agrees(double a, double b, double rel = 1e-6) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + 1e-300;
}

json crosscheck(const std::string& data, const std::string& phase) {
  const std::string script = std::string(CUZK_SOURCE_DIR) + "/tests/support/noise_crosscheck.py";
  if (!cuzk::test::exists("/usr/bin/python3"))
    FAIL("/usr/bin/python3 is missing: run scripts/setup.sh (it installs python3-scipy)");
  auto r = cuzk::testing::run_command("/usr/bin/python3 '" + script + "' '" + data + "' '" + phase + "'");
  if (r.status == 3)
    FAIL("/usr/bin/python3 has no scipy: run scripts/setup.sh (it installs python3-scipy)\n" << r.output);
  INFO(r.output);
  REQUIRE(r.status == 0);
  return json::parse(r.output);
}

}  // namespace

TEST_CASE("noise: ANOVA, trend, first repetition and Spearman agree with scipy", "[noise]") {
  TempDir d;
  const std::string data = d.file("all.jsonl");
  Synth s;
  s.reps_of = {8, 8, 6, 8, 7, 8};  // unbalanced: n0 differs from the mean group size
  write_one_file(data, s);
  const auto a = cuzk::noise::analyse_files({data}, {});
  REQUIRE(a.processes.size() == 6);
  CHECK(a.warmup_skipped == 6);
  for (const std::string phase : {"proof", "proof/prove/msm_h"}) {
    const json py = crosscheck(data, phase);
    const auto& r = row(a, phase);
    INFO(phase << "\n" << py.dump(2) << "\n" << r.diagnosis);
    CHECK(r.metric == py["metric"].get<std::string>());
    CHECK(r.processes == 6);
    CHECK(r.reps_min == 6);
    CHECK(r.reps_max == 8);
    CHECK(r.anova.n0 < 39.0 / 6);  // (39 - 257/39) / 5 = 6.48 < 6.5, the mean group size
    REQUIRE(r.anova.why.empty());
    CHECK(agrees(r.anova.f, py["anova"]["f"]));
    CHECK(agrees(r.anova.p, py["anova"]["p"]));
    CHECK(agrees(r.anova.ms_within, py["anova"]["ms_within"]));
    CHECK(agrees(r.anova.n0, py["anova"]["n0"]));
    CHECK(agrees(r.anova.sd_within, py["anova"]["sd_within"]));
    CHECK(agrees(r.anova.sd_between, py["anova"]["sd_between"]));
    CHECK(agrees(r.anova.between_share, py["anova"]["between_share"]));
    REQUIRE(r.trend.why.empty());
    CHECK(agrees(r.trend.slope, py["trend"]["slope"]));
    CHECK(agrees(r.trend.se, py["trend"]["se"]));
    CHECK(r.trend.df == py["trend"]["df"].get<double>());
    CHECK(agrees(r.trend.ci_low, py["trend"]["ci_low"]));
    CHECK(agrees(r.trend.ci_high, py["trend"]["ci_high"]));
    REQUIRE(r.first.why.empty());
    CHECK(agrees(r.first.t, py["first"]["t"]));
    CHECK(agrees(r.first.p, py["first"]["p"]));
    CHECK(agrees(r.first.median_effect, py["first"]["median_effect"]));
    // Every reading that varies was tested, with scipy's rho and p, except the one that is a
    // function of the window's length (scipy, told nothing, finds it at rho -1).
    REQUIRE(r.env.size() + 1 == py["spearman"].size());
    if (phase == "proof") CHECK(py["spearman"]["host.others_busy_resolution"]["rho"].get<double>() < -0.999);
    for (const auto& e : r.env) {
      INFO(e.name);
      REQUIRE(py["spearman"].contains(e.name));
      CHECK(e.n == py["spearman"][e.name]["n"].get<size_t>());
      CHECK(agrees(e.rho, py["spearman"][e.name]["rho"]));
      CHECK(agrees(e.p, py["spearman"][e.name]["p"]));
    }
  }
  // The metric follows the data: GPU time where every sample has it.
  CHECK(row(a, "proof").metric == "wall_ns");
  CHECK(row(a, "proof/prove/msm_h").metric == "gpu_ns");
  // And the figures recover what the data were built from.
  const auto& p = row(a, "proof");
  CHECK(p.anova.sd_within == Approx(0.02).epsilon(0.3));
  CHECK(p.anova.p < 1e-6);  // offsets of -6..+7% against a 2% within-process sd
  CHECK(p.anova.between_share > 0.5);
  CHECK(p.trend.ci_low < 0.002);
  CHECK(p.trend.ci_high > 0.002);
  REQUIRE(!p.env.empty());
  CHECK(p.env.front().name == "host.cpu_pressure");
  CHECK(p.env.front().rho > 0.5);
  CHECK(p.env.size() == 2);  // not tested: the constant clock, the null steal reading, the resolution
  REQUIRE(a.env_window_derived.count("host.others_busy_resolution"));
  CHECK(a.env_window_derived.at("host.others_busy_resolution") == Approx(-1));
  CHECK(p.diagnosis.find("proof: between-process noise dominates") == 0);
  CHECK(p.diagnosis.find("slower when host.cpu_pressure is high") != std::string::npos);
}

TEST_CASE("noise: a GPU phase is analysed by its kernel time where every sample has one", "[noise]") {
  TempDir d;
  Synth s;
  s.kernel_within = 0.002;  // the kernels 10 times steadier than the events' span (within 2%)
  write_one_file(d.file("k.jsonl"), s);
  const auto a = cuzk::noise::analyse_files({d.file("k.jsonl")}, {});
  const auto& r = row(a, "proof/prove/msm_h");
  INFO(r.diagnosis);
  CHECK(r.metric == "gpu_kernel_ns");
  CHECK(r.median_ns == Approx(18e6).epsilon(0.05));  // the kernel times', not the events' 20 ms
  REQUIRE(r.anova.why.empty());
  CHECK(r.anova.sd_within == Approx(0.002).epsilon(0.3));
  CHECK(row(a, "proof").metric == "wall_ns");
  // One sample without kernel time: the events' GPU time, as compare judges it then.
  s.kernel_missing = {2, 3};
  write_one_file(d.file("k1.jsonl"), s);
  const auto b = cuzk::noise::analyse_files({d.file("k1.jsonl")}, {});
  CHECK(row(b, "proof/prove/msm_h").metric == "gpu_ns");
  CHECK(row(b, "proof/prove/msm_h").median_ns == Approx(20e6).epsilon(0.05));
}

TEST_CASE("noise: the first-repetition effect recovers +20%", "[noise]") {
  TempDir d;
  write_one_file(d.file("all.jsonl"), Synth{});
  const auto a = cuzk::noise::analyse_files({d.file("all.jsonl")}, {});
  const auto& r = row(a, "proof");
  INFO(r.diagnosis);
  REQUIRE(r.first.why.empty());
  CHECK(std::fabs(r.first.median_effect - 0.20) < 0.02);
  CHECK(r.first.slower == 6);
  CHECK(r.first.processes == 6);
  CHECK(r.first.p < 0.05);
  CHECK(r.diagnosis.find("first repetition +") != std::string::npos);
  // With --include-warmup the (1.5x slower) warm-up becomes the first repetition.
  cuzk::noise::Options o;
  o.include_warmup = true;
  const auto w = cuzk::noise::analyse_files({d.file("all.jsonl")}, o);
  const auto& rw = row(w, "proof");
  CHECK(rw.reps_max == 9);
  CHECK(std::fabs(rw.first.median_effect - 0.5) < 0.1);
  CHECK(w.warmup_skipped == 0);
}

TEST_CASE("noise: without between-process offsets the processes are not blamed", "[noise]") {
  TempDir d;
  Synth s;
  s.offsets = {0, 0, 0, 0, 0, 0};
  s.seed = 11;
  write_one_file(d.file("flat.jsonl"), s);
  const auto a = cuzk::noise::analyse_files({d.file("flat.jsonl")}, {});
  const auto& r = row(a, "proof");
  INFO(r.diagnosis << " share " << r.anova.between_share << " p " << r.anova.p);
  REQUIRE(r.anova.why.empty());
  CHECK(r.anova.between_share < 0.1);
  CHECK(r.anova.p > 0.05);
  CHECK(r.diagnosis.find("proof: within-process noise dominates") == 0);
  CHECK(r.diagnosis.find("between-process noise dominates") == std::string::npos);
  CHECK(r.diagnosis.find("significant between-process part") == std::string::npos);
}

TEST_CASE("noise: impossible statistics are '-' with the reason, never 0", "[noise]") {
  TempDir d;
  Synth s;
  s.reps = 1;  // one measured repetition per process: only the median and cv exist
  write_one_file(d.file("one.jsonl"), s);
  const auto a = cuzk::noise::analyse_files({d.file("one.jsonl")}, {});
  const auto& r = row(a, "proof");
  CHECK(!r.anova.why.empty());
  CHECK(!r.first.why.empty());
  CHECK(!r.trend.why.empty());
  const std::string t = cuzk::noise::format_table(a);
  INFO(t);
  CHECK(t.find("-[1]") != std::string::npos);
  CHECK(t.find("[1] fewer than 2 processes have a repetition after the first") != std::string::npos);
  const json j = cuzk::noise::to_json(a);
  CHECK(j["rows"][0]["anova"]["f"].is_null());
  CHECK(j["rows"][0]["anova"]["unavailable"].is_string());

  // Times of 0 ns (parameters already resident) have no logarithm: said, not guessed.
  write_one_file(d.file("all.jsonl"), Synth{});
  const auto b = cuzk::noise::analyse_files({d.file("all.jsonl")}, {});
  const auto& z = row(b, "proof/srs_load");
  CHECK(z.anova.why.find("42 of 48 times are 0 ns") == 0);
  CHECK(z.diagnosis.find("proof/srs_load: median 0 ns; 42 of 48 times are 0 ns") == 0);
  // The env notes: the null reading with its reason, once; the constant one.
  const std::string tb = cuzk::noise::format_table(b);
  CHECK(tb.find("host.steal_cores: null in every sample (no steal field in /proc/stat)") != std::string::npos);
  CHECK(tb.find("gpu.sm_clock_mhz: constant 1980") != std::string::npos);
  CHECK(tb.find("host.others_busy_resolution: follows the sample's window length") != std::string::npos);
}

TEST_CASE("noise: analysis input errors", "[noise]") {
  TempDir d;
  Synth s;
  write_one_file(d.file("all.jsonl"), s);
  cuzk::noise::Options o;
  o.phases = {"proof/nope"};
  CHECK_THROWS_WITH(cuzk::noise::analyse_files({d.file("all.jsonl")}, o),
                    Catch::Matchers::Contains("--phase proof/nope: no sample holds this phase"));
  s.processes = 1;
  write_one_file(d.file("single.jsonl"), s);
  CHECK_THROWS_WITH(cuzk::noise::analyse_files({d.file("single.jsonl")}, {}),
                    Catch::Matchers::Contains("needs at least 2"));
  s.reps = 0;
  write_one_file(d.file("warm.jsonl"), s);
  CHECK_THROWS_WITH(cuzk::noise::analyse_files({d.file("warm.jsonl")}, {}),
                    Catch::Matchers::Contains("no measured sample"));
}

TEST_CASE("noise: the CLI on existing files", "[noise]") {
  TempDir d;
  Synth s;
  s.processes = 2;
  write_files(d, s);
  auto r = cuzk::test::run_bench("noise --from p-1.jsonl p-2.jsonl", d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("noise: 2 processes, 2 files") == 0);
  CHECK(r.out.find("between share") != std::string::npos);
  CHECK(r.out.find("\nproof ") != std::string::npos);
  CHECK(r.out.find("2 x 8") != std::string::npos);
  CHECK(r.out.find("diagnosis:\n  proof") != std::string::npos);

  auto j = cuzk::test::run_bench("noise --from p-1.jsonl p-2.jsonl --json --phase proof", d.path());
  REQUIRE(j.code == 0);
  const json doc = json::parse(j.out);
  CHECK(doc["schema"] == "cuzk.noise");
  CHECK(doc["version"] == 1);
  CHECK(doc["rows"].size() == 1);
  CHECK(doc["inputs"].size() == 2);
  auto m = cuzk::test::run_bench("noise --from p-1.jsonl p-2.jsonl --markdown", d.path());
  CHECK(m.code == 0);
  CHECK(m.out.find("| phase | metric |") != std::string::npos);

  // A malformed file: exit 2, naming file:line.
  std::string text = cuzk::test::slurp(d.file("p-2.jsonl"));
  const size_t third = text.find('\n', text.find('\n') + 1) + 1;
  text.insert(third, "{\"schema\": \"cuzk.results\", \"version\": 1, \"type\": \"sample\", oops\n");
  cuzk::test::spit(d.file("bad.jsonl"), text);
  auto bad = cuzk::test::run_bench("noise --from p-1.jsonl bad.jsonl", d.path());
  INFO(bad.err);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("bad.jsonl:3:") != std::string::npos);

  for (const char* args :
       {"noise --processes 1", "noise --workload nope", "noise --reps 2", "noise --reps -1", "noise --warmup fast",
        "noise --warmup -1", "noise --from p-1.jsonl", "noise --from missing.jsonl p-1.jsonl",
        "noise --from p-1.jsonl p-2.jsonl --processes 3", "noise --from p-1.jsonl p-2.jsonl --phase x",
        "noise --from p-1.jsonl p-2.jsonl --json --markdown"}) {
    auto e = cuzk::test::run_bench(args, d.path());
    INFO(args << ": " << e.err);
    CHECK(e.code == 2);
    CHECK(e.err.find("rror") != std::string::npos);
    CHECK(e.out.empty());
  }
  auto p1 = cuzk::test::run_bench("noise --processes 1", d.path());
  CHECK(p1.err.find("--processes 1") != std::string::npos);
  CHECK(!cuzk::test::exists(d.file("results")));  // refused before anything ran
}

TEST_CASE("noise: the CLI runs the workload as separate processes", "[noise]") {
  TempDir d;
  Synth s;
  s.processes = 3;
  s.reps = 4;
  write_files(d, s);  // p-1..3.jsonl: what the fake workload will "measure"
  // A stand-in for cuzk-bench: logs its arguments, copies the prepared file to --out.
  const std::string fake = d.file("fake-bench.sh");
  cuzk::test::spit(fake,
                   "#!/bin/sh\necho \"args: $*\"\nout=; prev=\nfor a in \"$@\"; do [ \"$prev\" = --out ] && "
                   "out=$a; prev=$a; done\ncp \"" +
                       d.path() + "/$(basename \"$out\")\" \"$out\"\n");
  REQUIRE(std::system(("chmod +x '" + fake + "'").c_str()) == 0);
  auto r = cuzk::test::run_bench(
      "noise --processes 3 --reps 4 --warmup 1 --stable --workload-arg=--backend "
      "--workload-arg=cpu --bench '" +
          fake + "' --out-dir run",
      d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("noise: 3 processes, 3 files") == 0);
  for (const char* f : {"noise.txt", "noise.md", "noise.json", "p-1.jsonl", "p-3.jsonl", "p-3.log"})
    CHECK(cuzk::test::exists(d.file(std::string("run/") + f)));
  CHECK(cuzk::test::slurp(d.file("run/p-2.log"))
            .find("args: prove --reps 4 --warmup 1 --out run/p-2.jsonl --stable "
                  "--backend cpu") == 0);
  const json doc = json::parse(cuzk::test::slurp(d.file("run/noise.json")));
  CHECK(doc["run"]["processes"] == 3);
  CHECK(doc["run"]["stable"] == true);
  CHECK(cuzk::test::slurp(d.file("run/noise.txt")) == r.out);

  // --stable without --warmup leaves the warm-ups to the workload (auto under --stable), as ab does.
  auto st =
      cuzk::test::run_bench("noise --processes 2 --reps 3 --stable --bench '" + fake + "' --out-dir st", d.path());
  INFO(st.err);
  CHECK(st.code == 0);
  CHECK(cuzk::test::slurp(d.file("st/p-1.log")).find("args: prove --reps 3 --out st/p-1.jsonl --stable\n") == 0);

  // The same folder again: refused, nothing overwritten.
  auto again = cuzk::test::run_bench("noise --processes 3 --reps 4 --bench '" + fake + "' --out-dir run", d.path());
  CHECK(again.code == 2);
  CHECK(again.err.find("already holds run/p-1.jsonl") != std::string::npos);

  // A failing workload: stops at once, naming its log.
  cuzk::test::spit(fake, "#!/bin/sh\necho broken >&2\nexit 5\n");
  auto f = cuzk::test::run_bench("noise --processes 2 --reps 3 --bench '" + fake + "' --out-dir failed", d.path());
  INFO(f.err);
  CHECK(f.code == 1);
  CHECK(f.err.find("process 1 of 2 failed with exit status 5: see its log failed/p-1.log") != std::string::npos);
  CHECK(cuzk::test::slurp(d.file("failed/p-1.log")) == "broken\n");
  CHECK(!cuzk::test::exists(d.file("failed/p-2.log")));
}
