// Montgomery arithmetic over N 64-bit limbs, written once for host and device.
//
// mont_t<P> holds an element of GF(p) in Montgomery form (x * R mod p, R = 2^(64N)), little-endian
// limbs, always fully reduced (< p), so limb equality is field equality. P supplies the constants
// (see fp.hpp, fr.hpp):
//   N, BITS                      limb count, bit length of p
//   modulus(), r(), r2()         p, R mod p, R^2 mod p as limbs_t<N> (constexpr functions, so that
//                                device code can read them: nvcc cannot index host constexpr arrays)
//   INV                          -p^{-1} mod 2^64
// The multiplication requires one spare bit at the top (p < 2^(64N-1) - 1), which lets every
// intermediate of the interleaved (CIOS) Montgomery product fit N+1 limbs and every sum a+b fit
// N limbs; both BLS12-381 fields satisfy it (checked by static_assert).
//
// Host multiplication uses the BMI2/ADX assembly of mont_x86.hpp when CUZK_USE_ADX is 1 and the CPU
// has bmi2+adx (checked once at run time); otherwise, and always on the device, the portable path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "prover/ff/carry_chain.hpp"
#include "prover/util/hd.hpp"

#if defined(__x86_64__) && !defined(__CUDACC__)
#include <x86intrin.h>
#endif

#ifndef CUZK_USE_ADX
#define CUZK_USE_ADX 0
#endif

// full unrolling of the fixed-length limb loops (nvcc, clang, gcc spell it differently)
#if defined(__CUDACC__) || defined(__clang__)
#define CUZK_FF_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define CUZK_FF_UNROLL _Pragma("GCC unroll 16")
#else
#define CUZK_FF_UNROLL
#endif

namespace cuzk {

template <int N>
struct limbs_t {
  uint64_t v[N];
};

namespace detail {

// ---- single-limb primitives (portable; device uses __umul64hi) ----

// Host x86-64 (plain C++ compilers): the compiler intrinsics map to adc/sbb chains. nvcc's host
// pass and the device use the portable comparisons.
#if defined(__x86_64__) && !defined(__CUDACC__)
#define CUZK_FF_X86_CARRY 1
#endif

// returns a + b + carry_in, carry = carry out (0/1)
CUZK_HD uint64_t addc(uint64_t a, uint64_t b, uint64_t& carry) {
#if defined(CUZK_FF_X86_CARRY)
  unsigned long long r;
  carry = _addcarry_u64((unsigned char)carry, a, b, &r);
  return r;
#else
  uint64_t s = a + carry;
  uint64_t c1 = s < carry;
  uint64_t r = s + b;
  carry = c1 | (r < b);
  return r;
#endif
}

// returns a - b - borrow_in, borrow = borrow out (0/1)
CUZK_HD uint64_t subb(uint64_t a, uint64_t b, uint64_t& borrow) {
#if defined(CUZK_FF_X86_CARRY)
  unsigned long long r;
  borrow = _subborrow_u64((unsigned char)borrow, a, b, &r);
  return r;
#else
  uint64_t d = a - b;
  uint64_t b1 = a < b;
  uint64_t r = d - borrow;
  borrow = b1 | (d < borrow);
  return r;
#endif
}

// returns low limb of a + b*c + carry, carry = high limb (never overflows 128 bits)
CUZK_HD uint64_t mac(uint64_t a, uint64_t b, uint64_t c, uint64_t& carry) {
#if defined(__CUDA_ARCH__)
  uint64_t lo = b * c;
  uint64_t hi = __umul64hi(b, c);
  lo += a;
  hi += lo < a;
  lo += carry;
  hi += lo < carry;
  carry = hi;
  return lo;
#else
  unsigned __int128 t = (unsigned __int128)b * c + a + carry;
  carry = (uint64_t)(t >> 64);
  return (uint64_t)t;
#endif
}


// ---- constexpr limb helpers used to derive exponents from the modulus ----

template <int N>
constexpr limbs_t<N> sub_small(limbs_t<N> a, uint64_t s) {
  for (int i = 0; i < N; i++) {
    uint64_t t = a.v[i];
    a.v[i] = t - s;
    s = t < s ? 1 : 0;
  }
  return a;
}

template <int N>
constexpr limbs_t<N> add_small(limbs_t<N> a, uint64_t s) {
  for (int i = 0; i < N; i++) {
    uint64_t t = a.v[i] + s;
    s = t < s ? 1 : 0;
    a.v[i] = t;
  }
  return a;
}

template <int N>
constexpr limbs_t<N> shr(limbs_t<N> a, int k) {  // 0 <= k < 64
  if (k == 0) return a;
  for (int i = 0; i < N; i++) a.v[i] = (a.v[i] >> k) | (i + 1 < N ? a.v[i + 1] << (64 - k) : 0);
  return a;
}

template <int N>
constexpr int ctz(const limbs_t<N>& a) {
  int n = 0;
  for (int i = 0; i < N; i++) {
    uint64_t w = a.v[i];
    if (w == 0) {
      n += 64;
      continue;
    }
    while ((w & 1) == 0) {
      w >>= 1;
      n++;
    }
    return n;
  }
  return n;
}

template <int N>
constexpr limbs_t<N> shr_any(limbs_t<N> a, int k) {
  while (k >= 63) {
    a = shr(a, 63);
    k -= 63;
  }
  return shr(a, k);
}

// square-and-multiply from the most significant bit; T needs one(), sqr(), operator*
template <class T>
CUZK_HD T pow_generic(const T& x, const uint64_t* exp, int nlimbs) {
  T r = T::one();
  bool started = false;
  for (int i = nlimbs - 1; i >= 0; i--) {
    for (int b = 63; b >= 0; b--) {
      if (started) r = r.sqr();
      if ((exp[i] >> b) & 1) {
        r = started ? r * x : x;
        started = true;
      }
    }
  }
  return r;
}

}  // namespace detail

#if CUZK_USE_ADX && !defined(__CUDA_ARCH__)
template <int N>
struct mont_adx;  // specialised in mont_x86.hpp for N = 4 and N = 6
inline bool cpu_has_adx();
#endif

template <class P>
struct mont_t {
  static constexpr int N = P::N;
  static constexpr int BITS = P::BITS;
  static constexpr int BYTES = N * 8;
  uint64_t l[N];  // Montgomery form, little-endian limbs, < p

