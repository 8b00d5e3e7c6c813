// Short Weierstrass curves y^2 = x^3 + b (a = 0), written once for host and device.
//
// Three point forms, all templates over the coordinate field F and a curve config Cfg:
//   affine_t   (x, y, inf)           storage form: SRS bases, serialization
//   jacobian_t (X, Y, Z)             x = X/Z^2, y = Y/Z^3; Z == 0 is the point at infinity
//   xyzz_t     (X, Y, ZZ, ZZZ)       x = X/ZZ,  y = Y/ZZZ, ZZ^3 == ZZZ^2; ZZ == 0 is infinity
//                                    (the bucket form of GPU MSMs: cheap mixed additions)
//
// Cfg supplies:  static CUZK_HD F b();            the curve coefficient, Montgomery form
//                static constexpr int order_limbs; static const uint64_t* order();  (host)
//                optionally static bool in_subgroup(const jacobian_t<F, Cfg>&) (host), a fast
//                membership test replacing r * P == O
// The per-curve files (g1.hpp, g2.hpp) hold only constants.
//
// Formulas are from the Explicit-Formulas Database (hyperelliptic.org/EFD/g1p/auto-shortw-*):
// jacobian: dbl-2009-l, add-1998-cmo-2, madd-2004-hmv; xyzz: dbl-2008-s-1, mdbl-2008-s-1, add-2008-s,
// madd-2008-s. The EFD formulas are incomplete: every function here tests the exceptional cases
// (an input at infinity, P == Q, P == -Q) and falls back to doubling or infinity.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "prover/ff/batch_inverse.hpp"
#include "prover/util/hd.hpp"

