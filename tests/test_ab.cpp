// `cuzk-bench ab` with prebuilt binaries (--bin-a/--bin-b): it refuses a binary whose sources
// changed after it was built, refuses one built by another preset, and with a matching
// binary runs the quick suite interleaved and ends in the comparison table.
//
// The passing case needs this build's cuzk-bench to be fresh against CUZK_SOURCE_DIR (as
// after any build of the tree: the embedded source hash is recomputed at build time).
#include <glob.h>

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;

namespace {

std::string source_dir() {
  const char* s = std::getenv("CUZK_SOURCE_DIR");
  return s && *s ? s : CUZK_SOURCE_DIR;
}

std::string bin() { return cuzk::test::bench(); }

}  // namespace

TEST_CASE("ab refuses a binary whose sources changed after it was built") {
  TempDir d;
  const std::string tree = d.file("tree");
  // A copy of the sources the hash covers, then one source file modified.
  const std::string src = source_dir();
  std::string cp = "mkdir -p '" + tree + "' && cd '" + src + "' && cp -r CMakeLists.txt CMakePresets.json prover harness daemon cmake suites '" +
                   tree + "/' && (test ! -d cuda || cp -r cuda '" + tree + "/')";
  REQUIRE(std::system(cp.c_str()) == 0);
  {
    std::ofstream f(tree + "/harness/suite/suite.cpp", std::ios::app);
    f << "\n// modified after the build\n";
  }
  auto r = cuzk::test::run_bench("ab --bin-a '" + bin() + "' --bin-b '" + bin() + "' --source-dir '" + tree +
                                     "' --suite quick --quick --rounds 1 --warmup 0 --out-dir ab",
                                 d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(bin() + " is stale: built from sources ") != std::string::npos);
  CHECK(r.err.find(", the tree is now ") != std::string::npos);
  CHECK(!cuzk::test::exists(d.file("ab")));  // refused before running anything
}

TEST_CASE("ab refuses a binary built by another preset than the one asked for") {
  TempDir d;
  auto r = cuzk::test::run_bench("ab --a smallvec --b baseline --bin-a '" + bin() + "' --bin-b '" + bin() +
                                     "' --source-dir '" + source_dir() + "' --suite quick --rounds 1 --out-dir ab",
                                 d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  // Either stale (the tree moved on since this build) or the preset check: both refuse.
  const bool preset_refused = r.err.find("not 'smallvec' as asked") != std::string::npos;
  const bool stale = r.err.find("is stale") != std::string::npos;
  CHECK((preset_refused || stale));
  CHECK(!cuzk::test::exists(d.file("ab")));
}

TEST_CASE("ab refuses a --cmake-arg that is not -D or that overrides a variant's flag, before building") {
  TempDir d;
  struct Bad {
    std::string args, expect;
  };
  const std::string ab = "ab --a baseline --b pinned --source-dir '" + source_dir() + "' --suite quick --out-dir ab ";
  for (const Bad& c : {Bad{"--cmake-arg=-GNinja", "expected -DNAME=VALUE"},
                       Bad{"--cmake-arg=-DCUZK_PINNED_HOST=ON", "preset 'baseline' sets CUZK_PINNED_HOST itself"},
                       Bad{"--cmake-arg=-DCUZK_CUDA=OFF --no-build", "--cmake-arg applies to builds"}}) {
    auto r = cuzk::test::run_bench(ab + c.args, d.path());
    INFO(c.args << "\n" << r.out << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.expect) != std::string::npos);
    CHECK(!cuzk::test::exists(d.file("ab")));
  }
}

TEST_CASE("ab with a matching binary runs the quick suite interleaved and compares") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  auto r = cuzk::test::run_bench("ab --bin-a '" + bin() + "' --bin-b '" + bin() + "' --source-dir '" + source_dir() +
                                     "' --suite quick --quick --case porep-tiny --rounds 1 --warmup 1 --out-dir ab",
                                 d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("round 2/2 variant B") != std::string::npos);
  CHECK(r.out.find("proof") != std::string::npos);  // the comparison table's phase rows
  CHECK(r.out.find("results: ab") != std::string::npos);
  for (const char* v : {"a", "b"}) {
    auto f = cuzk::read_results(d.file(std::string("ab/") + v + ".jsonl"));
    REQUIRE(f.summary.has_value());
    size_t warm = 0, measured = 0;
    for (auto& s : f.samples) (s.value["warmup"].get<bool>() ? warm : measured)++;
    CHECK(warm > 0);
    CHECK(measured > 0);
    CHECK(warm == measured);  // one warm-up round, one measured round
  }
  CHECK(cuzk::test::exists(d.file("ab/rounds/a-0.jsonl")));
  CHECK(cuzk::test::exists(d.file("ab/rounds/b-1.jsonl")));
  CHECK(cuzk::test::exists(d.file("ab/ab.json")));
}

