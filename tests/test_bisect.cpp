// `cuzk-bench bisect`: the classification rule and the search (harness/analysis/bisect.hpp) with
// made-up verdicts, then the command on a throwaway git history.
//
// Building cuzk once per revision would take far too long for a test, so the history's revisions
// are "built" by --build-cmd: build.sh writes a wrapper around this build's cuzk-bench that sets
// CUZK_INJECT_SLOWDOWN from the revision's slowdown.txt, and fails when the revision has a file
// `broken`. The repository's tracked files are a copy of the sources the source hash covers, so
// the wrapper's provenance (this build's, fresh against CUZK_SOURCE_DIR) matches every worktree.
//
//   c1 good: slowdown.txt empty          c4 removes broken
//   c2                                   c5 slowdown.txt = proof/prove/msm_h=400%   <- the answer
//   c3 adds broken (does not build)      c6 the bad revision
//
// Each probe runs the suite's one case as separate processes, like `ab`. The quick suite's
// porep-tiny takes about 3.6 s a process on 2 busy cores (its MSMs), and one bisection runs two
// dozen, so the test measures a smaller case of its own suite file (bisect-tiny: 1 partition,
// depth 4: about 1 s a process). Its phase is proof/prove/msm_h (about 200 ms, process to process
// within about 30 % on a loaded machine), not proof/synth (about 8 ms there, and 4 to 10 ms from
// one process to the next when other builds share the cores: even 12 rounds left plain against
// plain at [0.62, 2.50]). The planted 400 % (a busy-wait of four times the phase's time) makes it
// about x5, and plain against plain stays within about [0.75, 1.33], far on either side of the
// boundary x2 of --threshold 200. (With --threshold 100, boundary x1.5, a fresh-clone run beside
// other tests once left the plain c4 inconclusive after 3, 6 and 12 rounds; the test also runs
// alone: tests/cmake/bisect.cmake.)
//
// The first probe lands on c3, which does not build: bisect steps to c4 (good), then c5 (bad).
// (With c3 broken right before the first slow commit, the answer would be "c3 or c4": the
// search test below checks that case without git.)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "child_process.hpp"
#include "harness/analysis/bisect.hpp"
#include "test_util.hpp"

using cuzk::bisect::Search;
using cuzk::bisect::Verdict;
using cuzk::test::TempDir;
using cuzk::test::capture;
using cuzk::test::source_dir;

