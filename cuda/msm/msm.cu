#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/msm/msm.cuh"
#include "cuda/msm/window_sum.hpp"
#include "prover/msm/msm.hpp"

namespace cuzk::cuda {
namespace {

constexpr uint32_t kSegLen = 16;       // entries per segment in the window reduction's levels
constexpr size_t kMaxPairs = size_t(1) << 30;

// Signed digit of window w (c bits) of a canonical 4-limb scalar: the Booth rule of
// prover/msm/msm.cpp (msm_signed_digit): bits [wc, wc+c) + bit wc-1 - 2^c * bit wc+c-1.
__device__ __forceinline__ uint32_t bits_at(const uint64_t* s, unsigned lo, unsigned len) {
  if (lo >= 256) return 0;
  const unsigned limb = lo / 64, off = lo % 64;
  uint64_t v = s[limb] >> off;
  if (off + len > 64 && limb + 1 < 4) v |= s[limb + 1] << (64 - off);
  return uint32_t(v & ((uint64_t(1) << len) - 1));
}
__device__ __forceinline__ int signed_digit(const uint64_t* s, unsigned w, unsigned c) {
  const unsigned lo = w * c;
  const int raw = int(bits_at(s, lo, c));
  const int below = lo == 0 ? 0 : int(bits_at(s, lo - 1, 1));
  const int top = int(bits_at(s, lo + c - 1, 1));
  return raw + below - (top << c);
}

// The sort's pair for a non-zero digit d of window w (counted from the sort's first window) of
// scalar i: the key its bucket, the value the point's index and the digit's sign.
__device__ __forceinline__ uint32_t digit_key(unsigned w, int d, unsigned c) {
  return (uint32_t(w) << (c - 1)) | uint32_t((d < 0 ? -d : d) - 1);
}
__device__ __forceinline__ uint32_t digit_val(size_t i, int d) { return uint32_t(i) | (d < 0 ? 0x80000000u : 0u); }

// The digits need only the scalars, so they can be made while the points are still being
// uploaded; points at infinity go into buckets like any other and add nothing.
//
// digits_kernel: every digit, zero digits under the sentinel key, which sorts past every bucket
// (Msm::set_skip_zero_digits(false), the former way).
__global__ void digits_kernel(const fr_t* scalars, size_t n, unsigned c, unsigned w0, unsigned w1, uint32_t sentinel,
                              uint32_t* keys, uint32_t* vals) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  uint64_t s[4];
  scalars[i].to_canonical(s);
  for (unsigned w = w0; w < w1; ++w) {
    const int d = signed_digit(s, w, c);
    const size_t o = size_t(w - w0) * n + i;
    keys[o] = d == 0 ? sentinel : digit_key(w - w0, d, c);
    vals[o] = digit_val(i, d);
  }
}

// Only non-zero digits go into the sort (Msm::set_skip_zero_digits; the proving stage's
// assignment MSMs): an assignment is about half 0 and half 1, so of its windows x n digits a few
// percent are not zero (at 16-bit windows about 4%), and sorting the zeros past every bucket
// took the sort's time for nothing. Two passes over the scalars: each block counts its non-zero
// digits, the counts' prefix sums place each block's, and each thread writes its own after those
// of the threads before it in the block. Deterministic: the same scalars give the same order.
constexpr unsigned kDigitBlock = 256;

__device__ __forceinline__ uint32_t nonzero_digits(const uint64_t* s, unsigned c, unsigned w0, unsigned w1) {
  uint32_t k = 0;
  for (unsigned w = w0; w < w1; ++w) k += signed_digit(s, w, c) != 0;
  return k;
}

// counts[b] = the non-zero digits of windows [w0, w1) of block b's scalars.
__global__ void __launch_bounds__(kDigitBlock) count_digits_kernel(const fr_t* scalars, size_t n, unsigned c,
                                                                   unsigned w0, unsigned w1,
                                                                   unsigned long long* counts) {
  using Reduce = cub::BlockReduce<uint32_t, kDigitBlock>;
  __shared__ typename Reduce::TempStorage tmp;
  const size_t i = blockIdx.x * size_t(kDigitBlock) + threadIdx.x;
  uint32_t k = 0;
  if (i < n) {
    uint64_t s[4];
    scalars[i].to_canonical(s);
    k = nonzero_digits(s, c, w0, w1);
  }
  const uint32_t total = Reduce(tmp).Sum(k);  // at most 256 x 128 windows
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// The non-zero digits of windows [w0, w1), block b's from block_off[b] on.
__global__ void __launch_bounds__(kDigitBlock) write_digits_kernel(const fr_t* scalars, size_t n, unsigned c,
                                                                   unsigned w0, unsigned w1,
                                                                   const unsigned long long* block_off,
                                                                   uint32_t* keys, uint32_t* vals) {
  using Scan = cub::BlockScan<uint32_t, kDigitBlock>;
  __shared__ typename Scan::TempStorage tmp;
  const size_t i = blockIdx.x * size_t(kDigitBlock) + threadIdx.x;
  uint64_t s[4] = {0, 0, 0, 0};
  if (i < n) scalars[i].to_canonical(s);
  uint32_t before = 0;
  Scan(tmp).ExclusiveSum(i < n ? nonzero_digits(s, c, w0, w1) : 0u, before);  // every thread takes part
  if (i >= n) return;
  size_t o = block_off[blockIdx.x] + before;
  for (unsigned w = w0; w < w1; ++w) {
    const int d = signed_digit(s, w, c);
    if (d == 0) continue;
    keys[o] = digit_key(w - w0, d, c);
    vals[o] = digit_val(i, d);
    ++o;
  }
}

// Number of chunks of each segment (ceil(len / chunk)).
__global__ void chunk_count_kernel(const uint32_t* len, uint32_t* out, size_t r, uint32_t chunk) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < r) out[i] = (len[i] + chunk - 1) / chunk;
}

