// x86-64 BMI2/ADX Montgomery multiplication for 4-limb (Fr) and 6-limb (Fp) fields, host only.
//
// Same algorithm as mont_t::mul_portable (interleaved CIOS, spare top bit, N+1 limbs of state),
// with two independent carry chains per row as Intel describes for ADX ("New Instructions
// Supporting Large Integer Arithmetic on Intel Architecture Processors", 2012): mulx produces
// hi:lo without touching flags, adox accumulates the low halves (OF chain) and adcx the high
// halves (CF chain). Each of the N rounds is
//     t[0..N]  += a * b[i]            (t[N] starts at 0)
//     m         = t[0] * (-p^{-1}) mod 2^64
//     t[0..N]  += m * p               (t[0] becomes 0)
//     t         = t >> 64             (register renaming: the zero limb becomes the next t[N])
// With the spare bit t stays < 2p after every round, so no carry leaves limb N. The final
// subtraction of p is done in C++ (mont_t::reduce_once).
//
// Used when CUZK_USE_ADX is 1 and cpu_has_adx() (CPUID bmi2 && adx, checked once). The tests call
// mul_adx and mul_portable directly against each other.
//
// Also here: the plain 768-bit product and the separate Montgomery reduction that fp2_t's product
// uses to reduce once per coordinate (mont_adx_wide6).
#pragma once
#include "prover/ff/mont.hpp"

#if CUZK_USE_ADX && !defined(__CUDA_ARCH__)
#include <cpuid.h>

namespace cuzk {

// CPUID leaf 7, sub-leaf 0: EBX bit 8 = BMI2, bit 19 = ADX (Intel SDM vol. 2A, CPUID). Read
// directly because clang's __builtin_cpu_supports does not know "adx".
inline bool cpu_has_adx() {
  static const bool ok = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    return ((b >> 8) & 1) && ((b >> 19) & 1);
  }();
  return ok;
}

namespace detail {
// r = a + b over N limbs, returns the carry out (r may alias a or b)
template <int N>
inline __attribute__((always_inline)) uint64_t add_plain(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  uint64_t c = 0;
CUZK_FF_UNROLL
  for (int i = 0; i < N; i++) r[i] = addc(a[i], b[i], c);
  return c;
}
// r = a - b over N limbs, returns the borrow out (r may alias a or b)
template <int N>
inline __attribute__((always_inline)) uint64_t sub_plain(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  uint64_t br = 0;
CUZK_FF_UNROLL
  for (int i = 0; i < N; i++) r[i] = subb(a[i], b[i], br);
  return br;
}
}  // namespace detail

// One column j of "t += rdx * x": lo to t[j] on the OF chain, hi to t[j+1] on the CF chain.
#define CUZK_ADX_MULADD(J, TJ, TJ1)          \
  "mulxq " #J "*8(%[a]), %[lo], %[hi]\n\t" \
  "adoxq %[lo], %[" #TJ "]\n\t"            \
  "adcxq %[hi], %[" #TJ1 "]\n\t"
#define CUZK_ADX_REDADD(J, TJ, TJ1)     \
  "mulxq %[p" #J "], %[lo], %[hi]\n\t" \
  "adoxq %[lo], %[" #TJ "]\n\t"       \
  "adcxq %[hi], %[" #TJ1 "]\n\t"

// Round I of the 4-limb product; T0..T4 name the state registers of this round.
#define CUZK_ADX_ROUND4(I, T0, T1, T2, T3, T4)                                                          \
  "movq " #I "*8(%[b]), %%rdx\n\t"                                                                     \
  "xorq %[" #T4 "], %[" #T4 "]\n\t" /* t[N] = 0, CF = OF = 0 */                                        \
  CUZK_ADX_MULADD(0, T0, T1) CUZK_ADX_MULADD(1, T1, T2) CUZK_ADX_MULADD(2, T2, T3)                     \
  CUZK_ADX_MULADD(3, T3, T4)                                                                           \
  "adoxq %[z], %[" #T4 "]\n\t"                                                                         \
  "movq %[" #T0 "], %%rdx\n\t"                                                                         \
  "imulq %[inv], %%rdx\n\t"                                                                            \
  "xorq %[lo], %[lo]\n\t" /* CF = OF = 0 */                                                            \
  CUZK_ADX_REDADD(0, T0, T1) CUZK_ADX_REDADD(1, T1, T2) CUZK_ADX_REDADD(2, T2, T3)                     \
  CUZK_ADX_REDADD(3, T3, T4)                                                                           \
  "adoxq %[z], %[" #T4 "]\n\t"

