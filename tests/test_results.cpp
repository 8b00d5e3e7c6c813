// Results files: the writer's lines validate with the reader, the documented examples parse,
// malformed files give "file:line: what", a killed writer leaves only complete lines, and
// `cuzk-bench selfmeasure` rejects bad input before doing any work.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <regex>
#include <thread>

#include "catch.hpp"
#include "harness/measure/recorder.hpp"
#include "harness/measure/results.hpp"
#include "prover/instr/phase.hpp"
#include "killed_results.hpp"
#include "test_util.hpp"

using cuzk::ResultsError;
using cuzk::instr::Phase;
using nlohmann::json;
namespace t = cuzk::test;

namespace {

// A complete results file text: header, two samples (one warm-up), summary.
std::string write_valid_file(const std::string& path) {
  cuzk::RecorderOptions o;
  o.counters = {};
  o.enlist_global_pool = false;
  cuzk::Recorder rec(o);
  cuzk::ResultsWriter w(path);
  w.write(cuzk::make_header({"unit", {"test_results"}, {{"PAPI_TOT_CYC", false, "event does not exist", "papi"}}}));
  std::vector<json> samples;
  rec.install();
  for (int i = 0; i < 2; ++i) {
    {
      Phase p("proof");
      Phase s("synth");
    }
    cuzk::instr::report_gpu_time("proof/synth", 42);
    json line = cuzk::make_sample(
        {.suite = "unit", .case_name = "tiny", .parameters = {{"n", 1}}, .repetition = i, .warm = i == 0},
        rec.take_sample());
    w.write(line);
    samples.push_back(line);
  }
  rec.uninstall();
  w.write(cuzk::make_summary(samples, 1000));
  CHECK(w.lines() == 4);
  return t::slurp(path);
}

// The message of the ResultsError that reading `text` (saved as `path`) throws, or "".
std::string error_of(const std::string& path, const std::string& text) {
  t::spit(path, text);
  try {
    cuzk::read_results(path);
  } catch (const ResultsError& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("a written results file validates with the reader", "[results]") {
  t::TempDir d;
  const std::string path = d.file("r.jsonl");
  std::string text = write_valid_file(path);
  REQUIRE(text.back() == '\n');
  auto f = cuzk::read_results(path);
  CHECK(f.header.line == 1);
  CHECK(f.header.value["schema"] == "cuzk.results");
  CHECK(f.header.value["version"] == 1);
  CHECK(f.header.value["suite"] == "unit");
  CHECK(f.header.value["counters"]["unavailable"]["PAPI_TOT_CYC"] == "event does not exist");
  CHECK(f.header.value["provenance"].contains("source_hash"));
  CHECK(f.header.value["machine"].is_object());
  REQUIRE(f.samples.size() == 2);
  CHECK(f.samples[0].line == 2);
  CHECK(f.samples[0].value["warmup"] == true);
  CHECK(f.samples[1].value["warmup"] == false);
  const json& rec = f.samples[1].value["phases"]["proof/synth"];
  CHECK(rec["count"] == 1);
  CHECK(rec["gpu_ns"] == 42);
  CHECK(f.samples[1].value["phases"]["proof"]["gpu_ns"].is_null());
  CHECK(f.samples[1].value["spans"].size() == 2);
  REQUIRE(f.summary.has_value());
  CHECK(f.summary->line == 4);
  CHECK(f.summary->value["samples"] == 1);
  CHECK(f.summary->value["warmup_samples"] == 1);
}

TEST_CASE("the examples in docs/results-format.md parse with the reader", "[results]") {
  const std::string doc = t::slurp(std::string(CUZK_SOURCE_DIR) + "/docs/results-format.md");
  REQUIRE_FALSE(doc.empty());
  std::regex block("```jsonl\n([\\s\\S]*?)```");
  int n = 0;
  bool saw_header = false, saw_sample = false, saw_summary = false;
  t::TempDir d;
  for (std::sregex_iterator it(doc.begin(), doc.end(), block), end; it != end; ++it) {
    ++n;
    const std::string path = d.file("example" + std::to_string(n) + ".jsonl");
    t::spit(path, (*it)[1].str());
    INFO("example block " << n);
    cuzk::ResultsFile f;
    REQUIRE_NOTHROW(f = cuzk::read_results(path));
    saw_header = true;
    saw_sample = saw_sample || !f.samples.empty();
    saw_summary = saw_summary || f.summary.has_value();
  }
  CHECK(n >= 1);
  CHECK(saw_header);
  CHECK(saw_sample);
  CHECK(saw_summary);
}

TEST_CASE("malformed results files give file:line and what is wrong", "[results]") {
  t::TempDir d;
  const std::string good = write_valid_file(d.file("good.jsonl"));
  const auto L = t::lines_of(good);
  REQUIRE(L.size() == 4);
  const std::string bad = d.file("bad.jsonl");
  auto expect = [&](const std::string& text, int line, const std::string& what) {
    std::string msg = error_of(bad, text);
    INFO("message: " << msg);
    CHECK(starts_with(msg, bad + ":" + std::to_string(line) + ": "));
    CHECK(msg.find(what) != std::string::npos);
  };

  SECTION("truncated last line") {
    std::string text = join({L[0], L[1]}) + L[2].substr(0, L[2].size() / 2);
    expect(text, 3, "truncated line");
    expect(text, 3, "the 2 complete lines before it are intact: 'head -n 2 FILE' keeps them");
  }
  SECTION("invalid JSON") {
    auto l = L;
    l[1] = l[1].substr(0, l[1].size() - 3);  // newline kept, JSON cut
    expect(join(l), 2, "invalid JSON");
  }
  SECTION("wrong schema version") {
    auto l = L;
    l[2] = std::regex_replace(l[2], std::regex("\"version\":1"), "\"version\":2");
    expect(join(l), 3, "unsupported version 2");
  }
  SECTION("wrong schema name") {
    auto l = L;
    l[0] = std::regex_replace(l[0], std::regex("\"schema\":\"cuzk.results\""), "\"schema\":\"other\"");
    expect(join(l), 1, "expected \"cuzk.results\"");
  }
  SECTION("missing required field of a sample") {
    auto l = L;
    json j = json::parse(l[1]);
    j.erase("phases");
    l[1] = j.dump();
    expect(join(l), 2, "missing required field 'phases'");
  }
  SECTION("missing required field of a phase record") {
    auto l = L;
    json j = json::parse(l[2]);
    j["phases"]["proof/synth"].erase("wall_ns");
    l[2] = j.dump();
    expect(join(l), 3, "phase 'proof/synth' record is missing required field 'wall_ns'");
  }
  SECTION("missing header field") {
    auto l = L;
    json j = json::parse(l[0]);
    j.erase("machine");
    l[0] = j.dump();
    expect(join(l), 1, "missing required field 'machine'");
  }
  SECTION("a null counter needs a reason") {
    auto l = L;
    json j = json::parse(l[2]);
    j["phases"]["proof"]["counters"]["PAPI_TOT_INS"] = nullptr;
    l[2] = j.dump();
    expect(join(l), 3, "null without a reason");
  }
  SECTION("sample before header") { expect(join({L[1], L[0]}), 1, "sample line before the header line"); }
  SECTION("line after the summary") { expect(join({L[0], L[1], L[3], L[2]}), 4, "after the summary"); }
  SECTION("empty line") { expect(join({L[0], "", L[1]}), 2, "empty line"); }
  SECTION("empty file") {
    std::string msg = error_of(bad, "");
    CHECK(starts_with(msg, bad + ": empty results file"));
  }
  SECTION("missing file") {
    try {
      cuzk::read_results(d.file("nope.jsonl"));
      FAIL("no error");
    } catch (const ResultsError& e) {
      CHECK(starts_with(e.what(), d.file("nope.jsonl") + ": cannot open"));
    }
  }
}

TEST_CASE("the writer opens the output up front and refuses to clobber", "[results]") {
  t::TempDir d;
  CHECK_THROWS_AS(cuzk::ResultsWriter(d.file("no/such/dir/r.jsonl")), ResultsError);
  CHECK_FALSE(t::exists(d.file("no")));
  CHECK_THROWS_AS(cuzk::ResultsWriter(d.path()), ResultsError);
  t::spit(d.file("old.jsonl"), "keep me\n");
  try {
    cuzk::ResultsWriter w(d.file("old.jsonl"));
    FAIL("an existing file was opened for writing");
  } catch (const ResultsError& e) {
    CHECK(std::string(e.what()).find("already exists") != std::string::npos);
  }
  CHECK(t::slurp(d.file("old.jsonl")) == "keep me\n");
  {
    cuzk::ResultsWriter w(d.file("old.jsonl"), cuzk::ResultsWriter::Mode::kOverwrite);
    w.write({{"a", 1}});
  }
  CHECK(t::slurp(d.file("old.jsonl")) == "{\"a\":1}\n");
}

TEST_CASE("a writer killed with SIGKILL mid-run leaves only complete lines", "[results][crash]") {
  t::TempDir d;
  const std::string path = d.file("killed.jsonl");
  const json header = cuzk::make_header({"crash", {"test"}, {}});
  // A sample with many spans, so each line is tens of kilobytes and the kill is likely to
  // land while a line is being produced.
  cuzk::Sample s;
  for (int i = 0; i < 400; ++i) s.spans.push_back({"proof/synth/partition", i * 1000, 900, uint64_t(1000 + i % 7)});
  s.phases["proof/synth/partition"].wall_ns = 360000;
  s.phases["proof/synth/partition"].count = 400;
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    try {
      cuzk::ResultsWriter w(path);
      w.write(header);
      for (int rep = 0;; ++rep)
        w.write(cuzk::make_sample({.suite = "crash", .case_name = "loop", .variant = "v", .repetition = rep}, s));
    } catch (...) {
    }
    _exit(3);
  }
  // Wait until at least 20 lines are on disk, then kill.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  size_t lines = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::string text = t::slurp(path);
    lines = std::count(text.begin(), text.end(), '\n');
    if (lines >= 20) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(pid, SIGKILL);
  int st = 0;
  waitpid(pid, &st, 0);
  REQUIRE(WIFSIGNALED(st));
  REQUIRE(lines >= 20);
  const cuzk::ResultsFile f = t::read_killed_results(path);
  CHECK(f.samples.size() + 1 >= lines);
  CHECK_FALSE(f.summary.has_value());
}

TEST_CASE("cuzk-bench selfmeasure writes a valid file and survives SIGKILL with whole lines", "[results][cli][crash]") {
  t::TempDir d;
  SECTION("complete run") {
    auto r = t::run_bench("selfmeasure --reps 2 --warmup 1 --touch-mib 8 --out run.jsonl", d.path());
    INFO(r.err);
    REQUIRE(r.code == 0);
    auto f = cuzk::read_results(d.file("run.jsonl"));
    REQUIRE(f.samples.size() == 3);
    REQUIRE(f.summary.has_value());
    for (const char* p : {"proof", "proof/srs_load", "proof/synth", "proof/synth/partition", "proof/prove",
                          "proof/prove/h2d", "proof/prove/ntt_h", "proof/prove/msm_h", "proof/prove/msm_l",
                          "proof/prove/msm_b_g2", "proof/prove/assemble"}) {
      INFO(p);
      CHECK(f.summary->value["phases"].contains(p));
    }
    const json& ntt = f.samples[1].value["phases"]["proof/prove/ntt_h"];
    CHECK(ntt["wall_ns"].get<uint64_t>() >= 10'000'000);
    CHECK(r.out.find("proof/prove/ntt_h") != std::string::npos);
  }
  SECTION("killed mid-run") {
    const std::string out = d.file("killed.jsonl");
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      execl(t::bench().c_str(), "cuzk-bench", "selfmeasure", "--reps", "100000", "--warmup", "0", "--touch-mib", "1",
            "--counters", "", "--out", out.c_str(), (char*)nullptr);
      _exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    size_t lines = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      std::string text = t::slurp(out);
      lines = std::count(text.begin(), text.end(), '\n');
      if (lines >= 4) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid, SIGKILL);
    int st = 0;
    waitpid(pid, &st, 0);
    REQUIRE(lines >= 4);
    const cuzk::ResultsFile f = t::read_killed_results(out);
    CHECK(f.samples.size() >= 3);
    CHECK_FALSE(f.summary.has_value());
  }
}

TEST_CASE("selfmeasure: bad input is one error line, exit 2, and no file", "[results][cli]") {
  t::TempDir d;
  auto one_line = [](const std::string& err) {
    return std::count(err.begin(), err.end(), '\n') == 1 && starts_with(err, "cuzk-bench: error: ");
  };
#if CUZK_HAVE_PAPI
  SECTION("unknown event name") {
    auto r = t::run_bench("selfmeasure --reps 1 --counters CUZK-NO-SUCH-EVENT --out x.jsonl", d.path());
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("CUZK-NO-SUCH-EVENT") != std::string::npos);
    CHECK(d.entries().empty());
  }
  SECTION("unknown event name from CUZK_COUNTERS") {
    auto r = t::run_bench("selfmeasure --reps 1 --out x.jsonl", d.path(), "CUZK_COUNTERS=bogus::EVENT");
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("bogus::EVENT") != std::string::npos);
    CHECK(d.entries().empty());
  }