namespace {


bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The throwaway history, made once per test process.
struct History {
  TempDir dir;
  std::string repo;
  std::vector<std::string> sha;  // sha[1] .. sha[6]: c1 .. c6
};

const History& history() {
  static History h = [] {
    History x;
    x.repo = x.dir.file("repo");
    const std::string src = source_dir();
    REQUIRE(std::system(("mkdir -p '" + x.repo + "' && cd '" + src +
                         "' && cp -r CMakeLists.txt CMakePresets.json prover harness daemon cmake suites '" + x.repo +
                         "/' && (test ! -d cuda || cp -r cuda '" + x.repo + "/')")
                            .c_str()) == 0);
    // The wrappers run a copy of this build's cuzk-bench, so a rebuild of the build tree while the
    // test runs cannot pull the binary from under them.
    const std::string bench = x.dir.file("cuzk-bench");
    REQUIRE(std::system(("cp '" + cuzk::test::bench() + "' '" + bench + "' && chmod +x '" + bench + "'").c_str()) == 0);
    cuzk::test::spit(x.repo + "/build.sh",
                     "#!/bin/sh\n"
                     "# Builds a revision of the bisect test: a wrapper that runs the test's cuzk-bench with this\n"
                     "# revision's slowdown planted; a revision with a file 'broken' does not build.\n"
                     "set -e\n"
                     "if [ -e broken ]; then echo 'build.sh: this revision does not build' >&2; exit 1; fi\n"
                     "spec=$(cat slowdown.txt)\n"
                     "mkdir -p bin\n"
                     "{\n"
                     "  echo '#!/bin/sh'\n"
                     "  if [ -n \"$spec\" ]; then echo \"export CUZK_INJECT_SLOWDOWN='$spec'\"; "
                     "else echo 'unset CUZK_INJECT_SLOWDOWN'; fi\n"
                     "  echo \"exec '" + bench + "' \\\"\\$@\\\"\"\n"
                     "} > bin/cuzk-bench\n"
                     "chmod +x bin/cuzk-bench\n");
    cuzk::test::spit(x.repo + "/slowdown.txt", "");
    cuzk::test::spit(x.dir.file("bisect-test.toml"),
                     "name = \"bisect-test\"\n"
                     "description = \"one tiny PoRep-shaped proof for tests/test_bisect.cpp\"\n"
                     "[defaults]\nreps = 1\nwarmup = 0\n"
                     "[[case]]\nname = \"bisect-tiny\"\nkind = \"porep\"\n"
                     "description = \"1 partition, Poseidon only, depth 4\"\n"
                     "partitions = 1\nchallenges = 1\nlayers = 0\nparents = 0\ndepth = 4\n");
    const std::string git = "cd '" + x.repo + "' && git -c user.name=t -c user.email=t@t -c core.excludesFile=/dev/null ";
    REQUIRE(std::system((git + "init -q . && " + git + "add -A -f . && " + git + "commit -q -m c1").c_str()) == 0);
    x.sha.resize(7);
    x.sha[1] = capture("git -C '" + x.repo + "' rev-parse HEAD");
    auto commit = [&](int n, const std::string& change) {
      const std::string cmd = "cd '" + x.repo + "' && " + change + " && " + git + "add -A -f . && " + git +
                              "commit -q --allow-empty -m c" + std::to_string(n);
      REQUIRE(std::system(cmd.c_str()) == 0);
      x.sha[size_t(n)] = capture("git -C '" + x.repo + "' rev-parse HEAD");
    };
    commit(2, "echo c2 > notes.txt");
    commit(3, "touch broken");
    commit(4, "rm broken");
    commit(5, "echo proof/prove/msm_h=400% > slowdown.txt");
    commit(6, "echo c6 > notes.txt");
    return x;
  }();
  return h;
}

// What the bisections of the history measure.
const std::string kPhase = "proof/prove/msm_h";
const std::string kProbe = "--case bisect-tiny --phase " + kPhase + " --threshold 200";

// `cuzk-bench bisect` of the history in `d`, into d/out; `args` follow the common ones.
cuzk::test::RunResult bisect(const TempDir& d, const std::string& args) {
  const History& h = history();
  return cuzk::test::run_bench("bisect --repo '" + h.repo + "' --suite '" + h.dir.file("bisect-test.toml") +
                                   "' --quick --build-cmd 'sh build.sh' --bin-path bin/cuzk-bench --out-dir out " + args,
                               d.path());
}

// The worktrees git knows of in the history's repository (1: only the main one).
size_t worktree_count() {
  std::string list = capture("git -C '" + history().repo + "' worktree list --porcelain");
  size_t n = 0;
  for (auto& l : cuzk::test::lines_of(list)) n += l.rfind("worktree ", 0) == 0;
  return n;
}

std::vector<nlohmann::json> log_lines(const TempDir& d) {
  std::vector<nlohmann::json> out;
  for (auto& l : cuzk::test::lines_of(cuzk::test::slurp(d.file("out/bisect.jsonl"))))
    if (!l.empty()) out.push_back(nlohmann::json::parse(l));
  return out;
}

// The last log line of a revision: its final verdict (an inconclusive probe is re-measured with
// more rounds and logged again, which happens when other work loads the machine).
const nlohmann::json* line_of(const std::vector<nlohmann::json>& log, const std::string& sha) {
  for (auto it = log.rbegin(); it != log.rend(); ++it)
    if (it->value("revision", "") == sha) return &*it;
  return nullptr;
}

}  // namespace

TEST_CASE("bisect classifies a probe by where its CI lies against 1 + threshold/2") {
  // threshold 10 %: the boundary is 1.05
  CHECK(cuzk::bisect::boundary(0.10) == Approx(1.05));
  CHECK(cuzk::bisect::classify(1.06, 1.20, 0.10) == Verdict::kBad);
  CHECK(cuzk::bisect::classify(0.90, 1.04, 0.10) == Verdict::kGood);
  CHECK(cuzk::bisect::classify(1.01, 1.09, 0.10) == Verdict::kInconclusive);  // contains 1.05
  CHECK(cuzk::bisect::classify(1.02, 1.04, 0.10) == Verdict::kGood);          // slower, but by less than half of 10 %
  CHECK(std::string(cuzk::bisect::verdict_name(Verdict::kInconclusive)) == "inconclusive");
}

