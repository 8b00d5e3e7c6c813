// The CI performance check end to end (scripts/ci-perf.sh, docs/ci-perf.md): a throwaway git
// repository with a base commit and a head commit, the real gate-merge.sh orchestration, and
// the real cuzk-bench for the gate, the history and the comment. Only the build (a stub cmake)
// and the measurement (the stub's `ab` writes recorded results, slower in proof/synth when the
// head plants a slowdown) are stand-ins: ab's own measurement is tested in test_ab.cpp.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "catch.hpp"
#include "script_repo.hpp"
#include "subprocess.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::testing::run_command;
namespace fs = std::filesystem;

namespace {

constexpr const char* kFakeCmake = R"(#!/bin/bash
echo "cmake $*" >> "$STUB_LOG"
if [[ $1 == --preset ]]; then mkdir -p "build/$2"; exit 0; fi
if [[ $1 == --build ]]; then mkdir -p "$2/harness" && cp "$STUB_BENCH" "$2/harness/cuzk-bench" && exit 0; fi
exit 3
)";

// `ab` writes the recorded base results as A and, as B, the slow results when the head's tree
// (--source-dir-b) holds PLANTED_SLOWDOWN, else results like A's; each with its worktree's
// commit. Every other command is the real cuzk-bench.
constexpr const char* kFakeBench = R"(#!/bin/bash
echo "bench $*" >> "$STUB_LOG"
if [[ $1 != ab ]]; then exec "$STUB_REAL" "$@"; fi
shift
out="" src_a="" src_b=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --out-dir) out=$2; shift 2 ;;
    --source-dir) src_a=$2; shift 2 ;;
    --source-dir-b) src_b=$2; shift 2 ;;
    *) shift ;;
  esac
done
mkdir -p "$out"
b=$STUB_FIXTURES/same.jsonl
[[ -f $src_b/PLANTED_SLOWDOWN ]] && b=$STUB_FIXTURES/slow.jsonl
sed "s/@COMMIT@/$(git -C "$src_a" rev-parse HEAD)/" "$STUB_FIXTURES/base.jsonl" > "$out/a.jsonl"
sed "s/@COMMIT@/$(git -C "$src_b" rev-parse HEAD)/" "$b" > "$out/b.jsonl"
)";

const char* kThresholds = "[default]\nmax_slowdown = 0.05\n[phases]\n\"proof/synth\" = 0.10\n";

cuzk::test::SynthSpec spec(uint64_t seed, const std::string& commit) {
  cuzk::test::SynthSpec s;
  s.seed = seed;
  s.suite = "quick";
  s.case_name = "porep-tiny";
  s.edit_header = [commit](nlohmann::json& h) {
    h["provenance"]["git_commit"] = commit;
    h["provenance"]["git_dirty"] = false;
  };
  return s;
}

struct Repo : cuzk::test::ScriptRepo {
  Repo() : ScriptRepo({"ci-perf.sh", "gate-merge.sh"}) {
    write("suites/quick.toml", "name = \"quick\"\n");
    write("suites/gate-thresholds.toml", kThresholds);
    write("prover/code.cpp", "int main() {}\n");
    stub("cmake", kFakeCmake);
    stub("bench-stub", kFakeBench, false);
    fs::create_directories(d.file("fixtures"));
    auto slow = spec(202, "@COMMIT@");
    slow.slowdown = {{"proof/synth", 1.2}, {"proof", 1.04}};
    cuzk::test::write_synth(d.file("fixtures/base.jsonl"), spec(101, "@COMMIT@"));
    cuzk::test::write_synth(d.file("fixtures/same.jsonl"), spec(202, "@COMMIT@"));
    cuzk::test::write_synth(d.file("fixtures/slow.jsonl"), slow);
    // base's commit date is fixed in the past: main_history's commits have no date, so the history
    // orders them by when they were ingested, and a base committed in the same second as that
    // ingest would land among them (harness/history/store.cpp, commit_order).
    sh("git init -q -b main . && git add -A && GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' "
       "GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' git commit -qm base && git tag base");
  }

  // A head commit on a branch of its own that writes `files` (path -> text).
  void head(const std::map<std::string, std::string>& files) {
    sh("git checkout -q -b pr base");
    for (const auto& [p, text] : files) write(p, text);
    sh("git add -A && git commit -qm head && git tag head");
  }

  // 20 commits of main's history in the store, proof/synth 15% slower from the 10th on.
  void main_history() {
    std::string files;
    for (int i = 0; i < 20; ++i) {
      auto s = spec(300 + static_cast<uint64_t>(i), "commit" + std::to_string(100 + i));
      if (i >= 10) s.slowdown = {{"proof/synth", 1.15}};
      const std::string f = d.file("hist-" + std::to_string(i) + ".jsonl");
      cuzk::test::write_synth(f, s);
      files += " '" + f + "'";
    }
    auto r = cuzk::test::run_bench("history ingest --db '" + d.file("h.sqlite") + "' --branch main" + files, d.path());
    INFO(r.err);
    REQUIRE(r.code == 0);
  }

  cuzk::testing::CommandResult ci(const std::string& args) const {
    return run("bash scripts/ci-perf.sh --base base --head head --suite quick --quick --history '" + d.file("h.sqlite") +
                   "' --out-dir '" + d.file("out") + "' " + args,
               "STUB_BENCH='" + d.file("bench-stub") + "' STUB_REAL='" + cuzk::test::bench() + "' STUB_FIXTURES='" +
                   d.file("fixtures") + "' GITHUB_STEP_SUMMARY='" + d.file("step-summary.md") + "'");
  }