#else
  SECTION("unknown event name") {
    WARN("SKIPPED: without PAPI built in, event names cannot be checked (all are null: PAPI not built in)");
  }
#endif
  SECTION("empty item in the counter list") {
    auto r = t::run_bench("selfmeasure --reps 1 --counters 'perf::PAGE-FAULTS,,' --out x.jsonl", d.path());
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(d.entries().empty());
  }
  SECTION("unwritable output path") {
    auto r = t::run_bench("selfmeasure --reps 1 --counters '' --out no/such/dir/x.jsonl", d.path());
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(r.err.find("no/such/dir/x.jsonl") != std::string::npos);
    CHECK(d.entries().empty());
  }
  SECTION("existing output without --force") {
    t::spit(d.file("x.jsonl"), "old\n");
    auto r = t::run_bench("selfmeasure --reps 1 --counters '' --out x.jsonl", d.path());
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(t::slurp(d.file("x.jsonl")) == "old\n");
  }
  SECTION("unknown flag") {
    auto r = t::run_bench("selfmeasure --no-such-flag", d.path());
    CHECK(r.code == 2);
    CHECK(d.entries().empty());
  }
  SECTION("bad repetition count") {
    auto r = t::run_bench("selfmeasure --reps 0 --out x.jsonl", d.path());
    CHECK(r.code == 2);
    CHECK(one_line(r.err));
    CHECK(d.entries().empty());
  }
}