#define CUZK_ADX_ROUND6(I, T0, T1, T2, T3, T4, T5, T6)                                                  \
  "movq " #I "*8(%[b]), %%rdx\n\t"                                                                     \
  "xorq %[" #T6 "], %[" #T6 "]\n\t"                                                                    \
  CUZK_ADX_MULADD(0, T0, T1) CUZK_ADX_MULADD(1, T1, T2) CUZK_ADX_MULADD(2, T2, T3)                     \
  CUZK_ADX_MULADD(3, T3, T4) CUZK_ADX_MULADD(4, T4, T5) CUZK_ADX_MULADD(5, T5, T6)                     \
  "adoxq %[z], %[" #T6 "]\n\t"                                                                         \
  "movq %[" #T0 "], %%rdx\n\t"                                                                         \
  "imulq %[inv], %%rdx\n\t"                                                                            \
  "xorq %[lo], %[lo]\n\t"                                                                              \
  CUZK_ADX_REDADD(0, T0, T1) CUZK_ADX_REDADD(1, T1, T2) CUZK_ADX_REDADD(2, T2, T3)                     \
  CUZK_ADX_REDADD(3, T3, T4) CUZK_ADX_REDADD(4, T4, T5) CUZK_ADX_REDADD(5, T5, T6)                     \
  "adoxq %[z], %[" #T6 "]\n\t"

template <>
struct mont_adx<4> {
  // r = a * b * 2^-256 mod p, result in [0, 2p)
  template <class P>
  static inline __attribute__((always_inline)) void mul(uint64_t* r, const uint64_t* a, const uint64_t* b) {
    static constexpr limbs_t<4> M = P::modulus();
    static constexpr uint64_t INV = P::INV;
    uint64_t t0, t1, t2, t3, t4, lo, hi;
    asm("xorq %[t0], %[t0]\n\t"
        "xorq %[t1], %[t1]\n\t"
        "xorq %[t2], %[t2]\n\t"
        "xorq %[t3], %[t3]\n\t"
        CUZK_ADX_ROUND4(0, t0, t1, t2, t3, t4)
        CUZK_ADX_ROUND4(1, t1, t2, t3, t4, t0)
        CUZK_ADX_ROUND4(2, t2, t3, t4, t0, t1)
        CUZK_ADX_ROUND4(3, t3, t4, t0, t1, t2)
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
          [lo] "=&r"(lo), [hi] "=&r"(hi)
        : [a] "r"(a), [b] "r"(b), [z] "r"(uint64_t(0)), [inv] "m"(INV), [p0] "m"(M.v[0]),
          [p1] "m"(M.v[1]), [p2] "m"(M.v[2]), [p3] "m"(M.v[3]),
          "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b)
        : "rdx", "cc");
    r[0] = t4;
    r[1] = t0;
    r[2] = t1;
    r[3] = t2;
  }
};

template <>
struct mont_adx<6> {
  template <class P>
  static inline __attribute__((always_inline)) void mul(uint64_t* r, const uint64_t* a, const uint64_t* b) {
    static constexpr limbs_t<6> M = P::modulus();
    static constexpr uint64_t INV = P::INV;
    uint64_t t0, t1, t2, t3, t4, t5, t6, lo, hi;
    asm("xorq %[t0], %[t0]\n\t"
        "xorq %[t1], %[t1]\n\t"
        "xorq %[t2], %[t2]\n\t"
        "xorq %[t3], %[t3]\n\t"
        "xorq %[t4], %[t4]\n\t"
        "xorq %[t5], %[t5]\n\t"
        CUZK_ADX_ROUND6(0, t0, t1, t2, t3, t4, t5, t6)
        CUZK_ADX_ROUND6(1, t1, t2, t3, t4, t5, t6, t0)
        CUZK_ADX_ROUND6(2, t2, t3, t4, t5, t6, t0, t1)
        CUZK_ADX_ROUND6(3, t3, t4, t5, t6, t0, t1, t2)
        CUZK_ADX_ROUND6(4, t4, t5, t6, t0, t1, t2, t3)
        CUZK_ADX_ROUND6(5, t5, t6, t0, t1, t2, t3, t4)
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
          [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi)
        : [a] "r"(a), [b] "r"(b), [z] "r"(uint64_t(0)), [inv] "m"(INV), [p0] "m"(M.v[0]),
          [p1] "m"(M.v[1]), [p2] "m"(M.v[2]), [p3] "m"(M.v[3]), [p4] "m"(M.v[4]), [p5] "m"(M.v[5]),
          "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b)
        : "rdx", "cc");
    r[0] = t6;
    r[1] = t0;
    r[2] = t1;
    r[3] = t2;
    r[4] = t3;
    r[5] = t4;
  }
};

