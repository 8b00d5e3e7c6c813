// How a device NTT splits into kernel passes (plain C++, so that tests and benchmarks compiled by
// g++ can name a plan; cuda/ntt/ntt.cu runs it).
#pragma once

namespace cuzk::cuda {

// A pass loads a tile of 2^tile_log elements (groups of 2^k, the k <= max_stages consecutive
// butterfly stages the pass runs, side by side) into shared memory, runs its stages there and
// stores the tile back; a transform of 2^log_n runs ceil(log_n / max_stages) passes with the
// stages spread as evenly as they go. {} (both zero) picks the default rule (cuda/ntt/ntt_params.hpp,
// default_plan).
//
// occupancy: the blocks of 256 threads an SM must be able to hold at once (2 .. 4; 0 the default,
// 3), which caps each thread's registers (65536 / (256 x occupancy): 128, 85 -> 80, 64): fewer
// registers spill more but leave more warps to hide the products' latency.
//
// early_launch: each pass is launched as a programmatic dependent of the kernel before it
// (compute capability 9.0 and up), so that its launch overlaps that kernel's last blocks; it waits
// for that kernel's results before it reads. Off: plain launches, each after the one before ends.
struct NttPlan {
  unsigned tile_log = 0;    // 2 .. 11 (2^11 elements fill 64 KiB of shared memory)
  unsigned max_stages = 0;  // 1 .. tile_log
  unsigned occupancy = 0;   // 0 or 2 .. 4
  bool early_launch = true;
};

}  // namespace cuzk::cuda
