// fp12_t = Fp6[w]/(w^2 - v) (draft-irtf-cfrg-pairing-friendly-curves-11 section 4.2.1), the
// target group field of the BLS12-381 pairing.
//
// Sparse products for the Miller loop. BLS12-381 uses an M-type sextic twist; following the
// zkcrypto bls12_381 convention, a line evaluation is the Fp12 element
//     (c0 + c1 v) + (c4 v) w          i.e. fp6 c0 = (c0, c1, 0), fp6 c1 = (0, c4, 0)
// whose non-zero coefficients, in the basis 1, v, v^2, w, v w, v^2 w, sit at positions 0, 1 and 4:
// f.mul_by_014(c0, c1, c4). mul_by_034(c0, c3, c4) is the D-type analogue for
//     (c0) + (c3 + c4 v) w           i.e. fp6 c0 = (c0, 0, 0), fp6 c1 = (c3, c4, 0).
#pragma once
#include "prover/ff/fp6.hpp"

namespace cuzk {

struct fp12_t {
  fp6_t c0, c1;  // c0 + c1 w

  CUZK_HD static constexpr fp12_t zero() { return fp12_t{fp6_t::zero(), fp6_t::zero()}; }
  CUZK_HD static constexpr fp12_t one() { return fp12_t{fp6_t::one(), fp6_t::zero()}; }

  CUZK_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  CUZK_HD bool is_one() const { return c0.is_one() && c1.is_zero(); }
  CUZK_HD bool operator==(const fp12_t& b) const { return c0 == b.c0 && c1 == b.c1; }
  CUZK_HD bool operator!=(const fp12_t& b) const { return !(*this == b); }

  CUZK_HD fp12_t operator+(const fp12_t& b) const { return fp12_t{c0 + b.c0, c1 + b.c1}; }
  CUZK_HD fp12_t operator-(const fp12_t& b) const { return fp12_t{c0 - b.c0, c1 - b.c1}; }
  CUZK_HD fp12_t operator-() const { return fp12_t{-c0, -c1}; }
  CUZK_HD fp12_t dbl() const { return fp12_t{c0.dbl(), c1.dbl()}; }
  CUZK_HD fp12_t& operator+=(const fp12_t& b) { return *this = *this + b; }
  CUZK_HD fp12_t& operator-=(const fp12_t& b) { return *this = *this - b; }
  CUZK_HD fp12_t& operator*=(const fp12_t& b) { return *this = *this * b; }

  // Karatsuba: (a0 + a1 w)(b0 + b1 w) = a0 b0 + a1 b1 v + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) w
  CUZK_HD fp12_t operator*(const fp12_t& b) const {
    fp6_t t0 = c0 * b.c0;
    fp6_t t1 = c1 * b.c1;
    fp6_t r1 = (c0 + c1) * (b.c0 + b.c1) - t0 - t1;
    return fp12_t{t0 + t1.mul_by_nonresidue(), r1};
  }
  // complex squaring: with t = a0 a1, (a0 + a1 w)^2 = (a0 + a1)(a0 + a1 v) - t - t v + 2 t w
  CUZK_HD fp12_t sqr() const {
    fp6_t t = c0 * c1;
    fp6_t r0 = (c0 + c1) * (c0 + c1.mul_by_nonresidue()) - t - t.mul_by_nonresidue();
    return fp12_t{r0, t.dbl()};
  }
  // conjugation over Fp6 (x -> x^(p^6)); the inverse on the cyclotomic subgroup
  CUZK_HD fp12_t conjugate() const { return fp12_t{c0, -c1}; }
  // inv(0) == 0: (a0 - a1 w) / (a0^2 - a1^2 v)
  CUZK_HD fp12_t inv() const {
    fp6_t d = (c0.sqr() - c1.sqr().mul_by_nonresidue()).inv();
    return fp12_t{c0 * d, -(c1 * d)};
  }

  // this * ((b0 + b1 v) + (b4 v) w): see the header comment
  CUZK_HD fp12_t mul_by_014(const fp2_t& b0, const fp2_t& b1, const fp2_t& b4) const {
    fp6_t aa = c0.mul_by_01(b0, b1);
    fp6_t bb = c1.mul_by_1(b4);
    fp6_t r1 = (c0 + c1).mul_by_01(b0, b1 + b4) - aa - bb;
    return fp12_t{aa + bb.mul_by_nonresidue(), r1};
  }
  // this * (b0 + (b3 + b4 v) w)
  CUZK_HD fp12_t mul_by_034(const fp2_t& b0, const fp2_t& b3, const fp2_t& b4) const {
    fp6_t aa = c0 * b0;
    fp6_t bb = c1.mul_by_01(b3, b4);
    fp6_t r1 = (c0 + c1).mul_by_01(b0 + b3, b4) - aa - bb;
    return fp12_t{aa + bb.mul_by_nonresidue(), r1};
  }

