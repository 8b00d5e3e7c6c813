// The PoRep-shaped circuit's shape by arithmetic: the counts of PorepCircuit::shape (constraints,
// variables, non-zeros) for any size, from at most four small instances of the circuit (one or
// two challenges, at most three layers) and the column hash alone, scaled up. The work does not
// grow with --challenges or --layers, so `circuit --describe` and the memory checks before a
// proof answer for sizes whose circuit could never be built here.
//
// Why scaling is exact: every challenge synthesizes the same gadgets whatever the witness, so
// the counts are F + challenges * G(layers); within a challenge, every label after the first
// costs the same (its message differs only in the constant layer number), and the column hash
// (Poseidon-8 over the labels, in chunks) is counted on its own. tests/test_limits.cpp checks the
// result against the shape pass over a grid of sizes.
#pragma once
#include <cstdint>

#include "prover/circuits/porep.hpp"
#include "prover/r1cs/shape.hpp"

namespace cuzk::circuits {

// Equal to PorepCircuit::shape(params) for valid params; throws std::invalid_argument when
// params.validate() fails.
r1cs::ShapeCounts porep_shape_by_parts(const PorepParams& params);

// Estimated peak memory, in bytes, of proving `partitions` partitions of a circuit of shape `s`
// with generated parameters: the proving key's points (104 bytes per G1 point, 200 per G2:
// a, b_g1, b_g2 per variable, h per domain element, l per auxiliary, ic per input), plus the
// larger of the key generation's evaluations (32 bytes for four vectors per variable and one
// per domain element; it keeps no matrices) and the proof's vectors (a, b, c and the assignment of every
// partition, 32 bytes per constraint and variable, and 4 domain-sized vectors for H).
// docs/reliability.md, "Limits of the machine".
uint64_t groth16_prove_bytes(const r1cs::ShapeCounts& s, uint64_t partitions);

// The proving key's share of that estimate: the bytes the parameters hold while resident.
uint64_t groth16_key_bytes(const r1cs::ShapeCounts& s);

}  // namespace cuzk::circuits
