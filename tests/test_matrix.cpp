// `cuzk-bench matrix`: bad requests are refused with one line and exit 2 before anything is
// built, run or written; and a --factorial run whose variants are this build's binary with planted
// slowdowns (flag pinned: proof/synth +40%, flag smallvec: proof/prove/msm_h +20%, both: a further
// +30% on proof/synth) attributes each planted effect to its flag and phase, and no effect where
// none was planted.
//
// Effects of 10%, 5% and 8% would be the natural sizes, but on the 2-core development VM one
// process's phase times vary by 5% (proof) to 10% and more (synth, 8 ms), so 6 rounds find main
// effects of 10-12% on proof and interactions of 25% with 90% power (measured: docs/matrix.md;
// 12 rounds at 99.9%, as below, about 20% less), and those sizes would make a test that fails by
// chance. The planted sizes are scaled to what the design finds here; the same check at the
// natural sizes is the power study of docs/matrix.md.
//
// The test runs alone (RUN_SERIAL, tests/cmake/matrix.cmake): other tests running beside it on a
// 2-core machine would add noise of their own to the planted run's timings.
//
// How often it fails by chance (results/reference/vm/2026-12-02-matrix-test/README.md, of
// 2026-12-02). Its checks are statistical: 2 planted effects must be found, 4 planted values must
// lie in their intervals, 5 effects must not be found where nothing was planted. With 6 rounds and
// 99% intervals (simultaneous over a phase's 3 effects), as the test was first written, the
// design's own failure rate at this VM's noise is about 5-7% a run (simulated from the noise of 18
// quiet runs: missed plants about 3%, effects found where none was planted about 1.6%), and that is
// what was seen: 2 of 6 and 2 of 20 ctest runs failed, one way or the other, while the planted
// busy-wait was measured not to slow msm_h at all (-0.15% [-1.3%, +1.0%] over 19 runs). 12 rounds
// with 99.9% intervals take it to about 0.4-0.8% a run, and their intervals are about 20% narrower
// (33 residual degrees of freedom instead of 15): an unannounced +10% on msm_a is caught in about 76%
// of runs instead of 55%, +15% in 98% instead of 86%. The cost is time: 13 rounds of 4 processes,
// about 75 s instead of 40.
//
// Other work on the machine (compiles beside the tests on a shared VM) is what ctest cannot keep
// away, and beside it the planted effects are missed: 5 of 14 runs of this command beside one busy
// core, bursts of busy cores, two busy cores from mid-run, or a second matrix run missed one (none
// found an effect where nothing was planted). So the test reads the harness's own reading of
// other work (each measured sample's host.others_busy_cores, net of its resolution) and runs the
// matrix again, up to kAttempts times in all, while some sample saw other processes keep more than
// kQuietCores busy (quiet runs: at most 0.22; the loaded ones: 0.81 to 1.09). The decision depends
// on those readings only, never on the checks' outcome, so it cannot hide a failing check: every
// check applies, unchanged, to the first quiet run. When no run was quiet (a machine loaded from
// start to end: under a load average of 15 on 2 cores one run took 5 minutes), the least
// disturbed run is checked for everything but the statistics (the run completes, its manifest,
// files and summary), and the statistical checks are reported as not judged, with the load that
// stopped them: on such a machine a missed +20% is the machine's, not the design's. Attempts stop
// early when another would not finish within the test's time budget.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;
using nlohmann::json;

namespace {

std::string source_dir() {
  const char* s = std::getenv("CUZK_SOURCE_DIR");
  return s && *s ? s : CUZK_SOURCE_DIR;
}

std::string bin() { return cuzk::test::bench(); }

// A git repository holding a copy of the sources the hash covers, committed.
std::string committed_copy(const TempDir& d) {
  const std::string tree = d.file("tree");
  const std::string cmd = "mkdir -p '" + tree + "' && cd '" + source_dir() +
                          "' && cp -r CMakeLists.txt CMakePresets.json prover harness daemon cmake suites '" + tree +
                          "/' && (test ! -d cuda || cp -r cuda '" + tree + "/') && cd '" + tree +
                          "' && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm copy";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return tree;
}

void refused(const std::string& args, const std::string& expect, const std::string& dir_env = "") {
  TempDir d;
  auto r = cuzk::test::run_bench("matrix " + args + " --out-dir m", dir_env.empty() ? d.path() : dir_env);
  INFO(args << "\n" << r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(expect) != std::string::npos);
  CHECK(cuzk::test::lines_of(r.err).size() == 1);  // one line
  CHECK(!cuzk::test::exists((dir_env.empty() ? d.path() : dir_env) + "/m"));
}

const json* phase_of(const json& c, const std::string& name) {
  for (const auto& p : c.at("phases"))
    if (p.at("phase") == name) return &p;
  return nullptr;
}

const json* effect_of(const json& p, const std::string& name) {
  for (const auto& e : p.at("factorial").at("effects"))
    if (e.at("name") == name) return &e;
  return nullptr;
}

// Other processes' CPU use beyond which a run counts as disturbed (see the top of this file).
constexpr double kQuietCores = 0.3;
constexpr int kAttempts = 3;
// Seconds of matrix runs after which no further attempt starts (ctest's timeout is 900 s).
constexpr double kBudgetSeconds = 480;

// The most cores other processes kept busy during any measured sample of the matrix run in `dir`
// (host.others_busy_cores - host.others_busy_resolution, as judge_env reads it; warm-up rounds
// are not analysed and not counted).
double others_busy_max(const std::string& dir) {
  const json m = json::parse(cuzk::test::slurp(dir + "/manifest.json"));
  double worst = 0;
  for (const auto& v : m.at("variants"))
    for (const auto& round : v.at("rounds")) {
      if (!round.is_string()) continue;
      for (const auto& line : cuzk::test::lines_of(cuzk::test::slurp(dir + "/" + round.get<std::string>()))) {
        const json s = json::parse(line, nullptr, false);
        if (s.is_discarded() || s.value("type", "") != "sample") continue;
        const json values = s.value("env", json::object()).value("values", json::object());
        const json others = values.value("host.others_busy_cores", json());
        const json res = values.value("host.others_busy_resolution", json());
        if (others.is_number()) worst = std::max(worst, others.get<double>() - (res.is_number() ? res.get<double>() : 0.0));
      }
    }
  return worst;
}

}  // namespace

