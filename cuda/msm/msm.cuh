// Multi-scalar multiplication on the device, for G1 and G2 (one class template, Msm<P>, over the
// traits of cuda/msm/msm_points.hpp): Pippenger with signed (Booth) digits, points sorted into
// buckets with CUB's radix sort, bucket sums in XYZZ coordinates, and a parallel running-sum
// reduction of each window; the windows are combined on the host.
//
//  1. digits:  one thread per scalar writes, for every window w, key = w * 2^(c-1) + |d| - 1 and
//              value = point index | sign << 31 (zero digits get the sentinel key, sorted past
//              every bucket; or, for mostly-short scalars such as an assignment, a pass counts
//              the non-zero digits first and only they are written: set_skip_zero_digits); this
//              needs only the scalars, so it may overlap the points' upload;
//  2. sort:    cub::DeviceRadixSort on the keys (only the bits a key can use);
//  3. runs:    cub::DeviceRunLengthEncode gives each non-empty bucket's run of point indices;
//  4. sums:    runs are cut into chunks of at most `chunk` points, one thread per chunk sums
//              its points (mixed XYZZ additions); chunk sums of one bucket are then summed in
//              further rounds until one remains. Chunking bounds the work of a thread
//              even when one bucket holds most points (0/1 witness values put millions of
//              points in bucket 1 of window 0); as the partial sums dwindle, the later rounds
//              give a thread fewer, so that a round still fills the GPU. Or
//              (Msm::set_equal_chunks) the sorted points are cut into equal chunks whatever
//              their buckets, so that no thread waits on a short last chunk of its bucket: a
//              chunk adds the buckets that lie inside it straight into them, and leaves the sums
//              of its first and last bucket, which may go on in its neighbours, as two pieces
//              that the further rounds sum by bucket;
//  5. windows: each window's sum of k * B_k over its 2^(c-1) buckets, in levels of running sums
//              over segments of 16 (cuda/msm/window_sum.hpp): about two additions a bucket;
//  6. host:    Horner's rule over the window sums, c doublings per window.
// Windows are processed in groups so that a sort never exceeds 2^30 pairs (counting zero digits,
// so that a group's bound does not depend on the scalars).
//
// Steps 1-3 depend only on the scalars; the group enters at step 4 (which points are added, and
// in what form). So MSMs over one set of scalars can share them (DigitPlan): the proving stage
// sorts the assignment once for msm_l, msm_a, msm_b_g1 and msm_b_g2. G2 runs the same kernels
// on Fp2 coordinates: an addition costs about three times G1's, and a bucket holds 4 x 96 bytes
// instead of 4 x 48.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cuda/util/cuda_check.cuh"
#include "cuda/util/device_array.cuh"
#include "cuda/msm/msm_params.hpp"
#include "cuda/msm/msm_points.hpp"
#include "cuda/util/progress.hpp"
#include "prover/ff/fr.hpp"

namespace cuzk::cuda {

// The window rules and the tuned constants: cuda/msm/msm_params.hpp.

// Part of an MSM's input on the device: the points and scalars [i, i + n) of the whole. The
// events, when set, are recorded by the uploads of the scalars and of the points; the MSM waits
// for each only when it first needs it, so a slice's digits and sort overlap the upload of its
// points, and its bucket sums the upload of the next slice. When another host thread records
// the events (a staged upload, cuda/stage/staged_upload.cuh), `recorded` is its count of recorded events
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
  // Steps 1-3 and the cut into chunks (a DigitPlan points into these): sort buffers, bucket runs,
  // chunks per run and their offsets; with equal chunks, the keys of the chunks' pieces.
  DeviceArray<uint32_t> keys[2], vals[2], run_key, run_len, run_off, run_count, task_count, task_off, piece_key;
  DeviceArray<unsigned long long> block_count, block_off;  // non-zero digits per block of scalars
  // Step 4's later rounds (partial sums per run and their offsets), never a plan's.
  DeviceArray<uint32_t> seg_len[2], seg_off[2];
  DeviceArray<uint8_t> temp;
  // XYZZ points of the MSM's group; seg_sums: two levels' t and R of the window reduction;
  // slice_buckets: the buckets of a slice after the first, with equal chunks (Msm::accumulate).
  DeviceArray<uint8_t> part[2], buckets, seg_sums[4], slice_buckets;
  uint64_t plans = 0;  // plans made on these buffers: a DigitPlan is valid while this is its own
};

