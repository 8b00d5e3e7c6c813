// The cuzk parameter file: a versioned binary image of a ProvingKey, memory-mapped on load.
//
// Layout (little-endian, version 1; docs/params-format.md):
//   0   char[8]  magic "CUZKPARM"
//   8   u32      version (1)            12  u32 H convention (0 bellman, 1 snarkjs)
//   16  u64      num_inputs, num_aux, num_constraints, domain_size, seed      (5 x u64)
//   56  u64      counts: ic, a, b_g1, b_g2, h, l                                (6 x u64)
//   104 u32      bytes per G1 point, u32 bytes per G2 point
//   112 u64      payload bytes          120 u64 payload checksum      128 u64 header checksum
//   136 u64      reserved (0)
//   144 payload: alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2, then ic, a, b_g1, b_g2, h, l
// Points are stored in this prover's in-memory affine form (Montgomery limbs, then the
// infinity flag, zero padding), so a loaded key views the mapping without any conversion.
// The checksums are 64-bit word hashes that catch truncation and corruption (not tampering).
#pragma once
#include <stdexcept>
#include <string>

#include "prover/groth16/keys.hpp"

namespace cuzk::groth16 {

class ParamsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr uint32_t kParamsVersion = 1;
// The largest evaluation domain a parameter file may declare (2^31 points: the snarkjs
// convention's coset needs a 2n-th root of unity, and Fr's 2-adicity is 32).
constexpr unsigned kMaxParamsDomainLog = 31;

// Writes to `path` through a temporary file renamed into place (never a partial file).
void save_params(const ProvingKey& pk, const std::string& path);

// Maps and validates the file; throws ParamsError naming the file and what is wrong (missing,
// not a parameter file, wrong version, truncated, corrupt: counts whose sizes overflow or
// disagree with the file, a domain that is not a power of two up to 2^kMaxParamsDomainLog).
// The prover's loaders and `cuzk-bench srs inspect` all come through here.
ProvingKey load_params(const std::string& path);

// Throws ParamsError when the key was made for a circuit of another shape.
void check_params_shape(const ProvingKey& pk, uint64_t num_inputs, uint64_t num_aux, uint64_t num_constraints,
                        const std::string& what);

// The word hash used for the checksums (exposed for tests).
uint64_t params_checksum(const void* data, size_t bytes);

}  // namespace cuzk::groth16
