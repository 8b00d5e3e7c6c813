// A sector streamed partition by partition (prover/engine/sector_stream.hpp): never more
// partitions resident than the budget allows, a budget below one partition refused before any
// work, proofs that verify (one device and two), the partition-to-device assignment, the plan
// of the 32g shape, and `cuzk-bench prove --sector` end to end with its errors.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <tuple>

#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/engine/sector_stream.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/synth/synth.hpp"
#include "test_util.hpp"

using namespace cuzk;
using cuzk::test::TempDir;

namespace {

// The smallest shape (2e12x3's circuit), its parameters generated once per binary run.
struct Params {
  circuits::PorepParams shape{1, 0, 0, 2};
  TempDir dir;
  std::string path = dir.file("p.params");
  uint64_t partition_bytes = 0;
  Params() {
    auto c = circuits::PorepCircuit::generate(shape, 42);
    groth16::save_params(groth16::generate_keys(synth::record_matrices(c), 1), path);
    partition_bytes = engine::estimate_partition_bytes(circuits::porep_shape_by_parts(shape));
  }
};
const Params& params() {
  static Params p;
  return p;
}

// A stand-in device: sleeps (so synthesis would run ahead of it), counts its calls, returns
// empty proofs or throws.
class SlowBackend final : public groth16::Backend {
 public:
  SlowBackend(std::chrono::milliseconds d, std::atomic<int>& calls, bool fail = false,
              std::optional<uint64_t> used = std::nullopt)
      : delay_(d), calls_(calls), fail_(fail), used_(used) {}
  std::string name() const override { return "slow"; }
  std::optional<uint64_t> device_used_bytes() override { return used_; }
  std::vector<groth16::Proof> prove_batch(const groth16::ProvingKey&, std::span<const groth16::Witness> ws,
                                          std::span<const groth16::Randomness>) override {
    ++calls_;
    std::this_thread::sleep_for(delay_);
    if (fail_) throw std::runtime_error("slow backend: device lost");
    return std::vector<groth16::Proof>(ws.size());
  }

 private:
  std::chrono::milliseconds delay_;
  std::atomic<int>& calls_;
  bool fail_;
  std::optional<uint64_t> used_;
};

// 40 ms a proof (scaled under sanitizers): several tiny syntheses fit in it.
std::vector<std::unique_ptr<groth16::Backend>> slow_devices(uint32_t n, std::atomic<int>& calls,
                                                            int ms = 40 * cuzk::test::kSlowdown, bool fail = false) {
  std::vector<std::unique_ptr<groth16::Backend>> out;
  for (uint32_t i = 0; i < n; ++i)
    out.push_back(std::make_unique<SlowBackend>(std::chrono::milliseconds(ms), calls, fail));
  return out;
}

engine::SectorJob job_of(uint32_t partitions, const std::string& path) {
  engine::SectorJob j;
  j.circuit = params().shape;
  j.partitions = partitions;
  j.rs_seed = 7;
  j.params_path = path;
  return j;
}

// The most partitions held at once by the records' own timestamps (synthesis start to proof
// end), independent of the stream's counter.
uint32_t resident_by_timestamps(const engine::SectorResult& r) {
  uint32_t peak = 0;
  for (const auto& a : r.partitions) {
    uint32_t n = 0;
    for (const auto& b : r.partitions)
      if (b.witness_begin <= a.witness_begin && a.witness_begin < b.prove_end) ++n;
    peak = std::max(peak, n);
  }
  return peak;
}

}  // namespace

TEST_CASE("assign_partitions: partition k on device k mod G, every device used evenly") {
  for (uint32_t g = 1; g <= 8; ++g)
    for (uint32_t p = 0; p <= 12; ++p) {
      const auto a = engine::assign_partitions(p, g);
      REQUIRE(a.size() == p);
      std::vector<uint32_t> per(g, 0);
      for (uint32_t k = 0; k < p; ++k) {
        CHECK(a[k] == k % g);
        ++per[a[k]];
      }
      const auto [lo, hi] = std::minmax_element(per.begin(), per.end());
      CHECK(*hi - *lo <= 1);
    }
  CHECK(engine::assign_partitions(10, 4) == std::vector<uint32_t>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1});
  CHECK_THROWS_AS(engine::assign_partitions(3, 0), std::invalid_argument);
}

