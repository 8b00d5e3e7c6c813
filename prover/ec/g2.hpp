// BLS12-381 G2: the sextic M-twist E'(Fp2): y^2 = x^3 + 4(u + 1), Fp2 = Fp[u]/(u^2 + 1), and its
// order-r subgroup. Constants only; the code is curve.hpp.
//
// Sources for the generator (all agree): draft-irtf-cfrg-pairing-friendly-curves-11, section
// 4.2.1 (x'_0, x'_1, y'_0, y'_1); zkcrypto/bls12_381 src/g2.rs (G2Affine::generator);
// "BLS12-381 For The Rest Of Us" (hackmd.io/@benjaminion/bls12-381), section "Generators".
#pragma once
#include "prover/ec/g1.hpp"
#include "prover/ff/fp2.hpp"

namespace cuzk {

struct g2_config {
  // b' = 4 (u + 1)
  CUZK_HD static fp2_t b() {
    fp2_t r;
    r.c0 = fp_t::from_u64(4);
    r.c1 = fp_t::from_u64(4);
    return r;
  }
  static constexpr int order_limbs = 4;
  static const uint64_t* order() { return bls12_381_r_limbs; }
  // Fast membership test (host), defined below.
  static bool in_subgroup(const jacobian_t<fp2_t, g2_config>& p);
};

using g2_affine_t = affine_t<fp2_t, g2_config>;
using g2_jacobian_t = jacobian_t<fp2_t, g2_config>;
using g2_xyzz_t = xyzz_t<fp2_t, g2_config>;

// The untwist-Frobenius-twist endomorphism psi(x, y) = (conj(x) c_x, conj(y) c_y) with
// c_x = 1/xi^((p-1)/3), c_y = 1/xi^((p-1)/2), xi = u + 1 (from x = x'/w^2, y = y'/w^3 and
// w^6 = xi). Computed once from their definitions.
struct g2_psi_coeffs {
  fp2_t cx, cy;
};
inline const g2_psi_coeffs& g2_psi() {
  static const g2_psi_coeffs c = [] {
    fp2_t xi{fp_t::one(), fp_t::one()};
    limbs_t<6> pm1 = detail::sub_small(fp_params::modulus(), 1);
    limbs_t<6> e3 = detail::div_small(pm1, 3), e2 = detail::shr(pm1, 1);
    return g2_psi_coeffs{xi.pow(e3.v, 6).inv(), xi.pow(e2.v, 6).inv()};
  }();
  return c;
}
inline g2_jacobian_t g2_psi(const g2_jacobian_t& p) {
  const g2_psi_coeffs& c = g2_psi();
  return g2_jacobian_t{p.X.conjugate() * c.cx, p.Y.conjugate() * c.cy, p.Z.conjugate()};
}

// P in G2  <=>  psi(P) == x P, for P on the twist (Scott, eprint 2021/1130 section 4, proof in
// eprint 2022/352; the zkcrypto/bls12_381 test). One multiplication by the 64-bit |x| (x < 0).
inline bool g2_config::in_subgroup(const g2_jacobian_t& p) {
  if (p.is_infinity()) return true;
  return g2_psi(p) == -p.mul_by_x_abs(bls12_381_x_abs);
}

// The standard generator (host): x = x'_0 + x'_1 u, y = y'_0 + y'_1 u.
inline const g2_affine_t& g2_generator() {
  static const g2_affine_t g = [] {
    fp2_t x, y;
    x.c0 = detail::fp_from_be_hex("024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d177"
                                  "0bac0326a805bbefd48056c8c121bdb8");
    x.c1 = detail::fp_from_be_hex("13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049"
                                  "334cf11213945d57e5ac7d055d042b7e");
    y.c0 = detail::fp_from_be_hex("0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c"
                                  "923ac9cc3baca289e193548608b82801");
    y.c1 = detail::fp_from_be_hex("0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab"
                                  "3f370d275cec1da1aaa9075ff05f79be");
    return g2_affine_t::from_xy(x, y);
  }();
  return g;
}

}  // namespace cuzk
