// BLS12-381 G1: E(Fp): y^2 = x^3 + 4, the order-r subgroup. Constants only; the code is curve.hpp.
//
// Sources for the constants (all agree):
//  - draft-irtf-cfrg-pairing-friendly-curves-11, section 4.2.1 (BLS12_381): p, r, b, G1's (x, y)
//  - zkcrypto/bls12_381 src/g1.rs (G1Affine::generator) and the note "BLS12-381 For The Rest Of
//    Us" (hackmd.io/@benjaminion/bls12-381), section "Generators".
#pragma once
#include <cstdint>
#include <cstdlib>

#include "prover/ec/curve.hpp"
#include "prover/ff/fp.hpp"
#include "prover/ff/fr.hpp"

namespace cuzk {

// r = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001, little-endian limbs.
inline constexpr uint64_t bls12_381_r_limbs[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull,
                                                  0x3339d80809a1d805ull, 0x73eda753299d7d48ull};
// |x| for the BLS parameter x = -0xd201000000010000 (the curve's seed; negative).
inline constexpr uint64_t bls12_381_x_abs = 0xd201000000010000ull;
inline constexpr bool bls12_381_x_is_negative = true;

struct g1_config {
  CUZK_HD static fp_t b() { return fp_t::from_u64(4); }
  static constexpr int order_limbs = 4;
  static const uint64_t* order() { return bls12_381_r_limbs; }
  // Fast membership test (host), defined below.
  static bool in_subgroup(const jacobian_t<fp_t, g1_config>& p);
};

using g1_affine_t = affine_t<fp_t, g1_config>;
using g1_jacobian_t = jacobian_t<fp_t, g1_config>;
using g1_xyzz_t = xyzz_t<fp_t, g1_config>;

namespace detail {
// floor(a / d) for a small divisor (exponents such as (p - 1)/3).
template <int N> limbs_t<N> div_small(limbs_t<N> a, uint64_t d) {
  unsigned __int128 rem = 0;
  for (int i = N - 1; i >= 0; i--) {
    unsigned __int128 cur = (rem << 64) | a.v[i];
    a.v[i] = uint64_t(cur / d);
    rem = cur % d;
  }
  return a;
}
}  // namespace detail

// The G1 endomorphism phi(x, y) = (beta x, y), beta a primitive cube root of unity in Fp. Of
// the two roots, beta is the one for which phi acts on G1 as multiplication by -x^2 (chosen on
// the generator, so no constant needs transcribing).
inline const fp_t& g1_beta();

// P in G1  <=>  phi(P) == -x^2 P, for P on the curve (Bowe, "Faster subgroup checks for BLS12-381",
// eprint 2019/814, and Scott, eprint 2021/1130 section 6 with the proof of eprint 2022/352; the
// zkcrypto/bls12_381 test). Two multiplications by the 64-bit |x| instead of one by the 255-bit r.
inline bool g1_config::in_subgroup(const g1_jacobian_t& p) {
  if (p.is_infinity()) return true;
  g1_jacobian_t phi{p.X * g1_beta(), p.Y, p.Z};
  return phi == -p.mul_by_x_abs(bls12_381_x_abs).mul_by_x_abs(bls12_381_x_abs);
}

namespace detail {
// Big-endian hex (96 digits, no prefix) to a field element; for the constants below only
// (aborts on malformed input, which would be a typo in this file).
inline fp_t fp_from_be_hex(const char* hex) {
  uint8_t bytes[48];
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    std::abort();
  };
  for (int i = 0; i < 48; i++) bytes[i] = uint8_t(nib(hex[2 * i]) << 4 | nib(hex[2 * i + 1]));
  if (hex[96] != '\0') std::abort();
  fp_t r;
  if (!fp_t::from_bytes_be(bytes, r)) std::abort();
  return r;
}
}  // namespace detail

// The standard generator (host), with the coordinates published in the sources above.
inline const g1_affine_t& g1_generator() {
  static const g1_affine_t g = g1_affine_t::from_xy(
      detail::fp_from_be_hex("17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac58"
                             "6c55e83ff97a1aeffb3af00adb22c6bb"),
      detail::fp_from_be_hex("08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3ed"
                             "d03cc744a2888ae40caa232946c5e7e1"));
  return g;
}

inline const fp_t& g1_beta() {
  static const fp_t beta = [] {
    limbs_t<6> e = detail::div_small(detail::sub_small(fp_params::modulus(), 1), 3);  // (p-1)/3
    fp_t w = fp_t::one();
    for (uint64_t g = 2; w.is_one(); g++) w = fp_t::from_u64(g).pow(e.v, 6);  // w^3 = 1, w != 1
    g1_jacobian_t G = g1_jacobian_t::from_affine(g1_generator());
    g1_jacobian_t target = -G.mul_by_x_abs(bls12_381_x_abs).mul_by_x_abs(bls12_381_x_abs);
    return g1_jacobian_t{G.X * w, G.Y, G.Z} == target ? w : w.sqr();
  }();
  return beta;
}

}  // namespace cuzk
