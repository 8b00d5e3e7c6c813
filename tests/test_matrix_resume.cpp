// `cuzk-bench matrix --resume` (docs/matrix.md, "Resuming a matrix"): a matrix that did not
// complete goes on in its own folder. Exactly the runs that did not finish run (discarded,
// partial, failed, never run), in the recorded order, as the manifest says they were made; the
// runs that finished are neither run again nor rewritten; the matrix is then merged and analysed
// as a complete one, and every output says it was resumed. A resumed matrix stopped again is
// resumed again, and a run a stop discarded stays discarded until a later sitting runs it. Each
// refusal (a complete folder, a stale or missing binary, another machine, a folder another
// cuzk-bench holds, an option that shapes the runs) is one line, exit 2, and changes nothing.
//
// The folders are copies of one small finished matrix put in the states a stop leaves
// (tests/support/matrix_folders.hpp), so that what is left to run never depends on timing; the
// one case that stops a resumed matrix waits for its run to hang (a wrapper that hangs once).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "catch.hpp"
#include "child_process.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/output_lock.hpp"
#include "harness/measure/results.hpp"
#include "matrix_folders.hpp"
#include "refusal.hpp"
#include "test_util.hpp"

namespace t = cuzk::test;
namespace fs = std::filesystem;
using nlohmann::json;
using t::TempDir;
using namespace t::matrix_folders;

namespace {

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// Every file under `dir` (the lock file included, were one left) with its content.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out[fs::relative(e.path(), dir).string()] = t::slurp(e.path().string());
  return out;
}

// What identifies one written round file: its inode, its modification time and its content.
struct FileId {
  ino_t ino = 0;
  struct timespec mtime {};
  std::string text;
  bool operator==(const FileId& o) const {
    return ino == o.ino && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec && text == o.text;
  }
};
FileId file_id(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return FileId{st.st_ino, st.st_mtim, t::slurp(path)};
}

// The round files of `dir` that exist, by (variant, round).
std::map<std::pair<std::string, int>, FileId> round_files(const std::string& dir) {
  std::map<std::pair<std::string, int>, FileId> out;
  const json m = manifest_of(dir);
  for (size_t r = 0; r < m.at("order").size(); ++r)
    for (const auto& v : m.at("order")[r])
      if (t::exists(round_file(dir, v, int(r)))) out[{v, int(r)}] = file_id(round_file(dir, v, int(r)));
  return out;
}

// The process ids of a round file's samples (each run is one process, with its own id).
std::set<std::string> process_ids(const std::string& file) {
  std::set<std::string> out;
  for (const auto& line : t::lines_of(t::slurp(file))) {
    const json s = json::parse(line, nullptr, false);
    if (s.is_object() && s.value("type", "") == "sample") out.insert(s.at("process_id").get<std::string>());
  }
  return out;
}

// The runs the progress lines announce, in order: (round index, variant).
std::vector<std::pair<int, std::string>> announced(const std::string& err) {
  std::vector<std::pair<int, std::string>> out;
  static const std::regex re(R"(\[matrix\] round ([0-9]+)/[0-9]+(?: \(warm-up\))? ([^ ]+) elapsed)");
  for (const auto& l : t::lines_of(err)) {
    std::smatch m;
    if (std::regex_search(l, m, re)) out.push_back({std::stoi(m[1]) - 1, m[2]});
  }
  return out;
}

// The runs a resumption recorded as started again: (round, variant), in order.
std::vector<std::pair<int, std::string>> reran(const json& resumption) {
  std::vector<std::pair<int, std::string>> out;
  for (const auto& e : resumption.at("reran")) out.push_back({e.at("round").get<int>(), e.at("variant").get<std::string>()});
  return out;
}

