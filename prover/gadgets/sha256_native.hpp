// SHA-256 out of circuit (FIPS 180-4): the compression function and the padded hash, used to
// produce witnesses and to check the gadget.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace cuzk::gadgets {

using Sha256State = std::array<uint32_t, 8>;
using Sha256Digest = std::array<uint8_t, 32>;

// FIPS 180-4, section 4.2.2 (round constants) and 5.3.3 (initial hash value).
extern const uint32_t kSha256K[64];
extern const Sha256State kSha256IV;

// One compression of a 64-byte block into the state.
void sha256_compress_native(Sha256State& state, const uint8_t block[64]);
// Message padding of FIPS 180-4 section 5.1.1: the message, 0x80, zeros, 64-bit big-endian bit
// length; a multiple of 64 bytes.
std::vector<uint8_t> sha256_pad(std::span<const uint8_t> msg);
Sha256Digest sha256_native(std::span<const uint8_t> msg);
Sha256Digest sha256_state_to_digest(const Sha256State& s);

}  // namespace cuzk::gadgets
