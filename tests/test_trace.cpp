// Chrome trace-event JSON from results files: the right complete events (names, threads,
// microsecond times, nesting); bad input is a clear error and leaves no output file.
#include <atomic>
#include <chrono>
#include <map>
#include <regex>
#include <thread>

#include "catch.hpp"
#include "harness/measure/recorder.hpp"
#include "harness/measure/results.hpp"
#include "harness/measure/trace.hpp"
#include "prover/instr/phase.hpp"
#include "prover/util/thread_pool.hpp"
#include "test_util.hpp"

using cuzk::instr::Phase;
using nlohmann::json;
namespace t = cuzk::test;

namespace {
void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void wait_for_two(const std::atomic<int>& started) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (started.load() < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
}

// Two samples of proof{synth{2 partitions on workers}, prove{msm_h}}.
void write_results(const std::string& path, bool spans = true) {
  cuzk::ThreadPool pool(2);
  cuzk::RecorderOptions o;
  o.enlist_global_pool = false;
  o.spans = spans;
  cuzk::Recorder rec(o);
  cuzk::ResultsWriter w(path);
  w.write(cuzk::make_header({"trace-test", {"test_trace"}, {}}));
  std::vector<json> samples;
  rec.install();
  for (int i = 0; i < 2; ++i) {
    {
      Phase proof("proof");
      {
        Phase synth("synth");
        const std::string parent = cuzk::instr::current_path();
        std::atomic<int> started{0};
        pool.parallel_for(2, [&](size_t b, size_t e) {
          for (size_t k = b; k < e; ++k) {
            Phase part("partition", parent);
            // Both partitions run at once, so they are on two threads however busy the machine.
            started++;
            wait_for_two(started);
            sleep_ms(3);
          }
        }, 2);
      }
      {
        Phase prove("prove");
        Phase msm("msm_h");
        sleep_ms(4);
      }
    }
    json line =
        cuzk::make_sample({.suite = "trace-test", .case_name = "tiny", .repetition = i}, rec.take_sample(), spans);
    w.write(line);
    samples.push_back(line);
  }
  rec.uninstall();
  w.write(cuzk::make_summary(samples, 1));
}
}  // namespace

TEST_CASE("a results file converts to trace events with names, threads and microsecond times", "[trace]") {
  t::TempDir d;
  write_results(d.file("r.jsonl"));
  auto results = cuzk::read_results(d.file("r.jsonl"));
  cuzk::TraceStats st;
  json tr = cuzk::make_trace(results, &st);
  REQUIRE(tr.contains("traceEvents"));
  CHECK(st.samples_with_spans == 2);
  CHECK(st.events == 2 * 6);  // proof, synth, 2 partitions, prove, msm_h

  std::map<int, std::map<std::string, std::vector<json>>> by_pid;
  for (const auto& e : tr["traceEvents"]) {
    REQUIRE(e.contains("ph"));
    if (e["ph"] != "X") {
      CHECK(e["ph"] == "M");
      continue;
    }
    for (const char* k : {"name", "ts", "dur", "pid", "tid", "args"}) {
      INFO(k);
      CHECK(e.contains(k));
    }
    by_pid[e["pid"].get<int>()][e["name"].get<std::string>()].push_back(e);
  }
  REQUIRE(by_pid.size() == 2);  // one trace process per sample
  for (auto& [pid, names] : by_pid) {
    INFO("pid " << pid);
    REQUIRE(names["proof"].size() == 1);
    REQUIRE(names["proof/synth/partition"].size() == 2);
    REQUIRE(names["proof/prove/msm_h"].size() == 1);
    const json& proof = names["proof"][0];
    const json& msm = names["proof/prove/msm_h"][0];
    // Microseconds: a 4 ms sleep lasts at least 4000 us and well under a second.
    CHECK(msm["dur"].get<double>() >= 4000.0);
    CHECK(msm["dur"].get<double>() < 1e6);
    // Nesting in time, and the args carry the phase record.
    CHECK(msm["ts"].get<double>() >= proof["ts"].get<double>());
    CHECK(msm["ts"].get<double>() + msm["dur"].get<double>() <= proof["ts"].get<double>() + proof["dur"].get<double>() + 1e-3);
    CHECK(msm["args"]["sample_count"] == 1);
    CHECK(msm["args"]["gpu_ns"].is_null());
    // Partitions ran on pool threads: at least one differs from the thread of "proof".
    bool other_thread = false;
    for (const auto& p : names["proof/synth/partition"]) other_thread = other_thread || p["tid"] != proof["tid"];
    CHECK(other_thread);
  }
}