TEST_CASE("matrix refuses bad requests with one line, exit 2 and nothing written") {
  const std::string common = " --suite quick --case porep-tiny --bin '" + bin() + "' --allow-dirty";
  refused("--factorial pinned,bogus" + common, "unknown flag 'bogus'");
  refused("--variants baseline" + common, "at least two presets");
  refused("--factorial a,b,c,d,e,f,g" + common, "at most 6 flags");
  refused("--factorial pinned,pinned" + common, "names a flag twice");
  refused("--variants baseline,nonesuch" + common, "'nonesuch' is not a preset");
  refused("--factorial pinned,smallvec --suite quick --case nope --bin '" + bin() + "' --allow-dirty", "has no case 'nope'");
  refused("--factorial pinned,smallvec --rounds 1" + common, "--rounds must be at least 2");
  refused("--factorial pinned" + common + " --inject 'bogus:proof=5%'", "neither a flag nor a variant");
  refused("--factorial pinned" + common + " --inject 'pinned:proof=-5%'", "--inject 'pinned:proof=-5%'");
  refused("--factorial pinned" + common + " --from somewhere", "takes no --variants or --factorial");
  // --cmake-arg: checked before anything is built (these requests name no binary, so a build
  // would start if the check came later).
  const std::string build = " --suite quick --case porep-tiny --allow-dirty";
  refused("--factorial pinned,smallvec" + build + " --cmake-arg=-GNinja", "expected -DNAME=VALUE");
  refused("--factorial pinned,smallvec" + build + " --cmake-arg=-DCUZK_SMALLVEC=ON", "sets CUZK_SMALLVEC itself");
  refused("--factorial pinned" + common + " --cmake-arg=-DCUZK_CUDA=OFF", "--cmake-arg applies to builds");
}

TEST_CASE("matrix refuses a dirty tree and a stale binary") {
  TempDir d;
  const std::string tree = committed_copy(d);
  // Dirty: a tracked file changed and not committed.
  cuzk::test::spit(tree + "/harness/README.md", "changed\n");
  refused("--factorial pinned --suite quick --case porep-tiny --bin '" + bin() + "' --source-dir '" + tree + "'",
          "has uncommitted changes");
  // Stale: the change committed, so the tree's sources differ from the binary's.
  {
    std::ofstream f(tree + "/harness/suite/suite.cpp", std::ios::app);
    f << "\n// changed after the build\n";
  }
  REQUIRE(std::system(("cd '" + tree + "' && git -c user.name=t -c user.email=t@t commit -qam change").c_str()) == 0);
  refused("--factorial pinned --suite quick --case porep-tiny --bin '" + bin() + "' --source-dir '" + tree + "'",
          " is stale: built from sources ");
}