  // x -> x^(p^power): w^(p^k) = gamma[k] w
  CUZK_HD fp12_t frobenius_map(int power) const {
    int k = ((power % 12) + 12) % 12;
    return fp12_t{c0.frobenius_map(k), c1.frobenius_map(k) * frobenius_coeff(k)};
  }

  // Squaring in the cyclotomic subgroup (elements of order dividing p^4 - p^2 + 1, e.g. any
  // f^((p^6-1)(p^2+1))), after
  // Granger and Scott, "Faster Squaring in the Cyclotomic Subgroup of Sixth Degree Extensions",
  // PKC 2010: view Fp12 as Fp4[w]/(w^3 - z) with Fp4 = Fp2[z]/(z^2 - xi), z = w^3, and
  // f = A + B w + C w^2 with A = g0 + h1 z, B = h0 + g2 z, C = g1 + h2 z (f = (g0,g1,g2) + (h0,h1,h2) w).
  // Then f^2 = (3A^2 - 2 conj(A)) + (3 z C^2 + 2 conj(B)) w + (3 B^2 - 2 conj(C)) w^2.
  // Only valid on the cyclotomic subgroup; tests compare it with sqr() there.
  CUZK_HD fp12_t cyclotomic_square() const {
    const fp2_t& g0 = c0.c0;
    const fp2_t& g1 = c0.c1;
    const fp2_t& g2 = c0.c2;
    const fp2_t& h0 = c1.c0;
    const fp2_t& h1 = c1.c1;
    const fp2_t& h2 = c1.c2;
    fp2_t a0, a1, b0, b1, cc0, cc1;
    fp4_square(g0, h1, a0, a1);   // A^2
    fp4_square(h0, g2, b0, b1);   // B^2
    fp4_square(g1, h2, cc0, cc1); // C^2
    // A' = 3 A^2 - 2 conj(A)
    fp2_t A0 = (a0 - g0).dbl() + a0;
    fp2_t A1 = (a1 + h1).dbl() + a1;
    // B' = 3 z C^2 + 2 conj(B); z C^2 = xi cc1 + cc0 z
    fp2_t zc0 = cc1.mul_by_nonresidue();
    fp2_t B0 = (zc0 + h0).dbl() + zc0;
    fp2_t B1 = (cc0 - g2).dbl() + cc0;
    // C' = 3 B^2 - 2 conj(C)
    fp2_t C0 = (b0 - g1).dbl() + b0;
    fp2_t C1 = (b1 + h2).dbl() + b1;
    return fp12_t{fp6_t{A0, C0, B1}, fp6_t{B0, A1, C1}};
  }
  // exponentiation by e using cyclotomic squarings (only on the cyclotomic subgroup)
  CUZK_HD fp12_t cyclotomic_pow(const uint64_t* exp, int nlimbs) const {
    fp12_t r = one();
    bool started = false;
    for (int i = nlimbs - 1; i >= 0; i--) {
      for (int b = 63; b >= 0; b--) {
        if (started) r = r.cyclotomic_square();
        if ((exp[i] >> b) & 1) {
          r = started ? r * (*this) : *this;
          started = true;
        }
      }
    }
    return r;
  }
  CUZK_HD fp12_t cyclotomic_pow(uint64_t e) const { return cyclotomic_pow(&e, 1); }

  CUZK_HD fp12_t pow(const uint64_t* exp, int nlimbs) const { return detail::pow_generic(*this, exp, nlimbs); }
  CUZK_HD fp12_t pow(uint64_t e) const { return detail::pow_generic(*this, &e, 1); }

  template <class Rng>
  static fp12_t random(Rng& g) {
    fp6_t a = fp6_t::random(g);
    fp6_t b = fp6_t::random(g);
    return fp12_t{a, b};
  }

  // (x + y z)^2 in Fp4 = Fp2[z]/(z^2 - xi): (x^2 + xi y^2) + 2 x y z
  CUZK_HD static void fp4_square(const fp2_t& x, const fp2_t& y, fp2_t& r0, fp2_t& r1) {
    fp2_t x2 = x.sqr();
    fp2_t y2 = y.sqr();
    r0 = x2 + y2.mul_by_nonresidue();
    r1 = (x + y).sqr() - x2 - y2;
  }

