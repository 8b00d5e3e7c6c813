// The Groth16 proving stage on the CPU (the reference backend): H through NTTs, the five MSMs
// named per the architecture document, and proof assembly.
#pragma once
#include <span>
#include <vector>

#include "prover/groth16/keys.hpp"

namespace cuzk {
class ThreadPool;
}

namespace cuzk::groth16 {

// What synthesis produced for one circuit: the evaluations of the constraints' A, B, C
// combinations (one per constraint, input constraints included) and the assignment.
struct Witness {
  std::span<const fr_t> a, b, c;
  std::span<const fr_t> input;  // input[0] == 1
  std::span<const fr_t> aux;
};

// The Witness view of a synthesized circuit (r1cs::ProvingAssignment or anything with the same
// accessors); the spans point into `pa`, which must outlive the result.
template <class Assignment>
Witness witness_of(const Assignment& pa) {
  return Witness{pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()};
}

// The prover's blinding factors.
struct Randomness {
  fr_t r, s;
  static Randomness from_seed(uint64_t seed);  // reproducible benchmarks; the seed is recorded
  static Randomness secure();                  // getrandom(2): a cryptographic source
};

// H's MSM scalars in the key's convention: bellman gives the n-1 coefficients of
// H = (A B - C) / Z; snarkjs gives the n evaluations of A B - C on the odd coset of the
// 2n-th roots. Phase: ntt_h (relative to the caller's open phase).
std::vector<fr_t> compute_h(HConvention conv, const Witness& w, uint64_t domain_size, ThreadPool* pool = nullptr);

// Checks the witness against the key's shape (lengths); throws std::invalid_argument naming
// the mismatch.
void check_witness_shape(const ProvingKey& pk, const Witness& w);

// The CPU proving stage. Phases opened under the caller's: ntt_h, msm_h, msm_l, msm_a,
// msm_b_g1, msm_b_g2, assemble.
Proof prove_cpu(const ProvingKey& pk, const Witness& w, const Randomness& rs, ThreadPool* pool = nullptr);

// Assembles the proof from the MSM results (shared by every backend).
struct MsmResults {
  g1_jacobian_t h, l, a, b_g1;
  g2_jacobian_t b_g2;
};
Proof assemble(const ProvingKey& pk, const MsmResults& m, const Randomness& rs);

}  // namespace cuzk::groth16