TEST_CASE("choose_device_count: all by default, --gpus 1..present, clear errors otherwise") {
  CHECK(engine::choose_device_count(std::nullopt, 4, "cuda") == 4);
  CHECK(engine::choose_device_count(2u, 4, "cuda") == 2);
  CHECK(engine::choose_device_count(4u, 4, "cuda") == 4);
  CHECK_THROWS_WITH(engine::choose_device_count(0u, 4, "cuda"), Catch::Contains("--gpus must be at least 1"));
  CHECK_THROWS_WITH(engine::choose_device_count(5u, 4, "cuda"),
                    Catch::Contains("--gpus 5: backend 'cuda' has 4 device(s)"));
  CHECK_THROWS_AS(engine::choose_device_count(2u, 1, "cpu"), std::invalid_argument);
}

TEST_CASE("the budget: resident partitions = floor(budget / partition), below one is an error naming both") {
  const uint64_t gib = uint64_t(1) << 30;
  CHECK(engine::max_resident_partitions(40 * gib, 15 * gib, 10) == 2);
  CHECK(engine::max_resident_partitions(1000 * gib, 15 * gib, 10) == 10);
  try {
    engine::max_resident_partitions(8 * gib, 15 * gib + gib / 2, 10);
    FAIL("no error");
  } catch (const engine::SectorBudgetError& e) {
    const std::string m = e.what();
    CHECK(m.find("8.00 GiB") != std::string::npos);
    CHECK(m.find("15.50 GiB") != std::string::npos);
  }
}

TEST_CASE("the 32g plan: 10 partitions of 130,953,556 constraints in a 2^27 domain") {
  const auto& s = engine::sector_shape("32g");
  CHECK(s.partitions == 10);
  CHECK(s.circuit == circuits::PorepParams{33, 11, 14, 30});
  const uint64_t gib = uint64_t(1) << 30;
  const auto plan = engine::plan_sector(s.circuit, s.partitions, 40 * gib, 2);
  CHECK(plan.shape.constraints == 130953556);
  CHECK(plan.domain == uint64_t(1) << 27);
  CHECK(plan.partition_bytes == (3 * plan.shape.constraints + plan.shape.inputs + plan.shape.aux) * 32);
  CHECK(plan.max_resident == 2);
  CHECK(plan.describe().find("130953556") != std::string::npos);
  CHECK(engine::plan_sector(s.circuit, s.partitions, gib, 1).max_resident == 0);
  // The 32g structure with fewer challenges: the same layers, parents and depth.
  for (auto [name, challenges, constraints, log_domain] :
       {std::tuple{"32g-c16", 16u, uint64_t(63492949), 26u}, std::tuple{"32g-c4", 4u, uint64_t(15873697), 24u}}) {
    INFO(name);
    const auto& c = engine::sector_shape(name);
    CHECK(c.circuit == circuits::PorepParams{challenges, 11, 14, 30});
    const auto p = engine::plan_sector(c.circuit, c.partitions, 0, 1);
    CHECK(p.shape.constraints == constraints);
    CHECK(p.domain == uint64_t(1) << log_domain);
  }
  CHECK(engine::sector_shape("2e20x10").partitions == 10);
  CHECK(circuits::porep_shape_by_parts(engine::sector_shape("2e20x10").circuit).constraints <= (uint64_t(1) << 20));
  CHECK_THROWS_WITH(engine::sector_shape("64g"), Catch::Contains("unknown sector shape '64g'"));
}

TEST_CASE("streaming: never more partitions resident than the budget, though synthesis could run ahead") {
  const Params& p = params();
  std::atomic<int> calls{0};
  SECTION("a budget of two partitions") {
    engine::SectorStream s(slow_devices(1, calls), 2 * p.partition_bytes + 1);
    uint32_t seen_max = 0;
    auto r = s.prove(job_of(6, p.path), [&](const engine::PartitionRecord& rec, uint32_t n) {
      CHECK(n == 6);
      seen_max = std::max(seen_max, rec.resident);
    });
    CHECK(calls == 6);
    CHECK(r.max_resident == 2);
    CHECK(r.peak_resident == 2);
    CHECK(seen_max <= 2);
    CHECK(resident_by_timestamps(r) <= 2);
    for (uint32_t k = 1; k < 6; ++k) {
      // The overlap: partition k's synthesis starts before partition k-1's proof ends.
      CHECK(r.partitions[k].witness_begin < r.partitions[k - 1].prove_end);
      CHECK(r.partitions[k].device == 0);
    }
    CHECK(r.peak_rss_bytes > 0);
  }
  SECTION("unlimited: synthesis runs ahead of the slow device") {
    engine::SectorStream s(slow_devices(1, calls), 0);
    auto r = s.prove(job_of(6, p.path));
    CHECK(r.peak_resident >= 3);
  }
  SECTION("two devices, a budget of three") {
    engine::SectorStream s(slow_devices(2, calls), 3 * p.partition_bytes);
    auto r = s.prove(job_of(7, p.path));
    CHECK(r.peak_resident <= 3);
    CHECK(resident_by_timestamps(r) <= 3);
    for (uint32_t k = 0; k < 7; ++k) CHECK(r.partitions[k].device == k % 2);
  }
}