TEST_CASE("a phase's GPU kernel, copy and idle times are in its events' args", "[trace]") {
  t::TempDir d;
  write_results(d.file("r.jsonl"));
  // As `run --gpu-activity` records them: msm_h's three times (the reader wants all three).
  std::string text;
  for (const auto& line : t::lines_of(t::slurp(d.file("r.jsonl")))) {
    json v = json::parse(line);
    if (v["type"] == "sample")
      v["phases"]["proof/prove/msm_h"].update({{"gpu_kernel_ns", 3000000}, {"gpu_copy_ns", 0}, {"gpu_idle_ns", 500000}});
    text += v.dump() + "\n";
  }
  t::spit(d.file("k.jsonl"), text);
  const json tr = cuzk::make_trace(cuzk::read_results(d.file("k.jsonl")));
  size_t seen = 0;
  for (const auto& e : tr["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["name"] == "proof/prove/msm_h") {
      ++seen;
      CHECK(e["args"]["gpu_kernel_ns"] == 3000000);
      CHECK(e["args"]["gpu_copy_ns"] == 0);
      CHECK(e["args"]["gpu_idle_ns"] == 500000);
    } else {
      CHECK_FALSE(e["args"].contains("gpu_kernel_ns"));  // phases without GPU activity have none
    }
  }
  CHECK(seen == 2);
}

TEST_CASE("cuzk-bench trace writes the trace file", "[trace][cli]") {
  t::TempDir d;
  write_results(d.file("r.jsonl"));
  auto r = t::run_bench("trace r.jsonl -o out.json", d.path());
  INFO(r.err);
  REQUIRE(r.code == 0);
  json tr = json::parse(t::slurp(d.file("out.json")));
  CHECK(tr["traceEvents"].size() > 10);
  // Default output name.
  auto r2 = t::run_bench("trace r.jsonl", d.path());
  CHECK(r2.code == 0);
  CHECK(t::exists(d.file("r.trace.json")));
}

TEST_CASE("cuzk-bench trace: bad input is a clear error and leaves no output", "[trace][cli]") {
  t::TempDir d;
  write_results(d.file("good.jsonl"));
  auto lines = t::lines_of(t::slurp(d.file("good.jsonl")));
  auto check_failure = [&](const std::string& input, const std::string& what) {
    auto before = d.entries();
    auto r = t::run_bench("trace '" + input + "' -o out.json", d.path());
    INFO("stderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(what) != std::string::npos);
    CHECK_FALSE(t::exists(d.file("out.json")));
    CHECK(d.entries() == before);  // no temporary file left behind
  };
  SECTION("truncated file") {
    t::spit(d.file("bad.jsonl"), lines[0] + "\n" + lines[1].substr(0, 40));
    check_failure("bad.jsonl", "bad.jsonl:2: truncated line");
  }
  SECTION("wrong version") {
    t::spit(d.file("bad.jsonl"), std::regex_replace(lines[0], std::regex("\"version\":1"), "\"version\":9") + "\n");
    check_failure("bad.jsonl", "bad.jsonl:1: unsupported version 9");
  }
  SECTION("missing file") { check_failure("missing.jsonl", "missing.jsonl"); }
  SECTION("no spans") {
    write_results(d.file("nospans.jsonl"), false);
    check_failure("nospans.jsonl", "no sample has spans");
  }
  SECTION("an existing output is kept when the input is bad") {
    t::spit(d.file("bad.jsonl"), "{\n");
    t::spit(d.file("keep.json"), "previous");
    auto r = t::run_bench("trace bad.jsonl -o keep.json", d.path());
    CHECK(r.code == 2);
    CHECK(t::slurp(d.file("keep.json")) == "previous");
  }
  SECTION("unwritable output") {
    auto r = t::run_bench("trace good.jsonl -o no/such/dir/out.json", d.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("no/such/dir/out.json") != std::string::npos);
  }
}