  std::string out(const std::string& name) const { return cuzk::test::slurp(d.file("out/" + name)); }
};

}  // namespace

TEST_CASE("ci-perf: a planted regression fails, and the comment tells it with the history and a reproduce command",
          "[ci-perf]") {
  Repo repo;
  repo.main_history();
  repo.head({{"PLANTED_SLOWDOWN", "proof/synth 1.2\n"}, {"prover/code.cpp", "int main() { return 0; }\n"}});
  auto r = repo.ci("--rounds 5");
  INFO(r.output);
  CHECK(r.status == 1);
  const std::string c = repo.out("comment.md");
  INFO(c);
  // CUZK_CI_PERF_COMMENT=FILE keeps the comment for a look (docs/ci-perf.md shows one).
  if (const char* keep = std::getenv("CUZK_CI_PERF_COMMENT")) cuzk::test::spit(keep, c);
  CHECK(c.rfind("<!-- cuzk-perf-comment -->\n", 0) == 0);
  CHECK(c.find("cuzk perf: REGRESSION in 1 phase") != std::string::npos);
  CHECK(c.find("`proof/synth` | fail |") != std::string::npos);
  CHECK(c.find("fails the gate") != std::string::npos);
  CHECK(c.find("### Where the time went") != std::string::npos);
  // main's history of proof/synth holds the +15% change point planted at commit110.
  CHECK(c.find("### History of the changed phases") != std::string::npos);
  CHECK(c.find("commit109..commit110") != std::string::npos);
  CHECK(c.find("(regression)") != std::string::npos);
  // The reproduce command names the revisions by their commits.
  CHECK(c.find("### Reproduce") != std::string::npos);
  CHECK(c.find("scripts/ci-perf.sh --base ") != std::string::npos);
  CHECK(c.find("--base base ") == std::string::npos);
  // The job summary is written once, not once per gate call.
  const std::string summary = cuzk::test::slurp(repo.d.file("step-summary.md"));
  CHECK(cuzk::test::occurrences(summary, "cuzk perf: REGRESSION") == 1);
  CHECK(cuzk::test::exists(repo.d.file("out/summary.md")));
  // Both sides are in the history: base under main, head under its sha.
  auto shown = cuzk::test::run_bench("history commits --db h.sqlite --suite quick --case porep-tiny", repo.d.path());
  CHECK(cuzk::test::occurrences(shown.out, " measured") == 22);
  auto main_only = cuzk::test::run_bench("history show --db h.sqlite --branch main --phase proof/synth --csv", repo.d.path());
  CHECK(cuzk::test::occurrences(main_only.out, "\n") == 22);  // the header and 21 commits of main
}

TEST_CASE("ci-perf: a docs-only pull request builds nothing and passes", "[ci-perf]") {
  Repo repo;
  repo.head({{"docs/notes.md", "a docs-only change\n"}, {"README.md", "more words\n"}});
  auto r = repo.ci("");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(repo.out("comment.md").find("nothing to measure") != std::string::npos);
  CHECK(repo.out("comment.md").find("2 file(s)") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(repo.log));  // no build, no bench
  // --always measures anyway: identical results pass with no significant change.
  fs::remove_all(repo.d.file("out"));
  r = repo.ci("--always");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(repo.out("comment.md").find("## cuzk perf: pass\n") != std::string::npos);
}

TEST_CASE("ci-perf: a regression in a phase whose policy is warn passes with a warning", "[ci-perf]") {
  Repo repo;
  repo.head({{"PLANTED_SLOWDOWN", "proof/synth 1.2\n"}, {"prover/code.cpp", "int main() { return 1; }\n"}});
  cuzk::test::spit(repo.d.file("warn.toml"), std::string(kThresholds) + "[policy]\n\"proof/*\" = \"warn\"\n");
  auto r = repo.ci("--thresholds '" + repo.d.file("warn.toml") + "'");
  INFO(r.output);
  CHECK(r.status == 0);
  const std::string c = repo.out("comment.md");
  CHECK(c.find("pass, with 1 regression in phases whose policy is warn") != std::string::npos);
  CHECK(c.find("`proof/synth` | warn |") != std::string::npos);
}

TEST_CASE("ci-perf: bad input is exit 2 and keeps what is there", "[ci-perf]") {
  Repo repo;
  repo.head({{"prover/code.cpp", "int main() { return 2; }\n"}});
  auto r = run_command("cd '" + repo.root + "' && bash scripts/ci-perf.sh --head head");
  CHECK(r.status == 2);
  CHECK(r.output.find("--base REV is required") != std::string::npos);
  r = run_command("cd '" + repo.root + "' && bash scripts/ci-perf.sh --base nope --head head");
  CHECK(r.status == 2);
  CHECK(r.output.find("no such revision: nope") != std::string::npos);
  fs::create_directories(repo.d.file("out"));
  cuzk::test::spit(repo.d.file("out/mine.txt"), "keep\n");
  r = repo.ci("");
  CHECK(r.status == 2);
  CHECK(r.output.find("is not empty") != std::string::npos);
  CHECK(cuzk::test::slurp(repo.d.file("out/mine.txt")) == "keep\n");
  fs::remove_all(repo.d.file("out"));
  r = repo.ci("--thresholds /nonexistent.toml");
  CHECK(r.status == 2);
  CHECK(r.output.find("--thresholds /nonexistent.toml: no such file") != std::string::npos);
  r = repo.ci("--rounds");
  CHECK(r.status == 2);
  CHECK(r.output.find("--rounds needs a value") != std::string::npos);
}