TEST_CASE("hostile results lines: nesting and length limits name the file, the line and the limit", "[results]") {
  t::TempDir d;
  const std::string good = write_valid_file(d.file("good.jsonl"));
  const auto L = t::lines_of(good);
  const std::string bad = d.file("bad.jsonl");
  SECTION("parameters holding a 100,000-deep nested array (compare and gate overflowed the stack)") {
    json s = json::parse(L[1]);
    const std::string marker = "\"DEEP\"";
    s["parameters"]["deep"] = "DEEP";
    std::string line = s.dump();
    line.replace(line.find(marker), marker.size(), std::string(100000, '[') + std::string(100000, ']'));
    const std::string msg = error_of(bad, join({L[0], line, L[3]}));
    INFO(msg);
    CHECK(starts_with(msg, bad + ":2: "));
    CHECK(msg.find("over the limit of 64") != std::string::npos);
  }
  SECTION("a line longer than 16 MiB") {
    json s = json::parse(L[1]);
    s["parameters"]["pad"] = std::string(cuzk::kMaxResultsLineBytes, 'x');
    const std::string msg = error_of(bad, join({L[0], s.dump(), L[3]}));
    INFO(msg.substr(0, 200));
    CHECK(starts_with(msg, bad + ":2: line is "));
    CHECK(msg.find("over the limit of 16777216 bytes") != std::string::npos);
  }
}