  static_assert(P::modulus().v[N - 1] < (~uint64_t(0) >> 1) - 1,
                "mont_t needs a spare top bit in the modulus");

  // ---- derived constants (constexpr, usable on device through local copies) ----
  CUZK_HD static constexpr limbs_t<N> modulus() { return P::modulus(); }
  static constexpr int two_adicity() { return detail::ctz(detail::sub_small(P::modulus(), 1)); }
  // (p-1)/2: the largest canonical value that is not "lexicographically largest"
  CUZK_HD static constexpr limbs_t<N> half_p() { return detail::shr(detail::sub_small(P::modulus(), 1), 1); }

  // ---- construction ----
  CUZK_HD static constexpr mont_t zero() {
    mont_t r{};
    return r;
  }
  CUZK_HD static constexpr mont_t one() {
    mont_t r{};
    constexpr limbs_t<N> R = P::r();
    for (int i = 0; i < N; i++) r.l[i] = R.v[i];
    return r;
  }
  CUZK_HD static mont_t from_raw(const uint64_t* limbs) {  // limbs already in Montgomery form
    mont_t r;
    for (int i = 0; i < N; i++) r.l[i] = limbs[i];
    return r;
  }
  // canonical integer (< p, NOT checked) to Montgomery form
  CUZK_HD static mont_t from_canonical(const uint64_t* limbs) {
    mont_t a, r2;
    constexpr limbs_t<N> R2 = P::r2();
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) {
      a.l[i] = limbs[i];
      r2.l[i] = R2.v[i];
    }
    return a * r2;
  }
  CUZK_HD static mont_t from_u64(uint64_t v) {
    uint64_t t[N] = {};
    t[0] = v;
    if constexpr (N == 1) {  // keep < p for a hypothetical 1-limb field
      constexpr limbs_t<N> M = P::modulus();
      t[0] = v % M.v[0];
    }
    return from_canonical(t);
  }
  CUZK_HD void to_canonical(uint64_t* out) const {
    mont_t o{};
    o.l[0] = 1;
    mont_t c = (*this) * o;
    for (int i = 0; i < N; i++) out[i] = c.l[i];
  }

  // ---- predicates ----
  CUZK_HD bool is_zero() const {
    uint64_t acc = 0;
    for (int i = 0; i < N; i++) acc |= l[i];
    return acc == 0;
  }
  CUZK_HD bool is_one() const { return *this == one(); }
  CUZK_HD bool operator==(const mont_t& b) const {
    uint64_t acc = 0;
    for (int i = 0; i < N; i++) acc |= l[i] ^ b.l[i];
    return acc == 0;
  }
  CUZK_HD bool operator!=(const mont_t& b) const { return !(*this == b); }