TEST_CASE("choose_synth_threads: two at once by default, never more than the resident limit or the partitions") {
  CHECK(engine::choose_synth_threads(std::nullopt, 8, 10, 16) == 2);
  CHECK(engine::choose_synth_threads(std::nullopt, 1, 10, 16) == 1);
  CHECK(engine::choose_synth_threads(std::nullopt, 8, 1, 16) == 1);
  // With the threads per partition given: the cores divided among them.
  CHECK(engine::choose_synth_threads(std::nullopt, 8, 10, 16, 1u) == 8);
  CHECK(engine::choose_synth_threads(std::nullopt, 8, 10, 4, 1u) == 4);
  CHECK(engine::choose_synth_threads(std::nullopt, 10, 3, 16, 1u) == 3);
  CHECK(engine::choose_synth_threads(std::nullopt, 10, 10, 16, 4u) == 4);
  CHECK_THROWS_WITH(engine::choose_synth_threads(std::nullopt, 8, 10, 16, 0u),
                    Catch::Contains("--partition-threads must be at least 1"));
  CHECK(engine::choose_synth_threads(3u, 8, 10, 16) == 3);
  CHECK(engine::choose_synth_threads(20u, 2, 10, 16) == 2);
  CHECK(engine::choose_synth_threads(std::nullopt, 0, 10, 16) == 1);  // a budget below one partition
  CHECK(engine::choose_synth_threads(std::nullopt, 8, 10, 0, 1u) == 1);  // cores unknown
  CHECK_THROWS_WITH(engine::choose_synth_threads(0u, 8, 10, 16), Catch::Contains("--synth-threads must be at least 1"));
  const uint64_t gib = uint64_t(1) << 30;
  const auto& s = engine::sector_shape("32g");
  const auto plan = engine::plan_sector(s.circuit, s.partitions, 40 * gib, 1, 5u);
  CHECK(plan.synth_threads == 2);  // 40 GiB holds two partitions of 15.58 GiB
  CHECK(plan.describe().find("synthesis        2 partition(s) at once") != std::string::npos);
}

TEST_CASE("choose_partition_threads: the cores shared among the partitions synthesized at once") {
  CHECK(engine::choose_partition_threads(std::nullopt, 2, 16) == 8);
  CHECK(engine::choose_partition_threads(std::nullopt, 3, 16) == 5);
  CHECK(engine::choose_partition_threads(std::nullopt, 16, 16) == 1);
  CHECK(engine::choose_partition_threads(std::nullopt, 8, 2) == 1);  // more partitions than cores
  CHECK(engine::choose_partition_threads(std::nullopt, 1, 0) == 1);  // cores unknown
  CHECK(engine::choose_partition_threads(4u, 2, 16) == 4);
  CHECK_THROWS_WITH(engine::choose_partition_threads(0u, 2, 16), Catch::Contains("--partition-threads must be at least 1"));
  const uint64_t gib = uint64_t(1) << 30;
  const auto& s = engine::sector_shape("32g");
  const auto plan = engine::plan_sector(s.circuit, s.partitions, 40 * gib, 1, 2u, 8u);
  CHECK(plan.partition_threads == 8);
  CHECK(plan.describe().find("synthesis        2 partition(s) at once, 8 threads each") != std::string::npos);
}

