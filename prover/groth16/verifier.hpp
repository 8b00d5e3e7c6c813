// Groth16 verification with one multi-pairing: e(A, B) = e(alpha, beta) e(IC(x), gamma) e(C, delta).
#pragma once
#include <span>

#include "prover/groth16/keys.hpp"

namespace cuzk::groth16 {

// `public_inputs` excludes the constant one (ic[0]). Throws std::invalid_argument when the
// number of public inputs does not match the key; returns false for a proof that fails.
bool verify(const VerifyingKey& vk, const Proof& proof, std::span<const fr_t> public_inputs);

}  // namespace cuzk::groth16
