// The GPU MSM's tuned constants and the rules that choose its window width and how it cuts its
// bucket sums (plain C++: the proving stage's options, the tests and the benchmarks name them
// without CUDA's headers). The measurement behind each is in docs/cuda-backend.md, linked beside
// it; cuda/msm/msm.cu implements the rules.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "prover/ff/fr.hpp"

namespace cuzk::cuda {

// The window widths the GPU MSM takes (Msm::run refuses others, the proving stage's options are
// checked against them): from 2 bits to 20, the widest the rule gives and the GPU tests check.
inline constexpr unsigned kMinWindowBits = 2, kMaxWindowBits = 20;

namespace msm_params {

// About n / 2^8 buckets a window below the wide-window threshold: the balance of additions per
// point against buckets to reduce (docs/cuda-backend.md#msm-window-rule).
inline constexpr unsigned kPointsPerBucketLog = 8;
// The narrow widths' range: at least 6 bits, at most 16 (docs/cuda-backend.md#msm-window-rule).
inline constexpr unsigned kNarrowMinBits = 6, kNarrowMaxBits = 16;
// With equal chunks, 20-bit windows from above 2^23 scalars: fewer windows save more additions
// than the larger buckets cost (docs/cuda-backend.md#msm-window-rule).
inline constexpr size_t kEqualChunksWideFrom = size_t(1) << 23;
inline constexpr unsigned kWideBits = 20;
// Cut per bucket: the narrow widths up to 2^25 scalars, 19 bits up to 2^26, 20 above, the fastest
// width measured in each range (docs/cuda-backend.md#msm-window-rule).
inline constexpr size_t kPerBucketNarrowUpTo = size_t(1) << 25;
inline constexpr size_t kPerBucket19BitsUpTo = size_t(1) << 26;
inline constexpr unsigned kPerBucketMidBits = 19;
// Equal chunks where buckets average at most 128 sorted digits: faster in every cell of the sweep
// with buckets that small, slower with 256 or more (docs/cuda-backend.md#equal-chunks-by-rule).
inline constexpr size_t kEqualChunksMaxDigitsPerBucket = 128;
// Points a thread sums of one bucket's run when cut per bucket (32), and of the sorted digits when
// cut in equal chunks (64: two pieces per 64 points, the memory of one sum per 32 points)
// (docs/cuda-backend.md#chunks-of-32-points-a-thread-evenodd-product-layout).
inline constexpr uint32_t kRunChunk = 32, kEqualChunk = 64;
// The later rounds (a bucket's partial sums added in chunks, round after round, until one is
// left) cut their chunks so that a round keeps at least kFillThreadsPerSm threads an SM busy
// where there are partial sums enough (256: two blocks of 128, all an SM holds of the adding
// kernels), in chunks of at least kMinLaterChunk: a bucket holding most of an assignment's
// points otherwise ends in rounds of a few threads, each adding 32 partial sums one after another
// (docs/cuda-backend.md#later-rounds-cut-to-fill-the-gpu).
inline constexpr uint32_t kFillThreadsPerSm = 256, kMinLaterChunk = 4;
// The sparse rule's sample of the assignment: 8192 values estimate a PoRep partition's share of
// non-zero digits within about 4%, against the 2x between one width and the next
// (docs/cuda-backend.md#the-assignments-own-window-rule).
inline constexpr size_t kWindowSample = 8192;
// Scalars whose sampled digits are at least half non-zero are full-width: the usual rule
// (docs/cuda-backend.md#the-assignments-own-window-rule).
inline constexpr double kFullWidthShare = 0.5;
// Rounds the sparse rule takes to settle its width (it moves by a bit or two at most).
inline constexpr int kSparseRounds = 4;
// An upload in slices: 2 slices from 2^21 points, each 3 times the one before (n/4, 3n/4), so
// only the short first slice's upload is exposed
// (docs/cuda-backend.md#upload-slices-growing-threefold).
inline constexpr size_t kSlicedFromPoints = size_t(1) << 21;
inline constexpr size_t kSlices = 2, kSliceGrowth = 3;

}  // namespace msm_params

// Window width for n points on the GPU, for both groups. The rule balances the work per point
// (windows * n digits sorted and added) against the work per bucket (windows * 2^(c-1) buckets
// reduced); a G2 addition costs about 3 times a G1 addition on both sides of that balance, so the
// rule carries over. Only the sort, the same cost per key in both groups, weighs less beside
// G2's additions, which would favour slightly narrower windows for G2: BM_gpu_msm_g2's window
// axis measures whether that is worth a rule of its own.
// Up to 2^23 scalars: about n / 2^8 buckets a window, at most 16 bits. Above, 20 bits, where the
// bucket sums go in equal chunks (gpu_msm_equal_chunks: up to 2^26 scalars, at most 128 digits a
// bucket), because fewer windows then save more additions than the larger buckets cost; above
// 2^26 buckets hold over 128 digits and are cut per bucket, at 20 bits.
// equal_chunks false: the widths for bucket sums cut per bucket (Msm::set_equal_chunks(false),
// and the sparse rule below, whose MSMs cut so): 16 bits up to 2^25, 19 up to 2^26, 20 above,
// where each was the fastest width measured (docs/cuda-backend.md#msm-window-rule).
unsigned gpu_msm_window_bits(size_t n, bool equal_chunks = true);
// Whether an MSM whose every digit is sorted (full-width scalars) sums its buckets in equal chunks
// across buckets (Msm::set_equal_chunks, left to the rule): where its `pairs` sorted digits
// average at most 128 over its `buckets`: equal chunks were faster wherever buckets held 128
// digits or fewer and slower at 256 or more (docs/cuda-backend.md#equal-chunks-by-rule).
bool gpu_msm_equal_chunks(size_t pairs, size_t buckets);

// Window width for n scalars of which most have few non-zero digits: the proving stage's
// assignment (in a PoRep partition about half 0, half 1 and 1.4% other values). `sample` holds
// scalars drawn evenly from the n (sample_scalars). gpu_msm_window_bits(n, false) gives each
// window about n / 2^8 buckets, n being the digits per window that full-width scalars have; here
// n is the *non-zero* digits per window, estimated from the sample (zero digits are not sorted or
// added, Msm::set_skip_zero_digits), so windows of mostly-short scalars get fewer buckets to
// reduce. Their MSMs cut their buckets' sums per bucket (the equal-chunk rule is for full-width
// scalars; an assignment's digits pile into a few buckets), hence the widths for that cut. Where
// at least half of the sample's digits are non-zero (full-width scalars) it is
// gpu_msm_window_bits(n), and so it is for an empty sample.
unsigned gpu_msm_window_bits_sparse(size_t n, std::span<const fr_t> sample);
// Partial sums a thread adds in a later round of `partials` over a GPU of `sms` SMs, where the
// first round's threads each took `chunk` (Msm::set_chunk): `partials` over one full round of
// kFillThreadsPerSm threads an SM, within [min(kMinLaterChunk, chunk), chunk].
uint32_t gpu_msm_later_chunk(size_t partials, unsigned sms, uint32_t chunk);
// Up to k scalars evenly spaced over a then b (the assignment: its inputs, then its aux values);
// all of them where there are no more than k.
std::vector<fr_t> sample_scalars(std::span<const fr_t> a, std::span<const fr_t> b, size_t k);

}  // namespace cuzk::cuda
