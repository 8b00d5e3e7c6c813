// Zcash / Filecoin point encodings (see serialize.hpp for the format).
#include "prover/ec/serialize.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace cuzk {

namespace {

constexpr uint8_t flag_compressed = 0x80;
constexpr uint8_t flag_infinity = 0x40;
constexpr uint8_t flag_sort = 0x20;
constexpr uint8_t flag_mask = 0xe0;

// Fp2 ordering of the Zcash format: c1 decides, c0 breaks the tie when c1 == 0.
bool lex_largest(const fp_t& a) { return a.lexicographically_largest(); }
bool lex_largest(const fp2_t& a) {
  return a.c1.lexicographically_largest() || (a.c1.is_zero() && a.c0.lexicographically_largest());
}

void put(const fp_t& a, uint8_t* out) { a.to_bytes_be(out); }
void put(const fp2_t& a, uint8_t* out) {
  a.c1.to_bytes_be(out);
  a.c0.to_bytes_be(out + 48);
}
bool get(const uint8_t* in, fp_t& out) { return fp_t::from_bytes_be(in, out); }
bool get(const uint8_t* in, fp2_t& out) {
  return fp_t::from_bytes_be(in, out.c1) && fp_t::from_bytes_be(in + 48, out.c0);
}
bool sqrt_of(const fp_t& a, fp_t& r) { return a.sqrt(r); }
bool sqrt_of(const fp2_t& a, fp2_t& r) { return a.sqrt(r); }

// One implementation for G1 (F = fp_t, FB = 48) and G2 (F = fp2_t, FB = 96).
template <class Affine, size_t FB>
void encode(const Affine& p, bool compressed, uint8_t* out) {
  size_t len = compressed ? FB : 2 * FB;
  if (p.inf) {
    std::memset(out, 0, len);
    out[0] = flag_infinity | (compressed ? flag_compressed : 0);
    return;
  }
  put(p.x, out);
  if (compressed) {
    out[0] |= flag_compressed | (lex_largest(p.y) ? flag_sort : 0);
  } else {
    put(p.y, out + FB);
  }
}

template <class Affine, size_t FB>
decode_error decode(const uint8_t* in, size_t len, Affine& out, bool check_subgroup) {
  using F = typename Affine::field_t;
  if (len != FB && len != 2 * FB) return decode_error::bad_length;
  bool compressed = len == FB;
  uint8_t flags = in[0] & flag_mask;
  if (bool(flags & flag_compressed) != compressed) return decode_error::bad_flags;
  bool infinity = flags & flag_infinity;
  bool sort = flags & flag_sort;
  if (!compressed && sort) return decode_error::bad_flags;

  // The coordinates with the flag bits cleared.
  uint8_t buf[2 * FB];
  std::memcpy(buf, in, len);
  buf[0] &= uint8_t(~flag_mask);

  if (infinity) {
    if (sort) return decode_error::bad_infinity;
    for (size_t i = 0; i < len; i++)
      if (buf[i]) return decode_error::bad_infinity;
    out = Affine::infinity();
    return decode_error::ok;
  }

  F x, y;
  if (!get(buf, x)) return decode_error::non_canonical;
  F rhs = x.sqr() * x + Affine::config_t::b();
  if (compressed) {
    if (!sqrt_of(rhs, y)) return decode_error::not_on_curve;
    if (lex_largest(y) != sort) y = -y;
  } else {
    if (!get(buf + FB, y)) return decode_error::non_canonical;
    if (y.sqr() != rhs) return decode_error::not_on_curve;
  }
  Affine p = Affine::from_xy(x, y);
  if (check_subgroup && !p.in_subgroup()) return decode_error::not_in_subgroup;
  out = p;
  return decode_error::ok;
}

[[noreturn]] void throw_decode(decode_error e) { throw std::invalid_argument(decode_error_message(e)); }

}  // namespace

