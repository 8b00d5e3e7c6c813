// 32-bit words as 32 Booleans (bits[0] is the least significant bit): xor, and, rotations and
// shifts (free: rewiring and constants), and addition modulo 2^32 of several words (one
// packing constraint plus one booleanity constraint per result bit, 32 + ceil(log2(n)) bits).
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "prover/gadgets/boolean.hpp"

namespace cuzk::gadgets {

// 2^i (i < 256) and -2^i (i < 64) in Fr.
inline const fr_t& pow2(int i) {
  static const std::array<fr_t, 256> t = [] {
    std::array<fr_t, 256> r;
    r[0] = fr_t::one();
    for (int k = 1; k < 256; k++) r[k] = r[k - 1].dbl();
    return r;
  }();
  return t[i];
}
inline const fr_t& neg_pow2(int i) {
  static const std::array<fr_t, 64> t = [] {
    std::array<fr_t, 64> r;
    for (int k = 0; k < 64; k++) r[k] = -pow2(k);
    return r;
  }();
  return t[i];
}

struct UInt32 {
  std::array<Boolean, 32> bits;  // little-endian
  uint32_t value = 0;

  static UInt32 constant(uint32_t v) {
    UInt32 w;
    for (int i = 0; i < 32; i++) w.bits[i] = Boolean::constant((v >> i) & 1);
    w.value = v;
    return w;
  }
  template <class CS>
  static UInt32 alloc(CS& cs, uint32_t v) {
    UInt32 w;
    for (int i = 0; i < 32; i++) w.bits[i] = Boolean::alloc(cs, (v >> i) & 1);
    w.value = v;
    return w;
  }
  // From 32 bits, most significant first (SHA-256's byte and bit order).
  static UInt32 from_bits_be(std::span<const Boolean> be) {
    UInt32 w;
    for (int i = 0; i < 32; i++) {
      w.bits[i] = be[31 - i];
      w.value |= uint32_t(w.bits[i].value()) << i;
    }
    return w;
  }
  void append_bits_be(std::vector<Boolean>& out) const {
    for (int i = 31; i >= 0; i--) out.push_back(bits[i]);
  }
  bool is_constant() const {
    for (const Boolean& b : bits)
      if (!b.is_constant()) return false;
    return true;
  }

  UInt32 rotr(int n) const {
    n &= 31;
    UInt32 w;
    for (int i = 0; i < 32; i++) w.bits[i] = bits[(i + n) & 31];
    w.value = (value >> n) | (value << ((32 - n) & 31));
    return w;
  }
  UInt32 shr(int n) const {
    UInt32 w;
    for (int i = 0; i < 32; i++) w.bits[i] = i + n < 32 ? bits[i + n] : Boolean::constant(false);
    w.value = n >= 32 ? 0 : value >> n;
    return w;
  }
  UInt32 operator~() const {
    UInt32 w;
    for (int i = 0; i < 32; i++) w.bits[i] = !bits[i];
    w.value = ~value;
    return w;
  }
};

template <class CS>
UInt32 uint32_xor(CS& cs, const UInt32& a, const UInt32& b) {
  UInt32 w;
  for (int i = 0; i < 32; i++) w.bits[i] = boolean_xor(cs, a.bits[i], b.bits[i]);
  w.value = a.value ^ b.value;
  return w;
}

template <class CS>
UInt32 uint32_and(CS& cs, const UInt32& a, const UInt32& b) {
  UInt32 w;
  for (int i = 0; i < 32; i++) w.bits[i] = boolean_and(cs, a.bits[i], b.bits[i]);
  w.value = a.value & b.value;
  return w;
}

// Sum of the words modulo 2^32:  (sum_k sum_i 2^i a_k,i) * 1 = sum_j 2^j r_j, r_j bits; the low
// 32 result bits are the word. At most 2^(64-32) - 1 operands.
template <class CS>
UInt32 uint32_addmany(CS& cs, std::span<const UInt32> ops) {
  using L = typename CS::lc_t;
  uint64_t sum = 0;
  bool all_constant = true;
  size_t vars = 0;
  for (const UInt32& w : ops) {
    sum += w.value;
    for (const Boolean& b : w.bits) vars += !b.is_constant();
  }
  all_constant = vars == 0;
  if (all_constant) return UInt32::constant(static_cast<uint32_t>(sum));

  uint64_t max = uint64_t(ops.size()) * 0xffffffffull;
  int nbits = 0;
  while (nbits < 64 && (max >> nbits) != 0) nbits++;

  L lhs;
  lhs.reserve(vars + 1);
  uint64_t constant = 0;  // constant part, kept as an integer (< 2^64 by the bound above)
  for (const UInt32& w : ops)
    for (int i = 0; i < 32; i++) {
      const Boolean& b = w.bits[i];
      switch (b.kind()) {
        case Boolean::Kind::Constant:
          constant += uint64_t(b.value()) << i;
          break;
        case Boolean::Kind::Is:
          lhs.add(b.bit().var, pow2(i));
          break;
        case Boolean::Kind::Not:
          constant += uint64_t(1) << i;
          lhs.add(b.bit().var, neg_pow2(i));
          break;
      }
    }
  if (constant) lhs.add_constant(fr_t::from_u64(constant));

  L rhs;
  rhs.reserve(nbits);
  UInt32 out;
  for (int j = 0; j < nbits; j++) {
    AllocatedBit r = alloc_bit(cs, (sum >> j) & 1);
    rhs.add(r.var, pow2(j));
    if (j < 32) out.bits[j] = Boolean::is(r);
  }
  cs.enforce(lhs, L(Variable::one()), rhs);
  out.value = static_cast<uint32_t>(sum);
  return out;
}

template <class CS>
UInt32 uint32_addmany(CS& cs, std::initializer_list<UInt32> ops) {
  return uint32_addmany(cs, std::span<const UInt32>(ops.begin(), ops.size()));
}

}  // namespace cuzk::gadgets