// Row I of the plain 6x6-limb product: t[I..I+6] += a * b[I], then limb I is final (stored).
#define CUZK_ADX_WIDE_ROW6(I, T0, T1, T2, T3, T4, T5, T6)                                              \
  "movq " #I "*8(%[b]), %%rdx\n\t"                                                                     \
  "xorq %[" #T6 "], %[" #T6 "]\n\t" /* t[I+6] = 0, CF = OF = 0 */                                      \
  CUZK_ADX_MULADD(0, T0, T1) CUZK_ADX_MULADD(1, T1, T2) CUZK_ADX_MULADD(2, T2, T3)                     \
  CUZK_ADX_MULADD(3, T3, T4) CUZK_ADX_MULADD(4, T4, T5) CUZK_ADX_MULADD(5, T5, T6)                     \
  "adoxq %[z], %[" #T6 "]\n\t"                                                                         \
  "movq %[" #T0 "], %[r" #I "]\n\t"

// Round of the Montgomery reduction alone: the second half of CUZK_ADX_ROUND6 (imulq sets CF and
// OF, so the xor that clears them comes after it).
#define CUZK_ADX_REDC_ROUND6(T0, T1, T2, T3, T4, T5, T6)                                               \
  "movq %[" #T0 "], %%rdx\n\t"                                                                         \
  "imulq %[inv], %%rdx\n\t"                                                                            \
  "xorq %[" #T6 "], %[" #T6 "]\n\t"                                                                    \
  CUZK_ADX_REDADD(0, T0, T1) CUZK_ADX_REDADD(1, T1, T2) CUZK_ADX_REDADD(2, T2, T3)                     \
  CUZK_ADX_REDADD(3, T3, T4) CUZK_ADX_REDADD(4, T4, T5) CUZK_ADX_REDADD(5, T5, T6)                     \
  "adoxq %[z], %[" #T6 "]\n\t"

// Double-width pieces for products whose reduction is delayed (fp2_t's product, fp2.hpp): a sum
// of several 768-bit products is reduced once instead of reducing each product.
struct mont_adx_wide6 {
  // r[0..11] = a * b, the plain 768-bit product (any 6-limb a, b), row by row as in
  // mont_adx<6>::mul without the reduction half.
  static inline __attribute__((always_inline)) void mul(uint64_t* r, const uint64_t* a, const uint64_t* b) {
    uint64_t t0, t1, t2, t3, t4, t5, t6, lo, hi;
    asm("xorq %[t0], %[t0]\n\t"
        "xorq %[t1], %[t1]\n\t"
        "xorq %[t2], %[t2]\n\t"
        "xorq %[t3], %[t3]\n\t"
        "xorq %[t4], %[t4]\n\t"
        "xorq %[t5], %[t5]\n\t"
        CUZK_ADX_WIDE_ROW6(0, t0, t1, t2, t3, t4, t5, t6)
        CUZK_ADX_WIDE_ROW6(1, t1, t2, t3, t4, t5, t6, t0)
        CUZK_ADX_WIDE_ROW6(2, t2, t3, t4, t5, t6, t0, t1)
        CUZK_ADX_WIDE_ROW6(3, t3, t4, t5, t6, t0, t1, t2)
        CUZK_ADX_WIDE_ROW6(4, t4, t5, t6, t0, t1, t2, t3)
        CUZK_ADX_WIDE_ROW6(5, t5, t6, t0, t1, t2, t3, t4)
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
          [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi), [r0] "=m"(r[0]),
          [r1] "=m"(r[1]), [r2] "=m"(r[2]), [r3] "=m"(r[3]), [r4] "=m"(r[4]), [r5] "=m"(r[5])
        : [a] "r"(a), [b] "r"(b), [z] "r"(uint64_t(0)), "m"(*(const uint64_t(*)[6])a),
          "m"(*(const uint64_t(*)[6])b)
        : "rdx", "cc");
    r[6] = t6;
    r[7] = t0;
    r[8] = t1;
    r[9] = t2;
    r[10] = t3;
    r[11] = t4;
  }

