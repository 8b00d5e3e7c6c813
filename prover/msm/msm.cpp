#include "prover/msm/msm.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/util/thread_pool.hpp"

namespace cuzk {
namespace {

constexpr unsigned kScalarBits = 255;  // Fr elements are < r < 2^255

// Bits [lo, lo + len) of a 256-bit little-endian scalar; bits at or past 256 read as 0.
inline uint64_t bits_at(const uint64_t* s, unsigned lo, unsigned len) {
  if (lo >= 256) return 0;
  unsigned limb = lo / 64, off = lo % 64;
  uint64_t v = s[limb] >> off;
  if (off + len > 64 && limb + 1 < 4) v |= s[limb + 1] << (64 - off);
  return len >= 64 ? v : v & ((uint64_t(1) << len) - 1);
}

unsigned num_windows(unsigned c) { return kScalarBits / c + 1; }

template <class Affine, class Xyzz>
Xyzz window_partial(std::span<const Affine> points, const uint64_t* scalars, size_t begin, size_t end, unsigned w,
                    unsigned c, std::vector<Xyzz>& buckets) {
  const size_t nb = size_t(1) << (c - 1);
  buckets.assign(nb, Xyzz::infinity());
  for (size_t i = begin; i < end; ++i) {
    int d = msm_signed_digit(scalars + 4 * i, w, c);
    if (d == 0 || points[i].is_infinity()) continue;
    if (d > 0)
      buckets[d - 1] += points[i];
    else
      buckets[-d - 1] += -points[i];
  }
  // sum_k k * bucket[k-1] via running sums from the top bucket down.
  Xyzz running = Xyzz::infinity(), total = Xyzz::infinity();
  for (size_t k = nb; k-- > 0;) {
    running += buckets[k];
    total += running;
  }
  return total;
}

template <class Affine, class Jac, class Xyzz>
Jac msm_impl(std::span<const Affine> points, const uint64_t* scalars, size_t n, ThreadPool* pool, unsigned c,
             bool split_bits = true);

// A Groth16 assignment is mostly bits: in the PoRep-shaped circuit about half the values are 0
// and half 1 (measured in suites/micro/bench_gpu.cpp). In Pippenger every 1 lands in bucket 1 of
// window 0, whose few tasks then do most of the additions (a 2^24 G2 MSM took 8 s on 16 cores,
// nearly all of it in that window). So, as the engine this project models does, zeros are
// dropped, ones are summed directly across all threads, and only the other scalars go through
// Pippenger. Returns nullopt when too few scalars are 0 or 1 for the split to pay.
template <class Affine, class Jac, class Xyzz>
std::optional<Jac> msm_split_bits(std::span<const Affine> points, const uint64_t* scalars, size_t n, ThreadPool& tp,
                                  unsigned c) {
  if (n < 4096) return std::nullopt;
  auto kind = [&](size_t i) {  // 0: zero, 1: one, 2: other
    const uint64_t* s = scalars + 4 * i;
    if (s[1] | s[2] | s[3]) return 2;
    return s[0] == 0 ? 0 : s[0] == 1 ? 1 : 2;
  };
  const size_t chunks = std::min<size_t>(n / 1024, 8 * size_t(tp.size()));
  const size_t per = (n + chunks - 1) / chunks;
  std::vector<size_t> others(chunks, 0);
  std::vector<Jac> ones(chunks, Jac::infinity());
  tp.parallel_for(chunks, [&](size_t cb, size_t ce) {
    std::vector<Affine> mine;
    for (size_t ch = cb; ch < ce; ++ch) {
      mine.clear();
      for (size_t i = ch * per, e = std::min(n, i + per); i < e; ++i) {
        const int k = kind(i);
        if (k == 1) mine.push_back(points[i]);
        others[ch] += k == 2;
      }
      ones[ch] = sum_affine_batched(mine);  // batched affine additions: ~6 products each
    }
  }, chunks);
  size_t n_other = 0;
  for (size_t k : others) n_other += k;
  if (n_other * 4 > n * 3) return std::nullopt;  // under a quarter are bits: the ones' pass was wasted work
  std::vector<size_t> start(chunks, 0);
  for (size_t ch = 1; ch < chunks; ++ch) start[ch] = start[ch - 1] + others[ch - 1];
  std::vector<Affine> sub_points(n_other);
  std::vector<uint64_t> sub_scalars(4 * n_other);
  tp.parallel_for(chunks, [&](size_t cb, size_t ce) {
    for (size_t ch = cb; ch < ce; ++ch) {
      size_t o = start[ch];
      for (size_t i = ch * per, e = std::min(n, i + per); i < e; ++i) {
        if (kind(i) != 2) continue;
        sub_points[o] = points[i];
        std::copy(scalars + 4 * i, scalars + 4 * i + 4, &sub_scalars[4 * o]);
        ++o;
      }
    }
  }, chunks);
  Jac acc = Jac::infinity();
  // The subset holds no 0 or 1: straight to Pippenger, without classifying it again.
  if (n_other) acc = msm_impl<Affine, Jac, Xyzz>(sub_points, sub_scalars.data(), n_other, &tp, 0, false);
  for (auto& o : ones) acc = acc + o;
  return acc;
}

template <class Affine, class Jac, class Xyzz>
Jac msm_impl(std::span<const Affine> points, const uint64_t* scalars, size_t n, ThreadPool* pool, unsigned c,
             bool split_bits) {
  if (points.size() != n)
    throw std::invalid_argument("MSM: " + std::to_string(points.size()) + " points but " + std::to_string(n) +
                                " scalars");
  if (n == 0) return Jac::infinity();
  if (c == 0) c = msm_window_bits(n);
  if (c < 2 || c > 20) throw std::invalid_argument("MSM: window of " + std::to_string(c) + " bits (2..20)");
  ThreadPool& tp = pool ? *pool : ThreadPool::global();
  if (split_bits)
    if (auto split = msm_split_bits<Affine, Jac, Xyzz>(points, scalars, n, tp, c)) return *split;
  const unsigned W = num_windows(c);
  // Enough tasks to keep every thread busy; windows first, then point chunks per window.
  const size_t threads = tp.size();
  size_t chunks = std::max<size_t>(1, (2 * threads + W - 1) / W);
  chunks = std::min(chunks, std::max<size_t>(1, n / 1024));
  const size_t per = (n + chunks - 1) / chunks;
  std::vector<Xyzz> partial(W * chunks, Xyzz::infinity());
  tp.parallel_for(W * chunks, [&](size_t tb, size_t te) {
    std::vector<Xyzz> buckets;
    for (size_t t = tb; t < te; ++t) {
      unsigned w = unsigned(t / chunks);
      size_t ch = t % chunks, b = ch * per, e = std::min(n, b + per);
      if (b < e) partial[t] = window_partial<Affine, Xyzz>(points, scalars, b, e, w, c, buckets);
    }
  }, W * chunks);
  Xyzz acc = Xyzz::infinity();
  for (unsigned w = W; w-- > 0;) {
    if (!acc.is_infinity())
      for (unsigned k = 0; k < c; ++k) acc = acc.dbl();
    for (size_t ch = 0; ch < chunks; ++ch) acc += partial[w * chunks + ch];
  }
  return acc.to_jacobian();
}

}  // namespace

std::vector<uint64_t> to_canonical(std::span<const fr_t> s, ThreadPool* pool) {
  std::vector<uint64_t> out(4 * s.size());
  ThreadPool& tp = pool ? *pool : ThreadPool::global();
  tp.parallel_for(s.size(), [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) s[i].to_canonical(&out[4 * i]);
  });
  return out;
}