TEST_CASE("bisect accepts only slash paths of names as phases") {
  CHECK(cuzk::bisect::well_formed_phase("proof/synth"));
  CHECK(cuzk::bisect::well_formed_phase("proof/prove/msm_b_g2"));
  for (const char* bad : {"", "/proof", "proof/", "proof//synth", "proof synth", "proof/synth=3%"})
    CHECK_FALSE(cuzk::bisect::well_formed_phase(bad));
}

TEST_CASE("bisect's search halves the range, steps around revisions that do not build, and names what skips leave") {
  SECTION("no skips: the first bad candidate") {
    Search s(8);  // the first bad one is candidate 5
    std::vector<size_t> probed;
    while (auto i = s.next()) {
      probed.push_back(*i);
      s.mark(*i, *i >= 5 ? Search::Mark::kBad : Search::Mark::kGood);
    }
    CHECK(probed.size() <= 3);  // log2 of 8 candidates
    CHECK(s.answer() == std::vector<size_t>{5});
  }
  SECTION("a skipped middle: its later neighbour next, and a unique answer when the skip is not next to it") {
    Search s(5);  // c2 .. c6 of the command test: c3 (1) does not build, c5 (3) is the first bad one
    auto i = s.next();
    REQUIRE(i);
    CHECK(*i == 1);
    s.mark(1, Search::Mark::kSkipped);
    i = s.next();
    REQUIRE(i);
    CHECK(*i == 2);
    s.mark(2, Search::Mark::kGood);
    i = s.next();
    REQUIRE(i);
    CHECK(*i == 3);
    s.mark(3, Search::Mark::kBad);
    CHECK(!s.next());
    CHECK(s.answer() == std::vector<size_t>{3});
  }
  SECTION("a skipped revision right before the first bad one: both are named") {
    Search s(5);  // c3 (1) does not build, c4 (2) is the first bad one
    std::vector<size_t> probed;
    while (auto i = s.next()) {
      probed.push_back(*i);
      s.mark(*i, *i == 1 ? Search::Mark::kSkipped : *i >= 2 ? Search::Mark::kBad : Search::Mark::kGood);
    }
    CHECK(std::count(probed.begin(), probed.end(), size_t(1)) == 1);  // a skipped revision is not retried
    CHECK(s.answer() == std::vector<size_t>{1, 2});
  }
  SECTION("one candidate: the bad revision itself") {
    Search s(1);
    CHECK(!s.next());
    CHECK(s.answer() == std::vector<size_t>{0});
  }
}

TEST_CASE("bisect refuses bad requests before building anything") {
  const History& h = history();
  TempDir d;
  struct Bad {
    std::string args, message;
  };
  const std::string range = "--good " + h.sha[1] + " --bad " + h.sha[6];
  const std::vector<Bad> cases = {
      {"--good nonsense --bad " + h.sha[6] + " " + kProbe, "--good 'nonsense' is not a commit of " + h.repo},
      {"--good " + h.sha[1] + " --bad nonsense " + kProbe, "--bad 'nonsense' is not a commit of "},
      {"--good " + h.sha[6] + " --bad " + h.sha[6] + " " + kProbe, "are the same commit"},
      {"--good " + h.sha[6] + " --bad " + h.sha[1] + " " + kProbe, "is not an ancestor of --bad"},
      {range + " --case no-such-case --phase " + kPhase, "has no case 'no-such-case'"},
      {range + " --case bisect-tiny --phase proof//synth", "is not a phase path"},
      {range + " --case bisect-tiny --phase " + kPhase + " --threshold 0", "--threshold: must be a number in (0, "},
      {range + " " + kProbe + " --rounds 1", "--rounds must be at least 2"},
  };
  for (auto& c : cases) {
    auto r = bisect(d, c.args);
    INFO(c.args << "\n" << r.out << r.err);
    CHECK(r.code == 2);
    CHECK(contains(r.err, c.message));
    CHECK(cuzk::test::lines_of(r.err).size() == 1);  // one clear line
    CHECK(!cuzk::test::exists(d.file("out")));       // nothing written
  }
  // An --out-dir that holds something is refused, and left as it was.
  REQUIRE(std::system(("mkdir '" + d.file("out") + "' && touch '" + d.file("out/x") + "'").c_str()) == 0);
  auto r = bisect(d, range + " " + kProbe);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--out-dir out already exists and is not empty"));
  CHECK(d.entries().size() == 1);
  CHECK(cuzk::test::exists(d.file("out/x")));
  CHECK(!cuzk::test::exists(d.file("out/worktrees")));
  CHECK(worktree_count() == 1);
}

