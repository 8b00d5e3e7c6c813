// Eight BLS12-381 Fp elements at once with AVX-512 IFMA (vpmadd52luq/vpmadd52huq), host only.
//
// Why: the CPU G2 MSM (msm_b_g2, on CPU threads beside the GPU) is a stream of independent
// batched affine additions, and the scalar 6x64-bit Montgomery product is bound by its serial
// carry chains (about 110 cycles on the Zen 4 VM). IFMA does eight 52x52-bit multiply-adds per
// instruction into 64-bit accumulators, with no carries between columns, so eight products in
// vertical SIMD (one element per lane) cost about a third of eight scalar ones.
//
// Representation (fp_x8): limb k of lane e holds bits [52k, 52k + 52) of element e, eight limbs
// (416 bits). The value is in the same Montgomery domain as fp_t (x R mod p, R = 2^384), so moving
// between fp_t and fp_x8 is bit repacking only, and lazily reduced: any value in [0, 2p), limbs
// normalized (< 2^52). Products, sums and differences keep [0, 2p); store() reduces to [0, p).
//
// The product is operand scanning: the 16-column 2^52-radix product, then Montgomery reduction
// by 2^384 = seven 52-bit rounds and one 20-bit round, then a 20-bit shift. Bound: for
// a, b < 2p, (a b + m p) / 2^384 < 4p^2 / 2^384 + p < 1.5p (p < 2^381), so results stay < 2p.
//
// Every function here is compiled for avx512f+avx512ifma through a target attribute, so this
// header may be included anywhere; call into it only where cpu_has_ifma() is true (fp_ifma.cpp).
#pragma once
#include "prover/ff/fp2.hpp"

#ifndef CUZK_USE_IFMA
#define CUZK_USE_IFMA 0
#endif

namespace cuzk {
// CPUID says avx512f and avx512ifma and the OS saves the ZMM state (XCR0). Always false in a build
// without CUZK_USE_IFMA; can be turned off at run time for A/B runs (set_ifma_enabled).
bool cpu_has_ifma();
// The switch benchmarks and tests flip to compare the IFMA and scalar paths in one process.
void set_ifma_enabled(bool on);

// Array forms of the vector operations, r[i] = a[i] op b[i] for i < n (any n; fully reduced
// results), for the tests and benchmarks. Call only where cpu_has_ifma().
namespace ifma {
void fp_mul_n(const fp_t* a, const fp_t* b, fp_t* r, size_t n);
void fp_add_n(const fp_t* a, const fp_t* b, fp_t* r, size_t n);
void fp_sub_n(const fp_t* a, const fp_t* b, fp_t* r, size_t n);
void fp2_mul_n(const fp2_t* a, const fp2_t* b, fp2_t* r, size_t n);
void fp2_sqr_n(const fp2_t* a, fp2_t* r, size_t n);
}  // namespace ifma
}  // namespace cuzk

#if CUZK_USE_IFMA && !defined(__CUDA_ARCH__)
#include <immintrin.h>

// Functions that use the vector code are compiled for these extensions; CUZK_IFMA_FN marks the
// inline building blocks below.
#define CUZK_IFMA_TARGET __attribute__((target("avx512f,avx512ifma")))
#define CUZK_IFMA_FN __attribute__((target("avx512f,avx512ifma"), always_inline)) inline
// Every loop over limbs or columns is unrolled: the limbs and columns are arrays of vectors, and
// only fully unrolled code keeps them in registers (a rolled loop indexes them in memory).
#define CUZK_IFMA_UNROLL _Pragma("GCC unroll 64")

