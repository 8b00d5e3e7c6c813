// Keys held on devices (prover/groth16/key_residency.hpp, SectorStream::hold_key): the copy
// without host points keeps its counts and identity, frees the dropped points, proves the same
// proofs through a device that holds them, and is refused with a clear error by a backend that
// would read them on the host. The device here is a stand-in that keeps its own copy of the
// points it is handed, as the CUDA backend keeps device arrays.
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/engine/sector_stream.hpp"
#include "prover/groth16/key_residency.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/synth/synth.hpp"
#include "harness/measure/results.hpp"
#include "test_util.hpp"

using namespace cuzk;
using groth16::HostQueries;
using groth16::ProvingKey;

namespace {

const circuits::PorepParams kShape{1, 0, 0, 2};

// A new key object each call (its own lifetime, no residency token), over points generated once.
std::shared_ptr<const ProvingKey> fresh_key() {
  static const ProvingKey generated =
      groth16::generate_keys(synth::record_matrices(circuits::PorepCircuit::generate(kShape, 42)), 1);
  return std::make_shared<const ProvingKey>(generated);
}

// Deep copies (new storage), as an upload makes.
template <class T>
groth16::PointArray<T> copy_of(const groth16::PointArray<T>& q) {
  return groth16::PointArray<T>(std::vector<T>(q.begin(), q.end()));
}

// A stand-in device: hold_key copies the G1 queries into its own storage and reports the G2
// query as read on the host (the CUDA backend with msm_b_g2 on CPU threads); it proves only a
// key of the identity it holds, with its own G1 points and the key's G2 query.
class HoldingDevice final : public groth16::Backend {
 public:
  explicit HoldingDevice(bool fail = false) : fail_(fail) {}
  std::string name() const override { return "holding"; }
  HostQueries hold_key(const ProvingKey& pk) override {
    if (fail_) throw std::runtime_error("holding device: out of device memory");
    held_ = pk;
    held_.a_query = copy_of(pk.a_query);
    held_.b_g1_query = copy_of(pk.b_g1_query);
    held_.h_query = copy_of(pk.h_query);
    held_.l_query = copy_of(pk.l_query);
    held_.b_g2_query = {};
    id_ = pk.identity();
    ++holds;
    return kHost;
  }
  std::vector<groth16::Proof> prove_batch(const ProvingKey& pk, std::span<const groth16::Witness> ws,
                                          std::span<const groth16::Randomness> rs) override {
    if (id_ == nullptr || pk.identity() != id_) throw std::runtime_error("holding device: a key it does not hold");
    ProvingKey full = held_;
    full.b_g2_query = pk.b_g2_query;  // from the host, as CPU threads would read it
    std::vector<groth16::Proof> out;
    for (size_t i = 0; i < ws.size(); ++i) out.push_back(groth16::prove_cpu(full, ws[i], rs[i]));
    return out;
  }
  static constexpr HostQueries kHost = {false, false, true, false, false};
  int holds = 0;

 private:
  bool fail_;
  ProvingKey held_;
  const void* id_ = nullptr;
};

engine::SectorJob job_with(std::shared_ptr<const ProvingKey> key, uint32_t partitions) {
  engine::SectorJob j;
  j.circuit = kShape;
  j.partitions = partitions;
  j.rs_seed = 11;
  j.key = std::move(key);
  return j;
}

}  // namespace

TEST_CASE("HostQueries: union, complement and the names of what the host keeps") {
  const HostQueries g2 = HostQueries::none() | HostQueries{false, false, true, false, false};
  CHECK(g2.describe() == "the B (G2) query");
  CHECK(HostQueries{}.describe() == "every query");
  CHECK(HostQueries::none().describe() == "no query");
  CHECK(HostQueries{true, false, false, true, false}.describe() == "the A and H queries");
  CHECK(g2.others() == HostQueries{true, true, false, true, true});
  CHECK((g2 | g2.others()) == HostQueries{});
}