namespace cuzk {

template <class F, class Cfg> struct jacobian_t;
template <class F, class Cfg> struct xyzz_t;

template <class F, class Cfg> struct affine_t {
  using field_t = F;
  using config_t = Cfg;
  F x, y;
  bool inf;

  CUZK_HD static affine_t infinity() { return affine_t{F::zero(), F::zero(), true}; }
  CUZK_HD static affine_t from_xy(const F& x, const F& y) { return affine_t{x, y, false}; }
  CUZK_HD bool is_infinity() const { return inf; }
  CUZK_HD bool is_on_curve() const {
    if (inf) return true;
    return y.sqr() == x.sqr() * x + Cfg::b();
  }
  CUZK_HD affine_t operator-() const { return inf ? *this : affine_t{x, -y, false}; }
  CUZK_HD bool operator==(const affine_t& o) const {
    if (inf || o.inf) return inf == o.inf;
    return x == o.x && y == o.y;
  }
  CUZK_HD bool operator!=(const affine_t& o) const { return !(*this == o); }
  CUZK_HD jacobian_t<F, Cfg> to_jacobian() const { return jacobian_t<F, Cfg>::from_affine(*this); }
  CUZK_HD xyzz_t<F, Cfg> to_xyzz() const { return xyzz_t<F, Cfg>::from_affine(*this); }
  // Membership in the prime-order subgroup (host only; see jacobian_t::in_subgroup).
  inline bool in_subgroup() const;
  inline bool in_subgroup_by_order() const;
};

template <class F, class Cfg> struct jacobian_t {
  using field_t = F;
  using config_t = Cfg;
  using affine_type = affine_t<F, Cfg>;
  F X, Y, Z;

  CUZK_HD static jacobian_t infinity() { return jacobian_t{F::one(), F::one(), F::zero()}; }
  CUZK_HD static jacobian_t from_affine(const affine_type& a) {
    return a.inf ? infinity() : jacobian_t{a.x, a.y, F::one()};
  }
  CUZK_HD bool is_infinity() const { return Z.is_zero(); }

  CUZK_HD bool is_on_curve() const {
    if (is_infinity()) return true;
    // Y^2 = X^3 + b Z^6
    F z2 = Z.sqr();
    F z6 = z2.sqr() * z2;
    return Y.sqr() == X.sqr() * X + Cfg::b() * z6;
  }

  CUZK_HD jacobian_t operator-() const { return jacobian_t{X, -Y, Z}; }

  // Projective-aware equality: X1 Z2^2 == X2 Z1^2 and Y1 Z2^3 == Y2 Z1^3.
  CUZK_HD bool operator==(const jacobian_t& o) const {
    bool i1 = is_infinity(), i2 = o.is_infinity();
    if (i1 || i2) return i1 == i2;
    F z1z1 = Z.sqr(), z2z2 = o.Z.sqr();
    if (X * z2z2 != o.X * z1z1) return false;
    return Y * (z2z2 * o.Z) == o.Y * (z1z1 * Z);
  }
  CUZK_HD bool operator!=(const jacobian_t& o) const { return !(*this == o); }
  CUZK_HD bool operator==(const affine_type& a) const { return *this == from_affine(a); }

  // dbl-2009-l (a = 0) with D = 4 X B as a product instead of 2((X + B)^2 - A - C):
  // 3M + 4S, fewer additions (on this field a squaring costs a multiplication, an addition a
  // quarter of one).
  CUZK_HD jacobian_t dbl() const {
    if (is_infinity()) return *this;
    F A = X.sqr();
    F B = Y.sqr();
    F C = B.sqr();
    F D = (X * B).dbl().dbl();
    F E = A.dbl() + A;
    F Fq = E.sqr();
    jacobian_t r;
    r.X = Fq - D.dbl();
    r.Y = E * (D - r.X) - C.dbl().dbl().dbl();
    r.Z = (Y * Z).dbl();
    return r;
  }

  // add-1998-cmo-2: 12M + 4S (the same 16 products as add-2007-bl, fewer additions).
  CUZK_HD jacobian_t add(const jacobian_t& o) const {
    if (is_infinity()) return o;
    if (o.is_infinity()) return *this;
    F z1z1 = Z.sqr(), z2z2 = o.Z.sqr();
    F u1 = X * z2z2, u2 = o.X * z1z1;
    F s1 = Y * (o.Z * z2z2), s2 = o.Y * (Z * z1z1);
    F h = u2 - u1;
    F rr = s2 - s1;
    if (h.is_zero()) return rr.is_zero() ? dbl() : infinity();
    F hh = h.sqr();
    F hhh = h * hh;
    F v = u1 * hh;
    jacobian_t r;
    r.X = rr.sqr() - hhh - v.dbl();
    r.Y = rr * (v - r.X) - s1 * hhh;
    r.Z = Z * o.Z * h;
    return r;
  }

  // madd-2004-hmv (Z2 = 1): 8M + 3S (11 products, as madd-2007-bl, but 6 fewer additions).
  CUZK_HD jacobian_t add(const affine_type& a) const {
    if (a.inf) return *this;
    if (is_infinity()) return from_affine(a);
    F z1z1 = Z.sqr();
    F u2 = a.x * z1z1;
    F s2 = a.y * (Z * z1z1);
    F h = u2 - X;
    F rr = s2 - Y;
    if (h.is_zero()) return rr.is_zero() ? dbl() : infinity();
    F hh = h.sqr();
    F hhh = h * hh;
    F v = X * hh;
    jacobian_t r;
    r.X = rr.sqr() - hhh - v.dbl();
    r.Y = rr * (v - r.X) - Y * hhh;
    r.Z = Z * h;
    return r;
  }

  CUZK_HD jacobian_t operator+(const jacobian_t& o) const { return add(o); }
  CUZK_HD jacobian_t operator+(const affine_type& a) const { return add(a); }
  CUZK_HD jacobian_t operator-(const jacobian_t& o) const { return add(-o); }
  CUZK_HD jacobian_t& operator+=(const jacobian_t& o) { return *this = add(o); }
  CUZK_HD jacobian_t& operator+=(const affine_type& a) { return *this = add(a); }

  CUZK_HD affine_type to_affine() const {
    if (is_infinity()) return affine_type::infinity();
    F zi = Z.inv();
    F zi2 = zi.sqr();
    return affine_type{X * zi2, Y * zi2 * zi, false};
  }

  // k * P for a little-endian scalar of nlimbs 64-bit words (any width; not reduced mod r).
  // Fixed 4-bit windows; not constant time (the prover's scalars are not secret to this code).
  CUZK_HD_NOINLINE jacobian_t mul_limbs(const uint64_t* k, int nlimbs) const {
    jacobian_t table[16];
    table[0] = infinity();
    table[1] = *this;
    for (int i = 2; i < 16; i++) table[i] = (i & 1) ? table[i - 1].add(*this) : table[i / 2].dbl();
    jacobian_t acc = infinity();
    for (int w = nlimbs * 16 - 1; w >= 0; w--) {
      if (!acc.is_infinity()) acc = acc.dbl().dbl().dbl().dbl();
      unsigned d = unsigned(k[w / 16] >> (4 * (w % 16))) & 15u;
      if (d) acc = acc.add(table[d]);
    }
    return acc;
  }
  // k * P for a field element of the scalar field (mont_t<fr_params>: converted to canonical).
  template <class S> jacobian_t mul(const S& s) const {
    uint64_t k[S::N];
    s.to_canonical(k);
    return mul_limbs(k, S::N);
  }
  jacobian_t mul_u64(uint64_t k) const { return mul_limbs(&k, 1); }

  // Multiplication by |x| (the BLS parameter's absolute value), for the endomorphism checks.
  jacobian_t mul_by_x_abs(uint64_t x_abs) const { return mul_limbs(&x_abs, 1); }
  // r * P == O: multiplication by the group order (the definition; slow: 255 doublings).
  bool in_subgroup_by_order() const {
    return mul_limbs(Cfg::order(), Cfg::order_limbs).is_infinity();
  }
  // Membership in the order-r subgroup: the curve's fast test where Cfg has one
  // (Cfg::in_subgroup, e.g. an endomorphism check), else r * P == O.
  bool in_subgroup() const {
    if constexpr (requires(const jacobian_t& p) { Cfg::in_subgroup(p); })
      return Cfg::in_subgroup(*this);
    else
      return in_subgroup_by_order();
  }
};

template <class F, class Cfg> struct xyzz_t {
  using field_t = F;
  using config_t = Cfg;
  using affine_type = affine_t<F, Cfg>;
  F X, Y, ZZ, ZZZ;

  // Any point with ZZ = 0 is infinity (is_infinity reads ZZ alone), so all-zero bytes are one too:
  // the GPU MSM clears its buckets with a memset (cuda/msm/msm.cu, clear_buckets; tests/test_ec.cpp).
  CUZK_HD static xyzz_t infinity() { return xyzz_t{F::one(), F::one(), F::zero(), F::zero()}; }
  CUZK_HD static xyzz_t from_affine(const affine_type& a) {
    return a.inf ? infinity() : xyzz_t{a.x, a.y, F::one(), F::one()};
  }
  CUZK_HD bool is_infinity() const { return ZZ.is_zero(); }
  CUZK_HD xyzz_t operator-() const { return xyzz_t{X, -Y, ZZ, ZZZ}; }

  CUZK_HD bool is_on_curve() const {
    if (is_infinity()) return true;
    // with ZZ = Z^2, ZZZ = Z^3: Y^2 = X^3 + b ZZZ^2 and ZZ^3 == ZZZ^2
    F zzz2 = ZZZ.sqr();
    if (ZZ.sqr() * ZZ != zzz2) return false;
    return Y.sqr() == X.sqr() * X + Cfg::b() * zzz2;
  }

  CUZK_HD bool operator==(const xyzz_t& o) const {
    bool i1 = is_infinity(), i2 = o.is_infinity();
    if (i1 || i2) return i1 == i2;
    return X * o.ZZ == o.X * ZZ && Y * o.ZZZ == o.Y * ZZZ;
  }
  CUZK_HD bool operator!=(const xyzz_t& o) const { return !(*this == o); }

  // dbl-2008-s-1 (a = 0): 6M + 3S.
  CUZK_HD xyzz_t dbl() const {
    if (is_infinity()) return *this;
    F U = Y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = X * V;
    F x2 = X.sqr();
    F M = x2.dbl() + x2;
    xyzz_t r;
    r.X = M.sqr() - S.dbl();
    r.Y = M * (S - r.X) - W * Y;
    r.ZZ = V * ZZ;
    r.ZZZ = W * ZZZ;
    return r;
  }

  // mdbl-2008-s-1: double an affine point into xyzz (4M + 2S; the mixed add's P == Q case).
  CUZK_HD static xyzz_t dbl_affine(const affine_type& a) {
    if (a.inf) return infinity();
    F U = a.y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = a.x * V;
    F x2 = a.x.sqr();
    F M = x2.dbl() + x2;
    xyzz_t r;
    r.X = M.sqr() - S.dbl();
    r.Y = M * (S - r.X) - W * a.y;
    r.ZZ = V;
    r.ZZZ = W;
    return r;
  }

  // add-2008-s: 12M + 2S.
  CUZK_HD xyzz_t add(const xyzz_t& o) const {
    if (is_infinity()) return o;
    if (o.is_infinity()) return *this;
    F U1 = X * o.ZZ, U2 = o.X * ZZ;
    F S1 = Y * o.ZZZ, S2 = o.Y * ZZZ;
    F P = U2 - U1;
    F R = S2 - S1;
    if (P.is_zero()) return R.is_zero() ? dbl() : infinity();
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = U1 * PP;
    xyzz_t r;
    r.X = R.sqr() - PPP - Q.dbl();
    r.Y = R * (Q - r.X) - S1 * PPP;
    r.ZZ = ZZ * o.ZZ * PP;
    r.ZZZ = ZZZ * o.ZZZ * PPP;
    return r;
  }

  // madd-2008-s: 8M + 2S.
  CUZK_HD xyzz_t add(const affine_type& a) const {
    if (a.inf) return *this;
    if (is_infinity()) return from_affine(a);
    F P = a.x * ZZ - X;
    F R = a.y * ZZZ - Y;
    if (P.is_zero()) return R.is_zero() ? dbl_affine(a) : infinity();
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = X * PP;
    xyzz_t r;
    r.X = R.sqr() - PPP - Q.dbl();
    r.Y = R * (Q - r.X) - Y * PPP;
    r.ZZ = ZZ * PP;
    r.ZZZ = ZZZ * PPP;
    return r;
  }

  CUZK_HD xyzz_t operator+(const xyzz_t& o) const { return add(o); }
  CUZK_HD xyzz_t operator+(const affine_type& a) const { return add(a); }
  CUZK_HD xyzz_t& operator+=(const xyzz_t& o) { return *this = add(o); }
  CUZK_HD xyzz_t& operator+=(const affine_type& a) { return *this = add(a); }

  CUZK_HD affine_type to_affine() const {
    if (is_infinity()) return affine_type::infinity();
    F t = (ZZ * ZZZ).inv();  // 1/ZZ = t ZZZ, 1/ZZZ = t ZZ
    return affine_type{X * (t * ZZZ), Y * (t * ZZ), false};
  }
  // To Jacobian without an inversion, choosing Z_j = ZZ ZZZ:
  CUZK_HD jacobian_t<F, Cfg> to_jacobian() const {
    if (is_infinity()) return jacobian_t<F, Cfg>::infinity();
    F zj = ZZ * ZZZ;
    F zzz2 = ZZZ.sqr();
    // X_j = x Z_j^2 = X ZZ ZZZ^2;  Y_j = y Z_j^3 = Y ZZ^3 ZZZ^2 = Y ZZZ^4  (ZZ^3 = ZZZ^2)
    return jacobian_t<F, Cfg>{X * ZZ * zzz2, Y * zzz2.sqr(), zj};
  }
};

template <class F, class Cfg> inline bool affine_t<F, Cfg>::in_subgroup() const {
  return inf || jacobian_t<F, Cfg>::from_affine(*this).in_subgroup();
}
template <class F, class Cfg> inline bool affine_t<F, Cfg>::in_subgroup_by_order() const {
  return inf || jacobian_t<F, Cfg>::from_affine(*this).in_subgroup_by_order();
}

// Montgomery's trick: n points to affine with one field inversion. Points at infinity are
// skipped inside the running product and come out as affine infinity.
template <class F, class Cfg>
void batch_to_affine(const jacobian_t<F, Cfg>* in, affine_t<F, Cfg>* out, size_t n) {
  std::vector<F> prefix(n);
  F acc = F::one();
  for (size_t i = 0; i < n; i++) {
    prefix[i] = acc;
    if (!in[i].is_infinity()) acc = acc * in[i].Z;
  }
  F inv = acc.inv();
  for (size_t i = n; i-- > 0;) {
    if (in[i].is_infinity()) {
      out[i] = affine_t<F, Cfg>::infinity();
      continue;
    }
    F zi = inv * prefix[i];  // 1 / Z_i
    inv = inv * in[i].Z;
    F zi2 = zi.sqr();
    out[i] = affine_t<F, Cfg>{in[i].X * zi2, in[i].Y * zi2 * zi, false};
  }
}

template <class F, class Cfg>
void batch_to_affine(const xyzz_t<F, Cfg>* in, affine_t<F, Cfg>* out, size_t n) {
  std::vector<F> d(n), prefix(n);
  F acc = F::one();
  for (size_t i = 0; i < n; i++) {
    prefix[i] = acc;
    if (!in[i].is_infinity()) {
      d[i] = in[i].ZZ * in[i].ZZZ;
      acc = acc * d[i];
    }
  }
  F inv = acc.inv();
  for (size_t i = n; i-- > 0;) {
    if (in[i].is_infinity()) {
      out[i] = affine_t<F, Cfg>::infinity();
      continue;
    }
    F t = inv * prefix[i];  // 1 / (ZZ ZZZ)
    inv = inv * d[i];
    out[i] = affine_t<F, Cfg>{in[i].X * (t * in[i].ZZZ), in[i].Y * (t * in[i].ZZ), false};
  }
}

// The sum of affine points by pairwise affine additions, a level at a time, with one batched
// inversion per level (Montgomery's trick): about 6 multiplications per addition against 10 for
// an XYZZ mixed addition. For long sums of plain points (the MSM's scalars equal to 1). `pts`
// is scratch: its contents are consumed. A pair with equal x (P == Q, or P == -Q) is added in
// Jacobian form instead, so every input is handled.
template <class F, class Cfg>
jacobian_t<F, Cfg> sum_affine_batched(std::vector<affine_t<F, Cfg>>& pts) {
  using Affine = affine_t<F, Cfg>;
  using Jac = jacobian_t<F, Cfg>;
  Jac extra = Jac::infinity();
  size_t m = 0;
  for (size_t i = 0; i < pts.size(); i++)
    if (!pts[i].inf) pts[m++] = pts[i];
  std::vector<F> d, prefix;
  while (m > 1) {
    const size_t pairs = m / 2;
    d.resize(pairs);
    prefix.resize(pairs);
    for (size_t k = 0; k < pairs; k++) d[k] = pts[2 * k + 1].x - pts[2 * k].x;
    batch_invert_nonzero(d.data(), prefix.data(), pairs);  // d_k becomes 1/d_k (zeros stay)
    // Front to back: slot k is written after slots 2k and 2k+1 (>= k) were read.
    for (size_t k = 0; k < pairs; k++) {
      const Affine p = pts[2 * k], q = pts[2 * k + 1];
      if (d[k].is_zero()) {
        extra = extra + p.to_jacobian() + q.to_jacobian();  // doubling or P + (-P)
        pts[k] = Affine::infinity();
        continue;
      }
      const F lambda = (q.y - p.y) * d[k];
      const F x3 = lambda.sqr() - p.x - q.x;
      pts[k] = Affine{x3, lambda * (p.x - x3) - p.y, false};
    }
    size_t w = 0;
    for (size_t k = 0; k < pairs; k++)
      if (!pts[k].inf) pts[w++] = pts[k];
    if (m % 2) pts[w++] = pts[m - 1];
    m = w;
  }
  return m ? extra + pts[0].to_jacobian() : extra;
}

template <class F, class Cfg>
std::vector<affine_t<F, Cfg>> batch_to_affine(const std::vector<jacobian_t<F, Cfg>>& in) {
  std::vector<affine_t<F, Cfg>> out(in.size());
  batch_to_affine(in.data(), out.data(), in.size());
  return out;
}

}  // namespace cuzk
