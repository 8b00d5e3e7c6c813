// GPU time without gaps (prover/instr/gpu_activity.hpp): per-phase kernel, copy and idle time
// from synthetic activity records, one attribution rule per case; the collector's phase-sink
// half with a fake clock; the records' three fields through the writer and the reader; and
// compare and gate judging a GPU phase by its kernel time where both sides have it.
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/gate.hpp"
#include "harness/measure/gpu_activity.hpp"
#include "harness/measure/recorder.hpp"
#include "harness/measure/results.hpp"
#include "prover/instr/gpu_activity.hpp"
#include "prover/instr/phase.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

namespace ga = cuzk::instr::gpu_activity;
using ga::Kind;
using nlohmann::json;
using cuzk::test::SynthSpec;
using cuzk::test::TempDir;

namespace {

// A batch built by hand: openings, then activities each launched in one opening.
struct Builder {
  ga::Batch b;
  uint64_t next_corr = 1;
  void open(uint64_t id, const std::string& path, uint64_t open_ns, uint64_t close_ns, uint64_t parent = 0) {
    b.openings.push_back({id, path, parent, open_ns, close_ns});
  }
  void run(uint64_t opening, Kind k, uint64_t start, uint64_t end, uint32_t stream = 7) {
    const uint64_t corr = next_corr++;
    b.activities.push_back({k, start, end, stream, 0, corr});
    b.launched_in[corr] = opening;
  }
};

}  // namespace

TEST_CASE("union_length counts overlapping intervals once and ignores empty ones") {
  CHECK(ga::union_length({}) == 0);
  CHECK(ga::union_length({{10, 20}, {30, 40}}) == 20);
  CHECK(ga::union_length({{10, 30}, {20, 40}}) == 30);
  CHECK(ga::union_length({{10, 40}, {20, 30}}) == 30);
  CHECK(ga::union_length({{30, 40}, {10, 20}, {20, 30}}) == 30);
  CHECK(ga::union_length({{5, 5}, {9, 3}}) == 0);
}

TEST_CASE("gaps between a phase's kernels are its idle time") {
  Builder t;
  t.open(1, "msm", 1000, 2000);
  t.run(1, Kind::kKernel, 1100, 1300);
  t.run(1, Kind::kKernel, 1500, 1600);
  t.run(1, Kind::kKernel, 1600, 1900);
  const auto r = ga::attribute(t.b);
  REQUIRE(r.phases.count("msm"));
  const auto& m = r.phases.at("msm");
  CHECK(m.kernel_ns == 600);
  CHECK(m.copy_ns == 0);
  CHECK(m.idle_ns == 400);  // 100 before the first, 200 between, 100 after the last
  CHECK(m.activities == 3);
  CHECK(r.unattributed == 0);
}

TEST_CASE("kernels overlapping on two streams count once (the union, not the sum)") {
  Builder t;
  t.open(1, "ntt", 0, 1000);
  t.run(1, Kind::kKernel, 100, 600, 1);
  t.run(1, Kind::kKernel, 400, 900, 2);
  const auto m = ga::attribute(t.b).phases.at("ntt");
  CHECK(m.kernel_ns == 800);
  CHECK(m.idle_ns == 200);
}

TEST_CASE("a kernel launched in one phase and running into the next belongs to its launcher") {
  Builder t;
  t.open(1, "a", 0, 1000);
  t.open(2, "b", 1000, 2000);
  t.run(1, Kind::kKernel, 500, 1500);   // launched in a, runs until b is half done
  t.run(2, Kind::kKernel, 1500, 1800);  // b's own kernel, after a's
  const auto r = ga::attribute(t.b);
  const auto& a = r.phases.at("a");
  CHECK(a.kernel_ns == 1000);
  CHECK(a.idle_ns == 500);  // the span runs to the kernel's end (1500): only 0..500 is idle
  const auto& b = r.phases.at("b");
  CHECK(b.kernel_ns == 300);
  // b's idle is not reduced by a's kernel: 1000..1500 (busy with a's work) and 1800..2000.
  CHECK(b.idle_ns == 700);
}

