// fp2_t = Fp[u]/(u^2 + 1), the field of G2 coordinates. Tower and non-residue as in
// draft-irtf-cfrg-pairing-friendly-curves-11 section 4.2.1 (BLS12_381: Fp2 = Fp[u]/(u^2+1),
// Fp6 = Fp2[v]/(v^3 - (u+1)), Fp12 = Fp6[w]/(w^2 - v)) and the zkcrypto bls12_381 crate.
#pragma once
#include "prover/ff/fp.hpp"

namespace cuzk {

struct fp2_t {
  fp_t c0, c1;  // c0 + c1 u

  CUZK_HD static constexpr fp2_t zero() { return fp2_t{fp_t::zero(), fp_t::zero()}; }
  CUZK_HD static constexpr fp2_t one() { return fp2_t{fp_t::one(), fp_t::zero()}; }
  CUZK_HD static fp2_t from_fp(const fp_t& a) { return fp2_t{a, fp_t::zero()}; }
  CUZK_HD static fp2_t from_u64(uint64_t v) { return fp2_t{fp_t::from_u64(v), fp_t::zero()}; }

  CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  CUZK_HD bool is_one() const { return c0.is_one() && c1.is_zero(); }
  CUZK_HD bool operator==(const fp2_t& b) const { return c0 == b.c0 && c1 == b.c1; }
  CUZK_HD bool operator!=(const fp2_t& b) const { return !(*this == b); }

  CUZK_HD fp2_t operator+(const fp2_t& b) const { return fp2_t{c0 + b.c0, c1 + b.c1}; }
  CUZK_HD fp2_t operator-(const fp2_t& b) const { return fp2_t{c0 - b.c0, c1 - b.c1}; }
  CUZK_HD fp2_t operator-() const { return fp2_t{-c0, -c1}; }
  CUZK_HD fp2_t dbl() const { return fp2_t{c0.dbl(), c1.dbl()}; }
  // Karatsuba: (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u
  CUZK_HD fp2_t operator*(const fp2_t& b) const {
#if CUZK_USE_ADX && !defined(__CUDA_ARCH__)
    if (cpu_has_adx()) return mul_adx(*this, b);
#endif
    fp_t t0 = c0 * b.c0;
    fp_t t1 = c1 * b.c1;
    fp_t t2 = (c0 + c1) * (b.c0 + b.c1);
    return fp2_t{t0 - t1, t2 - t0 - t1};
  }
  CUZK_HD fp2_t operator*(const fp_t& b) const { return fp2_t{c0 * b, c1 * b}; }
  // (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u
  CUZK_HD fp2_t sqr() const {
#if CUZK_USE_ADX && !defined(__CUDA_ARCH__)
    if (cpu_has_adx()) return sqr_adx(*this);
#endif
    fp_t t = c0 * c1;
    return fp2_t{(c0 + c1) * (c0 - c1), t.dbl()};
  }
#if CUZK_USE_ADX && !defined(__CUDA_ARCH__)
  // Host, bmi2+adx. The same Karatsuba formula with the reductions delayed: the three products
  // are plain 768-bit integers (mont_adx_wide6::mul) and each coordinate is reduced once
  // (mont_adx_wide6::redc, which needs its input < p R, R = 2^384, and gives < 2p), so two
  // Montgomery reductions instead of three and no modular reduction of the sums. Bounds, with all
  // coordinates < p < 2^381:
  //   a0 + a1, b0 + b1 < 2p < 2^382 (plain 6-limb sums, no carry out)
  //   T0 = a0 b0 < p^2, T1 = a1 b1 < p^2, T2 = (a0 + a1)(b0 + b1) < 4p^2 < 2^764
  //   c1: T2 - T0 - T1 = a0 b1 + a1 b0 in [0, 2p^2), and 2p^2 < p R since 2p < R
  //   c0: T0 - T1 in (-p^2, p^2); when negative (the 768-bit subtraction borrows) add p R, i.e. p
  //       to the high six limbs, giving a value in (p R - p^2, p R); either way in [0, p R)
  static fp2_t mul_adx(const fp2_t& a, const fp2_t& b) {
    uint64_t sa[6], sb[6], t0[12], t1[12], t2[12];
    detail::add_plain<6>(sa, a.c0.l, a.c1.l);
    detail::add_plain<6>(sb, b.c0.l, b.c1.l);
    mont_adx_wide6::mul(t0, a.c0.l, b.c0.l);
    mont_adx_wide6::mul(t1, a.c1.l, b.c1.l);
    mont_adx_wide6::mul(t2, sa, sb);
    detail::sub_plain<12>(t2, t2, t0);  // no borrow: the differences are >= 0 (above)
    detail::sub_plain<12>(t2, t2, t1);
    const uint64_t neg = detail::sub_plain<12>(t0, t0, t1);
    constexpr limbs_t<6> M = fp_params::modulus();
    uint64_t pm[6];
CUZK_FF_UNROLL
    for (int i = 0; i < 6; i++) pm[i] = M.v[i] & (0 - neg);
    detail::add_plain<6>(t0 + 6, t0 + 6, pm);  // carry out = the borrow above: the sum wraps to T0 - T1 + p R
    fp2_t r;
    mont_adx_wide6::redc<fp_params>(r.c0.l, t0);
    mont_adx_wide6::redc<fp_params>(r.c1.l, t2);
    return fp2_t{r.c0.reduce_once(), r.c1.reduce_once()};
  }
  // (a0 + a1)(a0 - a1) + 2 a0 a1 u with the operands of both products left unreduced in [0, 2p):
  // a0 + a1, a0 + (p - a1) and a0 + a0 are plain sums < 2p. mont_adx<6>::mul accepts them: its
  // state stays below 3p + 1 < 2^383, and a product x y < 4p^2 gives (x y + m p) / R < 4p^2 / R + p
  // < 2p (4p < R), so one reduce_once still finishes it.
  static fp2_t sqr_adx(const fp2_t& a) {
    constexpr limbs_t<6> M = fp_params::modulus();
    uint64_t s[6], d[6], a2[6];
    detail::add_plain<6>(s, a.c0.l, a.c1.l);
    detail::sub_plain<6>(d, M.v, a.c1.l);  // p - a1 > 0
    detail::add_plain<6>(d, d, a.c0.l);
    detail::add_plain<6>(a2, a.c0.l, a.c0.l);
    fp2_t r;
    mont_adx<6>::mul<fp_params>(r.c0.l, s, d);
    mont_adx<6>::mul<fp_params>(r.c1.l, a2, a.c1.l);
    return fp2_t{r.c0.reduce_once(), r.c1.reduce_once()};
  }
#endif
  CUZK_HD fp2_t& operator+=(const fp2_t& b) { return *this = *this + b; }
  CUZK_HD fp2_t& operator-=(const fp2_t& b) { return *this = *this - b; }
  CUZK_HD fp2_t& operator*=(const fp2_t& b) { return *this = *this * b; }

