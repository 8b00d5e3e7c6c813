// scripts/gate-merge.sh: its orchestration (worktrees, builds, the A/B, the gate, and the
// confirmation of an alarm on fresh rounds) in a throwaway git repository, with `cmake` and
// `cuzk-bench` replaced by stubs that log their arguments and answer as the case scripts them.
// The decisions inside `cuzk-bench gate` (and `gate --confirm-with`) are tested in test_gate.cpp.
#include <filesystem>
#include <string>

#include "catch.hpp"
#include "script_repo.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace {

// `cmake --preset P ARGS...` makes build/P and logs the configure; `cmake --build build/P ...`
// installs the cuzk-bench stub there.
constexpr const char* kFakeCmake = R"(#!/bin/bash
echo "cmake $*" >> "$STUB_LOG"
if [[ $1 == --preset ]]; then mkdir -p "build/$2"; exit 0; fi
if [[ $1 == --build ]]; then
  [[ -n ${STUB_BUILD_FAILS:-} ]] && { echo "stub: build failed" >&2; exit 1; }
  mkdir -p "$2/harness" && cp "$STUB_BENCH" "$2/harness/cuzk-bench" && exit 0
fi
exit 3
)";

// ab writes both sides' files (the confirming one answers STUB_CONFIRM_AB_RC); gate answers
// STUB_FIRST_RC (naming one alarmed case) and, when given --confirm-with, STUB_CONFIRM_RC.
constexpr const char* kFakeBench = R"(#!/bin/bash
echo "bench $*" >> "$STUB_LOG"
cmd=$1; shift
out="" cases="" confirm=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --out-dir) out=$2; shift 2 ;;
    --cases-out) cases=$2; shift 2 ;;
    --confirm-with) confirm=1; shift ;;
    *) shift ;;
  esac
done
case $cmd in
  ab)
    mkdir -p "$out" && : > "$out/a.jsonl" && : > "$out/b.jsonl"
    [[ $out == */confirm ]] && exit ${STUB_CONFIRM_AB_RC:-0}
    exit 0 ;;
  gate)
    if [[ $confirm == 1 ]]; then exit ${STUB_CONFIRM_RC:-0}; fi
    [[ -n $cases ]] && printf 'quick/porep-tiny\n' > "$cases"
    exit ${STUB_FIRST_RC:-0} ;;
esac
exit 3
)";

struct Repo : cuzk::test::ScriptRepo {
  Repo() : ScriptRepo({"gate-merge.sh"}) {
    write("suites/quick.toml", "name = \"quick\"\n");
    write("suites/gate-thresholds.toml", "[default]\nmax_slowdown = 0.05\n");
    stub("cmake", kFakeCmake);
    stub("bench-stub", kFakeBench, false);
    sh("git init -q . && git add -A && git commit -qm base && git tag base");
    write("NOTES.md", "a docs-only change\n");
    sh("git add -A && git commit -qm candidate && git tag candidate");
  }

  // Runs the script with the stubs first on PATH; `env` sets the stubs' answers.
  cuzk::testing::CommandResult gate(const std::string& args, const std::string& env = "") const {
    return run("bash scripts/gate-merge.sh base candidate --suite quick --quick --out-dir '" + d.file("out") + "' " + args,
               "STUB_BENCH='" + d.file("bench-stub") + "' " + env);
  }
};

}  // namespace

TEST_CASE("gate-merge: a pass is one A/B and one gate, no confirmation, worktrees removed", "[gate-merge]") {
  Repo repo;
  auto r = repo.gate("");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(repo.count("bench ab ") == 1);
  CHECK(repo.count("bench gate ") == 1);
  CHECK(repo.count("cmake --preset baseline") == 2);
  CHECK(repo.worktrees_clean());
}

