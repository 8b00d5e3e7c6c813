// `cuzk-bench matrix --from` on a matrix that did not complete (docs/matrix.md, "A matrix that did
// not complete"): interrupted by a signal, stopped without a word (kill -9, a lost machine: the
// manifest still says "running") or stopped by a failed run. The measured runs that finished are
// merged and analysed, and nothing else: the run in flight at the signal is left out even though
// its round file is whole, a round file cut short is left out, warm-ups are never counted, and
// every output says first what the analysis covers. A variant none of whose measured runs
// finished is one error line; a complete matrix's --from output is what it was.
//
// One small matrix is run once (3 variants, 1 warm-up and 3 measured rounds, one binary: --bin);
// each case copies its folder and puts it in the state an interruption leaves, as the matrix
// writes it (the round files after the stop deleted or cut short, the manifest's status and
// "interrupted" set, no merged results or attribution), so that nothing depends on timing.
#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "catch.hpp"
#include "harness/measure/output_lock.hpp"
#include "matrix_folders.hpp"
#include "test_util.hpp"

namespace t = cuzk::test;
using nlohmann::json;
using t::TempDir;
using namespace t::matrix_folders;

namespace {

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// The measured rounds (1-3) of `v` that finished when the matrix stopped at (round, pos): those of
// earlier rounds, and of that round those that ran before position pos.
std::set<int> finished_rounds(const std::string& dir, const std::string& v, int round, size_t pos) {
  std::set<int> out;
  for (int r = 1; r <= 3; ++r)
    if (r < round || (r == round && position(dir, r, v) < pos)) out.insert(r);
  return out;
}

// "baseline 2 of 3, pinned 1 of 3, smallvec 1 of 3"
std::string counts_text(const std::string& dir, int round, size_t pos) {
  std::string s;
  for (const auto& v : variant_names(manifest_of(dir)))
    s += (s.empty() ? "" : ", ") + v + " " + std::to_string(finished_rounds(dir, v, round, pos).size()) + " of 3";
  return s;
}

// Every measured round left out of (1-3) is in exactly one of the partial report's lists.
void check_partial_json(const json& p, const std::string& dir, int round, size_t pos) {
  size_t finished = 0;
  for (const auto& v : variant_names(manifest_of(dir))) {
    INFO(v << ": " << p.at("variants").at(v).dump());
    const json& pv = p.at("variants").at(v);
    const auto want = finished_rounds(dir, v, round, pos);
    finished += want.size();
    CHECK(pv.at("finished") == want.size());
    CHECK(pv.at("of") == 3);
    std::set<int> left;
    for (const char* k : {"failed", "discarded", "partial", "not_run"})
      for (int r : pv.at(k)) CHECK(left.insert(r).second);
    for (int r = 1; r <= 3; ++r) CHECK(left.count(r) != want.count(r));
  }
  CHECK(p.at("runs") == json{{"finished", finished}, {"of", 9}});
}

}  // namespace