  // ---- additive group ----
  // ---- arithmetic over 2N 32-bit words with carry chains: the device's +, - and * ----
  // The GPU's integer units are 32 bits wide: a 64x64-bit product costs it several multiplies and
  // every carry of the portable 64-bit code is a comparison, while here each word step is one
  // instruction that passes its carry in the flag (carry_chain.hpp). The host compiles the same
  // functions with an emulated flag, so the CPU tests check them against the portable code
  // (tests/test_ff.cpp), and tests/gpu against the host on the device.
  static constexpr int W = 2 * N;
  CUZK_HD static constexpr uint32_t modulus_word(int j) { return uint32_t(P::modulus().v[j / 2] >> (32 * (j % 2))); }
  CUZK_HD static void words_of(const mont_t& a, uint32_t* w) {
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) {
      w[2 * i] = uint32_t(a.l[i]);
      w[2 * i + 1] = uint32_t(a.l[i] >> 32);
    }
  }
  CUZK_HD static mont_t from_words(const uint32_t* w) {
    mont_t r;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) r.l[i] = uint64_t(w[2 * i]) | (uint64_t(w[2 * i + 1]) << 32);
    return r;
  }
  // x in [0, 2p) as W words -> x mod p
  CUZK_HD static mont_t reduce_words(const uint32_t* x) {
    using namespace detail::cc;
    uint32_t d[W], r[W];
    d[0] = sub_cc(x[0], modulus_word(0));
CUZK_FF_UNROLL
    for (int j = 1; j < W; j++) d[j] = subc_cc(x[j], modulus_word(j));
    const uint32_t keep = subc(0, 0);  // all ones when x < p: keep x
CUZK_FF_UNROLL
    for (int j = 0; j < W; j++) r[j] = (x[j] & keep) | (d[j] & ~keep);
    return from_words(r);
  }
  CUZK_HD static mont_t add_words(const mont_t& a, const mont_t& b) {
    using namespace detail::cc;
    uint32_t x[W], y[W], s[W];
    words_of(a, x);
    words_of(b, y);
    s[0] = add_cc(x[0], y[0]);
CUZK_FF_UNROLL
    for (int j = 1; j < W - 1; j++) s[j] = addc_cc(x[j], y[j]);
    s[W - 1] = addc(x[W - 1], y[W - 1]);  // < 2p < 2^(32W): no carry out (spare bit)
    return reduce_words(s);
  }
  CUZK_HD static mont_t sub_words(const mont_t& a, const mont_t& b) { return sub_words_mod<1>(a, b); }
  // a - b, plus K p when it borrows (K = 1: reduced values; 2: the lazy forms below).
  template <int K>
  CUZK_HD static mont_t sub_words_mod(const mont_t& a, const mont_t& b) {
    using namespace detail::cc;
    constexpr auto m = [](int j) { return K == 1 ? modulus_word(j) : twice_modulus_word(j); };
    uint32_t x[W], y[W], d[W];
    words_of(a, x);
    words_of(b, y);
    d[0] = sub_cc(x[0], y[0]);
CUZK_FF_UNROLL
    for (int j = 1; j < W; j++) d[j] = subc_cc(x[j], y[j]);
    const uint32_t borrow = subc(0, 0);  // all ones when a < b: add K p back
    d[0] = add_cc(d[0], m(0) & borrow);
CUZK_FF_UNROLL
    for (int j = 1; j < W - 1; j++) d[j] = addc_cc(d[j], m(j) & borrow);
    d[W - 1] = addc(d[W - 1], m(W - 1) & borrow);
    return from_words(d);
  }
  // The host's sum and difference (named, so the tests can hold the device's against them).
  CUZK_HD static mont_t add_portable(const mont_t& a, const mont_t& b) {
    constexpr limbs_t<N> M = P::modulus();
    mont_t s, d;
    uint64_t c = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) s.l[i] = detail::addc(a.l[i], b.l[i], c);
    uint64_t br = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) d.l[i] = detail::subb(s.l[i], M.v[i], br);
    // no carry out of s (spare bit); s >= p iff no borrow
    uint64_t mask = br - 1;  // all ones when s >= p
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) s.l[i] = (d.l[i] & mask) | (s.l[i] & ~mask);
    return s;
  }
  CUZK_HD static mont_t sub_portable(const mont_t& a, const mont_t& b) {
    constexpr limbs_t<N> M = P::modulus();
    mont_t d;
    uint64_t br = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) d.l[i] = detail::subb(a.l[i], b.l[i], br);
    uint64_t mask = 0 - br;  // all ones on borrow: add p back
    uint64_t c = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) d.l[i] = detail::addc(d.l[i], M.v[i] & mask, c);
    return d;
  }
  CUZK_HD mont_t operator+(const mont_t& b) const {
#if defined(__CUDA_ARCH__)
    return add_words(*this, b);
#else
    return add_portable(*this, b);
#endif
  }
  CUZK_HD mont_t operator-(const mont_t& b) const {
#if defined(__CUDA_ARCH__)
    return sub_words(*this, b);
#else
    return sub_portable(*this, b);
#endif
  }
  CUZK_HD mont_t operator-() const { return zero() - *this; }
  CUZK_HD mont_t dbl() const { return *this + *this; }
  // x / 2
  CUZK_HD mont_t half() const {
    constexpr limbs_t<N> M = P::modulus();
    mont_t r;
    uint64_t mask = 0 - (l[0] & 1);
    uint64_t c = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) r.l[i] = detail::addc(l[i], M.v[i] & mask, c);
CUZK_FF_UNROLL
    for (int i = 0; i < N - 1; i++) r.l[i] = (r.l[i] >> 1) | (r.l[i + 1] << 63);
    r.l[N - 1] >>= 1;  // no carry out: x + p < 2^(64N) (spare bit)
    return r;
  }
  CUZK_HD mont_t& operator+=(const mont_t& b) { return *this = *this + b; }
  CUZK_HD mont_t& operator-=(const mont_t& b) { return *this = *this - b; }
  CUZK_HD mont_t& operator*=(const mont_t& b) { return *this = *this * b; }

  // ---- multiplication ----
  // Portable interleaved Montgomery product (CIOS; Koc, Acar, Kaliski, "Analyzing and comparing
  // Montgomery multiplication algorithms", IEEE Micro 1996), with the spare-bit shortcut.
  CUZK_HD static mont_t mul_portable(const mont_t& a, const mont_t& b) {
    constexpr limbs_t<N> M = P::modulus();
    uint64_t t[N + 1];
CUZK_FF_UNROLL
    for (int i = 0; i <= N; i++) t[i] = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) {
      uint64_t c = 0;
CUZK_FF_UNROLL
      for (int j = 0; j < N; j++) t[j] = detail::mac(t[j], a.l[j], b.l[i], c);
      t[N] = c;
      uint64_t m = t[0] * P::INV;
      c = 0;
      (void)detail::mac(t[0], m, M.v[0], c);
CUZK_FF_UNROLL
      for (int j = 1; j < N; j++) t[j - 1] = detail::mac(t[j], m, M.v[j], c);
      t[N - 1] = t[N] + c;  // < 2p < 2^(64N): no overflow
    }
    mont_t r;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) r.l[i] = t[i];
    return r.reduce_once();
  }
  // r in [0, 2p) -> [0, p)
  CUZK_HD mont_t reduce_once() const {
    constexpr limbs_t<N> M = P::modulus();
    mont_t d;
    uint64_t br = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) d.l[i] = detail::subb(l[i], M.v[i], br);
    uint64_t mask = br - 1;  // all ones when no borrow (this >= p)
    mont_t r;
CUZK_FF_UNROLL
    for (int i = 0; i < N; i++) r.l[i] = (d.l[i] & mask) | (l[i] & ~mask);
    return r;
  }
#if CUZK_USE_ADX && !defined(__CUDA_ARCH__)
  static mont_t mul_adx(const mont_t& a, const mont_t& b);  // defined in mont_x86.hpp
