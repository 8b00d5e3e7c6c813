// Multi-scalar multiplication on the device, for G1 and G2 (one class template, Msm<P>, over the
// traits of cuda/msm_points.hpp): Pippenger with signed (Booth) digits, points sorted into
// buckets with CUB's radix sort, bucket sums in XYZZ coordinates, and a parallel running-sum
// reduction of each window; the windows are combined on the host.
//
//  1. digits:  one thread per scalar writes, for every window w, key = w * 2^(c-1) + |d| - 1 and
//              value = point index | sign << 31 (zero digits get the sentinel key, sorted past
//              every bucket); this needs only the scalars, so it may overlap the points' upload;
//  2. sort:    cub::DeviceRadixSort on the keys (only the bits a key can use);
//  3. runs:    cub::DeviceRunLengthEncode gives each non-empty bucket's run of point indices;
//  4. sums:    runs are cut into chunks of at most `chunk` points, one thread per chunk sums
//              its points (mixed XYZZ additions); chunk sums of one bucket are then summed in
//              further rounds until one remains. Chunking bounds the work of a thread
//              even when one bucket holds most points (0/1 witness values put millions of
//              points in bucket 1 of window 0);
//  5. windows: each window's 2^(c-1) buckets are split into segments of 16; a thread computes
//              its segment's sum k * B_k with running sums plus a multiple of the segment's
//              total, and the segments' results are added in rounds of 32 per thread;
//  6. host:    Horner's rule over the window sums, c doublings per window.
// Windows are processed in groups so that a sort never exceeds 2^30 pairs.
//
// Steps 1-3 depend only on the scalars; the group enters at step 4 (which points are added, and
// in what form). G2 runs the same kernels on Fp2 coordinates: an addition costs about three
// times G1's, and a bucket holds 4 x 96 bytes instead of 4 x 48.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <span>

#include "cuda/check.cuh"
#include "cuda/msm_points.hpp"
#include "cuda/progress.hpp"
#include "prover/ff/fr.hpp"

namespace cuzk::cuda {

// Window width for n points on the GPU, for both groups. The rule balances the work per point
// (windows * n digits sorted and added) against the work per bucket (windows * 2^(c-1) buckets
// reduced); a G2 addition costs about 3 times a G1 addition on both sides of that balance, so the
// rule carries over. Only the sort, the same cost per key in both groups, weighs less beside
// G2's additions, which would favour slightly narrower windows for G2: BM_gpu_msm_g2's window
// axis measures whether that is worth a rule of its own.
unsigned gpu_msm_window_bits(size_t n);

// Part of an MSM's input on the device: the points and scalars [i, i + n) of the whole. The
// events, when set, are recorded by the uploads of the scalars and of the points; the MSM waits
// for each only when it first needs it, so a slice's digits and sort overlap the upload of its
// points, and its bucket sums the upload of the next slice. When another host thread records
// the events (a staged upload, cuda/host_upload.cuh), `recorded` is its count of recorded events
// and the MSM waits for it to reach scalars_at (bases_at) before it makes the stream wait for
// scalars_ready (bases_ready): a stream waits only for an event's record made before the wait.
template <class P>
struct MsmSliceOf {
  const typename P::affine* bases;
  const fr_t* scalars;
  size_t n;
  cudaEvent_t scalars_ready = nullptr, bases_ready = nullptr;
  const Progress* recorded = nullptr;
  size_t scalars_at = 0, bases_at = 0;
};
using MsmSlice = MsmSliceOf<G1Points>;

// The device buffers of an MSM, grown on demand and kept between runs. The XYZZ buffers are
// bytes, so that a G1 and a G2 MSM run one after the other on one stream (the proving stage's
// msm_b_g1 then msm_b_g2) can share one workspace and need only the larger footprint of the
// two: at 2^27 points the sort buffers alone take 16 GiB. Never share one between MSMs that
// run concurrently.
struct MsmWorkspace {
  DeviceArray<uint32_t> keys[2], vals[2], run_key, run_len, run_off, task_off, seg_len[2], seg_off[2];
  DeviceArray<uint32_t> run_count;
  DeviceArray<uint8_t> temp;
  DeviceArray<uint8_t> part[2], buckets, seg_sums[2];  // XYZZ points of the MSM's group
};

template <class P>
class Msm {
 public:
  using Affine = typename P::affine;
  using Xyzz = typename P::xyzz;
  using Jacobian = typename P::jacobian;
  using Slice = MsmSliceOf<P>;

  Msm() : ws_(std::make_shared<MsmWorkspace>()) {}
  // Shares the buffers of another MSM (MsmWorkspace: one at a time, on one stream).
  explicit Msm(std::shared_ptr<MsmWorkspace> ws) : ws_(std::move(ws)) {}

  // sum_i scalars[i] * bases[i] for device arrays of n points (affine, infinity allowed) and n
  // scalars (Montgomery form, zero allowed). Synchronizes `s` before returning.
  // bases_ready, when given, is an event the points' upload records: the digits, sort and run
  // finding (which need only the scalars) go ahead of it, so they overlap the upload.
  Jacobian run(const Affine* d_bases, const fr_t* d_scalars, size_t n, cudaStream_t s, unsigned window_bits = 0,
               cudaEvent_t bases_ready = nullptr);
  // The sum over slices: every slice adds into one set of buckets, reduced once at the end.
  // Window bits 0 picks the width for the total length.
  Jacobian run(std::span<const Slice> slices, cudaStream_t s, unsigned window_bits = 0);
  // Points (or partial sums) one thread adds per round of the bucket sums (default 32).
  void set_chunk(uint32_t points);
  uint32_t chunk() const { return chunk_; }
  const std::shared_ptr<MsmWorkspace>& workspace() const { return ws_; }

 private:
  // Digits, sort and bucket sums of one slice, added into all_buckets (windows x 2^(c-1)).
  void accumulate(const Slice& sl, cudaStream_t s, unsigned c, unsigned windows, Xyzz* all_buckets);
  std::shared_ptr<MsmWorkspace> ws_;
  uint32_t chunk_ = 32;
};

using MsmG1 = Msm<G1Points>;
using MsmG2 = Msm<G2Points>;
// Instantiated once, in msm.cu.
extern template class Msm<G1Points>;
#if CUZK_GPU_G2
extern template class Msm<G2Points>;  // instantiated only with CUZK_GPU_G2 (msm.cu says why)
#endif

}  // namespace cuzk::cuda
