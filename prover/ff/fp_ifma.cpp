#include "prover/ff/fp_ifma.hpp"

// GCC 12 reports the AVX-512 intrinsics' own undefined-vector idiom (_mm512_undefined_epi32)
// as maybe-uninitialized once they are inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <atomic>
#include <cstddef>

#if CUZK_USE_IFMA
#include <cpuid.h>
#endif

namespace cuzk {
namespace {

bool detect_ifma() {
#if CUZK_USE_IFMA
  unsigned a = 0, b = 0, c = 0, d = 0;
  // Leaf 1 ECX bit 27: OSXSAVE (xgetbv usable). Leaf 7 sub-leaf 0 EBX bit 16: AVX512F, bit 21:
  // AVX512_IFMA (Intel SDM vol. 2A, CPUID).
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1)) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !((b >> 16) & 1) || !((b >> 21) & 1)) return false;
  // XCR0 bits 1, 2 (SSE, AVX state) and 5, 6, 7 (opmask, upper ZMM0-15, ZMM16-31): the OS saves
  // the AVX-512 registers across context switches.
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 0xe6) == 0xe6;
#else
  return false;
#endif
}

std::atomic<bool> g_enabled{true};

}  // namespace

bool cpu_has_ifma() {
  static const bool present = detect_ifma();
  return present && g_enabled.load(std::memory_order_relaxed);
}

void set_ifma_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }

#if CUZK_USE_IFMA
namespace ifma {
namespace {

// Byte offsets of elements i0 .. i0+7 of an array of T; lanes past n are masked off (and read
// element i0 instead, which exists).
template <class T>
CUZK_IFMA_FN __m512i offsets(size_t i0, size_t n, __mmask8& live) {
  live = live_lanes(i0, n);
  return _mm512_mask_blend_epi64(live, bc(i0 * sizeof(T)), lane_offsets(i0, sizeof(T)));
}

CUZK_IFMA_FN fp_x8 load_as(const fp_t* a, __m512i off) { return load_fp(a, off); }
CUZK_IFMA_FN fp2_x8 load_as(const fp2_t* a, __m512i off) { return load_fp2(a, off); }

template <class T, class Op>
CUZK_IFMA_TARGET void apply_n(const T* a, const T* b, T* r, size_t n, Op op) {
  for (size_t i = 0; i < n; i += 8) {
    __mmask8 live;
    const __m512i off = offsets<T>(i, n, live);
    store(r, off, op(load_as(a, off), load_as(b, off)), live);
  }
}

}  // namespace

void fp_mul_n(const fp_t* a, const fp_t* b, fp_t* r, size_t n) {
  apply_n(a, b, r, n, [](const fp_x8& x, const fp_x8& y) CUZK_IFMA_TARGET { return mul(x, y); });
}
void fp_add_n(const fp_t* a, const fp_t* b, fp_t* r, size_t n) {
  apply_n(a, b, r, n, [](const fp_x8& x, const fp_x8& y) CUZK_IFMA_TARGET { return add(x, y); });
}
void fp_sub_n(const fp_t* a, const fp_t* b, fp_t* r, size_t n) {
  apply_n(a, b, r, n, [](const fp_x8& x, const fp_x8& y) CUZK_IFMA_TARGET { return sub(x, y); });
}
void fp2_mul_n(const fp2_t* a, const fp2_t* b, fp2_t* r, size_t n) {
  apply_n(a, b, r, n, [](const fp2_x8& x, const fp2_x8& y) CUZK_IFMA_TARGET { return mul(x, y); });
}
void fp2_sqr_n(const fp2_t* a, fp2_t* r, size_t n) {
  apply_n(a, a, r, n, [](const fp2_x8& x, const fp2_x8&) CUZK_IFMA_TARGET { return sqr(x); });
}
}  // namespace ifma
#else
namespace ifma {
// Never called: cpu_has_ifma() is false in this build.
void fp_mul_n(const fp_t*, const fp_t*, fp_t*, size_t) {}
void fp_add_n(const fp_t*, const fp_t*, fp_t*, size_t) {}
void fp_sub_n(const fp_t*, const fp_t*, fp_t*, size_t) {}
void fp2_mul_n(const fp2_t*, const fp2_t*, fp2_t*, size_t) {}
void fp2_sqr_n(const fp2_t*, fp2_t*, size_t) {}
}  // namespace ifma
#endif

}  // namespace cuzk