#endif
  // CIOS Montgomery product over W words (Koc, Acar, Kaliski, "Analyzing and comparing
  // Montgomery multiplication algorithms", 1996), with the running sum T kept in two halves:
  // X holds the products a_j b_i with j even, whose low and high words land on an aligned pair
  // (words j, j+1), and Y those with j odd, one word up. So each product's two mad steps (lo
  // and hi, the same operands) sit next to each other in one carry chain, which the GPU can issue
  // as one wide multiply-add; a row-by-row layout (all low halves, then all high halves) cannot.
  // Measured much faster on the GPU than the row layout
  // (docs/cuda-backend.md#chunks-of-32-points-a-thread-evenodd-product-layout).
  // Invariant at the top of row i: T * 2^32 = X + Y * 2^32 with X[0] = 0. Bounds: with the spare
  // bit every T < 2^(32W) and every row sum < 2^(32(W+1)), so X needs W+1 words, Y needs W, and
  // the chains marked "no carry out" cannot carry.
  CUZK_HD static mont_t mul_words(const mont_t& a, const mont_t& b) {
    uint32_t t[W];
    mul_words_unreduced(a, b, t);
    return reduce_words(t);
  }
  // The product's T = a b / R mod p before its final subtraction, in [0, 2p) (below).
  CUZK_HD static void mul_words_unreduced(const mont_t& a, const mont_t& b, uint32_t* t) {
    using namespace detail::cc;
    constexpr uint32_t INV32 = uint32_t(P::INV);  // -p^{-1} mod 2^32 is the low half of mod 2^64
    uint32_t aw[W], bw[W], x[W + 1], y[W];
    words_of(a, aw);
    words_of(b, bw);
CUZK_FF_UNROLL
    for (int k = 0; k < W; k++) x[k] = y[k] = 0;
    x[W] = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < W; i++) {
      const uint32_t bi = bw[i];
      uint32_t A[W + 1], B[W];
      // T = (X >> 32) + Y: word 0 is Y[0] + X[1]; its carry goes to word 1, the head of B,
      // which takes X >> 64 plus the odd products a_j b_i at word j - 1.
      A[0] = add_cc(y[0], x[1]);
CUZK_FF_UNROLL
      for (int k = 0; k < W - 2; k += 2) {
        B[k] = madc_lo_cc(aw[k + 1], bi, x[k + 2]);
        B[k + 1] = madc_hi_cc(aw[k + 1], bi, x[k + 3]);
      }
      B[W - 2] = madc_lo_cc(aw[W - 1], bi, x[W]);
      B[W - 1] = madc_hi(aw[W - 1], bi, 0);  // no carry out
      // A = the rest of Y plus the even products a_j b_i at word j
      A[0] = mad_lo_cc(aw[0], bi, A[0]);
      A[1] = madc_hi_cc(aw[0], bi, y[1]);
CUZK_FF_UNROLL
      for (int k = 2; k < W; k += 2) {
        A[k] = madc_lo_cc(aw[k], bi, y[k]);
        A[k + 1] = madc_hi_cc(aw[k], bi, y[k + 1]);
      }
      A[W] = addc(0, 0);
      // + m p, which zeroes word 0: even words of p into A, odd ones into B
      const uint32_t m = A[0] * INV32;
      A[0] = mad_lo_cc(modulus_word(0), m, A[0]);
      A[1] = madc_hi_cc(modulus_word(0), m, A[1]);
CUZK_FF_UNROLL
      for (int k = 2; k < W; k += 2) {
        A[k] = madc_lo_cc(modulus_word(k), m, A[k]);
        A[k + 1] = madc_hi_cc(modulus_word(k), m, A[k + 1]);
      }
      A[W] = addc(A[W], 0);
      B[0] = mad_lo_cc(modulus_word(1), m, B[0]);
      B[1] = madc_hi_cc(modulus_word(1), m, B[1]);
CUZK_FF_UNROLL
      for (int k = 2; k < W - 2; k += 2) {
        B[k] = madc_lo_cc(modulus_word(k + 1), m, B[k]);
        B[k + 1] = madc_hi_cc(modulus_word(k + 1), m, B[k + 1]);
      }
      B[W - 2] = madc_lo_cc(modulus_word(W - 1), m, B[W - 2]);
      B[W - 1] = madc_hi(modulus_word(W - 1), m, B[W - 1]);  // no carry out
      next_row(A, B, x, y);
    }
    join_halves(x, y, t);  // T < 2p
  }
  // The row loops' two halves: the next row's X and Y are this row's A and B.
  CUZK_HD static void next_row(const uint32_t* A, const uint32_t* B, uint32_t* x, uint32_t* y) {
CUZK_FF_UNROLL
    for (int k = 0; k <= W; k++) x[k] = A[k];
CUZK_FF_UNROLL
    for (int k = 0; k < W; k++) y[k] = B[k];
  }
  // t = X / 2^32 + Y (W words; the caller's bound rules out a carry out).
  CUZK_HD static void join_halves(const uint32_t* x, const uint32_t* y, uint32_t* t) {
    using namespace detail::cc;
    t[0] = add_cc(y[0], x[1]);
CUZK_FF_UNROLL
    for (int k = 1; k < W - 1; k++) t[k] = addc_cc(y[k], x[k + 1]);
    t[W - 1] = addc(y[W - 1], x[W]);
  }

  // The square a^2 / R mod p for a < p, in [0, p): the product above with each cross product
  // a_i a_j (i < j) formed once and doubled, 66 + 12 word products for Fp's 12 words where
  // mul_words forms 144, then a Montgomery reduction of its own (144 more). About 0.77 of a
  // product's multiply-adds; the MSM's XYZZ additions square twice in each (madd-2008-s, 8M + 2S).
  CUZK_HD static mont_t sqr_words(const mont_t& a) {
    uint32_t aw[W], t[2 * W];
    words_of(a, aw);
    square_words(aw, t);
    return reduce_words(redc_words(t));
  }
  // acc += a_i a_j at word i + j for j = j0, j0 + 2, ... < W (j0 > i), as one carry chain that
  // ends in the word above its last pair.
  CUZK_HD static void cross_products(const uint32_t* aw, int i, int j0, uint32_t* acc) {
    using namespace detail::cc;
    acc[i + j0] = mad_lo_cc(aw[i], aw[j0], acc[i + j0]);
    acc[i + j0 + 1] = madc_hi_cc(aw[i], aw[j0], acc[i + j0 + 1]);
CUZK_FF_UNROLL
    for (int j = j0 + 2; j < W; j += 2) {
      acc[i + j] = madc_lo_cc(aw[i], aw[j], acc[i + j]);
      acc[i + j + 1] = madc_hi_cc(aw[i], aw[j], acc[i + j + 1]);
    }
    const int end = i + (j0 + (W - 1 - j0) / 2 * 2) + 2;  // above the last pair
    acc[end] = addc(acc[end], 0);
  }
  // t (2W words) = a^2 (W words). The cross products of row i, a_i a_j for j > i, land at word
  // i + j: those with i + j even go to E, on aligned word pairs, those with i + j odd to O, so
  // that each product's low and high halves are adjacent steps of one carry chain (as in
  // mul_words). A row's chain carries into the word above its last pair, and no earlier row
  // wrote a product there (their pairs end lower): it holds 0 or the previous row's carry, so the
  // carry stops there. Then t = 2 (E + O) + the squares a_i^2 at words (2i, 2i + 1).
  CUZK_HD static void square_words(const uint32_t* aw, uint32_t* t) {
    using namespace detail::cc;
    uint32_t e[2 * W], o[2 * W];
CUZK_FF_UNROLL
    for (int k = 0; k < 2 * W; k++) e[k] = o[k] = 0;
CUZK_FF_UNROLL
    for (int i = 0; i < W - 1; i++) {
      cross_products(aw, i, i + 1, o);
      if (i + 2 < W) cross_products(aw, i, i + 2, e);
    }
    // s = E + O < 2^(64W - 1) (twice it is below a^2), then t = 2 s + the squares.
    uint32_t sw[2 * W];
    sw[0] = add_cc(e[0], o[0]);
CUZK_FF_UNROLL
    for (int k = 1; k < 2 * W - 1; k++) sw[k] = addc_cc(e[k], o[k]);
    sw[2 * W - 1] = addc(e[2 * W - 1], o[2 * W - 1]);
    t[0] = mad_lo_cc(aw[0], aw[0], sw[0] << 1);
    t[1] = madc_hi_cc(aw[0], aw[0], (sw[1] << 1) | (sw[0] >> 31));
CUZK_FF_UNROLL
    for (int i = 1; i < W - 1; i++) {
      t[2 * i] = madc_lo_cc(aw[i], aw[i], (sw[2 * i] << 1) | (sw[2 * i - 1] >> 31));
      t[2 * i + 1] = madc_hi_cc(aw[i], aw[i], (sw[2 * i + 1] << 1) | (sw[2 * i] >> 31));
    }
    t[2 * W - 2] = madc_lo_cc(aw[W - 1], aw[W - 1], (sw[2 * W - 2] << 1) | (sw[2 * W - 3] >> 31));
    t[2 * W - 1] = madc_hi(aw[W - 1], aw[W - 1], (sw[2 * W - 1] << 1) | (sw[2 * W - 2] >> 31));  // no carry out
  }
  // Montgomery reduction of t (2W words, t < p R) as W words in [0, 2p): rows of mul_words
  // without the products a b_i (the invariant there, starting from X = t_low * 2^32, Y = 0), so
  // after W rows X / 2^32 + Y = (t_low + m p) / R <= p; plus t_high = t / R < p.
  CUZK_HD static const uint32_t* redc_words(uint32_t* t) {
    using namespace detail::cc;
    constexpr uint32_t INV32 = uint32_t(P::INV);
    uint32_t x[W + 1], y[W];
    x[0] = 0;
CUZK_FF_UNROLL
    for (int k = 0; k < W; k++) {
      x[k + 1] = t[k];
      y[k] = 0;
    }
CUZK_FF_UNROLL
    for (int i = 0; i < W; i++) {
      uint32_t A[W + 1], B[W];
      const uint32_t m = (y[0] + x[1]) * INV32;  // word 0 of the row's sum, before any flag use
      // Word 0 = Y[0] + X[1]; its carry, X >> 64 and the odd words of m p go to B (words 1..W).
      const uint32_t w0 = add_cc(y[0], x[1]);
CUZK_FF_UNROLL
      for (int k = 0; k < W - 2; k += 2) {
        B[k] = madc_lo_cc(modulus_word(k + 1), m, x[k + 2]);
        B[k + 1] = madc_hi_cc(modulus_word(k + 1), m, x[k + 3]);
      }
      B[W - 2] = madc_lo_cc(modulus_word(W - 1), m, x[W]);
      B[W - 1] = madc_hi(modulus_word(W - 1), m, 0);  // no carry out
      // The rest of Y and the even words of m p, which zero word 0.
      A[0] = mad_lo_cc(modulus_word(0), m, w0);
      A[1] = madc_hi_cc(modulus_word(0), m, y[1]);
CUZK_FF_UNROLL
      for (int k = 2; k < W; k += 2) {
        A[k] = madc_lo_cc(modulus_word(k), m, y[k]);
        A[k + 1] = madc_hi_cc(modulus_word(k), m, y[k + 1]);
      }
      A[W] = addc(0, 0);
      next_row(A, B, x, y);
    }
    // X / 2^32 + Y + t_high < 2p < 2^(32W), into t's low half.
    join_halves(x, y, t);
    t[0] = add_cc(t[0], t[W]);
CUZK_FF_UNROLL
    for (int k = 1; k < W - 1; k++) t[k] = addc_cc(t[k], t[W + k]);
    t[W - 1] = addc(t[W - 1], t[2 * W - 1]);
    return t;
  }

  // ---- lazy forms: values in [0, 2p), reduced once at the end (the device NTT's butterflies) ----
  // With 2p < 2^(32W) (the spare bit) a value may stay in [0, 2p) between operations: the sum
  // and difference fold back by 2p instead of p, and the product skips its final subtraction.
  // The product's bound needs a < p (the operand whose every word meets each word of b) and
  // b < 2p: each row keeps T < T / 2^32 + a + p < 2p + 2^(32(W-1)) < 2^(32W), so the carry-free
  // steps of mul_words stay carry-free, and the result is T < a b / R + p < 2p (as 2p < R).
  // canonical() maps [0, 2p) to [0, p).
  static_assert(P::modulus().v[N - 1] < (uint64_t(1) << 63) - (uint64_t(1) << 32),
                "the lazy forms need 2p + 2^(32(W-1)) < 2^(32W)");
  CUZK_HD static constexpr uint32_t twice_modulus_word(int j) {
    return (modulus_word(j) << 1) | (j ? modulus_word(j - 1) >> 31 : 0u);
  }
  CUZK_HD static mont_t mul_words_2p(const mont_t& a, const mont_t& b) {
    uint32_t t[W];
    mul_words_unreduced(a, b, t);
    return from_words(t);
  }
  CUZK_HD static mont_t add_words_2p(const mont_t& a, const mont_t& b) {
    using namespace detail::cc;
    uint32_t x[W], y[W], s[W], d[W], r[W];
    words_of(a, x);
    words_of(b, y);
    s[0] = add_cc(x[0], y[0]);
CUZK_FF_UNROLL
    for (int j = 1; j < W; j++) s[j] = addc_cc(x[j], y[j]);
    const uint32_t carry = addc(0, 0);  // the sum reaches up to 4p, past 2^(32W)
    d[0] = sub_cc(s[0], twice_modulus_word(0));
CUZK_FF_UNROLL
    for (int j = 1; j < W; j++) d[j] = subc_cc(s[j], twice_modulus_word(j));
    const uint32_t keep = subc(0, 0) & (carry - 1);  // all ones when no carry and s < 2p: keep s
CUZK_FF_UNROLL
    for (int j = 0; j < W; j++) r[j] = (s[j] & keep) | (d[j] & ~keep);
    return from_words(r);
  }
  CUZK_HD static mont_t sub_words_2p(const mont_t& a, const mont_t& b) { return sub_words_mod<2>(a, b); }
  CUZK_HD mont_t canonical() const {
    uint32_t w[W];
    words_of(*this, w);
    return reduce_words(w);
  }
  CUZK_HD mont_t operator*(const mont_t& b) const {
#if defined(__CUDA_ARCH__)
    return mul_words(*this, b);
#endif
#if CUZK_USE_ADX && !defined(__CUDA_ARCH__)
    if constexpr (N == 4 || N == 6) {
      if (cpu_has_adx()) return mul_adx(*this, b);
    }
#endif
    return mul_portable(*this, b);
  }
  CUZK_HD mont_t sqr() const {
#if defined(__CUDA_ARCH__)
    return sqr_words(*this);
#else
    return (*this) * (*this);
#endif
  }

  // ---- exponentiation and inversion ----
  CUZK_HD mont_t pow(const uint64_t* exp, int nlimbs) const { return detail::pow_generic(*this, exp, nlimbs); }
  CUZK_HD mont_t pow(uint64_t e) const { return detail::pow_generic(*this, &e, 1); }
  // Fermat: a^(p-2); inv(0) == 0. Constant exponent, used on the device.
  CUZK_HD mont_t inv_fermat() const {
    constexpr limbs_t<N> E = detail::sub_small(P::modulus(), 2);
    return pow(E.v, N);
  }
  // Host: variable-time binary extended Euclid (Hankerson, Menezes, Vanstone, "Guide to Elliptic
  // Curve Cryptography", Algorithm 2.22) on the Montgomery representation x = aR: it yields
  // y = x^{-1} = a^{-1} R^{-1}, and two Montgomery products by R^2 give a^{-1} R. Device: Fermat.
  CUZK_HD mont_t inv() const {
#if defined(__CUDA_ARCH__)
    return inv_fermat();
#else
    return inv_binary();
#endif
  }
  mont_t inv_binary() const;

  // ---- square roots (host) ----
  bool sqrt(mont_t& out) const;
  // Legendre symbol: 1 (non-zero square), -1 (non-square), 0 (zero)
  int legendre() const;

  // ---- order / sign helpers (Zcash serialization, RFC 9380) ----
  bool lexicographically_largest() const {  // canonical value > (p-1)/2
    uint64_t c[N];
    to_canonical(c);
    constexpr limbs_t<N> H = half_p();
    for (int i = N - 1; i >= 0; i--) {
      if (c[i] != H.v[i]) return c[i] > H.v[i];
    }
    return false;
  }
  CUZK_HD bool sgn0() const {  // RFC 9380 sgn0 for GF(p): parity of the canonical value
    uint64_t c[N];
    to_canonical(c);
    return c[0] & 1;
  }

  // ---- canonical integers, bytes, strings (host) ----
  static bool less_than_modulus(const uint64_t* limbs) {
    constexpr limbs_t<N> M = P::modulus();
    for (int i = N - 1; i >= 0; i--) {
      if (limbs[i] != M.v[i]) return limbs[i] < M.v[i];
    }
    return false;
  }
  static bool from_canonical_checked(const uint64_t* limbs, mont_t& out) {
    if (!less_than_modulus(limbs)) return false;
    out = from_canonical(limbs);
    return true;
  }
  static bool from_bytes_be(const uint8_t* in, mont_t& out) {
    uint64_t t[N] = {};
    for (int i = 0; i < BYTES; i++) t[(BYTES - 1 - i) / 8] |= uint64_t(in[i]) << (8 * ((BYTES - 1 - i) % 8));
    return from_canonical_checked(t, out);
  }
  static bool from_bytes_le(const uint8_t* in, mont_t& out) {
    uint64_t t[N] = {};
    for (int i = 0; i < BYTES; i++) t[i / 8] |= uint64_t(in[i]) << (8 * (i % 8));
    return from_canonical_checked(t, out);
  }
  void to_bytes_be(uint8_t* out) const {
    uint64_t c[N];
    to_canonical(c);
    for (int i = 0; i < BYTES; i++) out[BYTES - 1 - i] = uint8_t(c[i / 8] >> (8 * (i % 8)));
  }
  void to_bytes_le(uint8_t* out) const {
    uint64_t c[N];
    to_canonical(c);
    for (int i = 0; i < BYTES; i++) out[i] = uint8_t(c[i / 8] >> (8 * (i % 8)));
  }
  // "0x" + 2*BYTES hex digits (canonical, big-endian); from_hex accepts an optional 0x/0X prefix,
  // either case, leading zeros; throws std::invalid_argument on bad digits or a value >= p.
  static mont_t from_hex(const std::string& s);
  std::string to_hex() const;
  // decimal string of the canonical value (snarkjs JSON); throws std::invalid_argument like from_hex
  static mont_t from_decimal(const std::string& s);
  std::string to_decimal() const;

  // uniform in [0, p) by rejection sampling; g() returns uint64_t (e.g. std::mt19937_64)
  template <class Rng>
  static mont_t random(Rng& g) {
    constexpr limbs_t<N> M = P::modulus();
    constexpr int top_bits = BITS - 64 * (N - 1);
    constexpr uint64_t top_mask = top_bits == 64 ? ~uint64_t(0) : ((uint64_t(1) << top_bits) - 1);
    (void)M;
    for (;;) {
      uint64_t t[N];
      for (int i = 0; i < N; i++) t[i] = uint64_t(g());
      t[N - 1] &= top_mask;
      mont_t r;
      if (from_canonical_checked(t, r)) return r;
    }
  }

  // ---- two-adic structure (used by the NTT; only where P supplies a root of unity) ----
  // multiplicative generator g of GF(p)^*
  CUZK_HD static mont_t multiplicative_generator()
    requires requires { P::GENERATOR; }
  {
    return from_u64(P::GENERATOR);
  }
  // primitive 2^k-th root of unity, 0 <= k <= two_adicity(): w^(2^(S-k)) for the fixed 2^S-th root
  // w = g^((p-1)/2^S) of P::root_of_unity()
  CUZK_HD static mont_t root_of_unity(int k)
    requires requires { P::root_of_unity(); }
  {
    constexpr limbs_t<N> W = P::root_of_unity();
    mont_t w = from_raw(W.v);
    for (int i = k; i < two_adicity(); i++) w = w.sqr();
    return w;
  }
};

