// The window reduction of the device MSM (step 5 of cuda/msm/msm.cuh) as levels of running sums: the
// plan of levels and one segment's sums, plain C++ on any XYZZ type, so that a host test runs
// the same arithmetic as the kernel (tests/test_msm.cpp).
//
// A window's sum is S = sum_{b < M} (b + 1) B_b over its M buckets. Cut the M entries into
// segments of `len` and write entry b = j len + i. Then
//   sum_b (b + base) X_b = sum_j t_j + len * sum_j j R_j,
//   t_j = sum_i (i + base) X_{j len + i}   (running sums from the segment's top, 2 len additions)
//   R_j = sum_i X_{j len + i}              (the last running sum)
// and sum_j j R_j is the same problem on the R_j with base 0. Level l's segment sums carry the
// factor 2^shift of the levels before and the sums t of the level before, so that every level's
// t adds up to S with the next level's R: level l computes t_j = 2^shift sum_i i R_i + sum_i t_i
// over its segment, until one segment is left, whose t is S. So the reduction costs about two
// additions a bucket and a few doublings a segment above the first level. The levels replaced a
// kernel that multiplied each segment's sum by its offset with a 32-bit double-and-add, then
// added the segments in rounds of 32; they are much faster at wide windows and slightly slower at
// 16 bits, where the levels above the first run few threads in series
// (docs/cuda-backend.md#window-reduction-in-levels-and-buckets-cleared-by-memset).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "prover/util/hd.hpp"

namespace cuzk::cuda {

struct WindowLevel {
  uint32_t count = 0;     // entries per window at this level (a power of two)
  uint32_t len = 0;       // entries per segment (count / len segments)
  unsigned shift = 0;     // the level's running-sum total is doubled this many times
  bool first = false;     // level 0: base 1 (digit b + 1), no sums t from a level before
  CUZK_HD uint32_t segments() const { return count / len; }
};

// The levels that reduce windows of `per_window` buckets (a power of two >= 1) in segments of at
// most `seg_len` (a power of two >= 2); the last level has one segment.
inline std::vector<WindowLevel> window_levels(uint32_t per_window, uint32_t seg_len) {
  std::vector<WindowLevel> levels;
  unsigned shift = 0;
  for (uint32_t count = per_window;;) {
    const uint32_t len = std::min(seg_len, count);
    levels.push_back({count, len, shift, levels.empty()});
    if (len == count) return levels;
    for (uint32_t l = len; l > 1; l >>= 1) ++shift;
    count /= len;
  }
}

// Segment j's sums at level `lv`: x (and, above the first level, t_in) point at the segment's
// first entry. t = 2^shift sum_i (i + base) x_i + sum_i t_in_i, r = sum_i x_i.
template <class Xyzz>
CUZK_HD void window_segment(const Xyzz* x, const Xyzz* t_in, const WindowLevel& lv, Xyzz& t, Xyzz& r) {
  Xyzz running = Xyzz::infinity(), total = Xyzz::infinity();
  for (uint32_t i = lv.len; i-- > 0;) {
    running = running.add(x[i]);
    if (i > 0 || lv.first) total = total.add(running);  // base 0 gives x_0 no weight
  }
  for (unsigned d = 0; d < lv.shift; ++d) total = total.dbl();
  if (!lv.first)
    for (uint32_t i = 0; i < lv.len; ++i) total = total.add(t_in[i]);
  t = total;
  r = running;
}

}  // namespace cuzk::cuda
