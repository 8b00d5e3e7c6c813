// circom's binary .r1cs and .wtns files (iden3 binary container format), read into the same
// synthesis path as native circuits: CircomCircuit::synthesize enforces every constraint on any
// constraint system, so the proving assignment evaluates a, b, c from them.
//
// Container (both formats): magic (4 bytes: "r1cs" / "wtns"), version u32, section count u32,
// then sections {type u32, size u64, size bytes}, in any order; integers little-endian.
//   .r1cs (version 1; https://github.com/iden3/r1csfile/blob/master/doc/r1cs_bin_format.md):
//     section 1 header: field size n8 u32, prime (n8 bytes), nWires u32, nPubOut u32, nPubIn u32,
//       nPrvIn u32, nLabels u64, mConstraints u32
//     section 2 constraints: for each constraint, A, B, C: nTerms u32, then {wire u32, coeff n8}
//     section 3 wire-to-label map (u64 per wire; not needed here); others (custom gates) skipped
//   .wtns (version 2, as snarkjs writes it): section 1: n8 u32, prime, nWitness u32;
//     section 2: nWitness values of n8 bytes.
// Field elements are little-endian in standard (not Montgomery) form and must be < r.
// Wires: 0 is the constant 1, then public outputs, public inputs (these are the R1CS inputs),
// then private inputs and internal signals (auxiliaries).
// Only BLS12-381's Fr is accepted (circom --prime bls12381): any other prime is an error.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/r1cs/shape.hpp"

namespace cuzk::circom {

// A malformed or unsupported file; what() names the file and the fault.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WireTerm {
  uint32_t wire;
  fr_t coeff;
};
struct Constraint {
  std::vector<WireTerm> a, b, c;
};

struct R1csFile {
  uint32_t n_wires = 0;
  uint32_t n_pub_out = 0;
  uint32_t n_pub_in = 0;
  uint32_t n_prv_in = 0;
  uint64_t n_labels = 0;
  std::vector<Constraint> constraints;
  uint32_t num_public() const { return n_pub_out + n_pub_in; }
};

R1csFile parse_r1cs(std::span<const uint8_t> bytes, const std::string& name);
R1csFile read_r1cs(const std::string& path);
std::vector<fr_t> parse_wtns(std::span<const uint8_t> bytes, const std::string& name);
std::vector<fr_t> read_wtns(const std::string& path);

// A circom circuit with (optionally) its witness. Without a witness it still synthesizes, with
// zero values (shape-only passes, `cuzk-bench circuit --describe --r1cs`).
class CircomCircuit {
 public:
  // Throws FormatError when the witness length does not match the wires or witness[0] != 1.
  CircomCircuit(R1csFile r1cs, std::vector<fr_t> witness = {});
  const R1csFile& r1cs() const { return r1cs_; }
  const std::vector<fr_t>& witness() const { return witness_; }
  r1cs::SizeHint size_hint() const;

  template <class CS>
  void synthesize(CS& cs) const {
    using L = typename CS::lc_t;
    std::vector<r1cs::Variable> vars(r1cs_.n_wires);
    vars[0] = r1cs::Variable::one();
    const fr_t zero = fr_t::zero();
    for (uint32_t w = 1; w < r1cs_.n_wires; w++) {
      const fr_t& v = witness_.empty() ? zero : witness_[w];
      vars[w] = w <= r1cs_.num_public() ? cs.alloc_input(v) : cs.alloc(v);
    }
    auto lc = [&](const std::vector<WireTerm>& terms) {
      L out;
      out.reserve(terms.size());
      for (const WireTerm& t : terms) out.add(vars[t.wire], t.coeff);
      return out;
    };
    for (const Constraint& k : r1cs_.constraints) cs.enforce(lc(k.a), lc(k.b), lc(k.c));
  }

 private:
  R1csFile r1cs_;
  std::vector<fr_t> witness_;
};

}  // namespace cuzk::circom