TEST_CASE("streaming: several syntheses at once stay within the budget and give the same proofs") {
  const Params& p = params();
  std::atomic<int> calls{0};
  {
    engine::SectorStream s(slow_devices(1, calls), 3 * p.partition_bytes);
    auto j = job_of(7, p.path);
    j.synth_threads = 5;  // capped at the 3 the budget allows
    auto r = s.prove(j);
    CHECK(calls == 7);
    CHECK(r.synth_threads == 3);
    CHECK(r.peak_resident <= 3);
    CHECK(resident_by_timestamps(r) <= 3);
    for (uint32_t k = 0; k < 7; ++k) CHECK(r.partitions[k].synth_end >= r.partitions[k].synth_begin);
  }
  // Which thread synthesizes a partition, and on how many threads (sliced), changes nothing in
  // it: the proofs (fixed r, s) are equal.
  std::vector<std::vector<groth16::Proof>> proofs;
  for (auto [threads, per_partition] : {std::pair{1u, 1u}, std::pair{3u, 1u}, std::pair{2u, 3u}}) {
    std::vector<std::unique_ptr<groth16::Backend>> b;
    b.push_back(groth16::make_cpu_backend());
    engine::SectorStream s(std::move(b), 3 * p.partition_bytes);
    auto j = job_of(4, p.path);
    j.synth_threads = threads;
    j.partition_threads = per_partition;
    auto r = s.prove(j);
    CHECK(r.partition_threads == per_partition);
    for (uint32_t k = 0; k < 4; ++k) CHECK(groth16::verify(r.pk->vk, r.proofs[k], r.public_inputs[k]));
    proofs.push_back(r.proofs);
  }
  CHECK(proofs[0] == proofs[1]);
  CHECK(proofs[0] == proofs[2]);
}

TEST_CASE("streaming: keys already in memory are used without a parameters file") {
  const Params& p = params();
  std::vector<std::unique_ptr<groth16::Backend>> b;
  b.push_back(groth16::make_cpu_backend());
  engine::SectorStream s(std::move(b), 2 * p.partition_bytes);
  auto j = job_of(2, "");
  j.key = std::make_shared<const groth16::ProvingKey>(groth16::load_params(p.path));
  auto r = s.prove(j);
  for (uint32_t k = 0; k < 2; ++k) CHECK(groth16::verify(r.pk->vk, r.proofs[k], r.public_inputs[k]));
  CHECK(r.pk == j.key);
  CHECK(s.params().paths().empty());  // nothing loaded from a file
  CHECK_THROWS_WITH(s.prove(job_of(2, "")), Catch::Contains("no parameters file"));
}

TEST_CASE("streaming: each partition records its device's memory in use, the sector the most") {
  const Params& p = params();
  std::atomic<int> calls{0};
  const uint64_t gib = uint64_t(1) << 30;
  std::vector<std::unique_ptr<groth16::Backend>> b;
  b.push_back(std::make_unique<SlowBackend>(std::chrono::milliseconds(1), calls, false, 5 * gib));
  b.push_back(std::make_unique<SlowBackend>(std::chrono::milliseconds(1), calls, false, 7 * gib));
  engine::SectorStream s(std::move(b), 0);
  auto r = s.prove(job_of(4, p.path));
  for (uint32_t k = 0; k < 4; ++k) CHECK(r.partitions[k].device_used_bytes == (k % 2 ? 7 : 5) * gib);
  CHECK(r.peak_device_used_bytes() == 7 * gib);
  // A backend without a device of its own (the CPU) records none.
  std::vector<std::unique_ptr<groth16::Backend>> cpu;
  cpu.push_back(groth16::make_cpu_backend());
  engine::SectorStream c(std::move(cpu), 0);
  auto rc = c.prove(job_of(1, p.path));
  CHECK_FALSE(rc.partitions[0].device_used_bytes);
  CHECK_FALSE(rc.peak_device_used_bytes());
}

TEST_CASE("streaming: a budget below one partition is refused before any work") {
  const Params& p = params();
  std::atomic<int> calls{0};
  engine::SectorStream s(slow_devices(1, calls), p.partition_bytes - 1);
  // A missing parameters file: had anything been loaded first, the error would be another.
  try {
    (void)s.prove(job_of(3, "/nonexistent/p.params"));
    FAIL("no error");
  } catch (const engine::SectorBudgetError& e) {
    CHECK(std::string(e.what()).find("cannot hold one synthesized partition") != std::string::npos);
  }
  CHECK(calls == 0);
  CHECK(s.params().paths().empty());
}