namespace cuzk::ifma {

constexpr int kLimbs = 8;
constexpr uint64_t kMask52 = (uint64_t(1) << 52) - 1;

// 52-bit limbs of a 6 x 64-bit integer (bits at or past 384 read as 0).
constexpr uint64_t limb52(const uint64_t* w, int k) {
  const int bit = 52 * k, i = bit / 64, off = bit % 64;
  if (i >= 6) return 0;
  uint64_t v = w[i] >> off;
  if (off > 12 && i + 1 < 6) v |= w[i + 1] << (64 - off);
  return v & kMask52;
}
struct Consts {
  uint64_t p[kLimbs], two_p[kLimbs];
};
constexpr Consts make_consts() {
  Consts c{};
  constexpr limbs_t<6> m = fp_params::modulus();
  uint64_t two[6]{}, carry = 0;
  for (int i = 0; i < 6; ++i) {
    two[i] = (m.v[i] << 1) | carry;
    carry = m.v[i] >> 63;
  }
  for (int k = 0; k < kLimbs; ++k) {
    c.p[k] = limb52(m.v, k);
    c.two_p[k] = limb52(two, k);
  }
  return c;
}
inline constexpr Consts kConsts = make_consts();
static_assert(limb52(fp_params::modulus().v, 7) < (uint64_t(1) << 17), "p < 2^381");

// alignas: outside an avx512f function GCC gives __m512i only 16-byte alignment, and the vector
// code loads these with aligned moves.
struct alignas(64) fp_x8 {
  __m512i l[kLimbs];
};
struct alignas(64) fp2_x8 {
  fp_x8 c0, c1;
};

CUZK_IFMA_FN __m512i bc(uint64_t v) { return _mm512_set1_epi64(int64_t(v)); }
// Byte offsets (first + e) * stride of lanes e = 0..7: eight consecutive array elements.
CUZK_IFMA_FN __m512i lane_offsets(uint64_t first, uint64_t stride) {
  return _mm512_add_epi64(bc(first * stride), _mm512_set_epi64(int64_t(7 * stride), int64_t(6 * stride), int64_t(5 * stride),
                                                               int64_t(4 * stride), int64_t(3 * stride), int64_t(2 * stride),
                                                               int64_t(stride), 0));
}
// Lanes e with first + e < n, the rest masked off.
CUZK_IFMA_FN __mmask8 live_lanes(size_t first, size_t n) {
  return n - first >= 8 ? __mmask8(0xff) : __mmask8((1u << (n - first)) - 1);
}

// Carry limbs 0..7 into each other (arithmetic shifts: limbs may be negative); the top limb keeps
// the sign. Returns nothing: r is normalized in place.
CUZK_IFMA_FN void carry8(__m512i* r) {
  const __m512i m = bc(kMask52);
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs - 1; ++k) {
    r[k + 1] = _mm512_add_epi64(r[k + 1], _mm512_srai_epi64(r[k], 52));
    r[k] = _mm512_and_si512(r[k], m);
  }
}

// r = t if t >= 0 else t + c (c = 2p or p): t is a normalized signed value whose sign is its top
// limb's.
CUZK_IFMA_FN void add_if_negative(fp_x8& r, __m512i* t, const uint64_t* c) {
  const __mmask8 neg = _mm512_cmplt_epi64_mask(t[kLimbs - 1], _mm512_setzero_si512());
  __m512i u[kLimbs];
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) u[k] = _mm512_add_epi64(t[k], bc(c[k]));
  carry8(u);
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) r.l[k] = _mm512_mask_blend_epi64(neg, t[k], u[k]);
}

// a + b mod p in [0, 2p): the sum minus 2p, plus 2p back where that went negative.
CUZK_IFMA_FN fp_x8 add(const fp_x8& a, const fp_x8& b) {
  __m512i t[kLimbs];
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) t[k] = _mm512_sub_epi64(_mm512_add_epi64(a.l[k], b.l[k]), bc(kConsts.two_p[k]));
  carry8(t);
  fp_x8 r;
  add_if_negative(r, t, kConsts.two_p);
  return r;
}
// a - b mod p in [0, 2p)
CUZK_IFMA_FN fp_x8 sub(const fp_x8& a, const fp_x8& b) {
  __m512i t[kLimbs];
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) t[k] = _mm512_sub_epi64(a.l[k], b.l[k]);
  carry8(t);
  fp_x8 r;
  add_if_negative(r, t, kConsts.two_p);
  return r;
}
// t[0..16) += a * b, the 2^52-radix schoolbook product (columns collect lo and hi halves).
CUZK_IFMA_FN void mul_acc(__m512i* t, const fp_x8& a, const fp_x8& b) {
  CUZK_IFMA_UNROLL
  for (int i = 0; i < kLimbs; ++i)
    CUZK_IFMA_UNROLL
    for (int j = 0; j < kLimbs; ++j) {
      t[i + j] = _mm512_madd52lo_epu64(t[i + j], a.l[i], b.l[j]);
      t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a.l[i], b.l[j]);
    }
}