TEST_CASE("gate-merge: an alarm the fresh rounds do not confirm passes", "[gate-merge]") {
  Repo repo;
  auto r = repo.gate("--rounds 5", "STUB_FIRST_RC=1 STUB_CONFIRM_RC=0");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(repo.count("bench ab ") == 2);
  // The confirming run measures only the alarmed case, for twice the rounds, into its own folder.
  CHECK(repo.count("--rounds 10 --warmup 1 --quick --case quick/porep-tiny --out-dir " + repo.d.file("out/confirm")) == 1);
  CHECK(repo.count("--confirm-with " + repo.d.file("out/confirm/a.jsonl") + " " + repo.d.file("out/confirm/b.jsonl")) == 1);
  CHECK(r.output.find("re-measuring 1 case(s) with 10 more rounds") != std::string::npos);
  CHECK(r.output.find("not confirmed (pass)") != std::string::npos);
  CHECK(repo.worktrees_clean());
}

TEST_CASE("gate-merge: an alarm the fresh rounds confirm fails with exit 1", "[gate-merge]") {
  Repo repo;
  auto r = repo.gate("--confirm-rounds 7 --counters sim", "STUB_FIRST_RC=1 STUB_CONFIRM_RC=1");
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(repo.count("--rounds 7 ") == 1);
  CHECK(repo.count("--quick --counters sim ") == 2);  // both A/B runs record the counters
  CHECK(r.output.find("confirmed (regression)") != std::string::npos);
  CHECK(repo.worktrees_clean());
}

TEST_CASE("gate-merge: --confirm-rounds 0 fails on the first alarm", "[gate-merge]") {
  Repo repo;
  auto r = repo.gate("--confirm-rounds 0", "STUB_FIRST_RC=1");
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(repo.count("bench ab ") == 1);
  CHECK(repo.count("--confirm-with") == 0);
}

TEST_CASE("gate-merge: errors are exit 2, never a pass or a regression", "[gate-merge]") {
  Repo repo;
  SECTION("the gate itself errs") {
    auto r = repo.gate("", "STUB_FIRST_RC=2");
    CHECK(r.status == 2);
  }
  SECTION("the confirming A/B fails") {
    auto r = repo.gate("", "STUB_FIRST_RC=1 STUB_CONFIRM_AB_RC=7");
    CHECK(r.status == 2);
  }
  SECTION("a build fails") {
    auto r = repo.gate("", "STUB_BUILD_FAILS=1");
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("building base") != std::string::npos);
    CHECK(repo.count("bench ") == 0);
  }
  SECTION("bad arguments") {
    auto r = repo.gate("--rounds x");
    CHECK(r.status == 2);
    CHECK(r.output.find("--rounds must be a whole number (got 'x')") != std::string::npos);
    r = repo.gate("--confirm-rounds");
    CHECK(r.status == 2);
    CHECK(r.output.find("--confirm-rounds needs a value") != std::string::npos);
    r = repo.gate("--bogus");
    CHECK(r.status == 2);
    CHECK(r.output.find("unknown argument '--bogus'") != std::string::npos);
  }
  CHECK(repo.worktrees_clean());
}

TEST_CASE("gate-merge: --work-dir keeps the worktrees and the next run reuses them", "[gate-merge]") {
  Repo repo;
  const std::string work = repo.d.file("work");
  auto r = repo.gate("--work-dir '" + work + "' --cmake-arg -DCUZK_CUDA=OFF");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(cuzk::test::exists(work + "/base/build/baseline/harness/cuzk-bench"));
  CHECK(cuzk::test::exists(work + "/candidate/NOTES.md"));
  CHECK_FALSE(cuzk::test::exists(work + "/base/NOTES.md"));
  CHECK(repo.count("cmake --preset baseline -DCUZK_CUDA=OFF") == 2);
  fs::remove_all(repo.d.file("out"));
  r = repo.gate("--work-dir '" + work + "'");
  CHECK(r.status == 0);
  CHECK(r.output.find("worktrees kept in " + work) != std::string::npos);
  SECTION("something else in the way is not touched") {
    fs::create_directories(repo.d.file("other/base"));
    cuzk::test::spit(repo.d.file("other/base/mine.txt"), "keep me\n");
    fs::remove_all(repo.d.file("out"));
    r = repo.gate("--work-dir '" + repo.d.file("other") + "'");
    CHECK(r.status == 2);
    CHECK(r.output.find("is not a worktree of") != std::string::npos);
    CHECK(cuzk::test::slurp(repo.d.file("other/base/mine.txt")) == "keep me\n");
  }
}