int msm_signed_digit(const uint64_t* s, unsigned w, unsigned c) {
  // Booth recoding: d_w = bits[wc, wc+c) + bit[wc-1] - 2^c * bit[wc+c-1].
  const unsigned lo = w * c;
  int64_t raw = int64_t(bits_at(s, lo, c));
  int64_t below = lo == 0 ? 0 : int64_t(bits_at(s, lo - 1, 1));
  int64_t top = int64_t(bits_at(s, lo + c - 1, 1));
  return int(raw + below - (top << c));
}

unsigned msm_window_bits(size_t n) {
  if (n < 32) return 3;
  unsigned best = 2;
  double best_cost = 1e300;
  for (unsigned c = 2; c <= 18; ++c) {
    // Each bucket costs two additions in the reduction, and large bucket arrays fall out of
    // cache: weighting buckets 4x (measured on the 2-core Zen 4 VM, 2^16..2^18) picks c=12..13.
    double cost = double(num_windows(c)) * (double(n) + 4.0 * double(size_t(1) << (c - 1)));
    if (cost < best_cost) {
      best_cost = cost;
      best = c;
    }
  }
  return best;
}

g1_jacobian_t msm_g1_canonical(std::span<const g1_affine_t> points, const uint64_t* s, size_t n, ThreadPool* pool,
                               unsigned c) {
  return msm_impl<g1_affine_t, g1_jacobian_t, g1_xyzz_t>(points, s, n, pool, c);
}
g2_jacobian_t msm_g2_canonical(std::span<const g2_affine_t> points, const uint64_t* s, size_t n, ThreadPool* pool,
                               unsigned c) {
  return msm_impl<g2_affine_t, g2_jacobian_t, g2_xyzz_t>(points, s, n, pool, c);
}
g1_jacobian_t msm_g1(std::span<const g1_affine_t> points, std::span<const fr_t> scalars, ThreadPool* pool,
                     unsigned c) {
  auto s = to_canonical(scalars, pool);
  return msm_g1_canonical(points, s.data(), scalars.size(), pool, c);
}
g2_jacobian_t msm_g2(std::span<const g2_affine_t> points, std::span<const fr_t> scalars, ThreadPool* pool,
                     unsigned c) {
  auto s = to_canonical(scalars, pool);
  return msm_g2_canonical(points, s.data(), scalars.size(), pool, c);
}

}  // namespace cuzk