// ---------------------------------------------------------------------------------------------
// host-only member definitions

template <class P>
mont_t<P> mont_t<P>::inv_binary() const {
  if (is_zero()) return zero();
  constexpr limbs_t<N> M = P::modulus();
  uint64_t u[N], v[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    u[i] = l[i];  // the integer aR (< p)
    v[i] = M.v[i];
    b[i] = 0;
    c[i] = 0;
  }
  b[0] = 1;
  // invariants: b*x == u, c*x == v (mod p), with x = aR; b, c in [0, p)
  auto is_one_raw = [](const uint64_t* x) {
    uint64_t acc = x[0] ^ 1;
    for (int i = 1; i < N; i++) acc |= x[i];
    return acc == 0;
  };
  auto shr1 = [](uint64_t* x) {
    for (int i = 0; i < N - 1; i++) x[i] = (x[i] >> 1) | (x[i + 1] << 63);
    x[N - 1] >>= 1;
  };
  auto half_mod = [&](uint64_t* x) {  // x/2 mod p; x + p < 2^(64N) by the spare bit
    if (x[0] & 1) {
      uint64_t cy = 0;
      for (int i = 0; i < N; i++) x[i] = detail::addc(x[i], M.v[i], cy);
    }
    shr1(x);
  };
  auto sub_mod = [&](uint64_t* x, const uint64_t* y) {  // x = x - y mod p
    uint64_t br = 0;
    for (int i = 0; i < N; i++) x[i] = detail::subb(x[i], y[i], br);
    if (br) {
      uint64_t cy = 0;
      for (int i = 0; i < N; i++) x[i] = detail::addc(x[i], M.v[i], cy);
    }
  };
  while (!is_one_raw(u) && !is_one_raw(v)) {
    while ((u[0] & 1) == 0) {
      shr1(u);
      half_mod(b);
    }
    while ((v[0] & 1) == 0) {
      shr1(v);
      half_mod(c);
    }
    bool u_ge_v = true;
    for (int i = N - 1; i >= 0; i--) {
      if (u[i] != v[i]) {
        u_ge_v = u[i] > v[i];
        break;
      }
    }
    if (u_ge_v) {
      uint64_t br = 0;
      for (int i = 0; i < N; i++) u[i] = detail::subb(u[i], v[i], br);
      sub_mod(b, c);
    } else {
      uint64_t br = 0;
      for (int i = 0; i < N; i++) v[i] = detail::subb(v[i], u[i], br);
      sub_mod(c, b);
    }
  }
  mont_t y = from_raw(is_one_raw(u) ? b : c);  // y = (aR)^{-1} as an integer
  constexpr limbs_t<N> R2 = P::r2();
  mont_t r2 = from_raw(R2.v);
  return (y * r2) * r2;  // y R^2 = a^{-1} R
}