// The segment of chunk t: the last r with task_off[r] <= t.
__device__ __forceinline__ uint32_t find_segment(const uint32_t* task_off, uint32_t r, uint32_t t) {
  uint32_t lo = 0, hi = r;  // task_off[lo] <= t < task_off[hi] (task_off[r] = total)
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if (task_off[mid] <= t) lo = mid; else hi = mid;
  }
  return lo;
}

// The entries [begin, end) that chunk t sums: the chunks of segment s are numbered from
// task_off[s] and cut its entries [off[s], off[s] + len[s]) into pieces of `chunk`.
struct ChunkRange {
  uint32_t begin, end;
};
__device__ __forceinline__ ChunkRange chunk_range(const uint32_t* task_off, const uint32_t* off, const uint32_t* len,
                                                  uint32_t segs, uint32_t t, uint32_t chunk) {
  const uint32_t seg = find_segment(task_off, segs, t);
  const uint32_t begin = off[seg] + (t - task_off[seg]) * chunk;
  return {begin, min(off[seg] + len[seg], begin + chunk)};
}

// The kernels below add points: templates on the group's point forms, blocks of 128 threads in
// both groups. That bound leaves a thread the hardware's full 255 registers, so G2 (an Fp2 XYZZ
// accumulator alone is 96) gains none from a smaller one; the rest spills either way. ptxas
// (CUDA 13.0, sm_90): each G2 adding kernel uses 255 registers and spills (sum_points 968 bytes
// stored, sum_partials 1.4 KB, sum_chunks 1.3 KB, window_level 7.3 KB); no G1 kernel spills
// (window_level replaced window_segments, which spilled 9 KB in G2 and 184 bytes in G1).

// acc + the point of sorted pair v: scalar i's point is bases[i - skip], negated for a negative
// digit, and the first `skip` scalars have none (Msm::run with a shared plan).
template <class Affine, class Xyzz>
__device__ __forceinline__ void add_pair(Xyzz& acc, const Affine* bases, uint32_t v, uint32_t skip) {
  const uint32_t i = v & 0x7fffffffu;
  if (i < skip) return;
  Affine p = bases[i - skip];
  if (v >> 31) p.y = -p.y;
  acc = acc.add(p);
}

// Round 0: chunk t of a bucket's run sums its points.
template <class Affine, class Xyzz>
__global__ void __launch_bounds__(128) sum_points_kernel(const Affine* bases, const uint32_t* vals,
                                                         const uint32_t* run_off, const uint32_t* run_len,
                                                         const uint32_t* task_off, uint32_t runs, uint32_t tasks,
                                                         uint32_t chunk, uint32_t skip, Xyzz* out) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tasks) return;
  const auto [begin, end] = chunk_range(task_off, run_off, run_len, runs, t, chunk);
  Xyzz acc = Xyzz::infinity();
  for (uint32_t k = begin; k < end; ++k) add_pair(acc, bases, vals[k], skip);
  out[t] = acc;
}

// Round 0 with equal chunks (Msm::set_equal_chunks): chunk t sums the sorted pairs
// [t chunk, (t + 1) chunk) whatever their buckets, so every thread adds the same number of
// points however the buckets' sizes fall (cut per bucket, buckets of about 32 points give
// chunks of anywhere from 1 to 32 points, and a warp waits for its longest). A bucket whose
// pairs all lie inside the chunk, neither its first nor its last, is added into its bucket here:
// no other chunk holds any of it. The first and the last bucket may go on in the chunks before
// and after, so their sums are pieces: pieces[2t] the first's, pieces[2t + 1] the last's
// (infinity where the chunk holds one bucket; its key is then the first's). The pieces' keys
// never decrease, so a bucket's pieces are adjacent, and the later rounds sum them as they sum
// a bucket's chunk sums.
template <class Affine, class Xyzz>
__global__ void __launch_bounds__(128) sum_chunks_kernel(const Affine* bases, const uint32_t* keys,
                                                         const uint32_t* vals, uint32_t entries, uint32_t tasks,
                                                         uint32_t chunk, uint32_t skip, Xyzz* pieces,
                                                         Xyzz* buckets) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tasks) return;
  const uint32_t begin = t * chunk, end = min(entries, begin + chunk);
  uint32_t key = keys[begin];
  bool first = true;  // still in the chunk's first bucket
  Xyzz acc = Xyzz::infinity();
  for (uint32_t k = begin; k < end; ++k) {
    const uint32_t next = keys[k];
    if (next != key) {  // the bucket `key` ends inside the chunk
      if (first) pieces[2 * size_t(t)] = acc;
      else buckets[key] = buckets[key].add(acc);
      first = false;
      key = next;
      acc = Xyzz::infinity();
    }
    add_pair(acc, bases, vals[k], skip);
  }
  if (first) pieces[2 * size_t(t)] = acc;
  pieces[2 * size_t(t) + 1] = first ? Xyzz::infinity() : acc;
}

