// The pipelined proving engine (prover/engine/): proofs equal to the one-at-a-time path,
// resident parameters, overlap of synthesis and proving, batching, the memory budget, the
// readiness signal, errors through the futures, shutdown with jobs queued; and the "pipeline"
// suite and `cuzk-bench engine` end to end.
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "prover/engine/engine.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/synth/synth.hpp"
#include "test_util.hpp"

using namespace cuzk;
using cuzk::test::TempDir;

namespace {

// Parameters of a shape, generated once per test binary run.
struct ParamsFixture {
  circuits::PorepParams shape;
  TempDir dir;
  std::string path;
  explicit ParamsFixture(circuits::PorepParams s) : shape(s), path(dir.file("p.params")) {
    auto c = circuits::PorepCircuit::generate(shape, 42);
    groth16::save_params(groth16::generate_keys(synth::record_matrices(c), 1), path);
  }
};

// Cheap to prove: the tests that check real proofs.
const ParamsFixture& tiny() {
  static ParamsFixture f(circuits::PorepParams{1, 0, 0, 3});
  return f;
}
// Synthesis of a few milliseconds per partition: the tests of timing and scheduling, whose
// proving stage is a stand-in backend.
const ParamsFixture& wider() {
  static ParamsFixture f(circuits::PorepParams{1, 0, 0, 8});
  return f;
}

engine::Job job_of(const ParamsFixture& p, int j, uint32_t partitions, const std::string& params = "") {
  return engine::make_porep_job("job" + std::to_string(j), p.shape, partitions, 42 + uint64_t(j) * partitions,
                                100 + uint64_t(j) * partitions, params.empty() ? p.path : params);
}

// A stand-in proving stage (a GPU's: the CPU is free meanwhile): sleeps, then returns empty
// proofs, or throws.
class StubBackend final : public groth16::Backend {
 public:
  explicit StubBackend(std::chrono::milliseconds d, bool fail = false) : delay_(d), fail_(fail) {}
  std::string name() const override { return "stub"; }
  std::vector<groth16::Proof> prove_batch(const groth16::ProvingKey&, std::span<const groth16::Witness> ws,
                                          std::span<const groth16::Randomness>) override {
    ++calls;
    std::this_thread::sleep_for(delay_);
    if (fail_) throw std::runtime_error("stub backend: device lost");
    return std::vector<groth16::Proof>(ws.size());
  }
  std::atomic<int> calls{0};

