// Groth16 parameter generation from seeded toxic waste (deterministic, for benchmarks and
// tests: the same matrices and seed give the same keys). Not a trusted setup.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "prover/groth16/keys.hpp"
#include "prover/r1cs/shape.hpp"

namespace cuzk {
class ThreadPool;
}

namespace cuzk::groth16 {

// The toxic waste derived from a seed: tau, alpha, beta, gamma, delta (all non-zero).
struct ToxicWaste {
  fr_t tau, alpha, beta, gamma, delta;
  static ToxicWaste from_seed(uint64_t seed);
};

// The window table of the fixed-base multiplications: 32 windows of 8 bits over a canonical
// scalar, table[i * 255 + d - 1] = d * 2^(8 i) * base for the digits d = 1..255.
inline constexpr unsigned kFixedBaseWindowBits = 8;
inline constexpr unsigned kFixedBaseWindows = 32;
inline constexpr unsigned kFixedBaseDigits = 255;
// Digit i of a canonical scalar (four little-endian limbs): the table row it picks, 0 for none.
CUZK_HD unsigned fixed_base_digit(const uint64_t* s, unsigned i) {
  return unsigned(s[(i * kFixedBaseWindowBits) / 64] >> ((i * kFixedBaseWindowBits) % 64)) &
         ((1u << kFixedBaseWindowBits) - 1);
}
std::vector<g1_affine_t> fixed_base_table(const g1_affine_t& base);
std::vector<g2_affine_t> fixed_base_table(const g2_affine_t& base);

// A device that does the key generation's fixed-base multiplications, almost all of its work
// at large sizes: result[k] = sum over windows i of table[i * 255 + digit_i(scalars[k]) - 1].
// The keys are the same bit for bit wherever they are computed. Backends register theirs
// (prover/groth16/backend.hpp, register_fixed_base_device); the CUDA library's is
// cuda/keygen/fixed_base.hpp.
class FixedBaseDevice {
 public:
  virtual ~FixedBaseDevice() = default;
  // Where it runs, for the progress line ("cuda:0 NVIDIA H100 80GB HBM3").
  virtual std::string describe() const = 0;
  virtual std::vector<g1_affine_t> g1(std::span<const g1_affine_t> table, std::span<const fr_t> scalars) = 0;
  // False where the device has no G2 kernel in this build: G2 then runs on CPU threads.
  virtual bool has_g2() const = 0;
  virtual std::vector<g2_affine_t> g2(std::span<const g2_affine_t> table, std::span<const fr_t> scalars) = 0;
};

struct KeygenOptions {
  ThreadPool* pool = nullptr;          // CPU threads (nullptr: the global pool)
  FixedBaseDevice* device = nullptr;   // the fixed-base multiplications there (nullptr: CPU threads)
};

// The QAP's polynomials at tau, one value per variable (inputs first, as R1csMatrices numbers
// its columns): u_j(tau), v_j(tau), w_j(tau) from the A, B, C matrices.
struct QapAtTau {
  uint64_t num_inputs = 0, num_aux = 0, num_constraints = 0;
  std::vector<fr_t> u, v, w;
  static QapAtTau zeros(uint64_t inputs, uint64_t aux, uint64_t constraints);
};
// L_i(tau) for every i of the domain of `constraints` (the Lagrange basis at tau); throws
// std::invalid_argument when tau lies in the domain.
std::vector<fr_t> lagrange_at_tau(const fr_t& tau, uint64_t constraints, ThreadPool* pool);
// From the matrices (a thread per matrix); `lag` from lagrange_at_tau. Without matrices, a sliced
// circuit's evaluation comes from synth::evaluate_qap_sliced.
QapAtTau qap_at_tau(const r1cs::R1csMatrices& m, std::span<const fr_t> lag);
// Keys from the QAP at tw.tau; each of its vectors is freed once its points exist.
ProvingKey generate_keys(QapAtTau qap, const ToxicWaste& tw, const KeygenOptions& options);

// Keys for the circuit whose constraints are `m` (which must include bellman's input
// constraints, as r1cs::enforce_input_constraints appends them).
ProvingKey generate_keys(const r1cs::R1csMatrices& m, uint64_t seed, ThreadPool* pool = nullptr);
ProvingKey generate_keys(const r1cs::R1csMatrices& m, const ToxicWaste& tw, ThreadPool* pool = nullptr);
ProvingKey generate_keys(const r1cs::R1csMatrices& m, uint64_t seed, const KeygenOptions& options);
ProvingKey generate_keys(const r1cs::R1csMatrices& m, const ToxicWaste& tw, const KeygenOptions& options);

// k_i * G for many scalars and one base, with a shared window table (multi-threaded).
std::vector<g1_affine_t> fixed_base_g1(const g1_affine_t& base, std::span<const fr_t> scalars, ThreadPool* pool);
std::vector<g2_affine_t> fixed_base_g2(const g2_affine_t& base, std::span<const fr_t> scalars, ThreadPool* pool);

}  // namespace cuzk::groth16
