// fr_t: the 255-bit scalar field of BLS12-381 (the order r of G1, G2, GT), 4 limbs, Montgomery
// form (R = 2^256). Two-adicity 32: fr_t::two_adicity(), fr_t::root_of_unity(k) serve the NTT.
#pragma once
#include "prover/ff/mont.hpp"

namespace cuzk {

struct fr_params {
  static constexpr int N = 4;
  static constexpr int BITS = 255;
  // r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
  // Source: draft-irtf-cfrg-pairing-friendly-curves-11, section 4.2.1 (BLS12_381: r); the same value
  // is r = x^4 - x^2 + 1 for x = -0xd201000000010000 (zkcrypto bls12_381 crate docs).
  // tests/test_ff.cpp recomputes r from x.
  CUZK_HD static constexpr limbs_t<4> modulus() {
    return {{0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48}};
  }
  // R = 2^256 mod r. Derived; checked by tests/test_ff.cpp.
  CUZK_HD static constexpr limbs_t<4> r() {
    return {{0x00000001fffffffe, 0x5884b7fa00034802, 0x998c4fefecbc4ff5, 0x1824b159acc5056f}};
  }
  // R^2 mod r. Derived; checked by tests/test_ff.cpp.
  CUZK_HD static constexpr limbs_t<4> r2() {
    return {{0xc999e990f3f29c6d, 0x2b6cedcb87925c23, 0x05d314967254398f, 0x0748d9d99f59ff11}};
  }
  // -r^{-1} mod 2^64. Derived; checked by tests/test_ff.cpp.
  static constexpr uint64_t INV = 0xfffffffeffffffff;
  // Multiplicative generator of Fr^*: 7 (zkcrypto bls12_381, scalar.rs GENERATOR; also the
  // generator used by bellman/bellperson's NTT). tests/test_ff.cpp checks that 7 is a non-square
  // and that 7^((r-1)/2^32) has order exactly 2^32.
  static constexpr uint64_t GENERATOR = 7;
  // w = 7^t, t = (r-1)/2^32 (odd): a primitive 2^32-th root of unity, Montgomery form.
  // Canonical value 0x16a2a19edfe81f20d09b681922c813b4b63683508c2280b93829971f439f0d2b
  // (zkcrypto bls12_381 scalar.rs ROOT_OF_UNITY); tests/test_ff.cpp recomputes it as 7^t.
  CUZK_HD static constexpr limbs_t<4> root_of_unity() {
    return {{0xb9b58d8c5f0e466a, 0x5b1b4c801819d7ec, 0x0af53ae352a31e64, 0x5bf3adda19e9b27b}};
  }
};

using fr_t = mont_t<fr_params>;

}  // namespace cuzk
