// Optimal ate pairing on BLS12-381: Miller loop and final exponentiation (see pairing.hpp).
#include "prover/pairing/pairing.hpp"

namespace cuzk {

namespace {

// Homogeneous projective point on the twist: x = X/Z, y = Y/Z.
struct g2_homog_t {
  fp2_t X, Y, Z;
};

fp2_t mul_by_fp(const fp2_t& a, const fp_t& s) {
  fp2_t r;
  r.c0 = a.c0 * s;
  r.c1 = a.c1 * s;
  return r;
}

// T <- 2T; returns the tangent line at T (before doubling).
// With B = Y^2, C = Z^2, E = 3b'C, F = 3E, H = 2YZ (CLN 2010, scaled by 4 to avoid halvings):
//   X' = 2XY(B - F),  Y' = (B + F)^2 - 12E^2,  Z' = 4BH
//   line: ell_0 = E - B, ell_x = 3X^2, ell_y = -H
std::array<fp2_t, 3> doubling_step(g2_homog_t& t) {
  fp2_t B = t.Y.sqr();
  fp2_t C = t.Z.sqr();
  fp2_t c3 = C.mul_by_nonresidue();       // C (u + 1)
  c3 = c3.dbl() + c3;                      // 3 (u + 1) C
  fp2_t E = c3.dbl().dbl();                // 12 (u + 1) C = 3 b' C   (b' = 4 (u + 1))
  fp2_t F = E.dbl() + E;
  fp2_t H = (t.Y + t.Z).sqr() - B - C;     // 2YZ
  fp2_t X2 = t.X.sqr();
  std::array<fp2_t, 3> line = {E - B, X2.dbl() + X2, -H};
  fp2_t E2 = E.sqr();
  fp2_t X3 = (t.X * t.Y).dbl() * (B - F);
  fp2_t Y3 = (B + F).sqr() - (E2.dbl() + E2).dbl().dbl();
  fp2_t Z3 = (B * H).dbl().dbl();
  t.X = X3;
  t.Y = Y3;
  t.Z = Z3;
  return line;
}

// T <- T + Q (Q affine, T != +-Q); returns the line through T and Q.
//   th = Y - yQ Z, la = X - xQ Z, C = th^2, D = la^2, E = la D, F = Z C, G = X D,
//   H = E + F - 2G:  X' = la H,  Y' = th (G - H) - Y E,  Z' = Z E
//   line: ell_0 = th xQ - la yQ, ell_x = -th, ell_y = la
std::array<fp2_t, 3> addition_step(g2_homog_t& t, const g2_affine_t& q) {
  fp2_t th = t.Y - q.y * t.Z;
  fp2_t la = t.X - q.x * t.Z;
  fp2_t C = th.sqr();
  fp2_t D = la.sqr();
  fp2_t E = la * D;
  fp2_t F = t.Z * C;
  fp2_t G = t.X * D;
  fp2_t H = E + F - G.dbl();
  std::array<fp2_t, 3> line = {th * q.x - la * q.y, -th, la};
  t.Y = th * (G - H) - t.Y * E;
  t.X = la * H;
  t.Z = t.Z * E;
  return line;
}

// f * line(P)
void ell(fp12_t& f, const std::array<fp2_t, 3>& c, const g1_affine_t& p) {
  f = f.mul_by_014(c[0], mul_by_fp(c[1], p.x), mul_by_fp(c[2], p.y));
}

constexpr int x_top_bit = 63;  // bit length of |x| is 64
bool x_bit(int i) { return (bls12_381_x_abs >> i) & 1; }

}  // namespace

g2_prepared_t g2_prepare(const g2_affine_t& q) {
  g2_prepared_t r;
  r.inf = q.inf;
  if (q.inf) return r;
  g2_homog_t t{q.x, q.y, fp2_t::one()};
  r.coeffs.reserve(70);
  for (int i = x_top_bit - 1; i >= 0; i--) {
    r.coeffs.push_back(doubling_step(t));
    if (x_bit(i)) r.coeffs.push_back(addition_step(t, q));
  }
  return r;
}

fp12_t multi_miller_loop(const std::vector<std::pair<g1_affine_t, const g2_prepared_t*>>& terms) {
  fp12_t f = fp12_t::one();
  size_t idx = 0;
  for (int i = x_top_bit - 1; i >= 0; i--) {
    if (i != x_top_bit - 1) f = f.sqr();
    for (auto& [p, q] : terms)
      if (!p.inf && !q->inf) ell(f, q->coeffs[idx], p);
    idx++;
    if (x_bit(i)) {
      for (auto& [p, q] : terms)
        if (!p.inf && !q->inf) ell(f, q->coeffs[idx], p);
      idx++;
    }
  }
  // x < 0: f_{x,Q} = 1 / f_{|x|,Q}; after the easy part the inverse is the conjugate.
  return bls12_381_x_is_negative ? f.conjugate() : f;
}

fp12_t miller_loop(const g1_affine_t& p, const g2_prepared_t& q) { return multi_miller_loop({{p, &q}}); }

fp12_t miller_loop(const g1_affine_t& p, const g2_affine_t& q) {
  g2_prepared_t qp = g2_prepare(q);
  return miller_loop(p, qp);
}

fp12_t cyclotomic_exp_by_x(const fp12_t& f) {
  fp12_t z = fp12_t::one();
  bool started = false;
  for (int i = x_top_bit; i >= 0; i--) {
    if (started) z = z.cyclotomic_square();
    if (x_bit(i)) {
      z = started ? z * f : f;
      started = true;
    }
  }
  return bls12_381_x_is_negative ? z.conjugate() : z;
}

fp12_t final_exponentiation(const fp12_t& f) {
  // Easy part: f^((p^6 - 1)(p^2 + 1)). f^(p^6) is the conjugate.
  fp12_t t = f.conjugate() * f.inv();
  t = t.frobenius_map(2) * t;
  // Hard part: t^(3 (p^4 - p^2 + 1) / r) with (writing q for the Frobenius p-power)
  //   3 Lambda = q^3 (x-1)^2 + q^2 x (x-1)^2 + q (x-1)^2 (x^2-1) + (x-1)^2 (x^3-x) + 3.
  // Built from five exponentiations by x:  a = t^x, b = a t^-2 = t^(x-2), c = b^x = t^(x^2-2x),
  //   d = c^x = t^(x^3-2x^2), e = d^x * a^2 = t^(x^4-2x^3+2x), g = e^x = t^(x^5-2x^4+2x^2)
  //   result = (a d)^(q^2) (c t)^(q^3) (e t^-1)^q  g b^-1 t
  // where a d = t^(x (x-1)^2), c t = t^((x-1)^2), e t^-1 = t^((x-1)^2 (x^2-1)),
  // g b^-1 t = t^((x-1)^2 (x^3-x) + 3).
  fp12_t tc = t.conjugate();  // t^-1 in the cyclotomic subgroup
  fp12_t a = cyclotomic_exp_by_x(t);
  fp12_t b = a * tc.cyclotomic_square();
  fp12_t c = cyclotomic_exp_by_x(b);
  fp12_t d = cyclotomic_exp_by_x(c);
  fp12_t e = cyclotomic_exp_by_x(d) * a.cyclotomic_square();
  fp12_t g = cyclotomic_exp_by_x(e);
  fp12_t r = (a * d).frobenius_map(2);
  r = r * (c * t).frobenius_map(3);
  r = r * (e * tc).frobenius_map(1);
  r = r * g * b.conjugate() * t;
  return r;
}

fp12_t pairing(const g1_affine_t& p, const g2_affine_t& q) {
  if (p.inf || q.inf) return fp12_t::one();
  return final_exponentiation(miller_loop(p, q));
}

bool multi_pairing_is_one(const std::vector<std::pair<g1_affine_t, const g2_prepared_t*>>& terms) {
  return final_exponentiation(multi_miller_loop(terms)).is_one();
}

bool multi_pairing_is_one(const std::vector<std::pair<g1_affine_t, g2_affine_t>>& terms) {
  std::vector<g2_prepared_t> prepared;
  prepared.reserve(terms.size());
  std::vector<std::pair<g1_affine_t, const g2_prepared_t*>> t;
  t.reserve(terms.size());
  for (auto& [p, q] : terms) {
    prepared.push_back(g2_prepare(q));
    t.emplace_back(p, &prepared.back());
  }
  return multi_pairing_is_one(t);
}

}  // namespace cuzk