 private:
  std::chrono::milliseconds delay_;
  bool fail_;
};

std::string error_of(std::future<engine::JobResult>& f) {
  try {
    f.get();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("pipelined, batched proofs equal the one-at-a-time proofs; parameters load once") {
  const ParamsFixture& p = tiny();
  engine::Config cfg;
  cfg.max_batch_size = 2;
  cfg.overlap = true;
  std::vector<engine::Job> jobs;
  for (int j = 0; j < 3; ++j) jobs.push_back(job_of(p, j, 2));
  std::vector<engine::JobResult> got;
  {
    engine::Engine eng(cfg, "cpu");  // no preload: the first job loads the parameters
    for (auto& f : eng.submit_all(jobs)) got.push_back(f.get());
  }
  // The reference: each partition synthesized and proved on its own, same r/s seeds.
  const groth16::ProvingKey pk = groth16::load_params(p.path);
  for (size_t j = 0; j < jobs.size(); ++j) {
    REQUIRE(got[j].proofs.size() == 2);
    for (uint32_t i = 0; i < 2; ++i) {
      const auto& circuit = (*jobs[j].partitions)[i];
      auto pa = synth::prove_assignment(circuit);
      groth16::Witness w{pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()};
      const auto ref = groth16::prove_cpu(pk, w, groth16::Randomness::from_seed(*jobs[j].rs_seed + i));
      CHECK(got[j].proofs[i] == ref);
      CHECK(groth16::verify(pk.vk, got[j].proofs[i], circuit.public_inputs()));
    }
  }
  // srs_load: the load in the first job, 0 once resident.
  CHECK(got[0].record.srs_load_ns() > 0);
  CHECK(got[1].record.srs_load_ns() == 0);
  CHECK(got[2].record.srs_load_ns() == 0);
  // Batching: jobs 0 and 1 share a proving call, job 2 goes alone (nothing else is coming).
  CHECK(got[0].record.batch_size == 2);
  CHECK(got[1].record.batch_size == 2);
  CHECK(got[2].record.batch_size == 1);
  CHECK(got[0].record.prove_begin == got[1].record.prove_begin);
  for (auto& r : got) {
    const auto& x = r.record;
    CHECK(x.queue_ns() + x.srs_load_ns() + x.synth_ns() + x.prove_ns() == x.total_ns());
  }
}

TEST_CASE("with overlap on, synthesis of the next job runs during proving; off, strictly after") {
  const ParamsFixture& p = wider();
  auto run = [&](bool overlap, uint64_t& wall) {
    engine::Config cfg;
    cfg.overlap = overlap;
    engine::Engine eng(cfg, std::make_unique<StubBackend>(std::chrono::milliseconds(150)));
    eng.preload(p.path);
    eng.wait_ready();
    std::vector<engine::Job> jobs;
    for (int j = 0; j < 4; ++j) jobs.push_back(job_of(p, j, 4));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::future<engine::JobResult>> fs;
    for (auto& j : jobs) fs.push_back(eng.submit(j));
    std::vector<engine::JobRecord> out;
    for (auto& f : fs) out.push_back(f.get().record);
    wall = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    return out;
  };
  uint64_t wall_on = 0, wall_off = 0;
  auto on = run(true, wall_on);
  auto off = run(false, wall_off);
  uint64_t stages_on = 0, stages_off = 0;
  for (auto& r : on) stages_on += r.srs_load_ns() + r.synth_ns() + r.prove_ns();
  for (auto& r : off) stages_off += r.srs_load_ns() + r.synth_ns() + r.prove_ns();
  INFO("overlap on: wall " << wall_on << " ns, stages " << stages_on << " ns; off: wall " << wall_off << ", stages "
                           << stages_off);
  CHECK(wall_on < stages_on);
  CHECK(wall_off >= stages_off);
  for (size_t j = 0; j + 1 < on.size(); ++j) {
    CHECK(on[j + 1].synth_begin < on[j].prove_end);     // look-ahead: synthesized while j was proved
    CHECK(off[j + 1].synth_begin >= off[j].prove_end);  // serial: after j was done
  }
  for (auto& r : on) CHECK(r.srs_load_ns() == 0);  // preloaded
}

TEST_CASE("readiness: preload, is_ready/wait_ready, and the ready file appears whole") {
  const ParamsFixture& p = tiny();
  engine::Engine eng(engine::Config{}, "cpu");
  auto f = eng.preload(p.path);
  eng.wait_ready();
  CHECK(eng.is_ready());
  TempDir d;
  engine::write_ready_file(d.file("ready"), engine::ready_line(p.path) + "\n");
  CHECK(cuzk::test::slurp(d.file("ready")) == "cuzk-engine: ready params=" + p.path + "\n");
  CHECK(d.entries() == std::vector<std::string>{"ready"});  // no temporary left behind

  engine::Engine bad(engine::Config{}, "cpu");
  bad.preload(d.file("missing.params"));
  CHECK_THROWS_AS(bad.wait_ready(), groth16::ParamsError);
  CHECK_FALSE(bad.is_ready());
}

TEST_CASE("the memory budget: a job that cannot fit alone is refused; otherwise jobs wait for room") {
  const ParamsFixture& p = wider();
  const uint64_t need = engine::estimate_job_bytes(p.shape, 2);
  {
    engine::Config cfg;
    cfg.memory_budget = need - 1;
    engine::Engine eng(cfg, std::make_unique<StubBackend>(std::chrono::milliseconds(1)));
    auto f = eng.submit(job_of(p, 0, 2));
    const std::string e = error_of(f);
    INFO(e);
    CHECK(e.find("needs about") != std::string::npos);
    CHECK(e.find("memory budget is") != std::string::npos);
    CHECK(e.find("cannot run even alone") != std::string::npos);
  }
  {
    engine::Config cfg;
    cfg.memory_budget = need;  // room for one job at a time: no look-ahead possible
    engine::Engine eng(cfg, std::make_unique<StubBackend>(std::chrono::milliseconds(50)));
    auto f0 = eng.submit(job_of(p, 0, 2));
    auto f1 = eng.submit(job_of(p, 1, 2));
    auto r0 = f0.get().record, r1 = f1.get().record;
    CHECK(r1.synth_begin >= r0.prove_end);
  }
}

TEST_CASE("failures come back through the job's future") {
  const ParamsFixture& p = tiny();
  SECTION("a bad parameters path") {
    engine::Engine eng(engine::Config{}, "cpu");
    TempDir d;
    auto f = eng.submit(job_of(p, 0, 1, d.file("nope.params")));
    CHECK_THROWS_AS(f.get(), groth16::ParamsError);
    // The engine keeps working for good jobs.
    auto g = eng.submit(job_of(p, 1, 1));
    CHECK(g.get().proofs.size() == 1);
  }
  SECTION("parameters of another shape") {
    const ParamsFixture& other = wider();
    engine::Engine eng(engine::Config{}, "cpu");
    auto f = eng.submit(job_of(p, 0, 1, other.path));
    CHECK_THROWS_AS(f.get(), groth16::ParamsError);
  }
  SECTION("a backend failure fails every job of the batch") {
    engine::Config cfg;
    cfg.max_batch_size = 2;
    cfg.overlap = false;
    auto stub = std::make_unique<StubBackend>(std::chrono::milliseconds(1), true);
    StubBackend* backend = stub.get();
    engine::Engine eng(cfg, std::move(stub));
    auto fs = eng.submit_all({job_of(p, 0, 1), job_of(p, 1, 1)});
    CHECK(error_of(fs[0]) == "stub backend: device lost");
    CHECK(error_of(fs[1]) == "stub backend: device lost");
    CHECK(backend->calls == 1);  // one proving call for both (serial mode batches too)
  }
  SECTION("a bad configuration or backend name") {
    engine::Config cfg;
    cfg.max_batch_size = 9;
    CHECK_THROWS_AS(engine::Engine(cfg, "cpu"), std::invalid_argument);
    CHECK_THROWS_AS(engine::Engine(engine::Config{}, "sorcery"), std::invalid_argument);
  }
}

TEST_CASE("shutting down with jobs queued does not hang; the queued jobs fail with the reason") {
  const ParamsFixture& p = tiny();
  for (bool overlap : {true, false}) {
    std::vector<std::future<engine::JobResult>> fs;
    const auto t0 = std::chrono::steady_clock::now();
    {
      engine::Config cfg;
      cfg.overlap = overlap;
      engine::Engine eng(cfg, std::make_unique<StubBackend>(std::chrono::milliseconds(200)));
      for (int j = 0; j < 6; ++j) fs.push_back(eng.submit(job_of(p, j, 1)));
    }  // destroyed with most jobs still queued
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
    int dropped = 0;
    for (auto& f : fs) {
      const std::string e = error_of(f);
      if (!e.empty()) {
        CHECK(e.find("shut down") != std::string::npos);
        ++dropped;
      }
    }
    CHECK(dropped >= 4);
  }
}

TEST_CASE("cuzk-bench engine: ready line first, ready file, per-job records, results file") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  auto r = cuzk::test::run_bench(
      "engine --partitions 1 --challenges 1 --depth 3 --jobs 2 --batch 2 --ready-file ready --out out.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto lines = cuzk::test::lines_of(r.out);
  REQUIRE(!lines.empty());
  CHECK(lines[0].rfind("cuzk-engine: ready params=", 0) == 0);
  CHECK(cuzk::test::slurp(d.file("ready")) == lines[0] + "\n");
  CHECK(r.out.find("proofs/min") != std::string::npos);
  CHECK(r.out.find("every proof verified") != std::string::npos);
  auto f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.samples.size() == 2);
  for (auto& s : f.samples) {
    CHECK(s.value["phases"]["proof/srs_load"]["wall_ns"] == 0);  // preloaded
    CHECK(s.value["pipeline"]["batch_size"] == 2);
  }

  SECTION("bad input: one clear error, exit 2, before anything runs") {
    auto b = cuzk::test::run_bench("engine --batch 9 --out b.jsonl", d.path());
    CHECK(b.code == 2);
    CHECK(b.err.find("--batch 9 is out of range") != std::string::npos);
    b = cuzk::test::run_bench("engine --overlap maybe --out b.jsonl", d.path());
    CHECK(b.code == 2);
    b = cuzk::test::run_bench("engine --params nope.params --out b.jsonl", d.path());
    CHECK(b.code == 2);
    CHECK(b.err.find("nope.params") != std::string::npos);
    b = cuzk::test::run_bench("engine --budget-mib 1 --challenges 8 --partitions 4 --out b.jsonl", d.path());
    CHECK(b.code == 2);
    CHECK(b.err.find("more than the budget") != std::string::npos);
    CHECK(!cuzk::test::exists(d.file("b.jsonl")));
  }
}

TEST_CASE("run --suite pipeline.toml --quick: one sample per job with the engine's phases") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  const std::string suite = std::string(CUZK_SOURCE_DIR) + "/suites/pipeline.toml";
  auto r = cuzk::test::run_bench("run --suite '" + suite + "' --quick --out out.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.summary.has_value());
  std::map<std::string, int> per_case;
  for (auto& s : f.samples) {
    const auto& v = s.value;
    const std::string c = v["case"];
    ++per_case[c];
    for (const char* ph : {"proof", "proof/queue", "proof/srs_load", "proof/synth", "proof/prove", "pipeline",
                           "proof/prove/msm_h", "proof/synth/partition_0"})
      CHECK(v["phases"].contains(ph));
    CHECK(v["phases"]["proof/srs_load"]["wall_ns"] == 0);
    const auto& pl = v["pipeline"];
    CHECK(pl["jobs"] == 4);
    CHECK(pl["proofs_per_minute"].get<double>() > 0);
    CHECK(v["phases"]["pipeline"]["wall_ns"] == pl["run_wall_ns"]);
    CHECK(pl["batch_size"].get<int>() <= v["parameters"]["batch"].get<int>());
    // The stage phases add up to the job's total.
    uint64_t sum = 0;
    for (const char* ph : {"proof/queue", "proof/srs_load", "proof/synth", "proof/prove"})
      sum += v["phases"][ph]["wall_ns"].get<uint64_t>();
    CHECK(sum == v["phases"]["proof"]["wall_ns"].get<uint64_t>());
  }
  // The GPU-sized case is not part of --quick (and is for --backend cuda only).
  CHECK(per_case == std::map<std::string, int>{{"b1-overlap", 4}, {"b1-serial", 4}, {"b2-overlap", 4}, {"b2-serial", 4}});
}