// The checks of a resumed matrix that completed: as a complete matrix in shape (status, every
// round of every variant merged, attribution written with the same cases and phases), and every
// output saying it was resumed, first.
void check_complete(const std::string& dir, const cuzk::test::RunResult& r, size_t resumptions) {
  const json m = manifest_of(dir);
  CHECK(m.at("status") == "complete");
  CHECK(!m.contains("interrupted"));
  CHECK(!m.contains("failure"));
  CHECK(m.at("runs") == 12);
  CHECK(m.at("runs_ok") == 12);
  CHECK(m.at("failed_runs").empty());
  REQUIRE(m.at("resumed").size() == resumptions);
  for (const auto& v : m.at("variants")) {
    INFO(v.at("name"));
    for (const auto& rf : v.at("rounds")) CHECK(rf.is_string());
    CHECK(merged_rounds(dir, v.at("name"), false) == std::set<int>{1, 2, 3});
    CHECK(merged_rounds(dir, v.at("name"), true) == std::set<int>{0});
  }
  for (size_t round = 0; round < 4; ++round)
    for (const auto& v : m.at("order")[round]) CHECK(cuzk::read_results(round_file(dir, v, int(round))).summary.has_value());

  const json a = json::parse(t::slurp(dir + "/attribution.json"));
  const json done = json::parse(t::slurp(finished_matrix().dir + "/attribution.json"));
  std::set<std::string> keys, want{"resumed"};
  for (auto& [k, v] : a.items()) keys.insert(k);
  for (auto& [k, v] : done.items()) want.insert(k);
  CHECK(keys == want);
  REQUIRE(a.at("cases").size() == done.at("cases").size());
  for (size_t c = 0; c < a.at("cases").size(); ++c) CHECK(a["cases"][c].at("phases").size() == done["cases"][c].at("phases").size());
  CHECK(a.at("resumed").at("sittings") == resumptions + 1);

  const std::string statement = a.at("resumed").at("statement");
  CHECK(statement.rfind(resumptions == 1 ? "Resumed once (" : "Resumed twice (", 0) == 0);
  CHECK(has(statement, resumptions == 1 ? "): rounds ran in two sittings." : "): rounds ran in three sittings."));
  const auto lines = t::lines_of(r.out);
  REQUIRE(!lines.empty());
  CHECK(lines[0] == statement);
  CHECK(t::slurp(dir + "/attribution.md").rfind(statement + "\n\n# Matrix: variants", 0) == 0);
  CHECK(!t::exists(dir + "/" + cuzk::kOutputLockName));
}

// A wrapper around cuzk-bench whose first `run` hangs in proof/prove (`info` passes through, so
// that its provenance is cuzk-bench's).
std::string hang_once_wrapper(const TempDir& d) {
  const std::string w = d.file("hang-once.sh"), flag = d.file("hung-once");
  t::spit(w, "#!/bin/sh\nif [ \"$1\" = run ] && [ ! -e '" + flag + "' ]; then\n  touch '" + flag +
                 "'\n  export CUZK_INJECT_FAULT=hang_in:proof/prove\nfi\nexec '" + t::bench() + "' \"$@\"\n");
  chmod(w.c_str(), 0755);
  return w;
}

}  // namespace

