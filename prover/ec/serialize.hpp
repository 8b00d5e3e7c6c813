// Zcash / Filecoin encodings of BLS12-381 points (the format of zkcrypto/bls12_381, blst,
// filecoin-proofs parameter files and ETH2 keys).
//
//   G1 compressed 48 bytes: x (big-endian);  uncompressed 96: x || y
//   G2 compressed 96 bytes: x.c1 || x.c0;    uncompressed 192: x.c1 || x.c0 || y.c1 || y.c0
//
// The three most significant bits of the first byte are flags:
//   0x80 compression: set exactly when the encoding is the compressed one
//   0x40 infinity:    the point at infinity; every other bit (and the sort flag) must be zero
//   0x20 sort:        compressed only: y is the lexicographically largest of {y, -y}
//                     (Fp: y > (p-1)/2; Fp2: by c1, then by c0 when c1 == 0)
//
// Decoding returns a decode_error value (errors as values, no exceptions in the core); the
// *_or_throw wrappers throw std::invalid_argument with decode_error_message's text.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"

namespace cuzk {

enum class decode_error {
  ok,
  bad_length,       // not 48/96 (G1) or 96/192 (G2) bytes
  bad_flags,        // compression flag disagrees with the length, or sort flag on uncompressed
  non_canonical,    // a coordinate >= p
  not_on_curve,     // compressed: x^3 + b has no square root; uncompressed: y^2 != x^3 + b
  not_in_subgroup,  // on the curve but not in the order-r subgroup
  bad_infinity,     // infinity flag with a non-zero coordinate or the sort flag set
};
const char* decode_error_message(decode_error e);

inline constexpr size_t g1_compressed_size = 48, g1_uncompressed_size = 96;
inline constexpr size_t g2_compressed_size = 96, g2_uncompressed_size = 192;

void g1_to_compressed(const g1_affine_t& p, uint8_t out[48]);
void g1_to_uncompressed(const g1_affine_t& p, uint8_t out[96]);
void g2_to_compressed(const g2_affine_t& p, uint8_t out[96]);
void g2_to_uncompressed(const g2_affine_t& p, uint8_t out[192]);

// Decode len bytes: 48 or 96 for G1, 96 or 192 for G2 (the length selects the form, and the
// compression flag must agree). check_subgroup = false skips the r-torsion test (trusted input
// such as parameters already validated once); curve and canonicity checks always run.
decode_error g1_decode(const uint8_t* in, size_t len, g1_affine_t& out, bool check_subgroup = true);
decode_error g2_decode(const uint8_t* in, size_t len, g2_affine_t& out, bool check_subgroup = true);

// Convenience for tests and tools.
std::array<uint8_t, 48> g1_compress(const g1_affine_t& p);
std::array<uint8_t, 96> g2_compress(const g2_affine_t& p);
std::string to_hex(const uint8_t* bytes, size_t len);
template <size_t N> std::string to_hex(const std::array<uint8_t, N>& a) {
  return to_hex(a.data(), N);
}
// Lower/upper-case hex, optional "0x"; false on odd length or a non-hex digit.
bool from_hex(const std::string& hex, std::vector<uint8_t>& out);

g1_affine_t g1_decode_or_throw(const uint8_t* in, size_t len, bool check_subgroup = true);
g2_affine_t g2_decode_or_throw(const uint8_t* in, size_t len, bool check_subgroup = true);
g1_affine_t g1_from_hex_or_throw(const std::string& hex);
g2_affine_t g2_from_hex_or_throw(const std::string& hex);

}  // namespace cuzk