TEST_CASE("keep_host_queries: counts kept, points dropped, identity shared, host reads refused") {
  const auto key = fresh_key();
  CHECK_THROWS_WITH(groth16::keep_host_queries(*key, HostQueries::none()), Catch::Contains("no residency token"));
  const ProvingKey marked = groth16::with_residency(*key);
  CHECK(marked.identity() != key->identity());
  CHECK(groth16::with_residency(marked).identity() == marked.identity());  // a held key keeps its token
  const ProvingKey dropped = groth16::keep_host_queries(marked, {false, false, true, false, false});
  CHECK(dropped.identity() == marked.identity());
  CHECK(dropped.a_query.size() == key->a_query.size());
  CHECK(dropped.h_query.size() == key->h_query.size());
  CHECK_FALSE(dropped.a_query.has_points());
  CHECK_FALSE(dropped.l_query.has_points());
  CHECK(dropped.b_g2_query.has_points());
  CHECK(groth16::host_queries(dropped) == HostQueries{false, false, true, false, false});
  CHECK(groth16::host_queries(*key) == HostQueries{});
  CHECK(groth16::host_point_bytes(dropped) == key->b_g2_query.size() * sizeof(g2_affine_t));
  CHECK(groth16::host_point_bytes(*key) ==
        groth16::host_point_bytes(key->num_inputs + key->num_aux, key->num_aux, key->h_query.size(), HostQueries{}));
  // Reading points only a device holds is an error with the query's name, never a crash.
  CHECK_THROWS_AS((void)std::span<const g1_affine_t>(dropped.h_query), std::logic_error);
  CHECK_NOTHROW(groth16::require_host_points(dropped, {false, false, true, false, false}, "x"));
  CHECK_THROWS_WITH(groth16::require_host_points(dropped, HostQueries{}, "the CPU prover"),
                    Catch::Contains("the CPU prover reads the key's A query on the host") &&
                        Catch::Contains("load or generate the key again"));
  // Keys compare by their counts where neither holds points, and never equal one that does.
  CHECK(dropped.same_keys(groth16::keep_host_queries(marked, {false, false, true, false, false})));
  CHECK_FALSE(dropped.same_keys(*key));
}

TEST_CASE("hold_key: devices hold the G1 queries, the host keeps G2, the proofs are the same") {
  auto key = fresh_key();
  const std::weak_ptr<const ProvingKey> original = key;
  const uint64_t g1_bytes = groth16::host_point_bytes(*key) - key->b_g2_query.size() * sizeof(g2_affine_t);

  // The reference: the CPU backend with the whole key.
  std::vector<std::unique_ptr<groth16::Backend>> cpu;
  cpu.push_back(groth16::make_cpu_backend());
  engine::SectorStream ref(std::move(cpu), 0);
  engine::SectorResult want = ref.prove(job_with(key, 3));

  std::vector<std::unique_ptr<groth16::Backend>> devs;
  devs.push_back(std::make_unique<HoldingDevice>());
  devs.push_back(std::make_unique<HoldingDevice>());
  auto* d0 = static_cast<HoldingDevice*>(devs[0].get());
  auto* d1 = static_cast<HoldingDevice*>(devs[1].get());
  engine::SectorStream s(std::move(devs), 0);
  engine::SectorStream::HeldKey held = s.hold_key(std::move(key));
  CHECK(d0->holds == 1);
  CHECK(d1->holds == 1);
  CHECK(held.host == HoldingDevice::kHost);
  CHECK(held.dropped_bytes == g1_bytes);
  CHECK_FALSE(held.key->h_query.has_points());
  // The reference sector's result still shares the original; once it goes, so do its G1 points.
  CHECK_FALSE(original.expired());
  want.pk.reset();
  CHECK(original.expired());

  const engine::SectorResult got = s.prove(job_with(held.key, 3));
  REQUIRE(got.proofs.size() == 3);
  for (uint32_t k = 0; k < 3; ++k) {
    CHECK(got.proofs[k] == want.proofs[k]);
    CHECK(got.partitions[k].device == k % 2);
    CHECK(groth16::verify(got.pk->vk, got.proofs[k], got.public_inputs[k]));
  }
}

