// fp6_t = Fp2[v]/(v^3 - xi), xi = u + 1 (draft-irtf-cfrg-pairing-friendly-curves-11 section 4.2.1).
// Sparse products mul_by_1 / mul_by_01 serve fp12_t::mul_by_014 (Miller loop line evaluation).
#pragma once
#include "prover/ff/fp2.hpp"

namespace cuzk {

struct fp6_t {
  fp2_t c0, c1, c2;  // c0 + c1 v + c2 v^2

  CUZK_HD static constexpr fp6_t zero() { return fp6_t{fp2_t::zero(), fp2_t::zero(), fp2_t::zero()}; }
  CUZK_HD static constexpr fp6_t one() { return fp6_t{fp2_t::one(), fp2_t::zero(), fp2_t::zero()}; }
  CUZK_HD static fp6_t from_fp2(const fp2_t& a) { return fp6_t{a, fp2_t::zero(), fp2_t::zero()}; }

  CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  CUZK_HD bool is_one() const { return c0.is_one() && c1.is_zero() && c2.is_zero(); }
  CUZK_HD bool operator==(const fp6_t& b) const { return c0 == b.c0 && c1 == b.c1 && c2 == b.c2; }
  CUZK_HD bool operator!=(const fp6_t& b) const { return !(*this == b); }

  CUZK_HD fp6_t operator+(const fp6_t& b) const { return fp6_t{c0 + b.c0, c1 + b.c1, c2 + b.c2}; }
  CUZK_HD fp6_t operator-(const fp6_t& b) const { return fp6_t{c0 - b.c0, c1 - b.c1, c2 - b.c2}; }
  CUZK_HD fp6_t operator-() const { return fp6_t{-c0, -c1, -c2}; }
  CUZK_HD fp6_t dbl() const { return fp6_t{c0.dbl(), c1.dbl(), c2.dbl()}; }
  CUZK_HD fp6_t& operator+=(const fp6_t& b) { return *this = *this + b; }
  CUZK_HD fp6_t& operator-=(const fp6_t& b) { return *this = *this - b; }
  CUZK_HD fp6_t& operator*=(const fp6_t& b) { return *this = *this * b; }

  // Karatsuba over the cubic extension (Devegili, O hEigeartaigh, Scott, Dahab, "Multiplication and
  // Squaring on Pairing-Friendly Fields", 2006, section 4): 6 Fp2 products.
  CUZK_HD fp6_t operator*(const fp6_t& b) const {
    fp2_t t0 = c0 * b.c0;
    fp2_t t1 = c1 * b.c1;
    fp2_t t2 = c2 * b.c2;
    fp2_t r0 = ((c1 + c2) * (b.c1 + b.c2) - t1 - t2).mul_by_nonresidue() + t0;
    fp2_t r1 = (c0 + c1) * (b.c0 + b.c1) - t0 - t1 + t2.mul_by_nonresidue();
    fp2_t r2 = (c0 + c2) * (b.c0 + b.c2) - t0 - t2 + t1;
    return fp6_t{r0, r1, r2};
  }
  CUZK_HD fp6_t operator*(const fp2_t& b) const { return fp6_t{c0 * b, c1 * b, c2 * b}; }
  // schoolbook squaring: (a0 + a1 v + a2 v^2)^2 = a0^2 + 2 a1 a2 xi + (2 a0 a1 + a2^2 xi) v + (a1^2 + 2 a0 a2) v^2
  CUZK_HD fp6_t sqr() const {
    fp2_t s0 = c0.sqr();
    fp2_t s1 = c1.sqr();
    fp2_t s2 = c2.sqr();
    fp2_t m01 = (c0 * c1).dbl();
    fp2_t m02 = (c0 * c2).dbl();
    fp2_t m12 = (c1 * c2).dbl();
    return fp6_t{s0 + m12.mul_by_nonresidue(), m01 + s2.mul_by_nonresidue(), s1 + m02};
  }
  // multiply by v: (a0 + a1 v + a2 v^2) v = a2 xi + a0 v + a1 v^2 (the Fp12 non-residue)
  CUZK_HD fp6_t mul_by_nonresidue() const { return fp6_t{c2.mul_by_nonresidue(), c0, c1}; }
  // multiply by b1 v
  CUZK_HD fp6_t mul_by_1(const fp2_t& b1) const {
    return fp6_t{(c2 * b1).mul_by_nonresidue(), c0 * b1, c1 * b1};
  }
  // multiply by b0 + b1 v (5 Fp2 products, Karatsuba on the (c0, c1) part)
  CUZK_HD fp6_t mul_by_01(const fp2_t& b0, const fp2_t& b1) const {
    fp2_t t0 = c0 * b0;
    fp2_t t1 = c1 * b1;
    fp2_t r0 = (c2 * b1).mul_by_nonresidue() + t0;
    fp2_t r1 = (c0 + c1) * (b0 + b1) - t0 - t1;
    fp2_t r2 = c2 * b0 + t1;
    return fp6_t{r0, r1, r2};
  }
  // inverse (inv(0) == 0): with A = a0^2 - xi a1 a2, B = xi a2^2 - a0 a1, C = a1^2 - a0 a2,
  // a^{-1} = (A + B v + C v^2) / (a0 A + xi (a2 B + a1 C))
  CUZK_HD fp6_t inv() const {
    fp2_t A = c0.sqr() - (c1 * c2).mul_by_nonresidue();
    fp2_t B = c2.sqr().mul_by_nonresidue() - c0 * c1;
    fp2_t C = c1.sqr() - c0 * c2;
    fp2_t F = c0 * A + (c2 * B + c1 * C).mul_by_nonresidue();
    fp2_t Fi = F.inv();
    return fp6_t{A * Fi, B * Fi, C * Fi};
  }
  // x -> x^(p^power): v^(p^k) = gamma1[k] v, (v^2)^(p^k) = gamma2[k] v^2
  CUZK_HD fp6_t frobenius_map(int power) const {
    int k = ((power % 6) + 6) % 6;
    return fp6_t{c0.frobenius_map(k), c1.frobenius_map(k) * frobenius_coeff_c1(k),
                 c2.frobenius_map(k) * frobenius_coeff_c2(k)};
  }