  // Frobenius coefficients. Values as in the zkcrypto bls12_381 crate (fp12.rs frobenius_map);
  // generated from xi = u + 1 and p, and recomputed by tests/test_ff.cpp from p with pow().
  // gamma[k] = xi^((p^k - 1)/6), Montgomery form, k = 0..11
  CUZK_HD static fp2_t frobenius_coeff(int k) {
    switch (k) {
      case 0:  // xi^((p^0 - 1)/6)
        return fp2_t{fp_t{{0x760900000002fffd, 0xebf4000bc40c0002, 0x5f48985753c758ba, 0x77ce585370525745, 0x5c071a97a256ec6d, 0x15f65ec3fa80e493}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 1:  // xi^((p^1 - 1)/6)
        return fp2_t{fp_t{{0x07089552b319d465, 0xc6695f92b50a8313, 0x97e83cccd117228f, 0xa35baecab2dc29ee, 0x1ce393ea5daace4d, 0x08f2220fb0fb66eb}},
                     fp_t{{0xb2f66aad4ce5d646, 0x5842a06bfc497cec, 0xcf4895d42599d394, 0xc11b9cba40a8e8d0, 0x2e3813cbe5a0de89, 0x110eefda88847faf}}};
      case 2:  // xi^((p^2 - 1)/6)
        return fp2_t{fp_t{{0xecfb361b798dba3a, 0xc100ddb891865a2c, 0x0ec08ff1232bda8e, 0xd5c13cc6f1ca4721, 0x47222a47bf7b5c04, 0x0110f184e51c5f59}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 3:  // xi^((p^3 - 1)/6)
        return fp2_t{fp_t{{0x3e2f585da55c9ad1, 0x4294213d86c18183, 0x382844c88b623732, 0x92ad2afd19103e18, 0x1d794e4fac7cf0b9, 0x0bd592fc7d825ec8}},
                     fp_t{{0x7bcfa7a25aa30fda, 0xdc17dec12a927e7c, 0x2f088dd86b4ebef1, 0xd1ca2087da74d4a7, 0x2da2596696cebc1d, 0x0e2b7eedbbfd87d2}}};
      case 4:  // xi^((p^4 - 1)/6)
        return fp2_t{fp_t{{0x30f1361b798a64e8, 0xf3b8ddab7ece5a2a, 0x16a8ca3ac61577f7, 0xc26a2ff874fd029b, 0x3636b76660701c6e, 0x051ba4ab241b6160}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 5:  // xi^((p^5 - 1)/6)
        return fp2_t{fp_t{{0x3726c30af242c66c, 0x7c2ac1aad1b6fe70, 0xa04007fbba4b14a2, 0xef517c3266341429, 0x0095ba654ed2226b, 0x02e370eccc86f7dd}},
                     fp_t{{0x82d83cf50dbce43f, 0xa2813e53df9d018f, 0xc6f0caa53c65e181, 0x7525cf528d50fe95, 0x4a85ed50f4798a6b, 0x171da0fd6cf8eebd}}};
      case 6:  // xi^((p^6 - 1)/6)
        return fp2_t{fp_t{{0x43f5fffffffcaaae, 0x32b7fff2ed47fffd, 0x07e83a49a2e99d69, 0xeca8f3318332bb7a, 0xef148d1ea0f4c069, 0x040ab3263eff0206}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 7:  // xi^((p^7 - 1)/6)
        return fp2_t{fp_t{{0xb2f66aad4ce5d646, 0x5842a06bfc497cec, 0xcf4895d42599d394, 0xc11b9cba40a8e8d0, 0x2e3813cbe5a0de89, 0x110eefda88847faf}},
                     fp_t{{0x07089552b319d465, 0xc6695f92b50a8313, 0x97e83cccd117228f, 0xa35baecab2dc29ee, 0x1ce393ea5daace4d, 0x08f2220fb0fb66eb}}};
      case 8:  // xi^((p^8 - 1)/6)
        return fp2_t{fp_t{{0xcd03c9e48671f071, 0x5dab22461fcda5d2, 0x587042afd3851b95, 0x8eb60ebe01bacb9e, 0x03f97d6e83d050d2, 0x18f0206554638741}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      case 9:  // xi^((p^9 - 1)/6)
        return fp2_t{fp_t{{0x7bcfa7a25aa30fda, 0xdc17dec12a927e7c, 0x2f088dd86b4ebef1, 0xd1ca2087da74d4a7, 0x2da2596696cebc1d, 0x0e2b7eedbbfd87d2}},
                     fp_t{{0x3e2f585da55c9ad1, 0x4294213d86c18183, 0x382844c88b623732, 0x92ad2afd19103e18, 0x1d794e4fac7cf0b9, 0x0bd592fc7d825ec8}}};
      case 10:  // xi^((p^10 - 1)/6)
        return fp2_t{fp_t{{0x890dc9e4867545c3, 0x2af322533285a5d5, 0x50880866309b7e2c, 0xa20d1b8c7e881024, 0x14e4f04fe2db9068, 0x14e56d3f1564853a}},
                     fp_t{{0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000, 0x0000000000000000}}};
      default:  // xi^((p^11 - 1)/6)
        return fp2_t{fp_t{{0x82d83cf50dbce43f, 0xa2813e53df9d018f, 0xc6f0caa53c65e181, 0x7525cf528d50fe95, 0x4a85ed50f4798a6b, 0x171da0fd6cf8eebd}},
                     fp_t{{0x3726c30af242c66c, 0x7c2ac1aad1b6fe70, 0xa04007fbba4b14a2, 0xef517c3266341429, 0x0095ba654ed2226b, 0x02e370eccc86f7dd}}};
    }
  }
};

}  // namespace cuzk
