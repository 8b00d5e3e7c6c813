// The GPU NTT's tuned constants and the rule that picks a transform's pass plan (plain C++, so
// that tests and benchmarks compiled by g++ can name them; cuda/ntt/ntt.cu runs the plans). The
// measurements behind them are in docs/cuda-backend.md, linked beside each.
#pragma once
#include "cuda/ntt/ntt_plan.hpp"

namespace cuzk::cuda::ntt_params {

// The largest tile: 2^11 elements fill a block's 64 KiB of shared memory.
inline constexpr unsigned kMaxTileLog = 11;
// Threads of a pass's block; the occupancy caps registers at 65536 / (256 x occupancy).
inline constexpr unsigned kPassThreads = 256;
// 3 blocks per SM: capped at 80 registers three fit, and the passes want warps more than
// registers (docs/cuda-backend.md#ntt-plans-lazy-values-no-reversal-pass).
inline constexpr unsigned kDefaultOccupancy = 3;
// Tiles of 2^10 up to 2^20 elements, where tiles of 2^11 leave the last wave of blocks short
// (docs/cuda-backend.md#ntt-plans-lazy-values-no-reversal-pass).
inline constexpr unsigned kSmallTilesUpToLog = 20;
// At 2^21-2^22, tiles of 2^10 at 4 blocks per SM: more warps beat fewer spills
// (docs/cuda-backend.md#ntt-plans-lazy-values-no-reversal-pass).
inline constexpr unsigned kHighOccupancyUpToLog = 22, kHighOccupancy = 4;

// The pass plan of a transform of 2^log_n elements where none is asked for: tiles of 2^10 with up
// to 9 stages a pass up to 2^20, 10 stages at 2^21-2^22 (4 blocks per SM), tiles of 2^11 with
// up to 10 stages above.
inline NttPlan default_plan(unsigned log_n) {
  if (log_n <= kSmallTilesUpToLog) return NttPlan{10, 9, kDefaultOccupancy};
  if (log_n <= kHighOccupancyUpToLog) return NttPlan{10, 10, kHighOccupancy};
  return NttPlan{kMaxTileLog, 10, kDefaultOccupancy};
}

}  // namespace cuzk::cuda::ntt_params
