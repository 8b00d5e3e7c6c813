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

#undef CUZK_ADX_MULADD
#undef CUZK_ADX_REDADD
#undef CUZK_ADX_ROUND4
#undef CUZK_ADX_ROUND6

template <class P>
mont_t<P> mont_t<P>::mul_adx(const mont_t& a, const mont_t& b) {
  mont_t r;
  mont_adx<N>::template mul<P>(r.l, a.l, b.l);
  return r.reduce_once();
}

}  // namespace cuzk

#endif  // CUZK_USE_ADX && !__CUDA_ARCH__