// The scalars' side of an MSM over all its windows: digits sorted into bucket runs (steps 1-3)
// and the runs cut into chunks of points for step 4's first round. MSMs over the same scalars
// with different points (the proving stage's assignment MSMs, G1 and G2 alike) each run on one
// plan instead of sorting again. It points into its workspace's buffers and stays valid until the
// next plan on that workspace, which every MSM over scalars of its own makes: Msm::run checks.
//
// Cut into equal chunks (Msm::set_equal_chunks: `equal`), the first round's outputs are two
// pieces per chunk (2 * tasks) instead of one sum per chunk, and the runs the later rounds sum are
// the runs of equal keys among the pieces: run_key, task_count and task_off then describe those
// (a bucket's pieces, and where they start), and run_off, run_len are not set.
struct DigitPlan {
  size_t n = 0;                  // scalars
  unsigned c = 0, windows = 0;   // window bits, windows
  uint32_t runs = 0;             // non-empty buckets (equal chunks: buckets that have pieces)
  uint32_t tasks = 0, chunk = 0; // chunks of at most `chunk` points in the first round
  bool equal = false;            // equal chunks across buckets
  uint32_t entries = 0;          // equal chunks: the sorted pairs that have a bucket (no zero digit)
  const uint32_t *keys = nullptr;  // equal chunks: the sorted keys
  const uint32_t *vals = nullptr, *run_key = nullptr, *run_off = nullptr, *run_len = nullptr;
  const uint32_t *task_count = nullptr, *task_off = nullptr;  // chunks of each run, their first
  // The first round's outputs: a sum per chunk, or two pieces per chunk with equal chunks.
  uint32_t outputs() const { return equal ? 2 * tasks : tasks; }
  const MsmWorkspace* ws = nullptr;
  uint64_t id = 0;  // MsmWorkspace::plans when it was made
  // Past every bucket's key: the keys' bound, and the key of zero digits where they are sorted.
  uint32_t sentinel() const { return uint32_t(windows) << (c - 1); }
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
  // The plan of n scalars on the device (Montgomery form) for MSMs that share them, or nothing
  // where its digits would not fit one sort (more than 2^30 non-zero digits; with every digit
  // sorted, windows * n > 2^30: at 16-bit windows, n > 2^26); each MSM then sorts its own groups
  // of windows with run() above.
  std::optional<DigitPlan> plan(const fr_t* d_scalars, size_t n, cudaStream_t s, unsigned window_bits = 0);
  // Whether plan() may make a plan for n scalars at these window bits (0: the rule): false only
  // where every digit is sorted and they cannot fit; with zero digits left out the count decides.
  bool may_plan(size_t n, unsigned window_bits = 0) const;
  // sum_{i >= skip} scalars[i] * bases[i - skip] over a plan's scalars: the first `skip` have no
  // point (the stage's msm_l, whose L query starts after the public inputs). The plan must be
  // its workspace's latest (std::logic_error otherwise). Synchronizes `s` before returning.
  Jacobian run(const DigitPlan& plan, const Affine* d_bases, cudaStream_t s, size_t skip = 0);
  // Points (or partial sums) one thread adds per round of the bucket sums (default 32 per
  // bucket run, kEqualChunk with equal chunks).
  void set_chunk(uint32_t points);
  // Cut the sorted points into equal chunks across buckets (step 4 above: on) or each bucket's
  // run into chunks of its own (off); plans made from then on are cut so. Unset (the default):
  // the rule, gpu_msm_equal_chunks, where every digit is sorted (full-width scalars), and per
  // bucket where only the non-zero digits are (an assignment's, set_skip_zero_digits). The width
  // rule (window bits 0) follows: the equal-chunk widths unless this is off. Equal chunks pay
  // where buckets hold 128 digits or fewer, since no thread then waits on a short last chunk.
  // Over several slices into one set of buckets (run() with slices), every slice after the first
  // sums into buckets of its own that are then added into the shared ones (accumulate), because
  // adding straight into buckets an earlier slice filled makes each lane's addition a full XYZZ
  // addition at a different step, and the warp diverges (docs/cuda-backend.md#a-slices-own-buckets).
  void set_equal_chunks(std::optional<bool> on) { equal_chunks_ = on; }
  static constexpr uint32_t kRunChunk = msm_params::kRunChunk, kEqualChunk = msm_params::kEqualChunk;
  // Sort only the non-zero digits, for scalars that are mostly short (an assignment: on in the
  // proving stage's assignment MSMs, StageOptions::skip_zero_digits); it costs a pass over the
  // scalars that counts them, and where more than half the digits turn out non-zero, every digit
  // is sorted after all. Off (the default, right for full-width scalars such as H's): every digit.
  void set_skip_zero_digits(bool on) { skip_zero_ = on; }
  // Cut the later rounds of the bucket sums so that each fills the GPU (on, the default:
  // gpu_msm_later_chunk, fewer partial sums a thread as they dwindle) or in chunks of the first
  // round's size (off: the former way, for the A/B).
  void set_fill_later_rounds(bool on) { fill_later_rounds_ = on; }
  const std::shared_ptr<MsmWorkspace>& workspace() const { return ws_; }

