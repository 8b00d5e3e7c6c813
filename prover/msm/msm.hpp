// Multi-scalar multiplication on the CPU: sum_i s_i * P_i with Pippenger's bucket method.
//
// Scalars are recoded into signed windows of c bits with a Booth-style local rule (each digit
// depends only on its own c bits and the bit below them), so digits live in [-2^(c-1), 2^(c-1)]
// and each window needs 2^(c-1) buckets; a negative digit adds the negated point. The work is
// split into (window, bucket range) tasks over the thread pool, about four per thread; each task
// fills its buckets (batched affine additions where buckets get enough points, XYZZ mixed
// additions otherwise), reduces them with the running-sum trick, and the window sums are
// combined by Horner's rule with c doublings per window. Mostly-bit scalars (a Groth16
// witness) take a zero/one split first: zeros dropped, ones summed directly (msm.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"
#include "prover/ff/fr.hpp"

namespace cuzk {

class ThreadPool;

// Window width used for n points (cost model: windows * (n + 4 * 2^(c-1)), see msm.cpp).
unsigned msm_window_bits(size_t n);

// Scalars are fr_t in Montgomery form; points at infinity and zero scalars are allowed.
// `window_bits` 0 picks msm_window_bits(n). Throws std::invalid_argument on size mismatch.
g1_jacobian_t msm_g1(std::span<const g1_affine_t> points, std::span<const fr_t> scalars,
                     ThreadPool* pool = nullptr, unsigned window_bits = 0);
g2_jacobian_t msm_g2(std::span<const g2_affine_t> points, std::span<const fr_t> scalars,
                     ThreadPool* pool = nullptr, unsigned window_bits = 0);

// The G2 sum with the scalars in two parts, `first` then `second` (a Groth16 assignment's input
// and aux parts): where most are 0 or 1 only the others are converted to canonical form.
g2_jacobian_t msm_g2(std::span<const g2_affine_t> points, std::span<const fr_t> first, std::span<const fr_t> second,
                     ThreadPool* pool = nullptr, unsigned window_bits = 0);

// The same sums from scalars already in canonical form (4 little-endian limbs each), as the
// prover holds them after one conversion shared by several MSMs.
g1_jacobian_t msm_g1_canonical(std::span<const g1_affine_t> points, const uint64_t* scalars4, size_t n,
                               ThreadPool* pool = nullptr, unsigned window_bits = 0);
g2_jacobian_t msm_g2_canonical(std::span<const g2_affine_t> points, const uint64_t* scalars4, size_t n,
                               ThreadPool* pool = nullptr, unsigned window_bits = 0);

// Scalars in canonical form, 4 little-endian limbs each: the input of the _canonical MSMs,
// converted once when several MSMs share scalars.
struct CanonicalScalars {
  std::unique_ptr<uint64_t[]> limbs;
  size_t count = 0;
  const uint64_t* data() const { return limbs.get(); }
  size_t size() const { return count; }
};
// `first` then `second` (a Groth16 assignment is its input part then its aux part), converted
// in parallel into memory that is not zeroed first: zeroing the 512 MiB of a 2^24 assignment on
// one thread took 0.3 s, on the critical path of the GPU backend's G2 MSM.
CanonicalScalars to_canonical(std::span<const fr_t> first, std::span<const fr_t> second = {},
                              ThreadPool* pool = nullptr);

// Signed digit of window w (c bits) of a 4-limb canonical scalar.
int msm_signed_digit(const uint64_t* s, unsigned w, unsigned c);

}  // namespace cuzk