  // r = t * 2^-384 mod p in [0, 2p) for t < p * 2^384 (Montgomery's REDC). The six rounds reduce
  // the low half L = t mod 2^384 alone: they give U = (L + m p) / 2^384 < (2^384 + 2^384 p) /
  // 2^384 = p + 1 (each intermediate stays < 2^384 by the same bound, so 7 limbs hold a round's
  // sum), and adding the high half H = t >> 384 gives (t + m p) / 2^384 < (p 2^384 + 2^384 p) /
  // 2^384 = 2p < 2^382: no carry leaves the last limb.
  template <class P>
  static inline __attribute__((always_inline)) void redc(uint64_t* r, const uint64_t* t) {
    static constexpr limbs_t<6> M = P::modulus();
    static constexpr uint64_t INV = P::INV;
    uint64_t t0, t1, t2, t3, t4, t5, t6, lo, hi;
    asm("movq 0*8(%[t]), %[t0]\n\t"
        "movq 1*8(%[t]), %[t1]\n\t"
        "movq 2*8(%[t]), %[t2]\n\t"
        "movq 3*8(%[t]), %[t3]\n\t"
        "movq 4*8(%[t]), %[t4]\n\t"
        "movq 5*8(%[t]), %[t5]\n\t"
        CUZK_ADX_REDC_ROUND6(t0, t1, t2, t3, t4, t5, t6)
        CUZK_ADX_REDC_ROUND6(t1, t2, t3, t4, t5, t6, t0)
        CUZK_ADX_REDC_ROUND6(t2, t3, t4, t5, t6, t0, t1)
        CUZK_ADX_REDC_ROUND6(t3, t4, t5, t6, t0, t1, t2)
        CUZK_ADX_REDC_ROUND6(t4, t5, t6, t0, t1, t2, t3)
        CUZK_ADX_REDC_ROUND6(t5, t6, t0, t1, t2, t3, t4)
        "addq 6*8(%[t]), %[t6]\n\t"
        "adcq 7*8(%[t]), %[t0]\n\t"
        "adcq 8*8(%[t]), %[t1]\n\t"
        "adcq 9*8(%[t]), %[t2]\n\t"
        "adcq 10*8(%[t]), %[t3]\n\t"
        "adcq 11*8(%[t]), %[t4]\n\t"
        : [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4),
          [t5] "=&r"(t5), [t6] "=&r"(t6), [lo] "=&r"(lo), [hi] "=&r"(hi)
        : [t] "r"(t), [z] "r"(uint64_t(0)), [inv] "m"(INV), [p0] "m"(M.v[0]), [p1] "m"(M.v[1]),
          [p2] "m"(M.v[2]), [p3] "m"(M.v[3]), [p4] "m"(M.v[4]), [p5] "m"(M.v[5]),
          "m"(*(const uint64_t(*)[12])t)
        : "rdx", "cc");
    r[0] = t6;
    r[1] = t0;
    r[2] = t1;
    r[3] = t2;
    r[4] = t3;
    r[5] = t4;
  }
};

#undef CUZK_ADX_MULADD
#undef CUZK_ADX_REDADD
#undef CUZK_ADX_ROUND4
#undef CUZK_ADX_ROUND6
#undef CUZK_ADX_WIDE_ROW6
#undef CUZK_ADX_REDC_ROUND6

template <class P>
mont_t<P> mont_t<P>::mul_adx(const mont_t& a, const mont_t& b) {
  mont_t r;
  mont_adx<N>::template mul<P>(r.l, a.l, b.l);
  return r.reduce_once();
}

}  // namespace cuzk

#endif  // CUZK_USE_ADX && !__CUDA_ARCH__