TEST_CASE("copies are copy time, memsets kernel time, and idle excludes both") {
  Builder t;
  t.open(1, "h2d", 0, 1000);
  t.run(1, Kind::kMemcpy, 0, 400);
  t.run(1, Kind::kMemcpy, 300, 500, 2);  // overlaps the first copy: once
  t.run(1, Kind::kMemset, 600, 700);
  t.run(1, Kind::kKernel, 450, 650);  // overlaps a copy and the memset
  const auto m = ga::attribute(t.b).phases.at("h2d");
  CHECK(m.copy_ns == 500);
  CHECK(m.kernel_ns == 250);  // 450..700
  CHECK(m.idle_ns == 300);    // 700..1000
}

TEST_CASE("a parent includes its children's activities, found by id or by path and time") {
  Builder t;
  t.open(1, "proof", 0, 10'000);
  t.open(2, "proof/prove", 1000, 9000, 1);
  t.open(3, "proof/prove/msm_h", 2000, 4000, 2);
  // A worker-thread opening: no parent id; its parent is found by path and time.
  t.open(4, "proof/prove/h2d", 1500, 3000);
  t.run(3, Kind::kKernel, 2500, 3500);
  t.run(4, Kind::kMemcpy, 1600, 2600);
  t.run(2, Kind::kKernel, 5000, 6000);  // the stage's own work
  const auto r = ga::attribute(t.b);
  const auto& msm = r.phases.at("proof/prove/msm_h");
  CHECK(msm.kernel_ns == 1000);
  CHECK(msm.idle_ns == 1000);
  const auto& h2d = r.phases.at("proof/prove/h2d");
  CHECK(h2d.copy_ns == 1000);
  CHECK(h2d.idle_ns == 500);
  const auto& prove = r.phases.at("proof/prove");
  CHECK(prove.kernel_ns == 2000);
  CHECK(prove.copy_ns == 1000);
  CHECK(prove.activities == 3);
  // Busy 1600..3500 and 5000..6000 of 1000..9000.
  CHECK(prove.idle_ns == 8000 - 1900 - 1000);
  const auto& proof = r.phases.at("proof");
  CHECK(proof.kernel_ns == 2000);
  CHECK(proof.idle_ns == 10'000 - 2900);
}

TEST_CASE("the path-and-time parent is the opening that was open at the child's open") {
  Builder t;
  t.open(1, "p", 0, 1000);
  t.open(2, "p", 2000, 3000);
  t.open(3, "p/c", 2100, 2500);
  t.run(3, Kind::kKernel, 2200, 2300);
  const auto r = ga::attribute(t.b);
  CHECK(r.phases.at("p").kernel_ns == 100);
  CHECK(r.phases.at("p").idle_ns == 900);  // the second opening's span only: the first had no activity
}

TEST_CASE("several openings of one path are summed; activities outside every opening are counted apart") {
  Builder t;
  t.open(1, "msm", 0, 1000);
  t.open(2, "msm", 2000, 2500);
  t.run(1, Kind::kKernel, 0, 800);
  t.run(2, Kind::kKernel, 2000, 2400);
  t.b.activities.push_back({Kind::kKernel, 5000, 6000, 0, 0, 999});  // no opening launched it
  const auto r = ga::attribute(t.b);
  CHECK(r.phases.at("msm").kernel_ns == 1200);
  CHECK(r.phases.at("msm").idle_ns == 300);
  CHECK(r.unattributed == 1);
  CHECK(r.phases.size() == 1);
}

TEST_CASE("an opening without activity gets no times") {
  Builder t;
  t.open(1, "proof/synth", 0, 1000);
  CHECK(ga::attribute(t.b).phases.empty());
}

// ---------------------------------------------------------------- the collector's sink half

namespace {

// An OpeningSink on a clock the test advances, that logs what the subclass is told.
class FakeCollector final : public ga::OpeningSink {
 public:
  uint64_t clock = 1000;
  std::vector<std::string> log;
  void attach() { wrap(); }
  void detach() { unwrap(); }
  std::vector<ga::Opening> openings() { return take_openings(); }

 protected:
  uint64_t now_ns() override { return clock += 10; }
  void opened(uint64_t id) override { log.push_back("push " + std::to_string(id)); }
  void closing(uint64_t id) override { log.push_back("pop " + std::to_string(id)); }
};

}  // namespace

TEST_CASE("the collector's sink numbers openings, names their parent on the thread, and forwards to the recorder") {
  cuzk::RecorderOptions ro;
  ro.nvtx = false;
  ro.enlist_global_pool = false;
  cuzk::Recorder rec(ro);
  rec.install();
  FakeCollector fc;
  fc.attach();
  rec.take_sample();
  {
    cuzk::instr::Phase p("proof");
    {
      cuzk::instr::Phase c("msm_h");
      cuzk::instr::report_gpu_time(c.path(), 77);
    }
  }
  cuzk::Sample s = rec.take_sample();
  fc.detach();
  CHECK(cuzk::instr::sink() == &rec);  // the recorder is the sink again
  rec.uninstall();
  // The recorder saw both phases and the GPU time through the collector.
  REQUIRE(s.phases.count("proof/msm_h"));
  CHECK(s.phases.at("proof/msm_h").gpu_ns == 77u);
  CHECK(s.phases.at("proof").count == 1);
  const auto o = fc.openings();
  REQUIRE(o.size() == 2);
  CHECK(o[0].path == "proof");
  CHECK(o[0].parent == 0);
  CHECK(o[1].path == "proof/msm_h");
  CHECK(o[1].parent == o[0].id);
  CHECK(o[0].open_ns < o[1].open_ns);
  CHECK(o[1].open_ns < o[1].close_ns);
  CHECK(o[1].close_ns < o[0].close_ns);
  CHECK(fc.log == std::vector<std::string>{"push 1", "push 2", "pop 2", "pop 1"});
}

// ---------------------------------------------------------------- records

namespace {

// A results file whose one sample has proof/prove/msm_h with the times of `batch` applied.
std::string write_with_activity(const std::string& path, const ga::Batch& batch, std::string* warning = nullptr) {
  cuzk::Sample s;
  s.wall_ns = 5000;
  s.phases["proof/prove/msm_h"].wall_ns = 2000;
  s.phases["proof/prove/msm_h"].count = 1;
  s.phases["proof/prove/msm_h"].gpu_ns = 1900;
  s.phases["proof/synth"].wall_ns = 1000;
  s.phases["proof/synth"].count = 1;
  const std::string w = cuzk::apply_gpu_activity(s, batch);
  if (warning) *warning = w;
  cuzk::ResultsWriter out(path, cuzk::ResultsWriter::Mode::kOverwrite);
  out.write(cuzk::make_header({"unit", {"test_gpu_activity"}, {}}));
  out.write(cuzk::make_sample({.suite = "unit", .case_name = "c", .repetition = 0}, s, false));
  return cuzk::test::slurp(path);
}

ga::Batch msm_batch() {
  ga::Batch b;
  b.openings.push_back({1, "proof/prove/msm_h", 0, 1000, 3000});
  b.activities.push_back({Kind::kKernel, 1200, 1700, 1, 0, 10});
  b.activities.push_back({Kind::kMemcpy, 2000, 2500, 1, 0, 11});
  b.launched_in = {{10, 1}, {11, 1}};
  return b;
}

std::string read_error(const std::string& text) {
  try {
    cuzk::parse_results(text, "r.jsonl");
  } catch (const cuzk::ResultsError& e) {
    return e.what();
  }
  return "";
}

// The file's text with the sample's msm_h record edited.
std::string edited(const std::string& text, const std::function<void(json&)>& edit) {
  const size_t nl = text.find('\n');
  json sample = json::parse(text.substr(nl + 1));
  edit(sample["phases"]["proof/prove/msm_h"]);
  return text.substr(0, nl + 1) + sample.dump() + "\n";
}

}  // namespace

TEST_CASE("the three GPU times round-trip through the writer and the reader") {
  TempDir d;
  const std::string text = write_with_activity(d.file("r.jsonl"), msm_batch());
  INFO(text);
  const cuzk::ResultsFile f = cuzk::read_results(d.file("r.jsonl"));
  REQUIRE(f.samples.size() == 1);
  const json& msm = f.samples[0].value["phases"]["proof/prove/msm_h"];
  CHECK(msm["gpu_kernel_ns"] == 500);
  CHECK(msm["gpu_copy_ns"] == 500);
  CHECK(msm["gpu_idle_ns"] == 1000);  // 1000..1200, 1700..2000, 2500..3000
  CHECK(msm["gpu_ns"] == 1900);       // the CUDA-event time is kept beside them
  // A phase without GPU activity has none of the three: optional fields, absent, never null.
  const json& synth = f.samples[0].value["phases"]["proof/synth"];
  CHECK_FALSE(synth.contains("gpu_kernel_ns"));
  CHECK_FALSE(synth.contains("gpu_idle_ns"));
  // A file without them (every earlier file) still reads.
  CHECK(read_error(edited(text, [](json& r) {
          r.erase("gpu_kernel_ns");
          r.erase("gpu_copy_ns");
          r.erase("gpu_idle_ns");
        })) == "");
}

TEST_CASE("a batch that lost records sets no GPU times and says why") {
  TempDir d;
  ga::Batch b = msm_batch();
  b.dropped = 3;
  std::string warning;
  write_with_activity(d.file("r.jsonl"), b, &warning);
  CHECK(warning.find("3 records were dropped") != std::string::npos);
  const json& msm = cuzk::read_results(d.file("r.jsonl")).samples[0].value["phases"]["proof/prove/msm_h"];
  CHECK_FALSE(msm.contains("gpu_kernel_ns"));
}

TEST_CASE("a bad GPU time without gaps is one error naming the line, the phase and the field") {
  TempDir d;
  const std::string text = write_with_activity(d.file("r.jsonl"), msm_batch());
  for (const json& bad : {json(-5), json("500"), json(1.5), json(nullptr), json::array()}) {
    INFO(bad.dump());
    const std::string e = read_error(edited(text, [&](json& r) { r["gpu_idle_ns"] = bad; }));
    CHECK(e.find("r.jsonl:2:") == 0);
    CHECK(e.find("phase 'proof/prove/msm_h'") != std::string::npos);
    CHECK(e.find("field 'gpu_idle_ns' must be a non-negative integer") != std::string::npos);
  }
  const std::string lone = read_error(edited(text, [](json& r) { r.erase("gpu_copy_ns"); }));
  CHECK(lone.find("go together") != std::string::npos);
}

// ---------------------------------------------------------------- compare and gate

namespace {

// msm_h's kernel time: 0.6 of its wall time, times `factor` (CUDA-event gpu_ns is 0.8 of it).
std::function<void(json&, int)> with_kernel(double factor, int missing_rep = -1) {
  return [=](json& sample, int rep) {
    if (rep == missing_rep) return;
    json& r = sample["phases"]["proof/prove/msm_h"];
    const double wall = r["wall_ns"].get<double>();
    r["gpu_kernel_ns"] = static_cast<uint64_t>(0.6 * wall * factor);
    r["gpu_copy_ns"] = 0;
    r["gpu_idle_ns"] = static_cast<uint64_t>(0.2 * wall);
  };
}

const cuzk::PhaseComparison* msm_row(const cuzk::Comparison& c, const std::string& metric) {
  return cuzk::find_row(c, "proof/prove/msm_h", metric);
}

const cuzk::PhaseComparison* msm_primary(const cuzk::Comparison& c) { return cuzk::primary_row(c, "proof/prove/msm_h"); }

}  // namespace

TEST_CASE("compare judges a GPU phase by gpu_kernel_ns where both sides have it, CUDA-event and wall time shown") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 11;
  b.seed = 12;
  a.edit_sample = with_kernel(1.0);
  b.edit_sample = with_kernel(1.25);  // the kernels 25% slower; the event and wall times unchanged
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  const auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const auto* p = msm_primary(c);
  REQUIRE(p);
  CHECK(p->metric == "gpu_kernel_ns");
  CHECK(p->verdict == "slower");
  CHECK(p->ratio == Approx(1.25).epsilon(0.03));
  REQUIRE(msm_row(c, "gpu_ns"));
  REQUIRE(msm_row(c, "wall_ns"));
  CHECK_FALSE(msm_row(c, "gpu_ns")->primary);
  CHECK_FALSE(msm_row(c, "wall_ns")->primary);
  // The rows of a phase: the primary first.
  for (size_t i = 0; i < c.rows.size(); ++i)
    if (c.rows[i].phase == "proof/prove/msm_h") {
      CHECK(c.rows[i].metric == "gpu_kernel_ns");
      break;
    }
  // Other phases keep their metric.
  for (const auto& r : c.rows)
    if (r.phase == "proof/synth") CHECK(r.metric == "wall_ns");
  // --metric wall still judges every phase by wall time.
  cuzk::CompareOptions wall;
  wall.analysis.metric_choice = cuzk::MetricChoice::kWall;
  CHECK(msm_primary(cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), wall))->metric == "wall_ns");
  // The gate follows compare's primary row: the kernels' slowdown is the regression.
  cuzk::test::spit(d.file("t.toml"), "[default]\nmax_slowdown = 0.10\n");
  const cuzk::GateResult g = cuzk::run_gate(d.file("a.jsonl"), d.file("b.jsonl"), d.file("t.toml"), {});
  INFO(json(g.errors).dump());
  CHECK(g.exit_code == 1);
  REQUIRE(g.regressions.size() == 1);
  CHECK(g.regressions[0].find("proof/prove/msm_h") != std::string::npos);
  CHECK(g.regressions[0].find("gpu_kernel_ns") != std::string::npos);
}

