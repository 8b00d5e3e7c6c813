// 32-bit multiply-add and add/subtract steps that pass their carry in a flag, as the GPU's PTX
// does (CC.CF): the word arithmetic of mont.hpp (mul_words, add_words, sub_words) is written
// with them.
//
// On the device each step is one PTX instruction (mad.lo.cc, madc.hi.cc, add.cc, subc, ...), a
// separate `asm volatile` statement so the compiler keeps program order: nothing between two
// steps of a chain may touch the flag (only these helpers do). On the host each step is emulated
// with a thread-local flag, so the CPU tests run the very algorithms the GPU runs (tests/test_ff).
// Subtraction follows PTX: the flag is the borrow, and subc computes a - (b + borrow).
#pragma once
#include <cstdint>

#include "prover/util/hd.hpp"

namespace cuzk::detail::cc {

#if !defined(__CUDA_ARCH__)
inline thread_local uint32_t host_flag = 0;  // the emulated CC.CF
inline uint32_t host_add(uint64_t v) {
  host_flag = uint32_t(v >> 32);
  return uint32_t(v);
}
inline uint32_t host_sub(uint32_t a, uint32_t b, uint32_t borrow_in) {
  const uint64_t v = uint64_t(a) - b - borrow_in;
  host_flag = uint32_t(v >> 63);
  return uint32_t(v);
}
inline uint64_t wide(uint32_t a, uint32_t b) { return uint64_t(a) * b; }
#endif

// r = lo(a b) + c (+ flag for the madc forms); flag = carry out for the .cc forms
CUZK_HD uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  return host_add(uint64_t(uint32_t(wide(a, b))) + c);
#endif
}
CUZK_HD uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  return host_add(uint64_t(uint32_t(wide(a, b))) + c + host_flag);
#endif
}
CUZK_HD uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  return host_add((wide(a, b) >> 32) + c + host_flag);
#endif
}
// r = hi(a b) + c + flag; no carry out (the caller's bound rules one out)
CUZK_HD uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
#else
  return uint32_t((wide(a, b) >> 32) + c + host_flag);
#endif
}
CUZK_HD uint32_t add_cc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return host_add(uint64_t(a) + b);
#endif
}
CUZK_HD uint32_t addc_cc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return host_add(uint64_t(a) + b + host_flag);
#endif
}
// r = a + b + flag; no carry out
CUZK_HD uint32_t addc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return uint32_t(uint64_t(a) + b + host_flag);
#endif
}
CUZK_HD uint32_t sub_cc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return host_sub(a, b, 0);
#endif
}
CUZK_HD uint32_t subc_cc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return host_sub(a, b, host_flag);
#endif
}
// r = a - (b + borrow); no borrow out
CUZK_HD uint32_t subc(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t r;
  asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
#else
  return uint32_t(uint64_t(a) - b - host_flag);
#endif
}


}  // namespace cuzk::detail::cc
