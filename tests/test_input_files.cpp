// Inputs that are not regular files (docs/reliability.md, "Inputs"): a FIFO, /dev/zero, a
// directory, a socket, a /proc file and a loop of symbolic links, given to every command that
// reads a file, are refused at once with exit 2 and one line naming the path and what it is,
// never a hang or a read without end (each run has a deadline). Also the schema refusals of
// the results and manifest readers as the CLI reports them: exit 2 naming file:line or field.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "refusal.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::test::run_bench;
using cuzk::test::SynthSpec;
using cuzk::test::TempDir;
using nlohmann::json;

using cuzk::test::check_refused;

namespace {

std::string src(const std::string& rel) { return std::string(CUZK_SOURCE_DIR) + "/" + rel; }

// A run may take this long; a reader that blocks or reads without end is killed and fails.
constexpr int kDeadlineSeconds = 15;

cuzk::test::RunResult run_limited(const std::string& args, const std::string& dir) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_bench(args, dir, "timeout -k 2 " + std::to_string(kDeadlineSeconds * cuzk::test::kSlowdown));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO("cuzk-bench " << args << "\ntook " << s << " s\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code != 124);  // timeout(1): the deadline passed
  CHECK(r.code != 137);
  return r;
}

// Exit 2 and one line "cuzk-bench: error: ..." holding every needle.

// The gate fails closed with its own verdict (docs/gating.md): exit 2, the reason on a
// "cuzk-bench: gate error:" line.
void check_gate_refused(const cuzk::test::RunResult& r, const std::vector<std::string>& needles) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  std::string line;
  for (const auto& l : cuzk::test::lines_of(r.err))
    if (l.rfind("cuzk-bench: gate error: ", 0) == 0) line = l;
  for (const auto& n : needles) CHECK(line.find(n) != std::string::npos);
}

// A folder with a.jsonl and b.jsonl (two synthetic runs), t.toml (a 5% threshold) and m/, where
// each test puts its special manifest.json.
struct Inputs {
  TempDir d;
  Inputs() {
    SynthSpec a, b;
    b.seed = 2;
    cuzk::test::write_synth(d.file("a.jsonl"), a);
    cuzk::test::write_synth(d.file("b.jsonl"), b);
    cuzk::test::spit(d.file("t.toml"), "[default]\nmax_slowdown = 0.05\n");
    REQUIRE(::mkdir(d.file("m").c_str(), 0755) == 0);
    REQUIRE(::mkdir(d.file("rep").c_str(), 0755) == 0);
  }
  std::string special() const { return d.file("m/manifest.json"); }
};

std::vector<std::string> plus(std::vector<std::string> v, const std::string& more) {
  v.push_back(more);
  return v;
}

// The commands whose readers the others share (compare's loading, results, manifest, report,
// gate): each given `p` where it reads a file, `what` the refusal's words. matrix --from reads
// m/manifest.json (which is `p` or a link to it), and names that path.
void check_analysis_readers(const Inputs& in, const std::string& p, const std::vector<std::string>& what) {
  const std::string& dir = in.d.path();
  {
    INFO("compare");
    check_refused(run_limited("compare '" + p + "' b.jsonl", dir), plus(what, p));
  }
  {
    INFO("trace");
    check_refused(run_limited("trace '" + p + "' -o t.json", dir), plus(what, p));
  }
  {
    INFO("report");
    check_refused(run_limited("report rep --a '" + p + "' --b b.jsonl --python none", dir), plus(what, p));
  }
  {
    INFO("matrix --from");
    check_refused(run_limited("matrix --from m", dir), plus(what, "m/manifest.json"));
  }
  {
    INFO("gate --baseline");
    check_gate_refused(run_limited("gate --baseline '" + p + "' --candidate b.jsonl --thresholds t.toml", dir), plus(what, p));
  }
}

