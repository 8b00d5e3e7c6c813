// scripts/history-backfill.sh (docs/history.md, "Backfill") in a throwaway git repository of
// three commits, the second of which does not build: a stub cmake stands in for the build and
// the stub binary answers `info` with its worktree's commit and `run` with recorded results;
// the history itself is the real cuzk-bench's.
#include <filesystem>
#include <string>

#include "catch.hpp"
#include "script_repo.hpp"
#include "subprocess.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::testing::run_command;

namespace {

// Fails the build of a tree that holds BROKEN.
constexpr const char* kFakeCmake = R"(#!/bin/bash
echo "cmake $PWD $*" >> "$STUB_LOG"
if [[ $1 == --preset ]]; then mkdir -p "build/$2"; exit 0; fi
if [[ $1 == --build ]]; then
  [[ -f BROKEN ]] && { echo "code.cpp:1: error: planted build failure" >&2; exit 1; }
  mkdir -p "$2/harness" && cp "$STUB_BENCH" "$2/harness/cuzk-bench" && exit 0
fi
exit 3
)";

// The binary's worktree is three folders up from build/<preset>/harness/cuzk-bench.
constexpr const char* kFakeBench = R"(#!/bin/bash
wt=$(cd "$(dirname "$0")/../../.." && pwd)
sha=$(git -C "$wt" rev-parse HEAD)
case $1 in
  info)
    dirty=false; [[ -n ${STUB_DIRTY:-} ]] && dirty=true
    echo "{\"provenance\": {\"git_commit\": \"$sha\", \"git_dirty\": \"$dirty\"}}" ;;
  run)
    echo "bench run $sha" >> "$STUB_LOG"
    out=""
    while [[ $# -gt 0 ]]; do [[ $1 == --out ]] && out=$2; shift; done
    n=${out##*-}  # the run's number: each run its own recorded results
    sed "s/@COMMIT@/$sha/" "$STUB_FIXTURE-${n%.jsonl}.jsonl" > "$out" ;;
  *) exit 3 ;;
esac
)";

struct Repo : cuzk::test::ScriptRepo {
  Repo() : ScriptRepo({"history-backfill.sh"}) {
    write("suites/quick.toml", "name = \"quick\"\n");
    stub("cmake", kFakeCmake);
    stub("bench-stub", kFakeBench, false);
    for (int run = 0; run < 2; ++run) {
      cuzk::test::SynthSpec s;
      s.seed = 10 + static_cast<uint64_t>(run);
      s.suite = "quick";
      s.case_name = "porep-tiny";
      s.reps = 3;
      s.edit_header = [](nlohmann::json& h) {
        h["provenance"]["git_commit"] = "@COMMIT@";
        h["provenance"]["git_dirty"] = false;
      };
      cuzk::test::write_synth(d.file("fixture-" + std::to_string(run) + ".jsonl"), s);
    }
    sh("git init -q -b main . && git add -A && git commit -qm one && git tag first");
    write("BROKEN", "this commit does not build\n");
    sh("git add -A && git commit -qm two");
    sh("git rm -q BROKEN && git commit -qm three");
  }

  cuzk::testing::CommandResult backfill(const std::string& range, const std::string& args = "",
                                        const std::string& env = "") const {
    return run("bash scripts/history-backfill.sh " + range + " --suite quick --case porep-tiny --runs 2 --db '" +
                   d.file("h.sqlite") + "' --bench '" + cuzk::test::bench() + "' " + args,
               "STUB_BENCH='" + d.file("bench-stub") + "' STUB_FIXTURE='" + d.file("fixture") + "' " + env);
  }

  std::string commits() const {
    return cuzk::test::run_bench("history commits --db h.sqlite --suite quick --case porep-tiny --machine this", d.path()).out;
  }
};

}  // namespace

TEST_CASE("backfill: measures each commit, records the one that does not build, and resumes", "[backfill]") {
  Repo repo;
  auto r = repo.backfill("main");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("3 commits: 2 measured, 1 recorded as failed, 0 already stored") != std::string::npos);
  const std::string stored = repo.commits();
  INFO(stored);
  CHECK(stored.find(repo.sha("first") + " measured (2 runs)") != std::string::npos);
  CHECK(stored.find(repo.sha("main~1") + " build failed: code.cpp:1: error: planted build failure") != std::string::npos);
  CHECK(stored.find(repo.sha("main") + " measured (2 runs)") != std::string::npos);
  CHECK(repo.count("bench run ") == 4);
  CHECK(repo.worktrees_clean());
  // Run again: everything is stored, nothing is built.
  const int configures = repo.count("--preset baseline");
  r = repo.backfill("main");
  CHECK(r.status == 0);
  CHECK(r.output.find("3 commits: 0 measured, 0 recorded as failed, 3 already stored") != std::string::npos);
  CHECK(repo.count("--preset baseline") == configures);
  // A new commit: only it is built and measured.
  repo.sh("echo more > more.txt && git add more.txt && git commit -qm four");
  r = repo.backfill("first..main");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("3 commits: 1 measured, 0 recorded as failed, 2 already stored") != std::string::npos);
  CHECK(repo.commits().find(repo.sha("main") + " measured") != std::string::npos);
}

TEST_CASE("backfill: a binary that is not its commit, clean, stops it (exit 2)", "[backfill]") {
  Repo repo;
  auto r = repo.backfill("main", "", "STUB_DIRTY=1");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("git_dirty=true', not '" + repo.sha("first") + " git_dirty=false'") != std::string::npos);
  CHECK(repo.commits().empty());
}

TEST_CASE("backfill: bad input is exit 2 before anything is built", "[backfill]") {
  Repo repo;
  auto r = run_command("cd '" + repo.root + "' && bash scripts/history-backfill.sh main --case porep-tiny");
  CHECK(r.status == 2);
  CHECK(r.output.find("--suite is required") != std::string::npos);
  r = repo.backfill("nosuchbranch..main");
  CHECK(r.status == 2);
  CHECK(r.output.find("no commits in 'nosuchbranch..main'") != std::string::npos);
  r = repo.backfill("main", "--runs 0");
  CHECK(r.status == 2);
  CHECK(r.output.find("--runs must be a whole number of at least 1 (got '0')") != std::string::npos);
  r = repo.backfill("main", "--bench /nonexistent");
  CHECK(r.status == 2);
  CHECK(r.output.find("no history tool at /nonexistent") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(repo.log));
}