TEST_CASE("compare falls back to gpu_ns where a side, or one sample, lacks gpu_kernel_ns") {
  TempDir d;
  SynthSpec a, b, c;
  a.seed = 21;
  b.seed = 22;
  c.seed = 23;
  a.edit_sample = with_kernel(1.0);
  c.edit_sample = with_kernel(1.0, 4);  // every sample but the fifth
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  cuzk::test::write_synth(d.file("c.jsonl"), c);
  const auto ab = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  REQUIRE(msm_primary(ab));
  CHECK(msm_primary(ab)->metric == "gpu_ns");
  CHECK(msm_row(ab, "gpu_kernel_ns") == nullptr);
  const auto ac = cuzk::compare_files(d.file("a.jsonl"), d.file("c.jsonl"), {});
  REQUIRE(msm_primary(ac));
  CHECK(msm_primary(ac)->metric == "gpu_ns");
}

TEST_CASE("compare judges a phase of copies by gpu_ns although every sample has gpu_kernel_ns") {
  // An upload: its kernel time is a few memsets, its copies most of its GPU work. The copies
  // slow down by 25%, the memsets not: kernel time would call it unchanged.
  auto upload = [](double factor) {
    return [=](json& sample, int) {
      json& r = sample["phases"]["proof/prove/msm_h"];
      const double wall = r["wall_ns"].get<double>();
      r["gpu_ns"] = static_cast<uint64_t>(0.8 * wall * factor);
      r["gpu_kernel_ns"] = static_cast<uint64_t>(0.001 * wall);
      r["gpu_copy_ns"] = static_cast<uint64_t>(0.7 * wall * factor);
      r["gpu_idle_ns"] = static_cast<uint64_t>(0.1 * wall);
    };
  };
  TempDir d;
  SynthSpec a, b;
  a.seed = 31;
  b.seed = 32;
  a.edit_sample = upload(1.0);
  b.edit_sample = upload(1.25);
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  const auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  const auto* p = msm_primary(c);
  REQUIRE(p);
  CHECK(p->metric == "gpu_ns");
  CHECK(p->verdict == "slower");
  CHECK(msm_row(c, "gpu_kernel_ns") == nullptr);
}

// ---------------------------------------------------------------- the run option

TEST_CASE("run and prove --gpu-activity where it cannot run: one error line (exit 2), nothing written") {
  TempDir d;
  // The CPU backend runs no GPU work; a build without CUPTI refuses the option whatever the backend.
  for (const char* cmd : {"run --suite quick --backend cpu", "prove --backend cpu", "prove --sector 2e12x3 --backend cpu"}) {
    const auto r = cuzk::test::run_bench(std::string(cmd) + " --gpu-activity --out r.jsonl", d.path());
    INFO(cmd << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.rfind("cuzk-bench: error: ", 0) == 0);
    CHECK(cuzk::test::lines_of(r.err).size() == 1);
    CHECK(r.err.find("--gpu-activity") != std::string::npos);
    CHECK_FALSE(cuzk::test::exists(d.file("r.jsonl")));
  }
}