const char* decode_error_message(decode_error e) {
  switch (e) {
    case decode_error::ok: return "ok";
    case decode_error::bad_length: return "bad length: a G1 point is 48 (compressed) or 96 bytes, a G2 point 96 or 192";
    case decode_error::bad_flags: return "bad flags: the compression bit disagrees with the length, or the sort bit is set on an uncompressed point";
    case decode_error::non_canonical: return "non-canonical coordinate: a field element is >= p";
    case decode_error::not_on_curve: return "the point is not on the curve";
    case decode_error::not_in_subgroup: return "the point is not in the prime-order subgroup";
    case decode_error::bad_infinity: return "bad infinity encoding: the infinity bit is set with a non-zero coordinate or the sort bit";
  }
  return "unknown decode error";
}

void g1_to_compressed(const g1_affine_t& p, uint8_t out[48]) { encode<g1_affine_t, 48>(p, true, out); }
void g1_to_uncompressed(const g1_affine_t& p, uint8_t out[96]) { encode<g1_affine_t, 48>(p, false, out); }
void g2_to_compressed(const g2_affine_t& p, uint8_t out[96]) { encode<g2_affine_t, 96>(p, true, out); }
void g2_to_uncompressed(const g2_affine_t& p, uint8_t out[192]) { encode<g2_affine_t, 96>(p, false, out); }

decode_error g1_decode(const uint8_t* in, size_t len, g1_affine_t& out, bool check_subgroup) {
  return decode<g1_affine_t, 48>(in, len, out, check_subgroup);
}
decode_error g2_decode(const uint8_t* in, size_t len, g2_affine_t& out, bool check_subgroup) {
  return decode<g2_affine_t, 96>(in, len, out, check_subgroup);
}

std::array<uint8_t, 48> g1_compress(const g1_affine_t& p) {
  std::array<uint8_t, 48> a;
  g1_to_compressed(p, a.data());
  return a;
}
std::array<uint8_t, 96> g2_compress(const g2_affine_t& p) {
  std::array<uint8_t, 96> a;
  g2_to_compressed(p, a.data());
  return a;
}

std::string to_hex(const uint8_t* bytes, size_t len) {
  static const char* digits = "0123456789abcdef";
  std::string s(2 * len, '0');
  for (size_t i = 0; i < len; i++) {
    s[2 * i] = digits[bytes[i] >> 4];
    s[2 * i + 1] = digits[bytes[i] & 15];
  }
  return s;
}

bool from_hex(const std::string& hex, std::vector<uint8_t>& out) {
  size_t pos = (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) ? 2 : 0;
  if ((hex.size() - pos) % 2) return false;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  out.clear();
  for (size_t i = pos; i < hex.size(); i += 2) {
    int hi = nib(hex[i]), lo = nib(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(uint8_t(hi << 4 | lo));
  }
  return true;
}

g1_affine_t g1_decode_or_throw(const uint8_t* in, size_t len, bool check_subgroup) {
  g1_affine_t p;
  if (auto e = g1_decode(in, len, p, check_subgroup); e != decode_error::ok) throw_decode(e);
  return p;
}
g2_affine_t g2_decode_or_throw(const uint8_t* in, size_t len, bool check_subgroup) {
  g2_affine_t p;
  if (auto e = g2_decode(in, len, p, check_subgroup); e != decode_error::ok) throw_decode(e);
  return p;
}
g1_affine_t g1_from_hex_or_throw(const std::string& hex) {
  std::vector<uint8_t> b;
  if (!from_hex(hex, b)) throw std::invalid_argument("not a hex string: " + hex);
  return g1_decode_or_throw(b.data(), b.size());
}
g2_affine_t g2_from_hex_or_throw(const std::string& hex) {
  std::vector<uint8_t> b;
  if (!from_hex(hex, b)) throw std::invalid_argument("not a hex string: " + hex);
  return g2_decode_or_throw(b.data(), b.size());
}

}  // namespace cuzk