 private:
  // Digits, sort and bucket sums of one slice, added into all_buckets (windows x 2^(c-1)); `fresh`:
  // no slice has added into them yet (they are all at infinity).
  void accumulate(const Slice& sl, cudaStream_t s, unsigned c, unsigned windows, Xyzz* all_buckets, bool fresh);
  // Steps 1-3 and the chunk cut for windows [w0, w1) of n scalars, into the plan buffers. Its
  // windows are w1 - w0; runs == 0 when every digit is zero; nothing when the digits to sort
  // exceed 2^30.
  std::optional<DigitPlan> plan_windows(const fr_t* d_scalars, size_t n, unsigned c, unsigned w0, unsigned w1, cudaStream_t s);
  // The equal chunks of a plan's `pairs` sorted keys (the zero digits' sentinel run last, where
  // zeros_sorted) and the runs of their pieces' keys.
  void cut_equal_chunks(DigitPlan& p, const uint32_t* keys, size_t pairs, bool zeros_sorted, cudaStream_t s);
  // Step 4 for a plan: each run's points summed and added into its bucket of `buckets` (the
  // plan's first window's).
  void sum_runs(const DigitPlan& p, const Affine* d_bases, size_t skip, cudaStream_t s, Xyzz* buckets);
  // Fresh buckets for `windows` windows of c bits (all at infinity), and steps 5-6 on them.
  Xyzz* clear_buckets(unsigned c, unsigned windows, cudaStream_t s);
  Jacobian reduce_windows(const Xyzz* buckets, unsigned c, unsigned windows, cudaStream_t s);
  // The window bits asked for (0: the rule for n points and this MSM's cut), checked.
  unsigned window_bits_for(size_t n, unsigned c) const;
  std::shared_ptr<MsmWorkspace> ws_;
  uint32_t chunk_ = 0;  // 0: the default of the plan's cut (kRunChunk or kEqualChunk)
  bool skip_zero_ = false;
  bool fill_later_rounds_ = true;
  std::optional<bool> equal_chunks_;  // unset: gpu_msm_equal_chunks
};

using MsmG1 = Msm<G1Points>;
using MsmG2 = Msm<G2Points>;
// Instantiated once, in msm.cu.
extern template class Msm<G1Points>;
#if CUZK_GPU_G2
extern template class Msm<G2Points>;  // instantiated only with CUZK_GPU_G2 (msm.cu says why)
#endif

}  // namespace cuzk::cuda
