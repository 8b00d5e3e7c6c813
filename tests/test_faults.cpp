// Fault injection (docs/reliability.md): $CUZK_INJECT_FAULT specs, the results writer on a full
// disk (ENOSPC, a short write, a torn line that cannot be cut off), no header-only file left by
// a failed run, and the engine serving the next job after one failed (CPU backend).
#include <string>

#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "harness/measure/session.hpp"
#include "prover/engine/fault.hpp"
#include "test_util.hpp"

namespace t = cuzk::test;
using cuzk::ResultsError;
using nlohmann::json;

namespace {

// Sets the process's fault injection for one scope (the tests share one process).
struct FaultScope {
  explicit FaultScope(const std::string& spec) { cuzk::fault::set_for_testing(spec); }
  ~FaultScope() { cuzk::fault::set_for_testing(""); }
};

json sample_line(int rep) {
  cuzk::Sample s;
  s.phases["proof"].wall_ns = 1000 + uint64_t(rep);
  s.phases["proof"].count = 1;
  return cuzk::make_sample({.suite = "faults", .case_name = "c", .variant = "v", .repetition = rep}, s);
}

// Writes header + samples until the writer throws; returns the error (or "" when none).
std::string write_until_error(const std::string& path, int lines) {
  cuzk::ResultsWriter w(path);
  try {
    w.write(cuzk::make_header({"faults", {"test_faults"}, {}}));
    for (int i = 0; i + 1 < lines; ++i) w.write(sample_line(i));
  } catch (const ResultsError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("CUZK_INJECT_FAULT specs parse, and malformed ones are refused with the entry named", "[faults]") {
  using cuzk::fault::Kind;
  auto e = cuzk::fault::parse_spec("write_enospc_after:3, hang_in:proof/synth,cuda_oom_at:msm_h");
  REQUIRE(e.size() == 3);
  CHECK(e[0].kind == Kind::kWriteEnospcAfter);
  CHECK(e[0].after == 3);
  CHECK(e[1].phase == "proof/synth");
  CHECK(cuzk::fault::format_spec(e) == "write_enospc_after:3,hang_in:proof/synth,cuda_oom_at:msm_h");
  CHECK(cuzk::fault::parse_spec("").empty());
  CHECK(cuzk::fault::parse_spec("cuda_error_at:proof/prove/ntt_h").size() == 1);
  CHECK(cuzk::fault::parse_spec("cuda_oom_at:msm_b_g2").size() == 1);  // a GPU phase with CUZK_GPU_G2
  for (const char* bad : {"bogus:1", "write_enospc_after:-1", "write_enospc_after:x", "hang_in:", "hang_in:/proof",
                          "fail_at:msm_h", "cuda_oom_at:synth", "fail_at:proof/prove,fail_at:proof/synth", "nocolon"}) {
    INFO(bad);
    CHECK_THROWS_AS(cuzk::fault::parse_spec(bad), cuzk::fault::FaultError);
  }
  // cuzk-bench refuses a malformed variable before doing anything: one line, exit 2.
  t::TempDir d;
  auto r = t::run_bench("info", d.path(), "CUZK_INJECT_FAULT=fail_at:nowhere");
  CHECK(r.code == 2);
  CHECK(has(r.err, "cuzk-bench: error: CUZK_INJECT_FAULT: entry \"fail_at:nowhere\""));
}

TEST_CASE("fail_at fires once, only at its stage", "[faults]") {
  FaultScope f("fail_at:proof/prove");
  CHECK_NOTHROW(cuzk::fault::fail_point("proof/synth"));
  CHECK_THROWS_AS(cuzk::fault::fail_point("proof/prove"), cuzk::fault::InjectedFault);
  CHECK_NOTHROW(cuzk::fault::fail_point("proof/prove"));  // once
}

TEST_CASE("a full disk: the write fails with the file and errno named, every earlier line intact", "[faults][results]") {
  t::TempDir d;
  const std::string path = d.file("r.jsonl");
  std::string err;
  {
    FaultScope f("write_enospc_after:3");
    err = write_until_error(path, 10);
  }
  INFO(err);
  CHECK(has(err, "cannot write results file '" + path + "' (line 4): No space left on device"));
  const auto rf = cuzk::read_results(path);  // every line parses
  CHECK(rf.samples.size() == 2);
  CHECK_FALSE(rf.summary.has_value());
}

TEST_CASE("a short write is cut back to the last complete line", "[faults][results]") {
  t::TempDir d;
  const std::string path = d.file("r.jsonl");
  std::string err;
  {
    FaultScope f("write_short_after:2");
    err = write_until_error(path, 10);
  }
  INFO(err);
  CHECK(has(err, "No space left on device"));
  CHECK(has(err, "the partial line was cut off"));
  const std::string text = t::slurp(path);
  REQUIRE_FALSE(text.empty());
  CHECK(text.back() == '\n');
  CHECK(t::lines_of(text).size() == 2);
  CHECK(cuzk::read_results(path).samples.size() == 1);
}

TEST_CASE("a torn line that cannot be cut off is marked, and readers report it at its line", "[faults][results]") {
  t::TempDir d;
  const std::string path = d.file("r.jsonl");
  std::string err;
  {
    FaultScope f("write_torn_after:2");
    err = write_until_error(path, 10);
  }
  INFO(err);
  CHECK(has(err, "line 3 is marked torn"));
  const std::string text = t::slurp(path);
  const auto lines = t::lines_of(text);
  REQUIRE(lines.size() == 3);
  CHECK(text.back() == '\n');
  CHECK(json::parse(lines[2])["type"] == "torn");  // the marker is itself valid JSON
  try {
    cuzk::read_results(path);
    FAIL("a file with a torn-line marker read as valid");
  } catch (const ResultsError& e) {
    CHECK(has(e.what(), path + ":3:"));
  }
}

TEST_CASE("a run that fails before its first sample leaves no file, so --out can be used again", "[faults][results]") {
  t::TempDir d;
  const std::string path = d.file("s.jsonl");
  cuzk::SessionOptions o;
  o.suite = "faults";
  o.out = path;
  o.counters = std::string();
  {
    FaultScope f("write_enospc_after:1");  // the header is written, the first sample is not
    cuzk::Session s(o);
    CHECK(t::exists(path));
    CHECK_THROWS_AS(s.measure({.suite = "faults", .case_name = "c", .repetition = 0}, [] {}), ResultsError);
  }
  CHECK_FALSE(t::exists(path));
  {
    cuzk::Session s(o);  // not refused as existing
    s.measure({.suite = "faults", .case_name = "c", .repetition = 0}, [] {});
    s.finish();
  }
  CHECK(cuzk::read_results(path).samples.size() == 1);
}

TEST_CASE("cuzk-bench run on a full disk: one error line, exit 1, the samples before it readable", "[faults][suite]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 3));
  auto r = t::run_bench("run --suite tiny.toml --counters '' --out r.jsonl", d.path(), "CUZK_INJECT_FAULT=write_enospc_after:2");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(has(r.err, "cuzk-bench: error: case 'tiny': cannot write results file 'r.jsonl' (line 3): No space left on device"));
  const auto rf = cuzk::read_results(d.file("r.jsonl"));
  CHECK(rf.samples.size() == 1);
  CHECK(rf.header.value.at("fault_injection").at("spec") == "write_enospc_after:2");

  // Failing before the first sample: no file is left behind, and the same --out works again.
  r = t::run_bench("run --suite tiny.toml --counters '' --out h.jsonl", d.path(), "CUZK_INJECT_FAULT=write_enospc_after:1");
  CHECK(r.code == 1);
  CHECK_FALSE(t::exists(d.file("h.jsonl")));
  r = t::run_bench("run --suite tiny.toml --counters '' --reps 1 --out h.jsonl", d.path());
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("run validates --reps and --run-timeout", "[faults][suite]") {
  t::TempDir d;
  t::spit(d.file("tiny.toml"), t::tiny_porep_suite("tiny", 3));
  for (const char* bad : {"--reps -1", "--reps 0", "--run-timeout -3"}) {
    auto r = t::run_bench(std::string("run --suite tiny.toml --out x.jsonl ") + bad, d.path());
    INFO(bad << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(has(r.err, "cuzk-bench: error: --"));
    CHECK_FALSE(t::exists(d.file("x.jsonl")));
  }
}

TEST_CASE("the engine keeps serving the next job after one failed (CPU backend, injected)", "[faults][engine]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  auto r = t::run_bench("engine --jobs 3 --partitions 1 --challenges 1 --depth 4 --counters '' --out e.jsonl", d.path(),
                        "CUZK_INJECT_FAULT=fail_at:proof/prove");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(has(r.err, "failed: injected fault (CUZK_INJECT_FAULT=fail_at:proof/prove)"));
  CHECK(has(r.out, "1 JOB(S) FAILED"));
  const auto rf = cuzk::read_results(d.file("e.jsonl"));
  CHECK(rf.samples.size() == 2);  // the two other jobs were proved (and verified)
  REQUIRE(rf.summary.has_value());
  REQUIRE(rf.summary->value.at("failed_jobs").size() == 1);
  CHECK(has(rf.summary->value["failed_jobs"][0]["reason"].get<std::string>(), "injected fault"));
}