// The keys of sum_chunks_kernel's pieces: chunk t's first and last sorted key.
__global__ void piece_keys_kernel(const uint32_t* keys, uint32_t entries, uint32_t tasks, uint32_t chunk,
                                  uint32_t* out) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tasks) return;
  const uint32_t begin = t * chunk;
  out[2 * size_t(t)] = keys[begin];
  out[2 * size_t(t) + 1] = keys[min(entries, begin + chunk) - 1];
}

// *out = the number of sorted keys below `bound` (one thread, a binary search): where every digit
// is sorted, the pairs before the zero digits' sentinel run.
__global__ void count_below_kernel(const uint32_t* keys, uint32_t n, uint32_t bound, uint32_t* out) {
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < bound) lo = mid + 1;
    else hi = mid;
  }
  *out = lo;
}

// Later rounds: chunk t of a bucket's partial sums adds them.
template <class Xyzz>
__global__ void __launch_bounds__(128) sum_partials_kernel(const Xyzz* in, const uint32_t* seg_off,
                                                           const uint32_t* seg_len, const uint32_t* task_off,
                                                           uint32_t segs, uint32_t tasks, uint32_t chunk,
                                                           Xyzz* out) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tasks) return;
  const auto [begin, end] = chunk_range(task_off, seg_off, seg_len, segs, t, chunk);
  Xyzz acc = in[begin];
  for (uint32_t k = begin + 1; k < end; ++k) acc = acc.add(in[k]);
  out[t] = acc;
}

// Adds each run's sum into its bucket (one run per bucket, so no two threads share one): the
// buckets accumulate over the slices of a run.
template <class Xyzz>
__global__ void __launch_bounds__(128) add_to_buckets_kernel(const Xyzz* sums, const uint32_t* seg_off,
                                                             const uint32_t* run_key, uint32_t runs, uint32_t sentinel,
                                                             Xyzz* buckets) {
  uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= runs) return;
  const uint32_t k = run_key[r];
  if (k != sentinel) buckets[k] = buckets[k].add(sums[seg_off[r]]);
}

// buckets[i] += extra[i]: a slice's own buckets into the shared ones (Msm::accumulate).
template <class Xyzz>
__global__ void __launch_bounds__(128) add_buckets_kernel(const Xyzz* extra, size_t count, Xyzz* buckets) {
  const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < count) buckets[i] = buckets[i].add(extra[i]);
}

// One level of the window reduction (cuda/msm/window_sum.hpp): thread id handles segment j of window
// w, reading `count` entries a window (the buckets at the first level, the level before's R and t
// above it) and writing the segment's t and R.
template <class Xyzz>
__global__ void __launch_bounds__(128) window_level_kernel(const Xyzz* x, const Xyzz* t_in, uint32_t windows,
                                                           WindowLevel lv, Xyzz* t_out, Xyzz* r_out) {
  const uint32_t segs = lv.segments();
  const uint32_t id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= windows * segs) return;
  const size_t at = size_t(id / segs) * lv.count + size_t(id % segs) * lv.len;
  window_segment(x + at, lv.first ? nullptr : t_in + at, lv, t_out[id], r_out[id]);
}

unsigned bit_width(uint64_t v) {
  unsigned b = 0;
  while (v) {
    ++b;
    v >>= 1;
  }
  return b;
}

template <class F>
size_t cub_temp(F&& f) {
  size_t bytes = 0;
  CUZK_CUDA_CHECK(f(nullptr, bytes));
  return bytes;
}

// A workspace buffer of at least n elements (MsmWorkspace keeps them between runs).
template <class T>
T* grow(DeviceArray<T>& a, size_t n, const char* what) {
  if (a.size() < n) {
    a = DeviceArray<T>();  // free first: the old and new buffers need not coexist
    a = DeviceArray<T>(n, what);
  }
  return a.get();
}
// The same for a byte buffer holding n points of type T (cudaMalloc aligns to 256 bytes).
template <class T>
T* grow_as(DeviceArray<uint8_t>& a, size_t n, const char* what) {
  return reinterpret_cast<T*>(grow(a, n * sizeof(T), what));
}
template <class T>
T* as(DeviceArray<uint8_t>& a) {
  return reinterpret_cast<T*>(a.get());
}

// out[0..count) = the exclusive prefix sums of in[0..count), on s.
template <class T>
void exclusive_sum(MsmWorkspace& ws, const T* in, T* out, uint32_t count, cudaStream_t s) {
  size_t need = cub_temp([&](void* p, size_t& b) { return cub::DeviceScan::ExclusiveSum(p, b, in, out, int(count), s); });
  void* tmp = grow(ws.temp, need, "MSM CUB temporary storage");
  CUZK_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(tmp, need, in, out, int(count), s));
}

