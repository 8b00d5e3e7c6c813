// GPU counters in results files (docs/results-format.md, "gpu_counters" lines) and where they
// are read: the results parser, compare (as gpu::<metric> counters of each phase) and the
// prove command's checks. The GPU side (CUPTI) is in tests/gpu/test_gpu_profiling.cpp.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/measure/results.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::test::SynthSpec;
using cuzk::test::TempDir;

namespace {

// A synthetic results file (header, samples) followed by `extra` lines.
void write_synth_plus(const std::string& path, const SynthSpec& s, const std::vector<nlohmann::json>& extra) {
  cuzk::ResultsWriter w(path, cuzk::ResultsWriter::Mode::kOverwrite);
  w.write(cuzk::test::synth_header(s));
  for (const auto& l : cuzk::test::synth_samples(s)) w.write(l);
  for (const auto& l : extra) w.write(l);
}

// A synthetic results file plus one gpu_counters line for its case.
void write_with_counters(const std::string& path, uint64_t seed, double dram_bytes, SynthSpec s = {}) {
  s.seed = seed;
  nlohmann::json body = {{"suite", s.suite},
                         {"case", s.case_name},
                         {"parameters", s.parameters},
                         {"method", "test"},
                         {"chip", "GH100"},
                         {"passes", 9},
                         {"metrics",
                          {{"dram__bytes_read.sum", {{"available", true}, {"reason", ""}}},
                           {"nvlrx__bytes.sum", {{"available", false}, {"reason", "cannot be configured on GH100"}}}}},
                         {"phases",
                          {{"proof/prove/msm_h", {{"dram__bytes_read.sum", dram_bytes}, {"nvlrx__bytes.sum", nullptr}}}}}};
  write_synth_plus(path, s, {cuzk::make_gpu_counters_line(body)});
}

}  // namespace

TEST_CASE("a gpu_counters line is read, and compare shows its metrics as gpu:: counters of the phase") {
  TempDir d;
  write_with_counters(d.file("a.jsonl"), 101, 1e9);
  write_with_counters(d.file("b.jsonl"), 202, 3e9);
  cuzk::ResultsFile f = cuzk::read_results(d.file("a.jsonl"));
  REQUIRE(f.gpu_counters.size() == 1);
  CHECK(f.samples.size() == 11);  // the counters pass is never a sample
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const cuzk::PhaseComparison* msm = nullptr;
  for (const auto& r : c.rows)
    if (r.phase == "proof/prove/msm_h" && r.primary) msm = &r;
  REQUIRE(msm);
  bool dram = false, nvl = false;
  for (const auto& cd : msm->counters) {
    if (cd.name == "gpu::dram__bytes_read.sum") {
      dram = true;
      REQUIRE(cd.ratio.has_value());
      CHECK(*cd.ratio == Approx(3.0));
      CHECK(cd.note == "x3");
    }
    if (cd.name == "gpu::nvlrx__bytes.sum") {
      nvl = true;
      CHECK(cd.note.find("cannot be configured on GH100") != std::string::npos);
    }
  }
  CHECK(dram);
  CHECK(nvl);
  // The timing rows are unchanged by the extra line: msm_h has its 10 samples a side.
  CHECK(msm->observations_a == 10);
}

TEST_CASE("a gpu:: counter never judges a phase, even named as the primary metric of one sample a side") {
  // One value per counters pass, as many as the samples here: still not the samples' values.
  TempDir d;
  SynthSpec s;
  s.reps = 1;
  s.edit_sample = [](nlohmann::json& sample, int) { sample["primary_metric"] = "gpu::dram__bytes_read.sum"; };
  write_with_counters(d.file("a.jsonl"), 101, 1e9, s);
  write_with_counters(d.file("b.jsonl"), 202, 3e9, s);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const auto* msm = cuzk::primary_row(c, "proof/prove/msm_h");
  REQUIRE(msm);
  CHECK(msm->metric == "gpu_ns");
}

TEST_CASE("trace shows a phase's GPU counters in the args of its events") {
  TempDir d;
  SynthSpec s;
  s.edit_sample = [](nlohmann::json& sample, int) {
    sample["spans"] = {{{"path", "proof/prove/msm_h"}, {"start_ns", 1000}, {"dur_ns", 5000}, {"tid", 7}}};
    sample["spans_dropped"] = 0;
  };
  write_synth_plus(d.file("t.jsonl"), s,
                   {cuzk::make_gpu_counters_line({{"suite", s.suite}, {"case", s.case_name}, {"parameters", s.parameters},
                                                  {"metrics", {{"dram__bytes_read.sum", {{"available", true}, {"reason", ""}}}}},
                                                  {"phases", {{"proof/prove/msm_h", {{"dram__bytes_read.sum", 42.0}}}}}})});
  auto t = cuzk::test::run_bench("trace t.jsonl -o t.json", d.path());
  INFO(t.out << t.err);
  REQUIRE(t.code == 0);
  const nlohmann::json trace = nlohmann::json::parse(cuzk::test::slurp(d.file("t.json")));
  bool found = false;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "proof/prove/msm_h" && e["args"].contains("gpu_counters"))
      found = found || e["args"]["gpu_counters"]["dram__bytes_read.sum"] == 42.0;
  CHECK(found);
}

TEST_CASE("malformed gpu_counters lines are errors naming the line") {
  TempDir d;
  write_synth_plus(d.file("r.jsonl"), SynthSpec{},
                   {cuzk::make_gpu_counters_line({{"suite", "x"}, {"case", "c"}, {"parameters", nlohmann::json::object()},
                                                  {"metrics", nlohmann::json::object()},
                                                  {"phases", {{"proof", {{"dram__bytes_read.sum", "many"}}}}}})});
  try {
    cuzk::read_results(d.file("r.jsonl"));
    FAIL("no error");
  } catch (const cuzk::ResultsError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("r.jsonl:13") != std::string::npos);
    CHECK(msg.find("must be a number or null") != std::string::npos);
  }
}

TEST_CASE("prove --gpu-counters: refused before any work where it cannot run") {
  TempDir d;
  auto cpu = cuzk::test::run_bench("prove --gpu-counters default --out g.jsonl", d.path());
  CHECK(cpu.code == 2);
  CHECK(cpu.err.find("--gpu-counters needs --backend cuda") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(d.file("g.jsonl")));
  auto empty = cuzk::test::run_bench("prove --gpu-counters 'a,,b' --backend cuda --allow-cpu-fallback --out g.jsonl", d.path());
  CHECK(empty.code != 0);
  CHECK_FALSE(cuzk::test::exists(d.file("g.jsonl")));
}

TEST_CASE("run --gpu-counters is checked before any work; info says which GPU metrics can be read here") {
  TempDir d;
  auto run = cuzk::test::run_bench("run --suite quick --gpu-counters default --out r.jsonl", d.path());
  CHECK(run.code == 2);
  CHECK(run.err.find("--gpu-counters needs --backend cuda") != std::string::npos);
  CHECK_FALSE(cuzk::test::exists(d.file("r.jsonl")));
  auto info = cuzk::test::run_bench("info --json", d.path());
  REQUIRE(info.code == 0);
  const nlohmann::json j = nlohmann::json::parse(info.out);
  REQUIRE(j.contains("gpu_counters"));
  if (!j["cuda_backend_usable"].get<bool>()) {
    CHECK_FALSE(j["gpu_counters"]["readable"].get<bool>());
    CHECK_FALSE(j["gpu_counters"]["reason"].get<std::string>().empty());
  } else {
    CHECK(j["gpu_counters"]["metrics"].size() == 8);
  }
}