TEST_CASE("streaming: a device failure stops the sector and reaches the caller") {
  const Params& p = params();
  std::atomic<int> calls{0};
  engine::SectorStream s(slow_devices(1, calls, 5, /*fail=*/true), 2 * p.partition_bytes);
  CHECK_THROWS_WITH(s.prove(job_of(4, p.path)), Catch::Contains("device lost"));
  CHECK(calls == 1);
}

TEST_CASE("streaming: the proofs verify with the CPU backend, on one device and on two") {
  const Params& p = params();
  for (uint32_t devices : {1u, 2u}) {
    std::vector<std::unique_ptr<groth16::Backend>> b;
    for (uint32_t i = 0; i < devices; ++i) b.push_back(groth16::make_cpu_backend());
    engine::SectorStream s(std::move(b), 2 * p.partition_bytes);
    auto r = s.prove(job_of(3, p.path));
    REQUIRE(r.proofs.size() == 3);
    for (uint32_t k = 0; k < 3; ++k) {
      CHECK(groth16::verify(r.pk->vk, r.proofs[k], r.public_inputs[k]));
      CHECK(r.partitions[k].device == k % devices);
    }
    // The parameters stay resident: a second sector loads nothing.
    CHECK(s.params().resident(p.path));
  }
}

TEST_CASE("cuzk-bench prove --sector: plan, progress per partition, verified proofs, gpu_index; clear errors") {
  TempDir d;
  auto plan = cuzk::test::run_bench("prove --sector 32g --plan --memory-budget 40", d.path());
  INFO(plan.out << plan.err);
  CHECK(plan.code == 0);
  CHECK(plan.out.find("130953556 per partition (domain 2^27)") != std::string::npos);
  CHECK(plan.out.find("at most 2 partition(s)") != std::string::npos);

  auto r = cuzk::test::run_bench(
      "prove --sector 2e12x3 --memory-budget 0.001 --partition-threads 2 --seed 3 --out out.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  for (int k = 1; k <= 3; ++k) CHECK(r.err.find("partition " + std::to_string(k) + "/3: synth ") != std::string::npos);
  CHECK(r.out.find("every proof verified") != std::string::npos);
  auto f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.samples.size() == 1);
  const auto& s = f.samples[0].value;
  CHECK(s["phases"]["proof/prove/partition_2"]["gpu_index"] == 0);
  CHECK(!s["phases"]["proof/synth"].contains("gpu_index"));
  CHECK(s["sector"]["partitions"].size() == 3);
  CHECK(s["sector"]["partition_threads"] == 2);
  CHECK(s["sector"]["peak_resident"].get<int>() >= 1);
  CHECK(s["sector"]["peak_gpu_used_bytes"].is_null());  // the CPU backend has no device memory
  CHECK(s["sector"]["partitions"][0]["gpu_used_bytes"].is_null());
  CHECK(s["parameters"]["budget_bytes"] == 1073741);  // as given: 0.001 GiB

  // A default budget follows the machine's free memory: the case records "default", so two runs
  // under it are one case for compare; the bytes used are in the sector object.
  auto def = cuzk::test::run_bench("prove --sector 2e12x3 --seed 3 --out def.jsonl", d.path());
  INFO(def.err);
  REQUIRE(def.code == 0);
  const auto fd = cuzk::read_results(d.file("def.jsonl"));
  REQUIRE(fd.samples.size() == 1);
  CHECK(fd.samples[0].value["parameters"]["budget_bytes"] == "default");
  CHECK(fd.samples[0].value["sector"]["budget_bytes"].get<uint64_t>() > 0);

  SECTION("bad input: one clear error, exit 2, nothing written") {
    struct Bad {
      const char* args;
      const char* says;
    };
    for (const Bad& b : {Bad{"--sector 2e12x3 --gpus 0", "--gpus must be at least 1"},
                         Bad{"--sector 2e12x3 --gpus 2", "--gpus 2: backend 'cpu' has 1 device(s)"},
                         Bad{"--sector 64g", "unknown sector shape '64g'"},
                         Bad{"--sector 2e12x3 --memory-budget lots", "--memory-budget 'lots'"},
                         Bad{"--sector 2e12x3 --memory-budget -1", "--memory-budget '-1'"},
                         Bad{"--sector 2e12x3 --memory-budget 0.0000001", "cannot hold one synthesized partition"},
                         Bad{"--sector 2e12x3 --synth-threads 0", "--synth-threads must be at least 1"},
                         Bad{"--synth-threads 2", "need --sector"},
                         Bad{"--sector 2e12x3 --partition-threads 0", "--partition-threads must be at least 1"},
                         Bad{"--partition-threads 2", "need --sector"},
                         Bad{"--params-in-memory", "need --sector"},
                         Bad{"--sector 2e12x3 --params-in-memory --params p.params", "drop --params"},
                         Bad{"--gpus 1", "need --sector"}}) {
      auto e = cuzk::test::run_bench(std::string("prove ") + b.args + " --out b.jsonl", d.path());
      INFO(b.args << "\n" << e.err);
      CHECK(e.code == 2);
      CHECK(e.err.find(b.says) != std::string::npos);
      CHECK(cuzk::test::lines_of(e.err).size() == 1);
      CHECK(!cuzk::test::exists(d.file("b.jsonl")));
    }
  }
}

