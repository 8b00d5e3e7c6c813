// G1 multi-scalar multiplication on the device: Pippenger with signed (Booth) digits, points
// sorted into buckets with CUB's radix sort, bucket sums in XYZZ coordinates, and a parallel
// running-sum reduction of each window; the windows are combined on the host.
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
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <span>

#include "cuda/check.cuh"
#include "prover/ec/g1.hpp"
#include "prover/ff/fr.hpp"

namespace cuzk::cuda {

// Window width for n points on the GPU.
unsigned gpu_msm_window_bits(size_t n);

// Part of an MSM's input on the device: the points and scalars [i, i + n) of the whole. The
// events, when set, are recorded by the uploads of the scalars and of the points; the MSM waits
// for each only when it first needs it, so a slice's digits and sort overlap the upload of its
// points, and its bucket sums the upload of the next slice.
struct MsmSlice {
  const g1_affine_t* bases;
  const fr_t* scalars;
  size_t n;
  cudaEvent_t scalars_ready = nullptr, bases_ready = nullptr;
};

class MsmG1 {
 public:
  // sum_i scalars[i] * bases[i] for device arrays of n points (affine, infinity allowed) and n
  // scalars (Montgomery form, zero allowed). Synchronizes `s` before returning.
  // bases_ready, when given, is an event the points' upload records: the digits, sort and run
  // finding (which need only the scalars) go ahead of it, so they overlap the upload.
  g1_jacobian_t run(const g1_affine_t* d_bases, const fr_t* d_scalars, size_t n, cudaStream_t s,
                    unsigned window_bits = 0, cudaEvent_t bases_ready = nullptr);
  // The sum over slices: every slice adds into one set of buckets, reduced once at the end.
  // Window bits 0 picks the width for the total length.
  g1_jacobian_t run(std::span<const MsmSlice> slices, cudaStream_t s, unsigned window_bits = 0);
  // Points (or partial sums) one thread adds per round of the bucket sums (default 32).
  void set_chunk(uint32_t points);
  uint32_t chunk() const { return chunk_; }

 private:
  // Digits, sort and bucket sums of one slice, added into all_buckets (windows x 2^(c-1)).
  void accumulate(const MsmSlice& sl, cudaStream_t s, unsigned c, unsigned windows, g1_xyzz_t* all_buckets);
  template <class T>
  T* grow(DeviceArray<T>& a, size_t n, const char* what) {
    if (a.size() < n) {
      a = DeviceArray<T>();  // free first: the old and new buffers need not coexist
      a = DeviceArray<T>(n, what);
    }
    return a.get();
  }
  DeviceArray<uint32_t> keys_[2], vals_[2], run_key_, run_len_, run_off_, task_off_, seg_len_[2], seg_off_[2];
  DeviceArray<uint8_t> temp_;
  DeviceArray<g1_xyzz_t> part_[2], buckets_, seg_sums_[2];
  DeviceArray<uint32_t> run_count_;
  uint32_t chunk_ = 32;
};

}  // namespace cuzk::cuda