  CUZK_HD fp6_t pow(const uint64_t* exp, int nlimbs) const { return detail::pow_generic(*this, exp, nlimbs); }
  CUZK_HD fp6_t pow(uint64_t e) const { return detail::pow_generic(*this, &e, 1); }

  template <class Rng>
  static fp6_t random(Rng& g) {
    fp2_t a = fp2_t::random(g);
    fp2_t b = fp2_t::random(g);
    fp2_t c = fp2_t::random(g);
    return fp6_t{a, b, c};
  }

  // Frobenius coefficients. Values as in the zkcrypto bls12_381 crate (fp6.rs frobenius_map);
  // generated from xi = u + 1 and p, and recomputed by tests/test_ff.cpp from p with pow().
  // gamma1[k] = xi^((p^k - 1)/3), Montgomery form, k = 0..5
  CUZK_HD static fp2_t frobenius_coeff_c1(int k) {
    switch (k) {
      case 0:  // xi^((p^0 - 1)/3)
        return fp2_t{fp_t{{0x760900000002fffd, 0xebf4000bc40c0002, 0x5f48985753c758ba, 0x77ce585370525745, 0x5c071a97a256ec6d, 0x15f65ec3fa80e493}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 1:  // xi^((p^1 - 1)/3)
        return fp2_t{fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}},
                     fp_t{{0xcd03c9e48671f071, 0x5dab22461fcda5d2, 0x587042afd3851b95, 0x8eb60ebe01bacb9e, 0x03f97d6e83d050d2, 0x18f0206554638741}}};
      case 2:  // xi^((p^2 - 1)/3)
        return fp2_t{fp_t{{0x30f1361b798a64e8, 0xf3b8ddab7ece5a2a, 0x16a8ca3ac61577f7, 0xc26a2ff874fd029b, 0x3636b76660701c6e, 0x051ba4ab241b6160}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 3:  // xi^((p^3 - 1)/3)
        return fp2_t{fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}},
                     fp_t{{0x760900000002fffd, 0xebf4000bc40c0002, 0x5f48985753c758ba, 0x77ce585370525745, 0x5c071a97a256ec6d, 0x15f65ec3fa80e493}}};
      case 4:  // xi^((p^4 - 1)/3)
        return fp2_t{fp_t{{0xcd03c9e48671f071, 0x5dab22461fcda5d2, 0x587042afd3851b95, 0x8eb60ebe01bacb9e, 0x03f97d6e83d050d2, 0x18f0206554638741}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      default:  // xi^((p^5 - 1)/3)
        return fp2_t{fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}},
                     fp_t{{0x30f1361b798a64e8, 0xf3b8ddab7ece5a2a, 0x16a8ca3ac61577f7, 0xc26a2ff874fd029b, 0x3636b76660701c6e, 0x051ba4ab241b6160}}};
    }
  }
  // gamma2[k] = xi^(2(p^k - 1)/3), Montgomery form, k = 0..5
  CUZK_HD static fp2_t frobenius_coeff_c2(int k) {
    switch (k) {
      case 0:  // xi^(2(p^0 - 1)/3)
        return fp2_t{fp_t{{0x760900000002fffd, 0xebf4000bc40c0002, 0x5f48985753c758ba, 0x77ce585370525745, 0x5c071a97a256ec6d, 0x15f65ec3fa80e493}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 1:  // xi^(2(p^1 - 1)/3)
        return fp2_t{fp_t{{0x890dc9e4867545c3, 0x2af322533285a5d5, 0x50880866309b7e2c, 0xa20d1b8c7e881024, 0x14e4f04fe2db9068, 0x14e56d3f1564853a}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 2:  // xi^(2(p^2 - 1)/3)
        return fp2_t{fp_t{{0xcd03c9e48671f071, 0x5dab22461fcda5d2, 0x587042afd3851b95, 0x8eb60ebe01bacb9e, 0x03f97d6e83d050d2, 0x18f0206554638741}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 3:  // xi^(2(p^3 - 1)/3)
        return fp2_t{fp_t{{0x43f5fffffffcaaae, 0x32b7fff2ed47fffd, 0x07e83a49a2e99d69, 0xeca8f3318332bb7a, 0xef148d1ea0f4c069, 0x040ab3263eff0206}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 4:  // xi^(2(p^4 - 1)/3)
        return fp2_t{fp_t{{0x30f1361b798a64e8, 0xf3b8ddab7ece5a2a, 0x16a8ca3ac61577f7, 0xc26a2ff874fd029b, 0x3636b76660701c6e, 0x051ba4ab241b6160}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      default:  // xi^(2(p^5 - 1)/3)
        return fp2_t{fp_t{{0xecfb361b798dba3a, 0xc100ddb891865a2c, 0x0ec08ff1232bda8e, 0xd5c13cc6f1ca4721, 0x47222a47bf7b5c04, 0x0110f184e51c5f59}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
    }
  }
};

}  // namespace cuzk