template <class P>
int mont_t<P>::legendre() const {
  if (is_zero()) return 0;
  constexpr limbs_t<N> E = detail::shr(detail::sub_small(P::modulus(), 1), 1);  // (p-1)/2
  mont_t t = pow(E.v, N);
  return t.is_one() ? 1 : -1;
}

template <class P>
bool mont_t<P>::sqrt(mont_t& out) const {
  if (is_zero()) {
    out = zero();
    return true;
  }
  constexpr limbs_t<N> M = P::modulus();
  if constexpr ((M.v[0] & 3) == 3) {
    // p = 3 mod 4: x = a^((p+1)/4)
    constexpr limbs_t<N> E = detail::shr(detail::add_small(M, 1), 2);
    mont_t x = pow(E.v, N);
    if (x.sqr() != *this) return false;
    out = x;
    return true;
  } else {
    // Tonelli-Shanks (Cohen, "A Course in Computational Algebraic Number Theory", Alg. 1.5.1)
    constexpr int S = two_adicity();
    constexpr limbs_t<N> T = detail::shr_any(detail::sub_small(M, 1), S);  // odd t, p-1 = 2^S t
    constexpr limbs_t<N> T1 = detail::shr(detail::add_small(T, 1), 1);     // (t+1)/2
    static const mont_t z = [] {                                             // a non-square
      for (uint64_t k = 2;; k++) {
        mont_t c = from_u64(k);
        if (c.legendre() == -1) return c;
      }
    }();
    mont_t c = z.pow(T.v, N);
    mont_t x = pow(T1.v, N);
    mont_t b = pow(T.v, N);
    int m = S;
    while (!b.is_one()) {
      int i = 0;
      mont_t t = b;
      while (!t.is_one()) {
        t = t.sqr();
        if (++i == m) return false;  // b has order 2^m: a is not a square
      }
      mont_t g = c;
      for (int k = 0; k < m - i - 1; k++) g = g.sqr();
      x *= g;
      c = g.sqr();
      b *= c;
      m = i;
    }
    if (x.sqr() != *this) return false;
    out = x;
    return true;
  }
}