// The other readers (thresholds, suites, results for noise and the history, snarkjs JSON,
// .r1cs, parameter files, .zkey), for the inputs that a plain read would never finish.
void check_other_readers(const Inputs& in, const std::string& p, const std::vector<std::string>& what) {
  const std::string& dir = in.d.path();
  const std::vector<std::string> needles = plus(what, p);
  {
    INFO("gate --thresholds");
    check_gate_refused(run_limited("gate --baseline a.jsonl --candidate b.jsonl --thresholds '" + p + "'", dir), needles);
  }
  {
    INFO("run --suite");
    check_refused(run_limited("run --suite '" + p + "' --out r.jsonl", dir), needles);
  }
  {
    INFO("noise --from");
    check_refused(run_limited("noise --from '" + p + "' a.jsonl", dir), needles);
  }
  {
    INFO("verify --vk");
    check_refused(run_limited("verify --vk '" + p + "' --proof a.jsonl --public a.jsonl", dir), needles);
  }
  {
    INFO("circuit --r1cs");
    check_refused(run_limited("circuit --describe --r1cs '" + p + "'", dir), needles);
  }
  {
    INFO("srs inspect");
    check_refused(run_limited("srs inspect '" + p + "'", dir), needles);
  }
  {
    INFO("history ingest");
    const auto r = run_limited("history ingest '" + p + "' --db h.sqlite", dir);
    if (r.err.find("built without libsqlite3") != std::string::npos)
      WARN("history ingest not checked: this build has no SQLite");
    else
      check_refused(r, needles);
  }
  {
    INFO("prove --zkey");
    check_refused(run_limited("prove --zkey '" + p + "' --wtns '" + src("tests/fixtures/circom/small.wtns") + "' --proof pr.json --public pu.json", dir),
                  needles);
  }
}

}  // namespace

TEST_CASE("a FIFO as input is refused at once, never waited on", "[cli][inputs]") {
  Inputs in;
  const std::string p = in.special();
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  check_analysis_readers(in, p, {"is a FIFO, not a regular file"});
  check_other_readers(in, p, {"is a FIFO, not a regular file"});
}

TEST_CASE("/dev/zero as input is refused, never read without end", "[cli][inputs]") {
  struct stat st {};
  if (::stat("/dev/zero", &st) != 0 || !S_ISCHR(st.st_mode)) {
    WARN("SKIPPED: no /dev/zero character device here");
    return;
  }
  Inputs in;
  REQUIRE(::symlink("/dev/zero", in.special().c_str()) == 0);
  check_analysis_readers(in, "/dev/zero", {"is a character device, not a regular file"});
  check_other_readers(in, "/dev/zero", {"is a character device, not a regular file"});
}

TEST_CASE("a directory as input names the path and says it is a directory", "[cli][inputs]") {
  Inputs in;
  const std::string p = in.special();
  REQUIRE(::mkdir(p.c_str(), 0755) == 0);
  check_analysis_readers(in, p, {"is a directory"});
  INFO("run --suite");
  check_refused(run_limited("run --suite '" + p + "' --out r.jsonl", in.d.path()), {p, "is a directory"});
}