TEST_CASE("matrix --factorial attributes planted slowdowns to their flag, phase and interaction") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  // Up to kAttempts runs, each in its own folder (m, m2, m3), until one is quiet; the checks below
  // read `m_dir`, the first quiet run or the least disturbed one.
  std::string m_dir, m_log;
  double m_load = std::numeric_limits<double>::infinity();
  const auto t0 = std::chrono::steady_clock::now();
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    const std::string out = attempt == 1 ? "m" : "m" + std::to_string(attempt);
    auto r = cuzk::test::run_bench(
        "matrix --factorial pinned,smallvec --bin '" + bin() +
            "' --allow-dirty --suite quick --case porep-tiny --quick --rounds 12 --warmup 1 --reps 2 --seed 7 --level 0.999"
            " --inject pinned:proof/synth=40% --inject smallvec:proof/prove/msm_h=20%"
            " --inject pinned+smallvec:proof/synth=30% --out-dir " +
            out,
        d.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("planted slowdowns") != std::string::npos);  // never mistaken for real effects
    const double load = others_busy_max(d.file(out));
    if (load < m_load) {
      m_dir = out;
      m_log = r.out + r.err;
      m_load = load;
    }
    if (load <= kQuietCores) break;
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool another = attempt < kAttempts && spent / attempt + spent <= kBudgetSeconds;
    WARN("matrix run " << attempt << " of at most " << kAttempts << ": other processes kept " << load
                       << " cores busy during a measured sample (quiet: at most " << kQuietCores << "); "
                       << (another ? "running it again" : "no quiet run within the time budget"));
    if (!another) break;
  }
  INFO("checked run: " << m_dir << " (others busy at most " << m_load << " cores)\n" << m_log);
  const bool judge_statistics = m_load <= kQuietCores;
  if (!judge_statistics)
    WARN("NOT JUDGED: the statistical checks (planted effects found, intervals, nothing found where nothing was "
         "planted): every run was disturbed, other processes kept up to "
         << m_load << " cores busy in the least disturbed one; the other checks apply");

  const json m = json::parse(cuzk::test::slurp(d.file(m_dir + "/manifest.json")));
  CHECK(m.at("status") == "complete");
  CHECK(m.at("seed") == 7);
  CHECK(m.at("order").size() == 13);  // 1 warm-up + 12 rounds, each a permutation of the 4 variants
  for (const auto& round : m.at("order")) CHECK(round.size() == 4);
  CHECK(m.at("order")[1] != m.at("order")[2]);  // fresh orders (seed 7 gives different permutations)

  const json a = json::parse(cuzk::test::slurp(d.file(m_dir + "/attribution.json")));
  REQUIRE(a.at("cases").size() == 1);
  const json& c = a.at("cases")[0];
  const json* synth = phase_of(c, "proof/synth");
  const json* msm_h = phase_of(c, "proof/prove/msm_h");
  REQUIRE(synth);
  REQUIRE(msm_h);
  REQUIRE(!synth->at("factorial").is_null());
  REQUIRE(!msm_h->at("factorial").is_null());

  auto within = [&](const json& e, double expect) {
    INFO(e.dump() << " expected " << expect);
    if (!judge_statistics) return;
    CHECK(e.at("low").get<double>() <= expect);
    CHECK(e.at("high").get<double>() >= expect);
  };
  // A statistical check: judged only on a run that other processes did not disturb (a macro, so
  // that a failure still shows its expression).
#define JUDGED(...)                          \
  do {                                       \
    if (judge_statistics) CHECK(__VA_ARGS__); \
  } while (0)
  // Main effects average over the other flag: pinned on synth is 1.40 x sqrt(1.30) (half the
  // interaction), smallvec on synth sqrt(1.30) (the other half), smallvec on msm_h 1.20; the
  // interaction's ratio is the planted 1.30. The main effects are found; every planted value lies
  // in its interval (the interaction on an 8 ms phase is not found reliably in 12 rounds here, so only
  // its interval is checked).
  const json* p_synth = effect_of(*synth, "pinned");
  const json* s_synth = effect_of(*synth, "smallvec");
  const json* s_msm = effect_of(*msm_h, "smallvec");
  const json* x_synth = effect_of(*synth, "pinned x smallvec");
  REQUIRE((p_synth && s_synth && s_msm && x_synth));
  for (const json* e : {p_synth, s_msm}) JUDGED(e->at("significant") == true);
  within(*p_synth, 1.40 * std::sqrt(1.30));
  within(*s_synth, std::sqrt(1.30));
  within(*s_msm, 1.20);
  within(*x_synth, 1.30);
  // Where nothing was planted, nothing is found: pinned and the interaction on msm_h, anything on
  // msm_a.
  JUDGED(effect_of(*msm_h, "pinned")->at("significant") == false);
  JUDGED(effect_of(*msm_h, "pinned x smallvec")->at("significant") == false);
  const json* msm_a = phase_of(c, "proof/prove/msm_a");
  REQUIRE(msm_a);
  for (const auto& e : msm_a->at("factorial").at("effects")) JUDGED(e.at("significant") == false);
  // The summary names pinned's effect with the phase where it lands.
  const std::string summary = c.at("summary");
  INFO(summary);
  JUDGED(summary.find("By flag, on proof: pinned ") != std::string::npos);
  JUDGED(summary.find("synth +") != std::string::npos);
  CHECK(cuzk::test::exists(d.file(m_dir + "/attribution.md")));
  CHECK(cuzk::test::exists(d.file(m_dir + "/variants/fx-pinned+smallvec.jsonl")));

  // Re-analysing the folder gives the same attribution.
  auto again = cuzk::test::run_bench("matrix --from " + m_dir + " --level 0.999 --json", d.path());
  INFO(again.err);
  REQUIRE(again.code == 0);
  const json b = json::parse(again.out);
  CHECK(effect_of(*phase_of(b.at("cases")[0], "proof/synth"), "pinned")->at("ratio").get<double>() ==
        Approx(p_synth->at("ratio").get<double>()));
#undef JUDGED
}