namespace detail {
inline int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}
// acc = acc * mul + add over n limbs; returns false on overflow
inline bool mul_add_small(uint64_t* acc, int n, uint64_t mul, uint64_t add) {
  uint64_t carry = add;
  for (int i = 0; i < n; i++) {
    unsigned __int128 t = (unsigned __int128)acc[i] * mul + carry;
    acc[i] = (uint64_t)t;
    carry = (uint64_t)(t >> 64);
  }
  return carry == 0;
}
}  // namespace detail

template <class P>
mont_t<P> mont_t<P>::from_hex(const std::string& s) {
  size_t pos = 0;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) pos = 2;
  if (pos == s.size()) throw std::invalid_argument("from_hex: empty hex string '" + s + "'");
  uint64_t t[N] = {};
  for (size_t i = pos; i < s.size(); i++) {
    int d = detail::hex_digit(s[i]);
    if (d < 0) throw std::invalid_argument("from_hex: bad hex digit in '" + s + "'");
    if (!detail::mul_add_small(t, N, 16, uint64_t(d)))
      throw std::invalid_argument("from_hex: value too large in '" + s + "'");
  }
  mont_t r;
  if (!from_canonical_checked(t, r))
    throw std::invalid_argument("from_hex: value is not less than the field modulus: '" + s + "'");
  return r;
}

