// The vector half of msm.cpp's AffineBatch: the batched affine additions acc[slot[k]] += q[k]
// eight lanes at a time with AVX-512 IFMA (prover/ff/fp_ifma.hpp), for G1 and G2 points (one
// template over the lanes' field, Fp or Fp2); and the G2 ones' running sums.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"

namespace cuzk {

// acc[slot[k]] += q[k] for k < m (distinct slots), with one shared inversion, for every pair that
// the affine formula covers. The others are left untouched and their k appended to `special`: the
// slot at infinity (the caller just takes q), or equal x (a doubling or P + (-P), for the caller's
// general addition). Call only where cpu_has_ifma().
void g1_affine_batch_ifma(g1_affine_t* acc, const g1_affine_t* q, const uint32_t* slot, size_t m,
                          std::vector<uint32_t>& special);
void g2_affine_batch_ifma(g2_affine_t* acc, const g2_affine_t* q, const uint32_t* slot, size_t m,
                          std::vector<uint32_t>& special);

// The sum of points[idx[0..count)] (none at infinity), as `lanes` running sums kept in vector form
// between batches (only the new points are gathered and repacked), each batch adding the next
// `lanes` points one per sum with one shared inversion. Equal-x pairs are added into `extra` by the
// general formula. Returns the sums, for the caller to add up; `lanes` is a multiple of 8.
// Call only where cpu_has_ifma().
std::vector<g2_affine_t> g2_sum_indexed_ifma(const g2_affine_t* points, const uint32_t* idx, size_t count,
                                             size_t lanes, g2_jacobian_t& extra);

}  // namespace cuzk