TEST_CASE("run --suite: the sector kind records a streamed sector; e2e/porep-32g is for the GPU only") {
  TempDir d;
  cuzk::test::spit(d.file("s.toml"),
                   "name = \"s\"\n[[case]]\nname = \"tiny\"\nkind = \"sector\"\nsector = \"2e12x3\"\nbudget_mib = 1\n"
                   "synth_threads = 1\npartition_threads = 3\nreps = 1\nwarmup = 0\n");
  auto r = cuzk::test::run_bench("run --suite s.toml --out out.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  auto f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.samples.size() == 1);
  const auto& s = f.samples[0].value;
  CHECK(s["sector"]["max_resident"] == 2);  // 1 MiB holds two partitions of 355,712 bytes
  CHECK(s["sector"]["peak_resident"].get<int>() <= 2);
  CHECK(s["sector"]["synth_threads"] == 1);
  CHECK(s["sector"]["partition_threads"] == 3);
  CHECK(s["phases"]["proof/prove/partition_1/msm_h"]["gpu_index"] == 0);

  auto list = cuzk::test::run_bench("run --suite e2e --list", d.path());
  INFO(list.err);
  CHECK(list.code == 0);
  CHECK(list.err.find("skipping case porep-32g: for --backend cuda only") != std::string::npos);
}

TEST_CASE("backends per device: a fake four-device backend, one instance per device, k mod G proves k") {
  const Params& p = params();
  // Which device proved each partition, as the devices themselves saw it (by the witness's
  // first input, the partition's public input comm_r, unique per partition).
  struct Seen {
    std::mutex mu;
    std::vector<std::pair<unsigned, std::string>> calls;
  };
  static Seen seen;
  class FakeDevice final : public groth16::Backend {
   public:
    explicit FakeDevice(unsigned d) : d_(d) {}
    std::string name() const override { return "fake4"; }
    std::vector<groth16::Proof> prove_batch(const groth16::ProvingKey&, std::span<const groth16::Witness> ws,
                                            std::span<const groth16::Randomness>) override {
      std::lock_guard lk(seen.mu);
      for (const auto& w : ws) seen.calls.emplace_back(d_, w.input[1].to_hex());
      return std::vector<groth16::Proof>(ws.size());
    }

   private:
    unsigned d_;
  };
  groth16::register_device_backend(
      "fake4", [](unsigned d) { return std::make_unique<FakeDevice>(d); }, [] { return 4u; });
  CHECK(groth16::backend_device_count("fake4") == 4);
  CHECK(groth16::backend_device_count("cpu") == 1);
  CHECK_THROWS_AS(groth16::make_backend_on("cpu", 1), std::invalid_argument);
  const uint32_t G = engine::choose_device_count(3u, groth16::backend_device_count("fake4"), "fake4");
  std::vector<std::unique_ptr<groth16::Backend>> b;
  for (uint32_t d = 0; d < G; ++d) b.push_back(groth16::make_backend_on("fake4", d));
  engine::SectorStream s(std::move(b), 0);
  auto r = s.prove(job_of(7, p.path));
  REQUIRE(seen.calls.size() == 7);
  for (uint32_t k = 0; k < 7; ++k) {
    const std::string comm_r = r.public_inputs[k][0].to_hex();
    bool found = false;
    for (const auto& [dev, in] : seen.calls)
      if (in == comm_r) {
        found = true;
        CHECK(dev == k % 3);
      }
    CHECK(found);
  }
}