TEST_CASE("matrix --from on an interrupted matrix analyses the runs that finished, not the discarded one",
          "[matrix][matrix_partial]") {
  TempDir d;
  // SIGTERM during the second run of round 2: its file is whole (the run finished its sample and
  // wrote its summary), but the matrix discarded it.
  const std::string dir = stopped_copy(d, 2, 1, "interrupted");
  const std::string x = at(dir, 2, 1);
  json m = manifest_of(dir);
  m["interrupted"] = {{"signal", "SIGTERM"}, {"round", 2}, {"variant", x}};
  write_manifest(dir, m);
  REQUIRE(t::exists(round_file(dir, x, 2)));
  const std::string manifest_before = t::slurp(dir + "/manifest.json");

  auto r = t::run_bench("matrix --from m", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const std::string first = "Interrupted by SIGTERM in round 2 of " + x + ": analysed the 4 of 9 measured runs that finished (" +
                            counts_text(dir, 2, 1) + ").";
  const auto lines = t::lines_of(r.out);
  REQUIRE(!lines.empty());
  CHECK(lines[0].rfind(first, 0) == 0);  // the first thing printed
  CHECK(has(lines[0], x + " round 2 (discarded: in flight when the signal came)"));
  CHECK(has(lines[0], at(dir, 2, 2) + " rounds 2-3"));
  CHECK(has(lines[0], "(never run)"));
  CHECK(t::slurp(dir + "/attribution.md").rfind(lines[0] + "\n\n# Matrix: variants", 0) == 0);

  const json a = json::parse(t::slurp(dir + "/attribution.json"));
  const json& p = a.at("partial");
  CHECK(p.at("status") == "interrupted");
  CHECK(p.at("statement") == lines[0]);
  CHECK(p.at("interrupted") == m.at("interrupted"));
  CHECK(p.at("variants").at(x).at("discarded") == json::array({2}));
  check_partial_json(p, dir, 2, 1);
  CHECK(!a.at("cases").empty());

  // The merged results hold exactly the runs that finished, and the warm-up marked as one.
  for (const auto& v : variant_names(m)) {
    INFO(v);
    CHECK(merged_rounds(dir, v, false) == finished_rounds(dir, v, 2, 1));
    CHECK(merged_rounds(dir, v, true) == std::set<int>{0});
  }
  CHECK(t::slurp(dir + "/manifest.json") == manifest_before);  // the record of the run stays as it was

  // Again: the same analysis, the merged results written afresh from the same runs.
  const std::string json_before = t::slurp(dir + "/attribution.json");
  auto again = t::run_bench("matrix --from m", d.path());
  CHECK(again.code == 0);
  CHECK(again.out == r.out);
  CHECK(t::slurp(dir + "/attribution.json") == json_before);

  // --json carries the same statement.
  auto j = t::run_bench("matrix --from m --json", d.path());
  REQUIRE(j.code == 0);
  CHECK(json::parse(j.out).at("partial").at("statement") == lines[0]);

  // A matrix still running holds its folder: --from refuses it rather than take its runs as over.
  {
    cuzk::FolderClaim claim(dir, "--out-dir", false);
    auto held = t::run_bench("matrix --from m", d.path());
    INFO(held.err);
    CHECK(held.code == 2);
    CHECK(has(held.err, "--from m is being written by another cuzk-bench (pid "));
    CHECK(t::lines_of(held.err).size() == 1);
  }
}

TEST_CASE("matrix --from on a matrix killed without a word leaves out its last round file, cut short",
          "[matrix][matrix_partial]") {
  TempDir d;
  // The manifest still says "running" (as the matrix wrote it before its first run); the run in
  // flight, the first of round 3, left a file that does not end with the run's summary.
  const std::string dir = stopped_copy(d, 3, 0, "running");
  const std::string y = at(dir, 3, 0);
  const std::string file = round_file(dir, y, 3);
  const std::string text = t::slurp(file);
  SECTION("cut in the middle of a line") { t::spit(file, text.substr(0, text.size() / 2)); }
  SECTION("cut after a whole line: no summary") {
    const size_t last = text.rfind('\n', text.size() - 2);
    REQUIRE(last != std::string::npos);
    t::spit(file, text.substr(0, last + 1));
  }

  auto r = t::run_bench("matrix --from m --markdown", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("Stopped without a word (killed, or its machine lost: its manifest still says \"running\"): analysed the "
                    "6 of 9 measured runs that finished (" +
                        counts_text(dir, 3, 0) + "). Left out: " + y +
                        " round 3 (partial: its round file does not end with a finished run's summary); ",
                    0) == 0);
  const json p = json::parse(t::slurp(dir + "/attribution.json")).at("partial");
  CHECK(p.at("status") == "running");
  CHECK(p.at("variants").at(y).at("partial") == json::array({3}));
  check_partial_json(p, dir, 3, 0);
  for (const auto& v : variant_names(manifest_of(dir))) {
    INFO(v);
    CHECK(merged_rounds(dir, v, false) == finished_rounds(dir, v, 3, 0));
  }
}

TEST_CASE("matrix --from on a matrix stopped by a failed run says so, and lists the failure", "[matrix][matrix_partial]") {
  TempDir d;
  // --on-failure stop: the second run of round 2 failed; the matrix recorded it and stopped.
  const std::string dir = stopped_copy(d, 2, 1, "failed");
  const std::string x = at(dir, 2, 1);
  json m = manifest_of(dir);
  for (auto& v : m.at("variants"))
    if (v.at("name") == x) v.at("rounds")[1] = nullptr;
  m["failed_runs"] = json::array({{{"round", 2},
                                   {"warmup", false},
                                   {"variant", x},
                                   {"reason", "exit 1"},
                                   {"exit_code", 1},
                                   {"timed_out", false},
                                   {"results", "rounds/" + x + "-2.jsonl"}}});
  m["failure"] = "round 2 of " + x + ": exit 1";
  write_manifest(dir, m);

  auto r = t::run_bench("matrix --from m", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("Stopped by a failed run (round 2 of " + x + ": exit 1): analysed the 4 of 9 measured runs that finished (" +
                        counts_text(dir, 2, 1) + ").",
                    0) == 0);
  CHECK(has(t::lines_of(r.out)[0], x + " round 2 (failed)"));
  CHECK(has(r.out, "\n\n## Failed runs\n"));
  const json a = json::parse(t::slurp(dir + "/attribution.json"));
  CHECK(a.at("partial").at("variants").at(x).at("failed") == json::array({2}));
  CHECK(a.at("failed_runs").size() == 1);
  check_partial_json(a.at("partial"), dir, 2, 1);
  CHECK(merged_rounds(dir, x, false) == std::set<int>{1});
}

TEST_CASE("matrix --from: a variant none of whose measured runs finished is one clear error", "[matrix][matrix_partial]") {
  TempDir d;
  SECTION("interrupted in the last run of the first measured round") {
    const std::string dir = stopped_copy(d, 1, 2, "interrupted");
    const std::string w = at(dir, 1, 2);
    json m = manifest_of(dir);
    m["interrupted"] = {{"signal", "SIGINT"}, {"round", 1}, {"variant", w}};
    write_manifest(dir, m);
    auto r = t::run_bench("matrix --from m", d.path());
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    CHECK(t::lines_of(r.err).size() == 1);
    CHECK(has(r.err, "m: nothing of variant " + w + " finished (interrupted by SIGINT in round 1 of " + w +
                         ": of its 3 measured runs, 1 discarded, 2 never run): there is nothing to analyse"));
  }
  SECTION("interrupted in the warm-up round: nothing of any variant") {
    const std::string dir = stopped_copy(d, 0, 0, "interrupted");
    json m = manifest_of(dir);
    m["interrupted"] = {{"signal", "SIGTERM"}, {"round", 0}, {"variant", at(dir, 0, 0)}};
    write_manifest(dir, m);
    auto r = t::run_bench("matrix --from m", d.path());
    INFO(r.out << r.err);
    CHECK(r.code == 2);
    CHECK(t::lines_of(r.err).size() == 1);
    CHECK(has(r.err, "nothing of variant baseline finished (interrupted by SIGTERM in round 0 (warm-up) of "));
    CHECK(has(r.err, "of its 3 measured runs, 3 never run"));
  }
  SECTION("a folder that is not a matrix: as before") {
    REQUIRE(std::system(("mkdir '" + d.file("m") + "'").c_str()) == 0);
    auto r = t::run_bench("matrix --from m", d.path());
    CHECK(r.code == 2);
    CHECK(has(r.err, "m/manifest.json: no such file (is m a matrix folder?)"));
    CHECK(t::lines_of(r.err).size() == 1);
  }
  // Nothing was written.
  CHECK(!t::exists(d.file("m/attribution.json")));
  CHECK(!t::exists(d.file("m/attribution.md")));
  CHECK(!t::exists(d.file("m/variants/baseline.jsonl")));
}

TEST_CASE("matrix --from on a complete matrix prints and writes what the matrix did", "[matrix][matrix_partial]") {
  TempDir d;
  const std::string dir = d.file("m");
  REQUIRE(std::system(("cp -a '" + finished_matrix().dir + "' '" + dir + "'").c_str()) == 0);
  const std::string json_before = t::slurp(dir + "/attribution.json"), md_before = t::slurp(dir + "/attribution.md");
  struct stat before {};
  REQUIRE(::stat((dir + "/variants/baseline.jsonl").c_str(), &before) == 0);

  auto r = t::run_bench("matrix --from m", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out == finished_matrix().out);
  CHECK(!has(r.out, "analysed the"));
  CHECK(t::slurp(dir + "/attribution.json") == json_before);
  CHECK(t::slurp(dir + "/attribution.md") == md_before);
  CHECK(!json::parse(json_before).contains("partial"));
  // Its merged results are its own: not written again.
  struct stat after {};
  REQUIRE(::stat((dir + "/variants/baseline.jsonl").c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);
  CHECK(after.st_mtime == before.st_mtime);
}