// t / 2^384 mod p for 0 <= t < 8 p^2 (columns in (-2^62, 2^62), carried with arithmetic shifts),
// result < 2p. Each round makes column i a
// multiple of 2^52 (m = t_i (-1/p) mod 2^52, using only t_i's low 52 bits, which is all IFMA
// reads) and carries it on; the last round clears 20 more bits so that 7 * 52 + 20 = 384.
CUZK_IFMA_FN fp_x8 redc(__m512i* t) {
  const __m512i zero = _mm512_setzero_si512(), pinv = bc(fp_params::INV & kMask52);
  CUZK_IFMA_UNROLL
  for (int i = 0; i < 7; ++i) {
    const __m512i m = _mm512_madd52lo_epu64(zero, t[i], pinv);
    CUZK_IFMA_UNROLL
    for (int j = 0; j < kLimbs; ++j) {
      t[i + j] = _mm512_madd52lo_epu64(t[i + j], m, bc(kConsts.p[j]));
      t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], m, bc(kConsts.p[j]));
    }
    t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srai_epi64(t[i], 52));
  }
  const __m512i m = _mm512_and_si512(_mm512_madd52lo_epu64(zero, t[7], pinv), bc((uint64_t(1) << 20) - 1));
  CUZK_IFMA_UNROLL
  for (int j = 0; j < kLimbs; ++j) {
    t[7 + j] = _mm512_madd52lo_epu64(t[7 + j], m, bc(kConsts.p[j]));
    t[8 + j] = _mm512_madd52hi_epu64(t[8 + j], m, bc(kConsts.p[j]));
  }
  const __m512i mask = bc(kMask52);
  CUZK_IFMA_UNROLL
  for (int k = 7; k < 15; ++k) {
    t[k + 1] = _mm512_add_epi64(t[k + 1], _mm512_srai_epi64(t[k], 52));
    t[k] = _mm512_and_si512(t[k], mask);
  }
  fp_x8 r;  // (t[7..15] in 52-bit limbs) >> 20; the value is < 2p < 2^382, so t[15] is 0
  CUZK_IFMA_UNROLL
  for (int j = 0; j < kLimbs; ++j)
    r.l[j] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(t[7 + j], 20), _mm512_slli_epi64(t[8 + j], 32)), mask);
  return r;
}

CUZK_IFMA_FN void zero16(__m512i* t) {
  CUZK_IFMA_UNROLL
  for (int k = 0; k < 16; ++k) t[k] = _mm512_setzero_si512();
}

CUZK_IFMA_FN fp_x8 mul(const fp_x8& a, const fp_x8& b) {
  __m512i t[16];
  zero16(t);
  mul_acc(t, a, b);
  return redc(t);
}

// a + b without reduction (< 4p for a, b < 2p), limbs normalized: a product's operand.
CUZK_IFMA_FN fp_x8 add_plain(const fp_x8& a, const fp_x8& b) {
  fp_x8 r;
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) r.l[k] = _mm512_add_epi64(a.l[k], b.l[k]);
  carry8(r.l);
  return r;
}

// Karatsuba with one reduction per coordinate, on the 16 product columns:
//   c1 = (a0 + a1)(b0 + b1) - a0 b0 - a1 b1 = a0 b1 + a1 b0 < 8p^2
//   c0 = a0 b0 - a1 b1 + 4p^2 in (0, 8p^2) (4p^2 is a multiple of p above any a1 b1)
// Columns may go negative on the way; redc carries with arithmetic shifts and reads only each
// column's low 52 bits (two's complement), so only the final values' bounds matter. Three
// products instead of four: the products' multiply-adds are what bound this code.
struct FourPSquared {
  uint64_t col[16];
};
constexpr FourPSquared make_four_p_squared() {
  constexpr limbs_t<6> m = fp_params::modulus();
  uint64_t sq[13]{};  // p^2, then times 4
  for (int i = 0; i < 6; ++i) {
    unsigned __int128 carry = 0;
      for (int j = 0; j < 6; ++j) {
      const unsigned __int128 t = (unsigned __int128)m.v[i] * m.v[j] + sq[i + j] + carry;
      sq[i + j] = uint64_t(t);
      carry = t >> 64;
    }
    sq[i + 6] += uint64_t(carry);
  }
  for (int i = 12; i > 0; --i) sq[i] = (sq[i] << 2) | (sq[i - 1] >> 62);
  sq[0] <<= 2;
  FourPSquared f{};
  for (int k = 0; k < 16; ++k) {
    const int bit = 52 * k, i = bit / 64, off = bit % 64;
    if (i >= 12) continue;
    uint64_t v = sq[i] >> off;
    if (off > 12 && i + 1 < 13) v |= sq[i + 1] << (64 - off);
    f.col[k] = v & kMask52;
  }
  return f;
}
inline constexpr FourPSquared kFourPSquared = make_four_p_squared();

CUZK_IFMA_FN fp2_x8 mul(const fp2_x8& a, const fp2_x8& b) {
  __m512i t0[16], t1[16], t2[16];
  zero16(t0);
  zero16(t1);
  zero16(t2);
  mul_acc(t0, a.c0, b.c0);
  mul_acc(t1, a.c1, b.c1);
  mul_acc(t2, add_plain(a.c0, a.c1), add_plain(b.c0, b.c1));
  CUZK_IFMA_UNROLL
  for (int k = 0; k < 16; ++k) {
    t2[k] = _mm512_sub_epi64(t2[k], _mm512_add_epi64(t0[k], t1[k]));
    t0[k] = _mm512_add_epi64(_mm512_sub_epi64(t0[k], t1[k]), bc(kFourPSquared.col[k]));
  }
  return {redc(t0), redc(t2)};
}
// (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u
CUZK_IFMA_FN fp2_x8 sqr(const fp2_x8& a) {
  fp2_x8 r;
  r.c0 = mul(add(a.c0, a.c1), sub(a.c0, a.c1));
  r.c1 = mul(add(a.c0, a.c0), a.c1);
  return r;
}
CUZK_IFMA_FN fp2_x8 sub(const fp2_x8& a, const fp2_x8& b) { return {sub(a.c0, b.c0), sub(a.c1, b.c1)}; }