TEST_CASE("a socket as input is refused as a socket", "[cli][inputs]") {
  Inputs in;
  const std::string p = in.special();
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(s >= 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  REQUIRE(p.size() < sizeof a.sun_path);
  std::strncpy(a.sun_path, p.c_str(), sizeof a.sun_path - 1);
  REQUIRE(::bind(s, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  check_analysis_readers(in, p, {"is a socket, not a regular file"});
  ::close(s);
}

TEST_CASE("a /proc file as input is refused: its size says nothing of its content", "[cli][inputs]") {
  Inputs in;
  const std::string p = "/proc/self/status";
  REQUIRE(::symlink(p.c_str(), in.special().c_str()) == 0);
  check_analysis_readers(in, p, {"is a file of /proc (procfs), not a regular file"});
}

TEST_CASE("a loop of symbolic links as input names the path and the loop", "[cli][inputs]") {
  Inputs in;
  const std::string p = in.special();
  REQUIRE(::symlink("manifest.json", p.c_str()) == 0);  // itself
  check_analysis_readers(in, p, {"Too many levels of symbolic links"});
}

TEST_CASE("out-of-schema results values are exit 2 naming file:line", "[cli][inputs][results]") {
  Inputs in;
  const auto lines = cuzk::test::lines_of(cuzk::test::slurp(in.d.file("a.jsonl")));
  REQUIRE(lines.size() >= 3);
  // Writes a.jsonl with its first measured sample (line 3: line 2 is the warm-up) edited.
  auto with_sample = [&](const std::function<void(json&)>& edit) {
    std::string text;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (i == 2) {
        json s = json::parse(lines[i]);
        edit(s);
        text += s.dump() + "\n";
      } else {
        text += lines[i] + "\n";
      }
    }
    cuzk::test::spit(in.d.file("bad.jsonl"), text);
  };
  auto compare_bad = [&] { return run_limited("compare bad.jsonl b.jsonl", in.d.path()); };
  SECTION("negative durations") {
    with_sample([](json& s) { s["env"] = {{"interval_ns", -1000}, {"values", json::object()}}; });
    check_refused(compare_bad(), {"bad.jsonl:3: ", "'interval_ns' must be >= 0"});
    with_sample([](json& s) { s["phases"]["proof/synth"]["wall_ns"] = -5; });
    check_refused(compare_bad(), {"bad.jsonl:3: ", "'wall_ns' must be a non-negative integer"});
  }
  SECTION("a counter the header did not declare") {
    with_sample([](json& s) { s["phases"]["proof/synth"]["counters"]["os::minflt"] = 7; });
    check_refused(compare_bad(), {"bad.jsonl:3: ", "counter 'os::minflt' is not declared in the header"});
  }
  SECTION("a process id that is not hex") {
    with_sample([](json& s) { s["process_id"] = "not-hex-at-all!!"; });
    check_refused(compare_bad(), {"bad.jsonl:3: ", "'process_id' must be 16 lowercase hex digits"});
  }
  SECTION("a negative pass count of a gpu_counters line") {
    json g = {{"schema", "cuzk.results"}, {"version", 1}, {"type", "gpu_counters"}, {"suite", "x"}, {"case", "c"},
              {"parameters", json::object()}, {"passes", -3}, {"metrics", json::object()}, {"phases", json::object()}};
    std::string text;
    for (size_t i = 0; i + 1 < lines.size(); ++i) text += lines[i] + "\n";  // all but the summary
    cuzk::test::spit(in.d.file("bad.jsonl"), text + g.dump() + "\n");
    check_refused(compare_bad(), {"bad.jsonl:" + std::to_string(lines.size()) + ": ", "'passes' must be a non-negative integer"});
  }
}

TEST_CASE("matrix --from: a manifest field of the wrong type is exit 2 naming the field", "[cli][inputs][matrix]") {
  TempDir d;
  const json good = json::parse(cuzk::test::slurp(src("results/reference/vm/matrix-2026-12-02/manifest.json")));
  REQUIRE(::mkdir(d.file("m").c_str(), 0755) == 0);
  auto from = [&](const std::function<void(json&)>& edit) {
    json m = good;
    edit(m);
    cuzk::test::spit(d.file("m/manifest.json"), m.dump(2));
    return run_limited("matrix --from m", d.path());
  };
  const std::string file = "m/manifest.json: ";
  check_refused(from([](json& m) { m["variants"][1]["name"] = 5; }), {file, "\"variants[1].name\" must be a string (it is number)"});
  check_refused(from([](json& m) { m["flags"] = "pinned"; }), {file, "\"flags\" must be an array (it is string)"});
  check_refused(from([](json& m) { m["variants"][0]["flags"]["smallvec"] = "yes"; }),
                {file, "\"variants[0].flags.smallvec\" must be true or false (it is string)"});
  check_refused(from([](json& m) { m["variants"][2]["rounds"][1] = 3; }),
                {file, "\"variants[2].rounds[1]\" must be a string or null (it is number)"});
  check_refused(from([](json& m) { m["variants"][0].erase("results"); }), {file, "\"variants[0].results\" is missing"});
  check_refused(from([](json& m) { m["injected"] = 1; }), {file, "\"injected\" must be true or false (it is number)"});
  check_refused(from([](json& m) { m["rounds"] = -1; }), {file, "\"rounds\" must be a non-negative integer (it is number)"});
  check_refused(from([](json& m) { m["failed_runs"] = json::array({json{{"round", "two"}}}); }),
                {file, "\"failed_runs[0].round\" must be a non-negative integer (it is string)"});
  check_refused(from([](json& m) { m["baseline"] = "nobody"; }), {file, "\"baseline\" is \"nobody\", which is not among the variants"});
  check_refused(from([](json& m) { m = json::array(); }), {file, "\"(top level)\" must be an object (it is array)"});
}
