// Parameter generation's fixed-base multiplications on the device against the host's.
#include <vector>

#include "catch.hpp"
#include "cuda/keygen/fixed_base.hpp"
#include "gpu_test_util.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/synth/synth.hpp"

TEST_CASE("device fixed-base multiplications equal the host's, chunk edges and special scalars included") {
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  // Not a multiple of the kernel's 16 points a thread; 0, 1 and -1 at the ends of chunks.
  auto s = random_elems<fr_t>(5003, g);
  for (size_t i : {size_t(0), size_t(15), size_t(16), size_t(5002)}) s[i] = fr_t::zero();
  s[1] = fr_t::one();
  s[17] = -fr_t::one();
  auto dev = cuda::make_fixed_base_device(0);
  const auto t1 = groth16::fixed_base_table(g1_generator());
  CHECK(dev->g1(t1, s) == groth16::fixed_base_g1(g1_generator(), s, nullptr));
  if (dev->has_g2()) {
    const auto t2 = groth16::fixed_base_table(g2_generator());
    std::span<const fr_t> few(s.data(), 700);
    CHECK(dev->g2(t2, few) == groth16::fixed_base_g2(g2_generator(), few, nullptr));
  } else {
    WARN("G2 fixed-base kernel not built (CUZK_GPU_G2 off): G2 stays on CPU threads");
  }
  CHECK(dev->g1(t1, std::span<const fr_t>()).empty());
}

TEST_CASE("keys generated with the device are the CPU's, bit for bit") {
  const auto circuit = circuits::PorepCircuit::generate(circuits::PorepParams{2, 0, 0, 3}, 3);
  const auto m = synth::record_matrices(circuit);
  auto dev = cuda::make_fixed_base_device(0);
  const groth16::ProvingKey cpu = groth16::generate_keys(m, 9);
  const groth16::ProvingKey gpu = groth16::generate_keys(m, 9, groth16::KeygenOptions{nullptr, dev.get()});
  CHECK(gpu.same_keys(cpu));
  CHECK(gpu.seed == cpu.seed);
}