template <class P>
std::string mont_t<P>::to_hex() const {
  static const char* digits = "0123456789abcdef";
  uint64_t c[N];
  to_canonical(c);
  std::string s = "0x";
  for (int i = N - 1; i >= 0; i--)
    for (int k = 60; k >= 0; k -= 4) s.push_back(digits[(c[i] >> k) & 15]);
  return s;
}

template <class P>
mont_t<P> mont_t<P>::from_decimal(const std::string& s) {
  if (s.empty()) throw std::invalid_argument("from_decimal: empty string");
  uint64_t t[N] = {};
  for (char ch : s) {
    if (ch < '0' || ch > '9') throw std::invalid_argument("from_decimal: bad decimal digit in '" + s + "'");
    if (!detail::mul_add_small(t, N, 10, uint64_t(ch - '0')))
      throw std::invalid_argument("from_decimal: value too large in '" + s + "'");
  }
  mont_t r;
  if (!from_canonical_checked(t, r))
    throw std::invalid_argument("from_decimal: value is not less than the field modulus: '" + s + "'");
  return r;
}

template <class P>
std::string mont_t<P>::to_decimal() const {
  uint64_t c[N];
  to_canonical(c);
  std::string out;
  constexpr uint64_t CHUNK = 10000000000000000000ull;  // 10^19
  for (;;) {
    bool zero = true;
    for (int i = 0; i < N; i++) zero &= c[i] == 0;
    if (zero) break;
    unsigned __int128 rem = 0;
    for (int i = N - 1; i >= 0; i--) {
      unsigned __int128 cur = (rem << 64) | c[i];
      c[i] = (uint64_t)(cur / CHUNK);
      rem = cur % CHUNK;
    }
    uint64_t r = (uint64_t)rem;
    bool more = false;
    for (int i = 0; i < N; i++) more |= c[i] != 0;
    for (int k = 0; k < 19 && (more || r != 0); k++) {
      out.push_back(char('0' + r % 10));
      r /= 10;
    }
  }
  if (out.empty()) return "0";
  return std::string(out.rbegin(), out.rend());
}

}  // namespace cuzk

#if CUZK_USE_ADX && !defined(__CUDA_ARCH__)
#include "prover/ff/mont_x86.hpp"
#endif