TEST_CASE("a number beyond a double's range is a malformed line, not an escaped exception", "[results]") {
  // found by fuzz_results: nlohmann throws out_of_range (not parse_error) for 1e400
  t::TempDir d;
  const auto L = t::lines_of(write_valid_file(d.file("good.jsonl")));
  const std::string bad = d.file("bad.jsonl");
  json s = json::parse(L[1]);
  s["parameters"]["big"] = "BIG";
  std::string line = s.dump();
  line.replace(line.find("\"BIG\""), 5, "1e400");
  const std::string msg = error_of(bad, join({L[0], line}));
  INFO(msg);
  CHECK(starts_with(msg, bad + ":2: invalid JSON"));
}

TEST_CASE("out-of-schema values are refused at file:line", "[results]") {
  t::TempDir d;
  const auto L = t::lines_of(write_valid_file(d.file("good.jsonl")));
  REQUIRE(L.size() == 4);
  const std::string bad = d.file("bad.jsonl");
  auto edited = [&](size_t i, const std::function<void(json&)>& edit) {
    auto l = L;
    json j = json::parse(l[i]);
    edit(j);
    l[i] = j.dump();
    return join(l);
  };
  auto expect = [&](const std::string& text, int line, const std::string& what) {
    const std::string msg = error_of(bad, text);
    INFO("message: " << msg);
    CHECK(starts_with(msg, bad + ":" + std::to_string(line) + ": "));
    CHECK(msg.find(what) != std::string::npos);
  };
  SECTION("negative durations") {
    expect(edited(2, [](json& s) { s["env"] = {{"interval_ns", -1}, {"values", json::object()}}; }), 3,
           "env: field 'interval_ns' must be >= 0 (the window's length), not -1");
    expect(edited(2, [](json& s) { s["wall_ns"] = -7; }), 3, "field 'wall_ns' must be a non-negative integer, not -7");
    expect(edited(3, [](json& s) { s["elapsed_ns"] = -1000; }), 4, "field 'elapsed_ns' must be a non-negative integer");
    expect(edited(2, [](json& s) { s["pipeline"] = {{"run", 0}, {"run_wall_ns", -5}}; }), 3,
           "pipeline: field 'run_wall_ns' must be a non-negative integer, not -5");
  }
  SECTION("negative counts") {
    expect(edited(2, [](json& s) { s["repetition"] = -1; }), 3, "field 'repetition' must be >= 0");
    expect(edited(2, [](json& s) { s["spans_dropped"] = -2; }), 3, "field 'spans_dropped' must be a non-negative integer");
  }
  SECTION("a counter the header did not declare") {
    expect(edited(2, [](json& s) { s["phases"]["proof"]["counters"]["os::minflt"] = 12; }), 3,
           "phase 'proof' record: counter 'os::minflt' is not declared in the header (line 1: counters.requested)");
    expect(edited(0, [](json& h) { h["counters"]["requested"] = {"PAPI_TOT_CYC", 3}; }), 1,
           "field 'counters.requested' must hold counter names (strings), not 3");
  }
  SECTION("a process id that is not 16 lowercase hex digits") {
    for (const char* id : {"5F0C3A9E17B2D468", "5f0c3a9e", "5f0c3a9e17b2d46g", "5f0c3a9e17b2d4680"})
      expect(edited(2, [&](json& s) { s["process_id"] = id; }), 3, "field 'process_id' must be 16 lowercase hex digits");
    CHECK(error_of(bad, edited(2, [](json& s) { s["process_id"] = "0123456789abcdef"; })) == "");
  }
  SECTION("gpu_counters: pass counts, declared metrics, types") {
    const json g = {{"schema", "cuzk.results"}, {"version", 1}, {"type", "gpu_counters"}, {"suite", "unit"},
                    {"case", "tiny"}, {"parameters", {{"n", 1}}}, {"method", "test"}, {"chip", "GH100"}, {"passes", 9},
                    {"metrics", {{"dram__bytes_read.sum", {{"available", true}, {"reason", ""}}}}},
                    {"phases", {{"proof", {{"dram__bytes_read.sum", 42}}}}}};
    auto with = [&](const std::function<void(json&)>& edit) {
      json x = g;
      edit(x);
      return join({L[0], L[1], L[2], x.dump(), L[3]});
    };
    CHECK(error_of(bad, with([](json&) {})) == "");
    expect(with([](json& x) { x["passes"] = -1; }), 4, "gpu_counters: field 'passes' must be a non-negative integer, not -1");
    expect(with([](json& x) { x["phases"]["proof"]["sm__cycles.sum"] = 3; }), 4,
           "gpu_counters phase 'proof' metric 'sm__cycles.sum' is not declared in the line's 'metrics'");
    expect(with([](json& x) { x["metrics"]["dram__bytes_read.sum"] = true; }), 4, "gpu_counters: metrics['dram__bytes_read.sum'] must be");
    expect(with([](json& x) { x["chip"] = 100; }), 4, "gpu_counters: field 'chip' must be a string, not number");
  }
}