// Lanes whose value is 0 mod p (0 or p in the lazy range).
CUZK_IFMA_FN __mmask8 is_zero(const fp_x8& a) {
  __mmask8 z = 0xff, zp = 0xff;
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) {
    z &= _mm512_cmpeq_epi64_mask(a.l[k], _mm512_setzero_si512());
    zp &= _mm512_cmpeq_epi64_mask(a.l[k], bc(kConsts.p[k]));
  }
  return z | zp;
}
CUZK_IFMA_FN __mmask8 is_zero(const fp2_x8& a) { return is_zero(a.c0) & is_zero(a.c1); }

CUZK_IFMA_FN fp_x8 blend(__mmask8 take_b, const fp_x8& a, const fp_x8& b) {
  fp_x8 r;
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) r.l[k] = _mm512_mask_blend_epi64(take_b, a.l[k], b.l[k]);
  return r;
}
CUZK_IFMA_FN fp2_x8 blend(__mmask8 take_b, const fp2_x8& a, const fp2_x8& b) {
  return {blend(take_b, a.c0, b.c0), blend(take_b, a.c1, b.c1)};
}

// Lane e from the fp_t at byte address base + off[e]: six gathered words repacked into 52-bit
// limbs. The value is taken as is (an fp_t is < p).
CUZK_IFMA_FN fp_x8 load_fp(const void* base, __m512i off) {
  __m512i w[6];
  CUZK_IFMA_UNROLL
  for (int i = 0; i < 6; ++i)
    w[i] = _mm512_i64gather_epi64(_mm512_add_epi64(off, bc(8 * uint64_t(i))), base, 1);
  fp_x8 r;
  const __m512i mask = bc(kMask52);
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) {
    const int bit = 52 * k, i = bit / 64, off_bits = bit % 64;
    __m512i v = _mm512_srli_epi64(w[i], unsigned(off_bits));
    if (off_bits > 12 && i + 1 < 6) v = _mm512_or_si512(v, _mm512_slli_epi64(w[i + 1], unsigned(64 - off_bits)));
    r.l[k] = _mm512_and_si512(v, mask);
  }
  return r;
}
// The 6 x 64-bit words of a value < 2^384 (no reduction), word i in w[i].
CUZK_IFMA_FN void to_words(const fp_x8& a, __m512i* w) {
  CUZK_IFMA_UNROLL
  for (int i = 0; i < 6; ++i) {
    __m512i v = _mm512_setzero_si512();
    CUZK_IFMA_UNROLL
    for (int k = 0; k < kLimbs; ++k) {
      const int sh = 52 * k - 64 * i;  // limb k's bit 0 sits at bit sh of word i
      if (sh >= 64 || sh <= -52) continue;
      v = _mm512_or_si512(v, sh >= 0 ? _mm512_slli_epi64(a.l[k], unsigned(sh)) : _mm512_srli_epi64(a.l[k], unsigned(-sh)));
    }
    w[i] = v;
  }
}
// Fully reduced ([0, p)) words, scattered to base + off[e] for the lanes in `lanes`.
CUZK_IFMA_FN void store(void* base, __m512i off, const fp_x8& a, __mmask8 lanes = 0xff) {
  __m512i t[kLimbs];
  CUZK_IFMA_UNROLL
  for (int k = 0; k < kLimbs; ++k) t[k] = _mm512_sub_epi64(a.l[k], bc(kConsts.p[k]));
  carry8(t);
  fp_x8 r;
  add_if_negative(r, t, kConsts.p);
  __m512i w[6];
  to_words(r, w);
  CUZK_IFMA_UNROLL
  for (int i = 0; i < 6; ++i)
    _mm512_mask_i64scatter_epi64(base, lanes, _mm512_add_epi64(off, bc(8 * uint64_t(i))), w[i], 1);
}

CUZK_IFMA_FN fp2_x8 load_fp2(const void* base, __m512i off) {
  return {load_fp(base, off), load_fp(base, _mm512_add_epi64(off, bc(sizeof(fp_t))))};
}
CUZK_IFMA_FN void store(void* base, __m512i off, const fp2_x8& a, __mmask8 lanes = 0xff) {
  store(base, off, a.c0, lanes);
  store(base, _mm512_add_epi64(off, bc(sizeof(fp_t))), a.c1, lanes);
}

}  // namespace cuzk::ifma
#endif
