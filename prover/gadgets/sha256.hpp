// SHA-256 in circuit: the compression function over a 512-bit block (as Booleans, most
// significant bit of byte 0 first) and a padded hash of a bit string whose length is fixed at
// synthesis time. About 27,000 constraints per compression with variable inputs.
//
// Per round: T1 = h + S1(e) + ch(e,f,g) + K_t + W_t, e' = d + T1, a' = T1 + S0(a) + maj(a,b,c);
// each of e' and a' is one addmany (the shared T1 operands are summed twice instead of
// materializing T1, which saves a packing constraint and 35 bits per round).
#pragma once
#include <array>
#include <span>
#include <vector>

#include "prover/gadgets/sha256_native.hpp"
#include "prover/gadgets/uint32.hpp"

namespace cuzk::gadgets {

using Sha256Words = std::array<UInt32, 8>;

inline Sha256Words sha256_iv_words() {
  Sha256Words s;
  for (int i = 0; i < 8; i++) s[i] = UInt32::constant(kSha256IV[i]);
  return s;
}

template <class CS>
UInt32 xor3(CS& cs, const UInt32& a, const UInt32& b, const UInt32& c) {
  return uint32_xor(cs, uint32_xor(cs, a, b), c);
}

template <class CS>
Sha256Words sha256_compress(CS& cs, std::span<const Boolean> block, const Sha256Words& state) {
  std::array<UInt32, 64> w;
  for (int t = 0; t < 16; t++) w[t] = UInt32::from_bits_be(block.subspan(32 * t, 32));
  for (int t = 16; t < 64; t++) {
    UInt32 s0 = xor3(cs, w[t - 15].rotr(7), w[t - 15].rotr(18), w[t - 15].shr(3));
    UInt32 s1 = xor3(cs, w[t - 2].rotr(17), w[t - 2].rotr(19), w[t - 2].shr(10));
    w[t] = uint32_addmany(cs, {w[t - 16], s0, w[t - 7], s1});
  }
  UInt32 a = state[0], b = state[1], c = state[2], d = state[3];
  UInt32 e = state[4], f = state[5], g = state[6], h = state[7];
  for (int t = 0; t < 64; t++) {
    UInt32 S1 = xor3(cs, e.rotr(6), e.rotr(11), e.rotr(25));
    UInt32 ch;
    for (int i = 0; i < 32; i++) ch.bits[i] = sha256_ch(cs, e.bits[i], f.bits[i], g.bits[i]);
    ch.value = (e.value & f.value) ^ (~e.value & g.value);
    UInt32 S0 = xor3(cs, a.rotr(2), a.rotr(13), a.rotr(22));
    UInt32 maj;
    for (int i = 0; i < 32; i++) maj.bits[i] = sha256_maj(cs, a.bits[i], b.bits[i], c.bits[i]);
    maj.value = (a.value & b.value) ^ (a.value & c.value) ^ (b.value & c.value);
    UInt32 k = UInt32::constant(kSha256K[t]);
    UInt32 new_e = uint32_addmany(cs, {d, h, S1, ch, k, w[t]});
    UInt32 new_a = uint32_addmany(cs, {h, S1, ch, k, w[t], S0, maj});
    h = g;
    g = f;
    f = e;
    e = new_e;
    d = c;
    c = b;
    b = a;
    a = new_a;
  }
  Sha256Words out;
  const UInt32 fin[8] = {a, b, c, d, e, f, g, h};
  for (int i = 0; i < 8; i++) out[i] = uint32_addmany(cs, {state[i], fin[i]});
  return out;
}

// SHA-256 of a message of bits.size() bits (a multiple of 8), padded with constants.
template <class CS>
Sha256Words sha256_bits(CS& cs, std::span<const Boolean> bits) {
  std::vector<Boolean> m(bits.begin(), bits.end());
  uint64_t len = bits.size();
  m.push_back(Boolean::constant(true));
  while (m.size() % 512 != 448) m.push_back(Boolean::constant(false));
  for (int i = 63; i >= 0; i--) m.push_back(Boolean::constant((len >> i) & 1));
  Sha256Words s = sha256_iv_words();
  for (size_t off = 0; off < m.size(); off += 512) s = sha256_compress(cs, std::span<const Boolean>(m).subspan(off, 512), s);
  return s;
}

inline std::vector<Boolean> sha256_words_to_bits(const Sha256Words& s) {
  std::vector<Boolean> out;
  out.reserve(256);
  for (const UInt32& w : s) w.append_bits_be(out);
  return out;
}

// Bits of bytes, most significant bit of each byte first, allocated as witness.
template <class CS>
std::vector<Boolean> alloc_bytes_be(CS& cs, std::span<const uint8_t> bytes) {
  std::vector<Boolean> out;
  out.reserve(bytes.size() * 8);
  for (uint8_t byte : bytes)
    for (int i = 7; i >= 0; i--) out.push_back(Boolean::alloc(cs, (byte >> i) & 1));
  return out;
}

}  // namespace cuzk::gadgets