TEST_CASE("matrix --resume of an interrupted matrix runs exactly the runs left, in the recorded order",
          "[matrix][matrix_resume]") {
  TempDir d;
  REQUIRE(t::share_params_cache(d));
  // SIGTERM during the second run of round 2: its file is whole, but the matrix discarded it.
  const std::string dir = stopped_copy(d, 2, 1, "interrupted");
  const std::string x = at(dir, 2, 1);
  json m = manifest_of(dir);
  m["interrupted"] = {{"signal", "SIGTERM"}, {"round", 2}, {"variant", x}};
  write_manifest(dir, m);
  const auto before = round_files(dir);
  REQUIRE(before.size() == 8);  // rounds 0-1, and the first two runs of round 2
  const auto discarded_ids = process_ids(round_file(dir, x, 2));
  REQUIRE(!discarded_ids.empty());

  auto r = t::run_bench("matrix --resume m", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(t::lines_of(r.err).at(0) == "[matrix] resuming m (status interrupted): 5 of its 12 runs to run (1 discarded, 4 never run)");
  const std::vector<std::pair<int, std::string>> runs = {
      {2, x}, {2, at(dir, 2, 2)}, {3, at(dir, 3, 0)}, {3, at(dir, 3, 1)}, {3, at(dir, 3, 2)}};
  CHECK(announced(r.err) == runs);
  // The progress lines count the runs left: an estimate from the second one on.
  std::vector<std::string> progress;
  for (const auto& l : t::lines_of(r.err))
    if (l.rfind("[matrix] round ", 0) == 0) progress.push_back(l);
  REQUIRE(progress.size() == 5);
  CHECK(!has(progress[0], "left"));
  CHECK(has(progress[1], ", about "));

  // The runs that finished were neither run again nor rewritten; the others ran.
  const auto after = round_files(dir);
  CHECK(after.size() == 12);
  for (const auto& [run, id] : before) {
    INFO(run.first << " round " << run.second);
    if (run == std::pair{x, 2})
      CHECK_FALSE(after.at(run) == id);
    else
      CHECK(after.at(run) == id);
  }
  const auto rerun_ids = process_ids(round_file(dir, x, 2));
  CHECK(!rerun_ids.empty());
  for (const auto& p : rerun_ids) CHECK(!discarded_ids.count(p));

  const json mm = manifest_of(dir);
  const json& res = mm.at("resumed").at(0);
  CHECK(res.at("runs") == 5);
  CHECK(res.at("after") == json{{"status", "interrupted"}, {"interrupted", m.at("interrupted")}});
  CHECK(reran(res) == runs);
  CHECK(res.at("reran")[0].at("was") == "discarded");
  CHECK(res.at("reran")[1].at("was") == "never run");
  CHECK(res.at("machine").is_object());
  CHECK(!res.contains("machine_mismatch"));
  check_complete(dir, r, 1);
  CHECK(has(t::lines_of(r.out)[0], ", 5 runs): rounds ran in two sittings."));

  // --from says it too; and a complete matrix has nothing left to resume.
  auto from = t::run_bench("matrix --from m", d.path());
  REQUIRE(from.code == 0);
  CHECK(t::lines_of(from.out).at(0) == t::lines_of(r.out)[0]);
  const auto done = snapshot(dir);
  t::check_refused(t::run_bench("matrix --resume m", d.path()), "m: the matrix is complete: nothing to resume");
  CHECK(snapshot(dir) == done);
}

TEST_CASE("matrix --resume of a matrix killed without a word runs its partial last run again", "[matrix][matrix_resume]") {
  TempDir d;
  REQUIRE(t::share_params_cache(d));
  // The manifest still says "running"; the first run of round 3 left a file cut short.
  const std::string dir = stopped_copy(d, 3, 0, "running");
  const std::string y = at(dir, 3, 0);
  const std::string file = round_file(dir, y, 3);
  const std::string text = t::slurp(file);
  t::spit(file, text.substr(0, text.size() / 2));
  const auto before = round_files(dir);

  auto r = t::run_bench("matrix --resume m --markdown", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(t::lines_of(r.err).at(0) == "[matrix] resuming m (status running): 3 of its 12 runs to run (1 partial, 2 never run)");
  const std::vector<std::pair<int, std::string>> runs = {{3, y}, {3, at(dir, 3, 1)}, {3, at(dir, 3, 2)}};
  CHECK(announced(r.err) == runs);
  const json m = manifest_of(dir);
  CHECK(reran(m.at("resumed")[0]) == runs);
  CHECK(m.at("resumed")[0].at("reran")[0].at("was") == "partial");
  CHECK(m.at("resumed")[0].at("after") == json{{"status", "running"}});
  const auto after = round_files(dir);
  for (const auto& [run, id] : before) {
    INFO(run.first << " round " << run.second);
    CHECK((after.at(run) == id) == (run != std::pair{y, 3}));
  }
  check_complete(dir, r, 1);
}

TEST_CASE("matrix --resume on another machine is refused, or allowed and said", "[matrix][matrix_resume]") {
  TempDir d;
  REQUIRE(t::share_params_cache(d));
  // Stopped before the last run: one run left.
  const std::string dir = stopped_copy(d, 3, 1, "running");
  json m = manifest_of(dir);
  m["machine"]["cpu_model"] = "Some Other CPU";
  write_manifest(dir, m);
  const auto before = snapshot(dir);
  t::check_refused(t::run_bench("matrix --resume m", d.path()),
                   {"m ran on [Some Other CPU x", "use --allow-machine-mismatch to resume anyway"});
  CHECK(snapshot(dir) == before);

  auto r = t::run_bench("matrix --resume m --allow-machine-mismatch", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(has(r.err, "[matrix] warning: m ran on [Some Other CPU x"));
  CHECK(manifest_of(dir).at("resumed")[0].at("machine_mismatch") == true);
  check_complete(dir, r, 1);
  CHECK(has(t::lines_of(r.out)[0], ", 1 run, on another machine ["));
  CHECK(has(t::lines_of(r.out)[0], "] (--allow-machine-mismatch)): rounds ran in two sittings."));
}

TEST_CASE("matrix --resume refuses, in one line and changing nothing", "[matrix][matrix_resume]") {
  TempDir d;
  SECTION("a complete matrix") {
    REQUIRE(std::system(("cp -r '" + finished_matrix().dir + "' '" + d.file("m") + "'").c_str()) == 0);
    const auto before = snapshot(d.file("m"));
    t::check_refused(t::run_bench("matrix --resume m", d.path()),
                     "m: the matrix is complete: nothing to resume (matrix --from m analyses it again)");
    CHECK(snapshot(d.file("m")) == before);
  }
  SECTION("a folder that is not a matrix") {
    REQUIRE(std::system(("mkdir '" + d.file("m") + "'").c_str()) == 0);
    t::check_refused(t::run_bench("matrix --resume m", d.path()), "m/manifest.json: no such file (is m a matrix folder?)");
    CHECK(fs::is_empty(d.file("m")));
  }
  SECTION("the rest") {
    const std::string dir = stopped_copy(d, 2, 1, "interrupted");
    json m = manifest_of(dir);
    m["interrupted"] = {{"signal", "SIGINT"}, {"round", 2}, {"variant", at(dir, 2, 1)}};
    SECTION("a stale binary: built from other sources than the matrix's") {
      m["source_hash"] = std::string(64, '0');
      write_manifest(dir, m);
      const auto before = snapshot(dir);
      t::check_refused(t::run_bench("matrix --resume m", d.path()),
                       {t::bench() + " is stale: built from sources ",
                        "the matrix ran binaries of sources " + std::string(64, '0')});
      CHECK(snapshot(dir) == before);
    }
    SECTION("a binary that is gone") {
      m["variants"][1]["binary"] = d.file("gone/cuzk-bench");
      write_manifest(dir, m);
      const auto before = snapshot(dir);
      t::check_refused(t::run_bench("matrix --resume m", d.path()),
                       {d.file("gone/cuzk-bench") + ": no such binary (variant " + m["variants"][1]["name"].get<std::string>()});
      CHECK(snapshot(dir) == before);
    }
    SECTION("options that shape the runs") {
      write_manifest(dir, m);
      const auto before = snapshot(dir);
      t::check_refused(t::run_bench("matrix --resume m --rounds 4", d.path()),
                       "--resume runs the rest of a matrix as its manifest recorded it: it takes no --rounds");
      t::check_refused(t::run_bench("matrix --resume m --suite quick --case porep-tiny --quick --json", d.path()),
                       "it takes no --suite, --case, --quick (only the analysis options");
      t::check_refused(t::run_bench("matrix --resume m --from m", d.path()), "it takes no --from");
      t::check_refused(t::run_bench("matrix --resume m --bin '" + t::bench() + "'", d.path()), "it takes no --bin");
      CHECK(snapshot(dir) == before);
    }
    SECTION("a folder another cuzk-bench holds") {
      write_manifest(dir, m);
      cuzk::FolderClaim claim(dir, "--out-dir", false);
      const auto before = snapshot(dir);
      t::check_refused(t::run_bench("matrix --resume m", d.path()), "--resume m is being written by another cuzk-bench (pid ");
      CHECK(snapshot(dir) == before);
    }
    SECTION("a manifest written before --counters was recorded, with no round file to tell") {
      m.erase("counters");
      m.erase("cache_sim");
      write_manifest(dir, m);
      REQUIRE(std::system(("rm -r '" + dir + "/rounds' && mkdir '" + dir + "/rounds'").c_str()) == 0);
      const auto before = snapshot(dir);
      t::check_refused(t::run_bench("matrix --resume m", d.path()),
                       "does not record --counters and --cache-sim (written before matrix recorded them) and no round "
                       "file shows how its runs were made: cannot tell whether they were used");
      CHECK(snapshot(dir) == before);
    }
  }
}

TEST_CASE("matrix --resume stopped by SIGTERM says so, and a second --resume finishes it", "[matrix][matrix_resume]") {
  TempDir d;
  REQUIRE(t::share_params_cache(d));
  // Interrupted in round 2 (its second run discarded, its file whole) after a run of round 1, of
  // another variant, had failed (--on-failure continue); written before counters were recorded.
  const std::string dir = stopped_copy(d, 2, 1, "interrupted");
  // f: the variant whose round 2 ran first, so that each variant keeps a measured run that finished.
  const std::string x = at(dir, 2, 1), f = at(dir, 2, 0);
  json m = manifest_of(dir);
  m["interrupted"] = {{"signal", "SIGTERM"}, {"round", 2}, {"variant", x}};
  m["on_failure"] = "continue";
  for (auto& v : m.at("variants"))
    if (v.at("name") == f) v.at("rounds")[0] = nullptr;
  m["failed_runs"] = json::array({{{"round", 1},
                                   {"warmup", false},
                                   {"variant", f},
                                   {"reason", "exit 1"},
                                   {"exit_code", 1},
                                   {"timed_out", false},
                                   {"results", "rounds/" + f + "-1.jsonl"}}});
  m.erase("counters");
  m.erase("cache_sim");
  // The first run it starts (f's round 1) hangs.
  const std::string hang = hang_once_wrapper(d);
  for (auto& v : m.at("variants")) v["binary"] = hang;
  write_manifest(dir, m);
  const FileId x_before = file_id(round_file(dir, x, 2));
  const auto x_ids = process_ids(round_file(dir, x, 2));

  const std::string err = d.file("err");
  const pid_t pid = t::spawn_bench(d.path(), {"matrix", "--resume", "m"}, "/dev/null", err);
  REQUIRE(pid > 0);
  int early = 0;
  const bool hung = t::wait_for(
      [&] { return has(t::slurp(err), "injected hang in proof/prove") || waitpid(pid, &early, WNOHANG) == pid; }, 120);
  INFO(t::slurp(err));
  REQUIRE(hung);
  REQUIRE(has(t::slurp(err), "injected hang in proof/prove"));
  kill(pid, SIGTERM);
  int st = 0;
  REQUIRE(t::wait_for([&] { return waitpid(pid, &st, WNOHANG) == pid; }, 60));
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 143);
  const std::string e = t::slurp(err);
  INFO(e);
  CHECK(t::lines_of(e).at(0) == "[matrix] resuming m (status interrupted): 6 of its 12 runs to run (1 discarded, 1 failed, 4 never run)");
  CHECK(has(e, "interrupted by SIGTERM in round 1 of " + f + ": the run was discarded; the manifest says so: m"));

  m = manifest_of(dir);
  CHECK(m.at("status") == "interrupted");
  CHECK(m.at("interrupted") == json{{"signal", "SIGTERM"}, {"round", 1}, {"variant", f}});
  REQUIRE(m.at("resumed").size() == 1);
  CHECK(m.at("resumed")[0].at("after").at("interrupted").at("variant") == x);
  CHECK(reran(m.at("resumed")[0]) == std::vector<std::pair<int, std::string>>{{1, f}});
  CHECK(m.at("resumed")[0].at("reran")[0].at("failure").at("reason") == "exit 1");  // its failure, moved there
  CHECK(m.at("failed_runs").empty());
  CHECK(m.at("counters") == "");  // told by the runs' own command line, and recorded
  CHECK(m.at("cache_sim") == false);
  CHECK(file_id(round_file(dir, x, 2)) == x_before);  // not reached: as it was

  // What finished now: x's round 2 is still discarded (its file is the one the first stop
  // discarded), and so is f's round 1 (in flight at the second stop).
  auto from = t::run_bench("matrix --from m", d.path());
  INFO(from.out << from.err);
  REQUIRE(from.code == 0);
  const json a = json::parse(t::slurp(dir + "/attribution.json"));
  CHECK(a.at("partial").at("variants").at(x).at("discarded") == json::array({2}));
  CHECK(a.at("partial").at("variants").at(f).at("discarded") == json::array({1}));
  CHECK(has(from.out, "Interrupted by SIGTERM in round 1 of " + f));
  CHECK(has(from.out, "\n\nResumed once ("));

  // The second sitting runs the rest (the wrapper hangs no more).
  auto r = t::run_bench("matrix --resume m", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(t::lines_of(r.err).at(0) == "[matrix] resuming m (status interrupted): 6 of its 12 runs to run (2 discarded, 4 never run)");
  const std::vector<std::pair<int, std::string>> runs = {{1, f}, {2, x}, {2, at(dir, 2, 2)}, {3, at(dir, 3, 0)},
                                                         {3, at(dir, 3, 1)}, {3, at(dir, 3, 2)}};
  CHECK(announced(r.err) == runs);
  m = manifest_of(dir);
  CHECK(reran(m.at("resumed")[1]) == runs);
  CHECK(m.at("resumed")[1].at("after").at("interrupted").at("variant") == f);
  for (const auto& p : process_ids(round_file(dir, x, 2))) CHECK(!x_ids.count(p));
  check_complete(dir, r, 2);
  CHECK(has(t::lines_of(r.out)[0], ", 6 runs; "));
}
