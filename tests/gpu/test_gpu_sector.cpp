// Streamed sectors on the GPU (prover/engine/sector_stream.hpp): the device memory in each
// partition's record, and a sector spread over two GPUs (skipped, visibly, with one).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "cuda/stage/cuda_backend.hpp"
#include "gpu_test_util.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/engine/sector_stream.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/synth/synth.hpp"

namespace {

// A temporary folder with the smallest sector shape's parameters in it.
struct SectorFixture {
  circuits::PorepParams shape{1, 0, 0, 2};
  std::string dir, params;
  SectorFixture() {
    char tmpl[] = "/tmp/cuzk-gpu-sector-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    params = dir + "/p.params";
    groth16::save_params(groth16::generate_keys(synth::record_matrices(circuits::PorepCircuit::generate(shape, 42)), 1),
                         params);
  }
  ~SectorFixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  engine::SectorResult prove(uint32_t devices, uint32_t partitions) const {
    cuda::register_backend();
    std::vector<std::unique_ptr<groth16::Backend>> b;
    for (uint32_t d = 0; d < devices; ++d) b.push_back(groth16::make_backend_on("cuda", d));
    engine::SectorStream s(std::move(b), 0);
    engine::SectorJob j;
    j.circuit = shape;
    j.partitions = partitions;
    j.rs_seed = 5;
    j.params_path = params;
    j.synth_threads = 2;
    return s.prove(j);
  }
};

}  // namespace

TEST_CASE("a sector on the GPU records the device's memory in use after each partition") {
  SectorFixture f;
  const auto r = f.prove(1, 3);
  for (uint32_t k = 0; k < 3; ++k) {
    CHECK(groth16::verify(r.pk->vk, r.proofs[k], r.public_inputs[k]));
    REQUIRE(r.partitions[k].device_used_bytes);
    CHECK(*r.partitions[k].device_used_bytes > 0);  // at least the resident key
  }
  REQUIRE(r.peak_device_used_bytes());
  CHECK(*r.peak_device_used_bytes() >= *r.partitions[0].device_used_bytes);
}

TEST_CASE("a sector over two GPUs: partition k on GPU k mod 2, each proof verifies, gpu_index in the record") {
  const unsigned n = cuda::device_count();
  if (n < 2) {
    WARN("not run: this machine has " << n << " CUDA device(s), the test needs 2");
    return;
  }
  SectorFixture f;
  const auto r = f.prove(2, 4);
  for (uint32_t k = 0; k < 4; ++k) {
    INFO("partition " << k);
    CHECK(r.partitions[k].device == k % 2);
    CHECK(groth16::verify(r.pk->vk, r.proofs[k], r.public_inputs[k]));
    CHECK(r.partitions[k].device_used_bytes);
  }
  // The command line: --gpus 2 names each partition's GPU on its proving phases.
  const char* bench = std::getenv("CUZK_BENCH");
  if (!bench || !*bench) {
    WARN("CUZK_BENCH is not set (ctest sets it): the command-line part not run");
    return;
  }
  const std::string cmd = "cd '" + f.dir + "' && '" + bench +
                          "' prove --sector 2e12x3 --backend cuda --gpus 2 --seed 3 --counters '' --out s.jsonl "
                          ">out.txt 2>err.txt";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(f.dir + "/s.jsonl");
  std::string line;
  bool seen = false;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (!j.contains("sector")) continue;
    seen = true;
    CHECK(j["phases"]["proof/prove/partition_0/msm_h"]["gpu_index"] == 0);
    CHECK(j["phases"]["proof/prove/partition_1/msm_h"]["gpu_index"] == 1);
    CHECK(j["sector"]["devices"] == 2);
  }
  CHECK(seen);
}