namespace {

// Runs read_results(path) in a child process: true when it threw ResultsError holding `what`
// within 10 s (a reader that blocks is killed, and the check fails instead of the test hanging).
bool refused_in_time(const std::string& path, const std::string& what) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    alarm(10);
    try {
      cuzk::read_results(path);
    } catch (const ResultsError& e) {
      _exit(std::string(e.what()).find(what) != std::string::npos ? 0 : 1);
    } catch (...) {
    }
    _exit(2);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

}  // namespace

TEST_CASE("the reader opens only regular files and streams them within the line limit", "[results]") {
  t::TempDir d;
  SECTION("a FIFO, a directory, a /proc file, a loop of links") {
    REQUIRE(::mkfifo(d.file("fifo").c_str(), 0600) == 0);
    CHECK(refused_in_time(d.file("fifo"), d.file("fifo") + " is a FIFO, not a regular file"));
    CHECK(refused_in_time(d.path(), d.path() + " is a directory, not a regular file"));
    CHECK(refused_in_time("/proc/self/status", "/proc/self/status is a file of /proc (procfs), not a regular file"));
    REQUIRE(::symlink("loop", d.file("loop").c_str()) == 0);
    CHECK(refused_in_time(d.file("loop"), d.file("loop") + ": cannot open: Too many levels of symbolic links"));
  }
  SECTION("a line over the limit without a newline is over the limit, not a truncated line") {
    const std::string good = write_valid_file(d.file("good.jsonl"));
    t::spit(d.file("long.jsonl"), t::lines_of(good)[0] + "\n" + std::string(cuzk::kMaxResultsLineBytes + 10, 'x'));
    const std::string msg = error_of(d.file("long.jsonl"), t::slurp(d.file("long.jsonl")));
    INFO(msg.substr(0, 300));
    CHECK(starts_with(msg, d.file("long.jsonl") + ":2: line is 16777226 bytes, over the limit of 16777216 bytes"));
  }
}
