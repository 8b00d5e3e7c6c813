// fp_t: the 381-bit base field of BLS12-381, 6 limbs, Montgomery form (R = 2^384).
#pragma once
#include "prover/ff/mont.hpp"

namespace cuzk {

struct fp_params {
  static constexpr int N = 6;
  static constexpr int BITS = 381;
  // p = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab
  // Source: draft-irtf-cfrg-pairing-friendly-curves-11, section 4.2.1 (BLS12_381: p); the same value
  // is p = (x-1)^2 (x^4 - x^2 + 1)/3 + x for x = -0xd201000000010000 (zkcrypto bls12_381 crate docs).
  // tests/test_ff.cpp recomputes p from x.
  CUZK_HD static constexpr limbs_t<6> modulus() {
    return {{0xb9feffffffffaaab, 0x1eabfffeb153ffff, 0x6730d2a0f6b0f624, 0x64774b84f38512bf,
             0x4b1ba7b6434bacd7, 0x1a0111ea397fe69a}};
  }
  // R = 2^384 mod p (Montgomery form of 1). Derived from p; checked by tests/test_ff.cpp.
  CUZK_HD static constexpr limbs_t<6> r() {
    return {{0x760900000002fffd, 0xebf4000bc40c0002, 0x5f48985753c758ba, 0x77ce585370525745,
             0x5c071a97a256ec6d, 0x15f65ec3fa80e493}};
  }
  // R^2 mod p. Derived from p; checked by tests/test_ff.cpp.
  CUZK_HD static constexpr limbs_t<6> r2() {
    return {{0xf4df1f341c341746, 0x0a76e6a609d104f1, 0x8de5476c4c95b6d5, 0x67eb88a9939d83c0,
             0x9a793e85b519952d, 0x11988fe592cae3aa}};
  }
  // -p^{-1} mod 2^64. Derived from p; checked by tests/test_ff.cpp.
  static constexpr uint64_t INV = 0x89f3fffcfffcfffd;
};

using fp_t = mont_t<fp_params>;

}  // namespace cuzk
