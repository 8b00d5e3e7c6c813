// Groth16 parameter generation from seeded toxic waste (deterministic, for benchmarks and
// tests: the same matrices and seed give the same keys). Not a trusted setup.
#pragma once
#include "prover/groth16/keys.hpp"
#include "prover/r1cs/shape.hpp"

namespace cuzk {
class ThreadPool;
}

namespace cuzk::groth16 {

// The toxic waste derived from a seed: tau, alpha, beta, gamma, delta (all non-zero).
struct ToxicWaste {
  fr_t tau, alpha, beta, gamma, delta;
  static ToxicWaste from_seed(uint64_t seed);
};

// Keys for the circuit whose constraints are `m` (which must include bellman's input
// constraints, as r1cs::enforce_input_constraints appends them).
ProvingKey generate_keys(const r1cs::R1csMatrices& m, uint64_t seed, ThreadPool* pool = nullptr);
ProvingKey generate_keys(const r1cs::R1csMatrices& m, const ToxicWaste& tw, ThreadPool* pool = nullptr);

// k_i * G for many scalars and one base, with a shared window table (multi-threaded).
std::vector<g1_affine_t> fixed_base_g1(const g1_affine_t& base, std::span<const fr_t> scalars, ThreadPool* pool);
std::vector<g2_affine_t> fixed_base_g2(const g2_affine_t& base, std::span<const fr_t> scalars, ThreadPool* pool);

}  // namespace cuzk::groth16
