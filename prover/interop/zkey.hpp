// snarkjs Groth16 proving keys (.zkey) for BLS12-381, read into a ProvingKey with the snarkjs
// H convention, plus the A and B constraint coefficients that a .zkey carries so that a, b, c
// can be evaluated from a full circom witness (.wtns wire values) without the .r1cs.
//
// Format (read from snarkjs 0.7.x: src/zkey_utils.js writeHeader/writeZKey/readHeaderGroth16,
// src/zkey_new.js processConstraints, src/groth16_prove.js buildABC1; the iden3 binary container
// of @iden3/binfileutils): magic "zkey", version u32 (1; 2 is accepted as snarkjs does), section
// count u32, then sections {type u32, size u64, bytes}; integers little-endian.
//   1  header: protocol u32 (1 = Groth16)
//   2  Groth16 header: n8q u32 (48), q (n8q bytes), n8r u32 (32), r (n8r bytes), nVars u32,
//      nPublic u32 (public signals without the constant one), domainSize u32, then alpha_1 (G1),
//      beta_1 (G1), beta_2 (G2), gamma_2 (G2), delta_1 (G1), delta_2 (G2)
//   3  IC: nPublic + 1 G1 points
//   4  coefficients: count u32, then {matrix u32 (0 = A, 1 = B), constraint u32, signal u32,
//      value n8r bytes}; C is not stored: snarkjs evaluates C as A∘B row by row. Rows
//      nConstraints .. nConstraints + nPublic hold A = 1 on signal s (s = 0..nPublic), the
//      input-consistency rows.
//   5  A: nVars G1;  6  B1: nVars G1;  7  B2: nVars G2;  8  C (our L): nVars - nPublic - 1 G1
//   9  H: domainSize G1 (absorbing the Lagrange basis of the odd coset and 1/Z);  10 contributions
// Encodings: field elements little-endian in Montgomery form (R = 2^384 mod q for Fq coordinates,
// the same R as fp_t); G1 = x, y; G2 = x.c0, x.c1, y.c0, y.c1; the point at infinity all zero.
// The section-4 values are "doubly Montgomery": the bytes hold v * R^2 mod r (R = 2^256), which
// snarkjs multiplies by the standard-form witness bytes with a Montgomery product to get v * w
// in Montgomery form.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/groth16/keys.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/r1cs/shape.hpp"

namespace cuzk {
class ThreadPool;
}
namespace cuzk::circom {
struct R1csFile;
}

namespace cuzk::interop {

// A malformed, truncated or unsupported .zkey, or a witness/r1cs that does not match it; what()
// starts with the file name and names the fault.
class ZkeyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ZkeyCircuit {
  groth16::ProvingKey pk;  // convention kSnarkjs; num_constraints = rows with coefficients
  uint64_t n_vars = 0;     // wires, the constant one included (= the .wtns length)
  uint64_t n_public = 0;   // public signals (outputs, then public inputs), without the one
  // A and B of section 4 in CSR form: row = constraint (domain row), column = wire.
  // Both have pk.num_constraints rows.
  r1cs::CsrMatrix A, B;
  // snarkjs numbers its domain with other roots of unity than ours (ffjavascript: powers of the
  // smallest quadratic non-residue, 5; ours: of 7): its primitive 2n-th root is ours^k, k odd.
  // compute_abc puts snarkjs's row c at our index k c mod n, and pk.h_query is reordered on load
  // (snarkjs's H point j -> our index i with 2i + 1 = k (2j + 1) mod 2n), so that prove_cpu's
  // compute_h (odd coset, our roots) lines up with the zkey's points.
  uint64_t root_exponent = 1;
};

// Parses a whole .zkey image; `name` prefixes every error ("name: what").
ZkeyCircuit parse_zkey(std::span<const uint8_t> bytes, const std::string& name, ThreadPool* pool = nullptr);
ZkeyCircuit read_zkey(const std::string& path, ThreadPool* pool = nullptr);

// The constraint evaluations snarkjs proves with: a = A z, b = B z, c = a∘b, as domain_size
// values in OUR domain order (row c at index root_exponent * c mod n, zeros elsewhere).
// `wires` is the full witness (wire 0 == 1).
struct Abc {
  std::vector<fr_t> a, b, c;
};
// Throws ZkeyError("<wtns_name>: ...") when the witness length differs from n_vars or wire 0 != 1.
Abc compute_abc(const ZkeyCircuit& z, std::span<const fr_t> wires, const std::string& wtns_name,
                ThreadPool* pool = nullptr);

// The prover's view of (wires, abc): input = wires[0..n_public], aux = the rest. The spans
// point into `wires` and `abc`, which must outlive the result.
groth16::Witness make_witness(const ZkeyCircuit& z, std::span<const fr_t> wires, const Abc& abc);

// Checks that a circom .r1cs describes the zkey's circuit: the same wires and public signals,
// and the same A and B terms per constraint (as multisets of (wire, coefficient)), with the
// input-consistency rows after the constraints. Throws ZkeyError naming the first difference.
void check_r1cs_matches(const ZkeyCircuit& z, const circom::R1csFile& r1cs, const std::string& zkey_name,
                        const std::string& r1cs_name);

// Index of the first constraint of `r1cs` that `wires` violates (<A,z> <B,z> != <C,z>), -1 when
// all hold. Throws ZkeyError when the witness length differs from the r1cs's wires.
int64_t first_unsatisfied(const circom::R1csFile& r1cs, std::span<const fr_t> wires, const std::string& r1cs_name,
                          ThreadPool* pool = nullptr);

// Test and benchmark keys, NOT a trusted setup: a snarkjs-format Groth16 .zkey (version 1, all
// ten sections, no contributions) for a circom r1cs, from the toxic waste of
// groth16::ToxicWaste::from_seed(seed), laid out in snarkjs's own domain order (its roots of
// unity), so that `snarkjs groth16 prove` and cuzk prove with the same file. For circuit c over
// the rows (constraints, then the input-consistency rows) of a domain of n points with Lagrange
// basis L_c: A_s = u_s(tau), B_s = v_s(tau) (G1, G2), IC_s = (beta u_s + alpha v_s + w_s)/gamma,
// C_s = (beta u_s + alpha v_s + w_s)/delta, H_j = L^(2n)_(2j+1)(tau)/delta (the odd points of
// the 2n-point domain). It exists because a snarkjs powers-of-tau ceremony of 2^17 takes hours in
// WebAssembly on two cores (scripts/bench-snarkjs.sh).
std::vector<uint8_t> setup_zkey(const circom::R1csFile& r1cs, uint64_t seed, ThreadPool* pool = nullptr);

}  // namespace cuzk::interop
