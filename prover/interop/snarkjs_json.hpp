// snarkjs's JSON formats for Groth16 over BLS12-381 (as snarkjs 0.7.x writes and reads them:
// src/groth16_prove.js, src/zkey_export_verificationkey.js, src/groth16_verify.js, and
// ffjavascript's curve toObject/fromObject):
//   proof.json   {"pi_a": [x, y, "1"], "pi_b": [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]],
//                 "pi_c": [x, y, "1"], "protocol": "groth16", "curve": "bls12381"}
//   public.json  ["<decimal>", ...]: the public signals, without the constant one
//   verification_key.json  {"protocol": "groth16", "curve": "bls12381", "nPublic": n,
//                 "vk_alpha_1": G1, "vk_beta_2": G2, "vk_gamma_2": G2, "vk_delta_2": G2,
//                 "vk_alphabeta_12": e(alpha, beta) in Fp12, "IC": [G1 x (n + 1)]}
// Numbers are decimal strings of canonical values. Points are projective triples: z = "1"
// (affine), z = "0" (the point at infinity, written ["0", "1", "0"]), any other z is read as
// Jacobian (x/z^2, y/z^3), as ffjavascript does. vk_alphabeta_12 is nested as
// [[c0.c0, c0.c1, c0.c2], [c1.c0, c1.c1, c1.c2]] with each Fp2 as [re, im] (Fp12 = Fp6[w],
// Fp6 = Fp2[v], the tower both snarkjs and cuzk use); snarkjs's verifier does not read it (nor
// nPublic), but it is written for tools that do, and checked when present.
#pragma once
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/ff/fp12.hpp"
#include "prover/groth16/keys.hpp"

namespace cuzk::interop {

// Malformed JSON or a field that is not what the format requires; what() names the file and
// the field ("proof.json: pi_b[1][0]: ..."). kind() tells a malformed document (bad input)
// from well-formed numbers that are not a valid group element (for a proof: an invalid proof).
class JsonError : public std::runtime_error {
 public:
  enum Kind { kMalformed, kInvalidPoint };
  JsonError(const std::string& what, Kind kind = kMalformed) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// ---- export (JSON text, snarkjs's layout, one space of indentation) ----
std::string proof_to_json(const groth16::Proof& proof);
std::string public_to_json(std::span<const fr_t> public_inputs);
std::string vk_to_json(const groth16::VerifyingKey& vk);  // nPublic = ic.size() - 1

// e(alpha, beta) as snarkjs's vk_alphabeta_12 nests it (decimal strings).
std::string gt_to_json(const fp12_t& f);

// ---- import; `name` (a file name) prefixes every error ----
groth16::Proof proof_from_json(const std::string& text, const std::string& name);
std::vector<fr_t> public_from_json(const std::string& text, const std::string& name);
groth16::VerifyingKey vk_from_json(const std::string& text, const std::string& name);

// ---- files ----
std::string read_text_file(const std::string& path);  // throws JsonError("path: cannot open ...")
// Writes `content` to path.tmp.<pid>, fsyncs, renames over `path`; throws std::runtime_error.
void write_file_atomic(const std::string& path, const std::string& content);
groth16::Proof read_proof_json(const std::string& path);
std::vector<fr_t> read_public_json(const std::string& path);
groth16::VerifyingKey read_vk_json(const std::string& path);

}  // namespace cuzk::interop