// Segments of len[0..segs) entries cut into chunks of `chunk`: cnt[r] = the chunks of segment r,
// off[r] = the number of its first (off[segs] = the total, returned).
uint32_t chunk_offsets(MsmWorkspace& ws, const uint32_t* len, uint32_t segs, uint32_t chunk, uint32_t* cnt,
                       uint32_t* off, cudaStream_t s) {
  chunk_count_kernel<<<grid_for(segs, 256), 256, 0, s>>>(len, cnt, segs, chunk);
  CUZK_CUDA_CHECK_LAUNCH("chunk_count_kernel");
  // cnt[segs] must be 0 so that off[segs] is the total
  CUZK_CUDA_CHECK(cudaMemsetAsync(cnt + segs, 0, sizeof(uint32_t), s));
  exclusive_sum(ws, cnt, off, segs + 1, s);
  uint32_t total = 0;
  CUZK_CUDA_CHECK(cudaMemcpyAsync(&total, off + segs, sizeof total, cudaMemcpyDeviceToHost, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  return total;
}

void check_length(size_t n) {
  if (n >= (size_t(1) << 31))
    throw std::invalid_argument("GPU MSM: " + std::to_string(n) + " points exceed 2^31 (31-bit point indices)");
}
unsigned windows_of(unsigned c) { return (256 + c - 1) / c; }  // Booth digits need windows * c >= 256

}  // namespace

unsigned gpu_msm_window_bits(size_t n, bool equal_chunks) {
  const unsigned lg = bit_width(n);
  using namespace msm_params;
  const unsigned small = std::clamp(lg > kPointsPerBucketLog ? lg - kPointsPerBucketLog : 1u, kNarrowMinBits,
                                    kNarrowMaxBits);  // about n / 2^8 buckets
  if (equal_chunks) return n <= kEqualChunksWideFrom ? small : kWideBits;
  if (n <= kPerBucketNarrowUpTo) return small;
  return n <= kPerBucket19BitsUpTo ? kPerBucketMidBits : kWideBits;
}

uint32_t gpu_msm_later_chunk(size_t partials, unsigned sms, uint32_t chunk) {
  const size_t fill = size_t(std::max(sms, 1u)) * msm_params::kFillThreadsPerSm;
  return uint32_t(std::clamp<size_t>(partials / fill, std::min(chunk, msm_params::kMinLaterChunk), chunk));
}

bool gpu_msm_equal_chunks(size_t pairs, size_t buckets) {
  return pairs <= msm_params::kEqualChunksMaxDigitsPerBucket * buckets;
}

unsigned gpu_msm_window_bits_sparse(size_t n, std::span<const fr_t> sample) {
  const unsigned dense = gpu_msm_window_bits(n);
  std::vector<std::array<uint64_t, 4>> canon(sample.size());
  for (size_t i = 0; i < sample.size(); ++i) sample[i].to_canonical(canon[i].data());
  // The width changes the windows, and so the share of non-zero digits: settle it in a few
  // rounds (it moves by a bit or two at most).
  unsigned c = dense;
  for (int round = 0; round < msm_params::kSparseRounds && !canon.empty(); ++round) {
    const unsigned windows = windows_of(c);
    size_t nonzero = 0;
    for (const auto& s : canon) {
      if ((s[1] | s[2] | s[3]) == 0 && s[0] <= 1) {  // 0 or 1, most of an assignment: no digit or one
        nonzero += s[0];
        continue;
      }
      for (unsigned w = 0; w < windows; ++w) nonzero += msm_signed_digit(s.data(), w, c) != 0;
    }
    const double share = double(nonzero) / (double(canon.size()) * windows);
    if (share >= msm_params::kFullWidthShare) return dense;  // full-width scalars: the usual rule
    const unsigned next = gpu_msm_window_bits(size_t(std::ceil(double(n) * share)), false);
    if (next == c) break;
    c = next;
  }
  return c;
}

std::vector<fr_t> sample_scalars(std::span<const fr_t> a, std::span<const fr_t> b, size_t k) {
  const size_t total = a.size() + b.size();
  const size_t take = std::min(k, total);
  std::vector<fr_t> out;
  out.reserve(take);
  for (size_t j = 0; j < take; ++j) {
    const size_t i = take == total ? j : size_t((2 * double(j) + 1) * double(total) / (2 * double(take)));  // midpoints
    out.push_back(i < a.size() ? a[i] : b[i - a.size()]);
  }
  return out;
}

template <class P>
unsigned Msm<P>::window_bits_for(size_t n, unsigned c) const {
  if (c == 0) c = gpu_msm_window_bits(n, equal_chunks_.value_or(true));
  if (c < kMinWindowBits || c > kMaxWindowBits)
    throw std::invalid_argument("GPU MSM: window bits must be in [" + std::to_string(kMinWindowBits) + ", " +
                                std::to_string(kMaxWindowBits) + "]");
  return c;
}

template <class P>
void Msm<P>::set_chunk(uint32_t points) {
  if (points < 2 || points > 4096) throw std::invalid_argument("GPU MSM: chunk must be in [2, 4096] points");
  chunk_ = points;
}

template <class P>
typename P::jacobian Msm<P>::run(const Affine* d_bases, const fr_t* d_scalars, size_t n, cudaStream_t s, unsigned c,
                                 cudaEvent_t bases_ready) {
  const Slice one{d_bases, d_scalars, n, nullptr, bases_ready};
  return run(std::span<const Slice>(&one, 1), s, c);
}

template <class P>
typename P::jacobian Msm<P>::run(std::span<const Slice> slices, cudaStream_t s, unsigned c) {
  size_t total = 0;
  for (const Slice& sl : slices) {
    check_length(sl.n);
    total += sl.n;
  }
  if (total == 0) return Jacobian::infinity();
  c = window_bits_for(total, c);
  const unsigned windows = windows_of(c);
  Xyzz* buckets = clear_buckets(c, windows, s);
  bool fresh = true;
  for (const Slice& sl : slices)
    if (sl.n) {
      accumulate(sl, s, c, windows, buckets, fresh);
      fresh = false;
    }
  return reduce_windows(buckets, c, windows, s);
}

template <class P>
bool Msm<P>::may_plan(size_t n, unsigned c) const {
  // With zero digits left out, only the count (plan_windows) tells; else all windows x n digits.
  return skip_zero_ || n <= kMaxPairs / windows_of(window_bits_for(std::max<size_t>(n, 1), c));
}

template <class P>
std::optional<DigitPlan> Msm<P>::plan(const fr_t* d_scalars, size_t n, cudaStream_t s, unsigned c) {
  check_length(n);
  if (!may_plan(n, c)) return std::nullopt;
  c = window_bits_for(std::max<size_t>(n, 1), c);
  const unsigned windows = windows_of(c);
  if (n == 0) {  // nothing to sort; run() on it gives infinity
    DigitPlan p;
    p.c = c;
    p.windows = windows;
    p.ws = ws_.get();
    p.id = ++ws_->plans;
    return p;
  }
  return plan_windows(d_scalars, n, c, 0, windows, s);  // nothing where the digits exceed one sort
}

template <class P>
typename P::jacobian Msm<P>::run(const DigitPlan& p, const Affine* d_bases, cudaStream_t s, size_t skip) {
  if (p.ws != ws_.get() || p.id != ws_->plans)
    throw std::logic_error("GPU MSM: the digit plan is stale (another MSM planned on its workspace since)");
  if (skip > p.n) throw std::invalid_argument("GPU MSM: skipping " + std::to_string(skip) + " of a plan's " + std::to_string(p.n) + " scalars");
  if (p.runs == 0) return Jacobian::infinity();
  Xyzz* buckets = clear_buckets(p.c, p.windows, s);
  sum_runs(p, d_bases, skip, s, buckets);
  return reduce_windows(buckets, p.c, p.windows, s);
}

template <class P>
typename P::xyzz* Msm<P>::clear_buckets(unsigned c, unsigned windows, cudaStream_t s) {
  const size_t all_buckets = size_t(windows) << (c - 1);
  Xyzz* buckets = grow_as<Xyzz>(ws_->buckets, all_buckets, "MSM buckets");
  // All-zero bytes are a point at infinity (ZZ = 0), and a memset writes them coalesced, far
  // faster than a kernel storing Xyzz::infinity() a thread at a time
  // (docs/cuda-backend.md#window-reduction-in-levels-and-buckets-cleared-by-memset).
  static_assert(std::is_trivially_copyable_v<Xyzz>);
  CUZK_CUDA_CHECK(cudaMemsetAsync(buckets, 0, all_buckets * sizeof(Xyzz), s));
  return buckets;
}

template <class P>
typename P::jacobian Msm<P>::reduce_windows(const Xyzz* buckets, unsigned c, unsigned windows, cudaStream_t s) {
  MsmWorkspace& ws = *ws_;
  // Each level writes its t and R beside the level before's, which it reads (window_sum.hpp).
  const Xyzz *x = buckets, *t_in = nullptr;
  int side = 0;
  for (const WindowLevel& lv : window_levels(1u << (c - 1), kSegLen)) {
    const size_t outs = size_t(windows) * lv.segments();
    Xyzz* t = grow_as<Xyzz>(ws.seg_sums[2 * side], outs, "MSM window sums");
    Xyzz* r = grow_as<Xyzz>(ws.seg_sums[2 * side + 1], outs, "MSM window sums");
    window_level_kernel<<<grid_for(outs, 128), 128, 0, s>>>(x, t_in, windows, lv, t, r);
    CUZK_CUDA_CHECK_LAUNCH("window_level_kernel");
    x = r;
    t_in = t;
    side = 1 - side;
  }
  std::vector<Xyzz> window_sums(windows);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(window_sums.data(), t_in, windows * sizeof(Xyzz),
                                  cudaMemcpyDeviceToHost, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  // Horner on the host: sum_w 2^(c w) W_w.
  Jacobian acc = Jacobian::infinity();
  for (unsigned w = windows; w-- > 0;) {
    for (unsigned k = 0; k < c; ++k) acc = acc.dbl();
    acc = acc + window_sums[w].to_jacobian();
  }
  return acc;
}

template <class P>
void Msm<P>::accumulate(const Slice& sl, cudaStream_t s, unsigned c, unsigned windows, Xyzz* all_buckets,
                        bool fresh) {
  const size_t n = sl.n;
  const uint32_t per_window = 1u << (c - 1);
  const unsigned group = unsigned(std::max<size_t>(1, std::min<size_t>(windows, kMaxPairs / n)));
  // The uploading thread stopped early (its error reaches the caller through the upload).
  auto recorded = [&](size_t at) {
    if (sl.recorded && !sl.recorded->wait(at)) throw CudaError("GPU MSM: the upload of its input stopped");
  };
  if (sl.scalars_ready) {
    recorded(sl.scalars_at);
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, sl.scalars_ready, 0));
  }
  bool waited = sl.bases_ready == nullptr;
  for (unsigned w0 = 0; w0 < windows; w0 += group) {
    // A group's digits fit one sort (group x n <= kMaxPairs), so there is always a plan.
    const DigitPlan p = *plan_windows(sl.scalars, n, c, w0, std::min(windows, w0 + group), s);
    if (p.runs == 0) continue;
    if (!waited) {  // everything so far needed only the scalars
      recorded(sl.bases_at);
      CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, sl.bases_ready, 0));
      waited = true;
    }
    Xyzz* into = all_buckets + size_t(w0) * per_window;
    if (!p.equal || fresh) {
      sum_runs(p, sl.bases, 0, s, into);
      continue;
    }
    // Equal chunks add the buckets inside a chunk straight into them, a thread at a time
    // wherever its buckets end: on buckets at infinity that is a copy, on buckets an earlier
    // slice filled a full addition, which the warp's other threads wait for (msm.cuh,
    // set_equal_chunks). So this slice's buckets start at infinity, and are added in afterwards,
    // a thread a bucket.
    const size_t count = size_t(p.windows) * per_window;
    Xyzz* own = grow_as<Xyzz>(ws_->slice_buckets, count, "MSM buckets of a slice");
    CUZK_CUDA_CHECK(cudaMemsetAsync(own, 0, count * sizeof(Xyzz), s));  // infinity (clear_buckets)
    sum_runs(p, sl.bases, 0, s, own);
    add_buckets_kernel<<<grid_for(count, 128), 128, 0, s>>>(own, count, into);
    CUZK_CUDA_CHECK_LAUNCH("add_buckets_kernel");
  }
}