namespace {

// A stand-in for nsys: `profile ... -o BASE CMD...` runs CMD and writes BASE.nsys-rep (or, with
// FAKE_NSYS_FAIL=1, fails as a broken importer would: a .qdstrm and no report); `export ... -o
// OUT REP` copies the committed real export of the same side and number (tests/fixtures/nsys).
constexpr const char* kFakeNsys = R"SH(#!/bin/bash
cmd=$1; shift
case $cmd in
  profile)
    while [[ $1 != -o ]]; do shift; done
    base=$2; shift 2
    if [[ ${FAKE_NSYS_FAIL:-0} == 1 ]]; then echo "importer: libdw.so.1 missing" >&2; : > "$base.qdstrm"; exit 1; fi
    "$@" || exit $?
    echo report > "$base.nsys-rep" ;;
  export)
    while [[ $# -gt 0 ]]; do [[ $1 == -o ]] && out=$2; shift; done
    side=$(basename "$(dirname "$out")"); n=$(basename "$out" .sqlite); n=${n#trace-}
    [[ $side == b ]] && n=$((n + 2))  # a/ holds captures 1 and 2, b/ 3 and 4
    cp "$FAKE_NSYS_FIXTURES/$side/cpu-small-$n.sqlite" "$out" ;;
  *) exit 9 ;;
esac
)SH";

std::string fake_nsys(const TempDir& d) {
  const std::string p = d.file("fake-nsys");
  cuzk::test::spit(p, kFakeNsys);
  std::filesystem::permissions(p, std::filesystem::perms::owner_all);
  return p;
}

// Whether nsys sits in one of the folders ab searches after the PATH (the GPU machine's does).
bool nsys_installed() {
  for (const char* p : {"/usr/local/cuda/bin/nsys", "/opt/nvidia/nsight-systems/*/bin/nsys",
                        "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys"}) {
    glob_t g{};
    const bool found = ::glob(p, 0, nullptr, &g) == 0 && g.gl_pathc > 0;
    ::globfree(&g);
    if (found) return true;
  }
  return false;
}

std::string ab_args(const std::string& more) {
  return "ab --bin-a '" + bin() + "' --bin-b '" + bin() + "' --source-dir '" + source_dir() +
         "' --suite quick --quick --case porep-tiny --rounds 2 --warmup 0 " + more;
}

}  // namespace

TEST_CASE("ab --nsys: after the rounds, N traces per side under nsys and their trace A/B", "[ab][nsys]") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  const std::string env = "NSYS='" + fake_nsys(d) + "' FAKE_NSYS_FIXTURES='" + source_dir() + "/tests/fixtures/nsys'";

  SECTION("the traces, their results files, trace-diff.md/.json and the summary after the comparison") {
    auto r = cuzk::test::run_bench(ab_args("--nsys 2 --out-dir ab"), d.path(), env);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    for (const char* side : {"a", "b"})
      for (const char* n : {"1", "2"}) {
        const std::string base = d.file(std::string("ab/nsys/") + side + "/trace-" + n);
        CHECK(cuzk::test::exists(base + ".nsys-rep"));
        CHECK(cuzk::test::exists(base + ".sqlite"));
        CHECK(cuzk::test::exists(base + ".jsonl"));  // the run under nsys, kept beside its trace
      }
    CHECK(r.err.find("trace 2/2 of B under nsys (untimed)") != std::string::npos);
    // The comparison first, then the trace A/B's text.
    const size_t table = r.out.find("results: ab"), traces = r.out.find("Trace A/B (2 trace(s) per side");
    REQUIRE(table != std::string::npos);
    REQUIRE(traces != std::string::npos);
    CHECK(table < traces);
    CHECK(cuzk::test::slurp(d.file("ab/trace-diff.md")).find("msm_h") != std::string::npos);
    auto j = nlohmann::json::parse(cuzk::test::slurp(d.file("ab/trace-diff.json")));
    CHECK(j["files"]["a"].size() == 2);
    auto meta = nlohmann::json::parse(cuzk::test::slurp(d.file("ab/ab.json")));
    CHECK(meta["status"] == "complete");
    CHECK(meta["nsys"]["status"] == "complete");
    CHECK(meta["nsys"]["traces_per_side"] == 2);
    CHECK(meta["nsys"]["phases_changed"] == 0);  // the fixtures are an A/A
  }

  SECTION("a capture that fails is exit 1 with nsys's words; the A/B's comparison stays") {
    auto r = cuzk::test::run_bench(ab_args("--nsys 2 --out-dir ab"), d.path(), env + " FAKE_NSYS_FAIL=1");
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find(".qdstrm but no .nsys-rep") != std::string::npos);
    CHECK(r.err.find("libdw.so.1 missing") != std::string::npos);
    CHECK(cuzk::test::exists(d.file("ab/comparison.md")));
    auto meta = nlohmann::json::parse(cuzk::test::slurp(d.file("ab/ab.json")));
    CHECK(meta["status"] == "complete");
    CHECK(meta["nsys"]["status"] == "failed");
    CHECK(!cuzk::test::exists(d.file("ab/trace-diff.md")));
  }
}

TEST_CASE("ab --nsys is refused before any build or run: no nsys, a bad count, --load, --counters sim", "[ab][nsys]") {
  TempDir d;
  struct Case {
    std::string args, env, says;
  };
  std::vector<Case> cases = {
      {ab_args("--nsys 2 --out-dir ab"), "NSYS=/nonexistent/nsys", "nsys not found: NSYS=/nonexistent/nsys is not an executable file"},
      {ab_args("--nsys -1 --out-dir ab"), "", "--nsys -1: expected a count of traces per side, 1 to 100"},
      {ab_args("--nsys 2 --counters sim --out-dir ab"), "", "--nsys with --counters sim"},
      {"ab --a baseline --b gpu-overlap --load --nsys 2 --out-dir ab", "", "--nsys is for a suite's A/B"},
  };
  if (!nsys_installed())
    cases.push_back({ab_args("--nsys 2 --out-dir ab"), "NSYS= PATH=/usr/bin:/bin", "nsys not found; looked in $NSYS (unset), the PATH"});
  for (const auto& c : cases) {
    auto r = cuzk::test::run_bench(c.args, d.path(), c.env);
    INFO(c.args << "\n" << r.out << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(!cuzk::test::exists(d.file("ab")));
  }
}