TEST_CASE("hold_key: a backend without a device keeps every query; a held copy is refused by the CPU") {
  std::vector<std::unique_ptr<groth16::Backend>> cpu;
  cpu.push_back(groth16::make_cpu_backend());
  engine::SectorStream s(std::move(cpu), 0);
  auto key = fresh_key();
  const uint64_t bytes = groth16::host_point_bytes(*key);
  engine::SectorStream::HeldKey held = s.hold_key(std::move(key));
  CHECK(held.host == HostQueries{});
  CHECK(held.dropped_bytes == 0);
  CHECK(groth16::host_point_bytes(*held.key) == bytes);
  CHECK(s.prove(job_with(held.key, 1)).proofs.size() == 1);

  // A copy held by devices, handed to the CPU backend: one clear error, no crash.
  std::vector<std::unique_ptr<groth16::Backend>> dev;
  dev.push_back(std::make_unique<HoldingDevice>());
  engine::SectorStream d(std::move(dev), 0);
  const auto dropped = d.hold_key(fresh_key()).key;
  CHECK_THROWS_WITH(s.prove(job_with(dropped, 1)), Catch::Contains("the CPU prover reads the key's A query"));
  CHECK_THROWS_AS(s.hold_key(nullptr), std::invalid_argument);

  // A device that cannot hold the key: its error reaches the caller, the others' uploads done.
  std::vector<std::unique_ptr<groth16::Backend>> two;
  two.push_back(std::make_unique<HoldingDevice>());
  two.push_back(std::make_unique<HoldingDevice>(/*fail=*/true));
  auto* ok = static_cast<HoldingDevice*>(two[0].get());
  engine::SectorStream t(std::move(two), 0);
  CHECK_THROWS_WITH(t.hold_key(fresh_key()), Catch::Contains("out of device memory"));
  CHECK(ok->holds == 1);
}

TEST_CASE("the plan counts only what the host keeps of a held key") {
  const r1cs::ShapeCounts c32 = circuits::porep_shape_by_parts(engine::sector_shape("32g").circuit);
  const uint64_t all = engine::estimate_key_bytes(c32);
  const HostQueries g2{false, false, true, false, false};
  const uint64_t host = engine::estimate_key_host_bytes(c32, g2);
  CHECK(engine::estimate_key_host_bytes(c32, HostQueries{}) == all);
  // What goes: A, B (G1) and L per variable or auxiliary, H per domain element, 104 bytes a point.
  CHECK(all - host == 104 * (2 * (c32.inputs + c32.aux) + c32.aux + (uint64_t(1) << 27)));
  CHECK(host < all / 2);

  engine::SectorPlan p = engine::plan_sector(engine::sector_shape("32g").circuit, 10, 0, 1);
  CHECK(p.key_host_bytes == all);
  CHECK(p.describe().find("GiB resident (estimate") != std::string::npos);
  p.key_host = g2;
  p.key_host_bytes = host;
  CHECK(p.describe().find("held on the device(s); the host keeps the B (G2) query") != std::string::npos);
  p.key_host = HostQueries::none();
  CHECK(p.describe().find("held on the device(s); the host keeps none of them") != std::string::npos);
}

TEST_CASE("cuzk-bench prove --sector --params-in-memory: generated for the run, nothing cached") {
  cuzk::test::TempDir d;
  auto r = cuzk::test::run_bench("prove --sector 2e12x3 --params-in-memory --seed 3 --out out.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("in memory for this run, not cached (--params-in-memory)") != std::string::npos);
  auto plan = cuzk::test::run_bench("prove --sector 2e12x3 --params-in-memory --plan", d.path());
  CHECK(plan.out.find("resident, generated in memory for the run") != std::string::npos);
  CHECK(r.out.find("every proof verified") != std::string::npos);
  // The CPU backend holds nothing on a device: the host keeps the whole key, and the record says so.
  CHECK(r.err.find("held on") == std::string::npos);
  const auto f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.samples.size() == 1);
  const auto& s = f.samples[0].value["sector"];
  CHECK(s["key_host_bytes"] == s["key_bytes"]);
  CHECK(s["key_bytes"].get<uint64_t>() > 0);
  CHECK_FALSE(cuzk::test::exists(d.file("results/local/params/porep-c1-l0-p0-d2-seed1.params")));
}