template <class P>
std::optional<DigitPlan> Msm<P>::plan_windows(const fr_t* d_scalars, size_t n, unsigned c, unsigned w0, unsigned w1,
                                              cudaStream_t s) {
  MsmWorkspace& ws = *ws_;
  const unsigned wn = w1 - w0;
  DigitPlan p;
  p.n = n;
  p.c = c;
  p.windows = wn;
  p.ws = &ws;
  p.id = ++ws.plans;  // from here on the buffers of any earlier plan are overwritten
  const unsigned key_bits = bit_width(p.sentinel());
  // The pairs to sort: the non-zero digits (counted first), or all windows x n digits.
  const size_t all = size_t(wn) * n;
  size_t pairs = all;
  const unsigned blocks = grid_for(n, kDigitBlock);
  bool skip = skip_zero_ && n > 0;
  if (skip) {
    using Count = unsigned long long;
    Count* counts = grow(ws.block_count, blocks + 1, "MSM digit counts");
    Count* offs = grow(ws.block_off, blocks + 1, "MSM digit offsets");
    count_digits_kernel<<<blocks, kDigitBlock, 0, s>>>(d_scalars, n, c, w0, w1, counts);
    CUZK_CUDA_CHECK_LAUNCH("count_digits_kernel");
    CUZK_CUDA_CHECK(cudaMemsetAsync(counts + blocks, 0, sizeof(Count), s));  // offs[blocks] = the total
    exclusive_sum(ws, counts, offs, blocks + 1, s);
    Count total = 0;
    CUZK_CUDA_CHECK(cudaMemcpyAsync(&total, offs + blocks, sizeof total, cudaMemcpyDeviceToHost, s));
    CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
    pairs = size_t(total);
    // Mostly non-zero digits (full-width scalars): each thread's digits land side by side, which
    // writes slower than digits_kernel's window-major rows, and the sort gains little; so sort
    // them all, as digits_kernel writes them (docs/cuda-backend.md#zero-digits-skipped-for-the-assignment-only).
    if (2 * pairs > all) {
      skip = false;
      pairs = all;
    }
  }
  if (pairs > kMaxPairs) return std::nullopt;
  // The cut (Msm::set_equal_chunks): the rule's only where every digit is sorted.
  p.equal = equal_chunks_ ? *equal_chunks_ : !skip && gpu_msm_equal_chunks(pairs, size_t(wn) << (c - 1));
  p.chunk = chunk_ ? chunk_ : p.equal ? kEqualChunk : kRunChunk;
  if (pairs == 0) return p;  // every digit zero: no runs
  uint32_t* k0 = grow(ws.keys[0], pairs, "MSM bucket keys");
  uint32_t* k1 = grow(ws.keys[1], pairs, "MSM bucket keys (sort buffer)");
  uint32_t* v0 = grow(ws.vals[0], pairs, "MSM point indices");
  uint32_t* v1 = grow(ws.vals[1], pairs, "MSM point indices (sort buffer)");
  if (skip) {
    write_digits_kernel<<<blocks, kDigitBlock, 0, s>>>(d_scalars, n, c, w0, w1, ws.block_off.get(), k0, v0);
    CUZK_CUDA_CHECK_LAUNCH("write_digits_kernel");
  } else {
    digits_kernel<<<grid_for(n, 256), 256, 0, s>>>(d_scalars, n, c, w0, w1, p.sentinel(), k0, v0);
    CUZK_CUDA_CHECK_LAUNCH("digits_kernel");
  }

  cub::DoubleBuffer<uint32_t> kb(k0, k1), vb(v0, v1);
  const int items = int(pairs);
  size_t tb = cub_temp([&](void* t, size_t& b) {
    return cub::DeviceRadixSort::SortPairs(t, b, kb, vb, items, 0, int(key_bits), s);
  });
  if (p.equal) {  // the runs come from the pieces' keys (cut_equal_chunks), not the buckets'
    void* temp = grow(ws.temp, tb, "MSM CUB temporary storage");
    CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, tb, kb, vb, items, 0, int(key_bits), s));
    p.vals = vb.Current();
    cut_equal_chunks(p, kb.Current(), pairs, !skip, s);
    return p;
  }
  uint32_t* runs_key = grow(ws.run_key, p.sentinel() + 1, "MSM bucket runs");
  uint32_t* runs_len = grow(ws.run_len, p.sentinel() + 2, "MSM bucket run lengths");
  uint32_t* runs_off = grow(ws.run_off, p.sentinel() + 2, "MSM bucket run offsets");
  uint32_t* counts = grow(ws.run_count, 2, "MSM run count");
  tb = std::max(tb, cub_temp([&](void* t, size_t& b) {
    return cub::DeviceRunLengthEncode::Encode(t, b, kb.Current(), runs_key, runs_len, counts, items, s);
  }));
  void* temp = grow(ws.temp, tb, "MSM CUB temporary storage");
  CUZK_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, tb, kb, vb, items, 0, int(key_bits), s));
  CUZK_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp, tb, kb.Current(), runs_key, runs_len, counts, items, s));
  uint32_t runs = 0;
  CUZK_CUDA_CHECK(cudaMemcpyAsync(&runs, counts, sizeof runs, cudaMemcpyDeviceToHost, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  // With every digit sorted, the sentinel (zero digits) sorts last: drop its run, often the
  // largest.
  if (!skip && runs > 0) {
    uint32_t last = 0;
    CUZK_CUDA_CHECK(cudaMemcpyAsync(&last, runs_key + runs - 1, sizeof last, cudaMemcpyDeviceToHost, s));
    CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
    if (last == p.sentinel()) --runs;
  }
  p.runs = runs;
  if (runs == 0) return p;
  // Each run's first entry in the sorted arrays, then its chunks and their numbering.
  CUZK_CUDA_CHECK(cudaMemsetAsync(runs_len + runs, 0, sizeof(uint32_t), s));
  exclusive_sum(ws, runs_len, runs_off, runs + 1, s);
  uint32_t* cnt = grow(ws.task_count, runs + 1, "MSM chunk counts");
  uint32_t* toff = grow(ws.task_off, runs + 1, "MSM chunk offsets");
  p.tasks = chunk_offsets(ws, runs_len, runs, p.chunk, cnt, toff, s);
  p.vals = vb.Current();
  p.run_key = runs_key;
  p.run_off = runs_off;
  p.run_len = runs_len;
  p.task_count = cnt;
  p.task_off = toff;
  return p;
}

template <class P>
void Msm<P>::cut_equal_chunks(DigitPlan& p, const uint32_t* keys, size_t pairs, bool zeros_sorted, cudaStream_t s) {
  MsmWorkspace& ws = *ws_;
  uint32_t* counts = grow(ws.run_count, 2, "MSM run count");
  uint32_t entries = uint32_t(pairs);
  if (zeros_sorted) {  // the zero digits' run comes last, and has no bucket
    count_below_kernel<<<1, 1, 0, s>>>(keys, entries, p.sentinel(), counts);
    CUZK_CUDA_CHECK_LAUNCH("count_below_kernel");
    CUZK_CUDA_CHECK(cudaMemcpyAsync(&entries, counts, sizeof entries, cudaMemcpyDeviceToHost, s));
    CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  p.keys = keys;
  p.entries = entries;
  p.tasks = uint32_t((size_t(entries) + p.chunk - 1) / p.chunk);
  if (entries == 0) return;  // every digit zero: no runs
  // The pieces' keys, and their runs: a bucket's pieces and where they start.
  const uint32_t pieces = p.outputs();
  uint32_t* pk = grow(ws.piece_key, pieces, "MSM piece keys");
  piece_keys_kernel<<<grid_for(p.tasks, 256), 256, 0, s>>>(keys, entries, p.tasks, p.chunk, pk);
  CUZK_CUDA_CHECK_LAUNCH("piece_keys_kernel");
  const size_t most = std::min<size_t>(pieces, p.sentinel()) + 1;  // runs (distinct keys) + 1
  uint32_t* run_key = grow(ws.run_key, most, "MSM piece runs");
  uint32_t* len = grow(ws.task_count, most, "MSM piece run lengths");
  uint32_t* off = grow(ws.task_off, most, "MSM piece run offsets");
  size_t tb = cub_temp([&](void* t, size_t& b) {
    return cub::DeviceRunLengthEncode::Encode(t, b, pk, run_key, len, counts, int(pieces), s);
  });
  void* temp = grow(ws.temp, tb, "MSM CUB temporary storage");
  CUZK_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(temp, tb, pk, run_key, len, counts, int(pieces), s));
  CUZK_CUDA_CHECK(cudaMemcpyAsync(&p.runs, counts, sizeof p.runs, cudaMemcpyDeviceToHost, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  CUZK_CUDA_CHECK(cudaMemsetAsync(len + p.runs, 0, sizeof(uint32_t), s));  // off[runs] = the total
  exclusive_sum(ws, len, off, p.runs + 1, s);
  p.run_key = run_key;
  p.task_count = len;
  p.task_off = off;
}

template <class P>
void Msm<P>::sum_runs(const DigitPlan& p, const Affine* d_bases, size_t skip, cudaStream_t s, Xyzz* buckets) {
  MsmWorkspace& ws = *ws_;
  // Round 0: chunks of points; then each run has task_count[r] partial sums from task_off[r]:
  // later rounds sum them in chunks (their counts and offsets in len/off, the plan's kept).
  Xyzz* cur = grow_as<Xyzz>(ws.part[0], p.outputs(), "MSM bucket partial sums");
  if (p.equal) {
    sum_chunks_kernel<<<grid_for(p.tasks, 128), 128, 0, s>>>(d_bases, p.keys, p.vals, p.entries, p.tasks, p.chunk,
                                                             uint32_t(skip), cur, buckets);
    CUZK_CUDA_CHECK_LAUNCH("sum_chunks_kernel");
  } else {
    sum_points_kernel<<<grid_for(p.tasks, 128), 128, 0, s>>>(d_bases, p.vals, p.run_off, p.run_len, p.task_off,
                                                             p.runs, p.tasks, p.chunk, uint32_t(skip), cur);
    CUZK_CUDA_CHECK_LAUNCH("sum_points_kernel");
  }
  const uint32_t runs = p.runs;
  uint32_t* len = grow(ws.seg_len[1], runs + 1, "MSM segment lengths");
  uint32_t* off = grow(ws.seg_off[0], runs + 1, "MSM segment offsets");
  CUZK_CUDA_CHECK(cudaMemcpyAsync(len, p.task_count, runs * sizeof(uint32_t), cudaMemcpyDeviceToDevice, s));
  CUZK_CUDA_CHECK(cudaMemcpyAsync(off, p.task_off, (runs + 1) * sizeof(uint32_t), cudaMemcpyDeviceToDevice, s));
  int sms = 1;
  if (fill_later_rounds_) {
    int device = 0;
    CUZK_CUDA_CHECK(cudaGetDevice(&device));
    CUZK_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  }
  int which = 0;
  for (uint32_t tasks = p.outputs(); tasks > runs;) {
    const uint32_t chunk = fill_later_rounds_ ? gpu_msm_later_chunk(tasks, unsigned(sms), p.chunk) : p.chunk;
    uint32_t* ncnt = grow(ws.seg_len[0], runs + 1, "MSM chunk counts");
    uint32_t* ntoff = grow(ws.seg_off[1], runs + 1, "MSM chunk offsets");
    const uint32_t ntasks = chunk_offsets(ws, len, runs, chunk, ncnt, ntoff, s);
    Xyzz* nxt = grow_as<Xyzz>(ws.part[1 - which], ntasks, "MSM bucket partial sums");
    cur = as<Xyzz>(ws.part[which]);
    sum_partials_kernel<<<grid_for(ntasks, 128), 128, 0, s>>>(cur, off, len, ntoff, runs, ntasks, chunk, nxt);
    CUZK_CUDA_CHECK_LAUNCH("sum_partials_kernel");
    CUZK_CUDA_CHECK(cudaMemcpyAsync(len, ncnt, runs * sizeof(uint32_t), cudaMemcpyDeviceToDevice, s));
    CUZK_CUDA_CHECK(cudaMemcpyAsync(off, ntoff, (runs + 1) * sizeof(uint32_t), cudaMemcpyDeviceToDevice, s));
    which = 1 - which;
    tasks = ntasks;
  }
  cur = as<Xyzz>(ws.part[which]);
  add_to_buckets_kernel<<<grid_for(runs, 128), 128, 0, s>>>(cur, off, p.run_key, runs, p.sentinel(), buckets);
  CUZK_CUDA_CHECK_LAUNCH("add_to_buckets_kernel");
}

template class Msm<G1Points>;
// The G2 kernels only where CUZK_GPU_G2 asks for them: over Fp2 they use every register and
// spill, and compiling them took nvcc 96 s -> 21 min of one core on the 2-vCPU machine, more than
// CI's time budget allows in the default build that runs no GPU code.
#if CUZK_GPU_G2
template class Msm<G2Points>;
#endif

}  // namespace cuzk::cuda