TEST_CASE("bisect finds the commit that slowed a phase, skipping one that does not build") {
  const History& h = history();
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  auto r = bisect(d, "--good " + h.sha[1] + " --bad " + h.sha[6] + " " + kProbe + " --rounds 3 --allow-injected");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const std::string folder = "out/probes/" + h.sha[5].substr(0, 12);
  CHECK(contains(r.out, "first slower commit: " + h.sha[5] + " c5: " + kPhase + " x"));
  CHECK(contains(r.out, "(threshold 200%); A/B folder: " + folder + "\n"));
  CHECK(contains(r.out, "skipped (did not build): " + h.sha[3] + " c3\n"));
  CHECK(contains(r.err, "build.sh: this revision does not build"));

  // The log: the bad revision, c3 skipped, c4 good, c5 bad; nothing else probed.
  auto log = log_lines(d);
  const auto* c6 = line_of(log, h.sha[6]);
  const auto* c3 = line_of(log, h.sha[3]);
  const auto* c4 = line_of(log, h.sha[4]);
  const auto* c5 = line_of(log, h.sha[5]);
  REQUIRE(c6);
  REQUIRE(c3);
  REQUIRE(c4);
  REQUIRE(c5);
  CHECK((*c6)["role"] == "bad");
  CHECK((*c6)["verdict"] == "bad");
  CHECK((*c3)["status"] == "skipped");
  CHECK((*c4)["verdict"] == "good");
  CHECK((*c5)["verdict"] == "bad");
  CHECK((*c5)["subject"] == "c5");
  CHECK((*c5)["folder"] == folder);
  CHECK((*c5)["ci_low"].get<double>() > 2.0);  // the planted 400 %: about x5
  CHECK((*c4)["ci_high"].get<double>() < 2.0);
  CHECK(!line_of(log, h.sha[2]));
  CHECK(!line_of(log, h.sha[1]));
  for (auto& j : log)
    if (j["status"] == "built") CHECK(j["rounds"].get<int>() >= 3);

  for (const char* f : {"a.jsonl", "b.jsonl", "comparison.md"}) CHECK(cuzk::test::exists(d.file(folder + "/" + f)));
  CHECK(contains(cuzk::test::slurp(d.file("out/bisect.md")), "First slower commit: " + h.sha[5] + " c5"));
  // Worktrees are gone, in git's list and on disk.
  CHECK(worktree_count() == 1);
  CHECK(!cuzk::test::exists(d.file("out/worktrees")));
}

TEST_CASE("bisect stops with no regression when the bad revision is not slower than the good one") {
  const History& h = history();
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  auto r = bisect(d, "--good " + h.sha[5] + " --bad " + h.sha[6] + " " + kProbe + " --rounds 2 --allow-injected");
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "cuzk-bench: error: no regression of " + kPhase + " between " + h.sha[5].substr(0, 12) + " and " +
                            h.sha[6].substr(0, 12) + ": ratio "));
  CHECK(contains(r.err, "(threshold 200%)"));
  // With 2 rounds the first measurement may straddle the boundary and be re-measured: the last
  // line of the log holds the verdict.
  auto log = log_lines(d);
  REQUIRE(!log.empty());
  CHECK(log.size() <= 3);  // the measurement and at most --max-remeasure (2) re-measurements
  CHECK(log.back()["verdict"] == "good");
  CHECK(worktree_count() == 1);
}

TEST_CASE("bisect refuses to compare injected probes with a plain good revision without --allow-injected") {
  const History& h = history();
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  auto r = bisect(d, "--good " + h.sha[1] + " --bad " + h.sha[6] + " " + kProbe + " --rounds 2");
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "cuzk-bench: error: "));
  CHECK(contains(r.err, "was written under CUZK_INJECT_SLOWDOWN=\"proof/prove/msm_h=400%\""));
  CHECK(contains(r.err, "pass --allow-injected"));
  CHECK(!contains(r.out, "first slower commit"));
  CHECK(worktree_count() == 1);
}