  CUZK_HD fp2_t conjugate() const { return fp2_t{c0, -c1}; }
  // norm to Fp: a0^2 + a1^2 = (a0 + a1 u)(a0 - a1 u)
  CUZK_HD fp_t norm() const { return c0.sqr() + c1.sqr(); }
  // multiply by the Fp6 non-residue xi = u + 1: (a0 - a1) + (a0 + a1) u
  CUZK_HD fp2_t mul_by_nonresidue() const { return fp2_t{c0 - c1, c0 + c1}; }
  // inv(0) == 0
  CUZK_HD fp2_t inv() const {
    fp_t n = norm().inv();
    return fp2_t{c0 * n, -(c1 * n)};
  }
  // x -> x^(p^power): conjugation for odd powers (u^p = -u since p = 3 mod 4)
  CUZK_HD fp2_t frobenius_map(int power) const { return (power & 1) ? conjugate() : *this; }

  CUZK_HD fp2_t pow(const uint64_t* exp, int nlimbs) const { return detail::pow_generic(*this, exp, nlimbs); }
  CUZK_HD fp2_t pow(uint64_t e) const { return detail::pow_generic(*this, &e, 1); }

  // Square root for p = 3 mod 4: Adj and Rodriguez-Henriquez, "Square root computation over even
  // extension fields", IEEE Trans. Computers 2014, Algorithm 9. Returns false for non-squares.
  bool sqrt(fp2_t& out) const {
    if (is_zero()) {
      out = zero();
      return true;
    }
    constexpr limbs_t<6> P = fp_params::modulus();
    constexpr limbs_t<6> E1 = detail::shr(detail::sub_small(P, 3), 2);  // (p-3)/4
    constexpr limbs_t<6> E2 = detail::shr(detail::sub_small(P, 1), 1);  // (p-1)/2
    fp2_t a1 = pow(E1.v, 6);
    fp2_t alpha = a1.sqr() * (*this);  // a^((p-1)/2)
    fp2_t x0 = a1 * (*this);
    fp2_t x;
    if (alpha == -one()) {
      x = fp2_t{-x0.c1, x0.c0};  // u * x0
    } else {
      fp2_t b = (alpha + one()).pow(E2.v, 6);
      x = b * x0;
    }
    if (x.sqr() != *this) return false;
    out = x;
    return true;
  }

  // Zcash serialization sign: c1 lexicographically largest, or c1 == 0 and c0 largest
  bool lexicographically_largest() const {
    return c1.lexicographically_largest() || (c1.is_zero() && c0.lexicographically_largest());
  }
  // RFC 9380 sgn0 for GF(p^2)
  CUZK_HD bool sgn0() const {
    bool sign0 = c0.sgn0();
    bool zero0 = c0.is_zero();
    bool sign1 = c1.sgn0();
    return sign0 || (zero0 && sign1);
  }

  template <class Rng>
  static fp2_t random(Rng& g) {
    fp_t a = fp_t::random(g);
    fp_t b = fp_t::random(g);
    return fp2_t{a, b};
  }
};

}  // namespace cuzk
