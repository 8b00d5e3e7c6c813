#include "prover/msm/msm.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/ff/fp_ifma.hpp"
#include "prover/msm/affine_batch_ifma.hpp"
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

// Affine additions acc[slot[k]] += q[k] for a batch of pending pairs with distinct slots, at one
// field inversion per batch (Montgomery's trick): about 6 products per addition, where an XYZZ
// mixed addition takes 10 (G1: 8M + 2S; G2 the same in Fp2 products). Pairs with equal x
// (P == Q or P == -Q) cannot take the affine formula: flush hands them to the caller, with the
// slot left at infinity. An empty slot just takes q.
template <class Affine>
struct AffineBatch {
  using F = typename Affine::field_t;
  std::vector<Affine> q;
  std::vector<uint32_t> slot;
  std::vector<F> d, prefix;
  size_t m = 0;

  explicit AffineBatch(size_t cap) : q(cap), slot(cap), d(cap), prefix(cap) {}
  bool full() const { return m == q.size(); }
  void push(uint32_t s, const Affine& p) {
    slot[m] = s;
    q[m] = p;
    ++m;
  }
  template <class Exceptional>
  void flush(Affine* acc, Exceptional&& exceptional) {
    if (cpu_has_ifma()) return flush_ifma(acc, exceptional);
    for (size_t k = 0; k < m; ++k) {
      const Affine& p = acc[slot[k]];
      d[k] = p.inf ? F::zero() : q[k].x - p.x;  // 0: no inversion (empty slot or equal x)
    }
    batch_invert_nonzero(d.data(), prefix.data(), m);
    for (size_t k = 0; k < m; ++k) {
      Affine& p = acc[slot[k]];
      if (d[k].is_zero()) {
        finish_special(acc, k, exceptional);
        continue;
      }
      const F lambda = (q[k].y - p.y) * d[k];
      const F x3 = lambda.sqr() - p.x - q[k].x;
      p.y = lambda * (p.x - x3) - p.y;
      p.x = x3;
    }
    m = 0;
  }

 private:
  std::vector<uint32_t> special;
  // The same additions eight lanes at a time (affine_batch_ifma.cpp), which leaves the special
  // pairs to finish_special as flush does.
  template <class Exceptional>
  void flush_ifma(Affine* acc, Exceptional& exceptional) {
    special.clear();
    if constexpr (std::is_same_v<Affine, g2_affine_t>) g2_affine_batch_ifma(acc, q.data(), slot.data(), m, special);
    else g1_affine_batch_ifma(acc, q.data(), slot.data(), m, special);
    for (uint32_t k : special) finish_special(acc, k, exceptional);
    m = 0;
  }
  // A pair the affine formula cannot take: an empty slot takes the point; equal x goes to the
  // caller's general addition, the slot restarting at infinity.
  template <class Exceptional>
  void finish_special(Affine* acc, size_t k, Exceptional& exceptional) {
    Affine& p = acc[slot[k]];
    if (p.inf) {
      p = q[k];
    } else {
      const Affine old = p;
      p = Affine::infinity();
      exceptional(slot[k], old, q[k]);
    }
  }
};

// k * P for a small k (a bucket index), by double-and-add from the top bit.
template <class Xyzz>
Xyzz mul_small(const Xyzz& p, size_t k) {
  Xyzz r = Xyzz::infinity();
  for (int b = std::bit_width(k); b-- > 0;) {
    r = r.dbl();
    if ((k >> b) & 1) r += p;
  }
  return r;
}

// Per-thread scratch of window_partial, reused across its tasks.
template <class Affine, class Xyzz>
struct WindowScratch {
  struct Pending {  // a point whose bucket was already in the open batch
    size_t i;
    uint32_t k;
    bool neg;
  };
  std::vector<Xyzz> xyzz;
  std::vector<Affine> affine;
  std::vector<uint8_t> busy;
  std::vector<Pending> deferred;
};

// Window w's sum over the buckets [lo, hi) only, i.e. sum over digits d with lo < |d| <= hi
// of d * P. Splitting a window by bucket range instead of by points costs no extra bucket
// reduction (each bucket is still reduced once), so a window can be cut into as many tasks as
// balance needs; each task scans all digits, which is cheap beside the additions.
//
// Buckets are XYZZ points filled by mixed additions; with enough points per bucket they also
// have an affine part filled by AffineBatch, which is cheaper per addition. A point whose bucket
// is already in the open batch waits for the next batch, up to `cap` waiting points; past that
// (digits crowding into few buckets: the top window, or many equal scalars) it goes to the
// XYZZ part, so no digit distribution costs more than the plain XYZZ buckets.
template <class Affine, class Xyzz>
Xyzz window_partial(std::span<const Affine> points, const uint64_t* scalars, size_t n, unsigned w, unsigned c,
                    size_t lo, size_t hi, WindowScratch<Affine, Xyzz>& sc) {
  const size_t nb = hi - lo;
  // A batch of nb/4 distinct buckets makes about 1 point in 8 wait; under 64 the inversion
  // costs more than the cheaper additions save.
  const size_t cap = std::min<size_t>(256, nb / 4);
  const bool batched = cap >= 64 && n >= 2 * nb;
  auto bucket_of = [&](size_t i, int& d) {  // bucket index in [0, nb), or nb when none
    d = msm_signed_digit(scalars + 4 * i, w, c);
    const size_t k = size_t(d < 0 ? -d : d) - 1;  // d == 0 wraps to SIZE_MAX
    return k < lo || k >= hi || points[i].is_infinity() ? nb : k - lo;
  };
  auto point = [&](size_t i, bool neg) { return neg ? -points[i] : points[i]; };
  sc.xyzz.assign(nb, Xyzz::infinity());
  if (batched) {
    sc.affine.assign(nb, Affine::infinity());
    sc.busy.assign(nb, 0);
    sc.deferred.clear();
    AffineBatch<Affine> batch(cap);
    // P + Q with equal x (a doubling, or infinity) in XYZZ
    auto exceptional = [&](uint32_t k, const Affine& p, const Affine& q) { sc.xyzz[k] += p.to_xyzz() + q; };
    auto push = [&](size_t i, size_t k, bool neg) {
      batch.push(uint32_t(k), point(i, neg));
      sc.busy[k] = 1;
    };
    // Flush the open batch, then open the next one with the waiting points it can take.
    auto drain = [&] {
      for (size_t k = 0; k < batch.m; ++k) sc.busy[batch.slot[k]] = 0;
      batch.flush(sc.affine.data(), exceptional);
      size_t keep = 0;
      for (const auto& e : sc.deferred) {
        if (batch.full() || sc.busy[e.k])
          sc.deferred[keep++] = e;
        else
          push(e.i, e.k, e.neg);
      }
      sc.deferred.resize(keep);
    };
    for (size_t i = 0; i < n; ++i) {
      int d;
      const size_t k = bucket_of(i, d);
      if (k == nb) continue;
      if (!sc.busy[k])
        push(i, k, d < 0);
      else if (sc.deferred.size() < cap)
        sc.deferred.push_back({i, uint32_t(k), d < 0});
      else
        sc.xyzz[k] += point(i, d < 0);
      if (batch.full()) drain();
    }
    drain();
    for (const auto& e : sc.deferred) sc.xyzz[e.k] += point(e.i, e.neg);
    batch.flush(sc.affine.data(), exceptional);
  } else {
    for (size_t i = 0; i < n; ++i) {
      int d;
      const size_t k = bucket_of(i, d);
      if (k != nb) sc.xyzz[k] += point(i, d < 0);
    }
  }
  // sum_k (k + 1) * bucket[k] as sum_k (k - lo + 1) * bucket[k] via running sums from the top
  // bucket down, plus lo * (sum of the buckets).
  Xyzz running = Xyzz::infinity(), total = Xyzz::infinity();
  for (size_t k = nb; k-- > 0;) {
    if (batched) running += sc.affine[k];
    running += sc.xyzz[k];
    total += running;
  }
  if (lo && !running.is_infinity()) total += mul_small(running, lo);
  return total;
}

template <class Affine, class Jac, class Xyzz>
Jac msm_impl(std::span<const Affine> points, const uint64_t* scalars, size_t n, ThreadPool* pool, unsigned c,
             bool split_bits = true);

// The sum of points[idx[0..m)] (none at infinity) in kLanes running sums, each step adding the
// next kLanes points, one to each lane, as one AffineBatch. The lanes stay in cache and the
// points are read once, in order, from the caller's array: the pairwise tree this replaces
// (sum_affine_batched) needed a copy of the ones' points (~1 s of CPU time at 2^24 G2 points on
// the 16-core Xeon) and streamed it through memory once per level.
template <class Affine, class Jac>
Jac sum_indexed(std::span<const Affine> points, const std::vector<uint32_t>& idx) {
  // 512 lanes: the inversion (~200 products) is spread over 512 additions, and the batch
  // (~300 KB for G2) stays in L2.
  constexpr size_t kLanes = 512;
  if constexpr (std::is_same_v<Affine, g2_affine_t>)
    if (cpu_has_ifma() && idx.size() >= kLanes) {
      Jac extra = Jac::infinity();
      auto sums = g2_sum_indexed_ifma(points.data(), idx.data(), idx.size(), kLanes, extra);
      return extra + sum_affine_batched(sums);
    }
  const size_t lanes = std::min(kLanes, idx.size());
  std::vector<Affine> lane(lanes, Affine::infinity());
  AffineBatch<Affine> batch(std::max<size_t>(lanes, 1));
  Jac extra = Jac::infinity();
  auto exceptional = [&](uint32_t, const Affine& p, const Affine& q) { extra = extra + p.to_jacobian() + q.to_jacobian(); };
  for (size_t i = 0; i < idx.size(); ++i) {
    batch.push(uint32_t(batch.m), points[idx[i]]);
    if (batch.full()) batch.flush(lane.data(), exceptional);
  }
  batch.flush(lane.data(), exceptional);
  return extra + sum_affine_batched(lane);
}

// A Groth16 assignment is mostly bits: in the PoRep-shaped circuit about half the values are 0
// and half 1 (measured in suites/micro/bench_gpu.cpp). In Pippenger every 1 lands in bucket 1 of
// window 0, whose few tasks then do most of the additions (a 2^24 G2 MSM took 8 s on 16 cores,
// nearly all of it in that window). So, as the engine this project models does, zeros are
// dropped, ones are summed directly across all threads, and only the other scalars go through
// Pippenger. Returns nullopt when too few scalars are 0 or 1 for the split to pay.
//
// The scalars come through a view: canonical already, or in Montgomery form, where only the
// scalars that go to Pippenger are converted (converting all 2^24 of a G2 MSM's scalars first
// cost the GPU backend's msm_b_g2 tens of milliseconds, mostly in writing the copy).
struct CanonicalView {
  const uint64_t* s;
  int kind(size_t i) const {  // 0: zero, 1: one, 2: other
    const uint64_t* x = s + 4 * i;
    if (x[1] | x[2] | x[3]) return 2;
    return x[0] == 0 ? 0 : x[0] == 1 ? 1 : 2;
  }
  void canonical(size_t i, uint64_t* out) const { std::copy(s + 4 * i, s + 4 * i + 4, out); }
};
// `first` then `second`: a Groth16 assignment's input part, then its aux part.
struct MontgomeryView {
  std::span<const fr_t> first, second;
  fr_t one = fr_t::one();
  const fr_t& at(size_t i) const { return i < first.size() ? first[i] : second[i - first.size()]; }
  int kind(size_t i) const {
    const fr_t& x = at(i);
    return x.is_zero() ? 0 : x == one ? 1 : 2;
  }
  void canonical(size_t i, uint64_t* out) const { at(i).to_canonical(out); }
};

template <class Affine, class Jac, class Xyzz, class View>
std::optional<Jac> msm_split_bits(std::span<const Affine> points, const View& scalars, size_t n, ThreadPool& tp) {
  if (n < 4096) return std::nullopt;
  // Chunks of at most 2^32 points (32-bit offsets in sum_indexed's index lists).
  const size_t chunks = std::max<size_t>(std::min<size_t>(n / 1024, 8 * size_t(tp.size())), (n >> 32) + 1);
  const size_t per = (n + chunks - 1) / chunks;
  // Offsets of the other scalars in each chunk, so that gathering them needs no second pass
  // over all scalars.
  std::vector<std::vector<uint32_t>> others(chunks);
  std::vector<Jac> ones(chunks, Jac::infinity());
  tp.parallel_for(chunks, [&](size_t cb, size_t ce) {
    std::vector<uint32_t> mine;
    for (size_t ch = cb; ch < ce; ++ch) {
      mine.clear();
      const size_t b = ch * per, e = std::min(n, b + per);
      for (size_t i = b; i < e; ++i) {
        const int k = scalars.kind(i);
        if (k == 1 && !points[i].is_infinity()) mine.push_back(uint32_t(i - b));
        if (k == 2) others[ch].push_back(uint32_t(i - b));
      }
      if (b < e) ones[ch] = sum_indexed<Affine, Jac>(points.subspan(b, e - b), mine);
    }
  }, chunks);
  size_t n_other = 0;
  for (const auto& o : others) n_other += o.size();
  if (n_other * 4 > n * 3) return std::nullopt;  // under a quarter are bits: the ones' pass was wasted work
  std::vector<size_t> start(chunks, 0);
  for (size_t ch = 1; ch < chunks; ++ch) start[ch] = start[ch - 1] + others[ch - 1].size();
  std::vector<Affine> sub_points(n_other);
  std::vector<uint64_t> sub_scalars(4 * n_other);
  tp.parallel_for(chunks, [&](size_t cb, size_t ce) {
    for (size_t ch = cb; ch < ce; ++ch) {
      size_t o = start[ch];
      for (const uint32_t off : others[ch]) {
        const size_t i = ch * per + off;
        sub_points[o] = points[i];
        scalars.canonical(i, &sub_scalars[4 * o]);
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

// Checks the lengths and the window width (0: msm_window_bits(n)); returns the width.
unsigned check_msm_args(size_t points, size_t n, unsigned c) {
  if (points != n)
    throw std::invalid_argument("MSM: " + std::to_string(points) + " points but " + std::to_string(n) + " scalars");
  if (c == 0) c = msm_window_bits(n);
  if (c < 2 || c > 20) throw std::invalid_argument("MSM: window of " + std::to_string(c) + " bits (2..20)");
  return c;
}

template <class Affine, class Jac, class Xyzz>
Jac msm_impl(std::span<const Affine> points, const uint64_t* scalars, size_t n, ThreadPool* pool, unsigned c,
             bool split_bits) {
  c = check_msm_args(points.size(), n, c);
  if (n == 0) return Jac::infinity();
  ThreadPool& tp = pool ? *pool : ThreadPool::global();
  if (split_bits)
    if (auto split = msm_split_bits<Affine, Jac, Xyzz>(points, CanonicalView{scalars}, n, tp)) return *split;
  const unsigned W = num_windows(c);
  // Windows cut into bucket ranges: about 4 tasks per thread, taken dynamically, keep the
  // threads' finishing times close (one task per window left threads idle at the tail). The
  // ranges cover the digits a window can hold: scalars are below r, so |d_w| <= (r >> wc) + 1,
  // and the top window's few buckets are cut as finely as the others (else its first task
  // takes all the top window's points).
  const size_t nb = size_t(1) << (c - 1);
  constexpr limbs_t<4> order = fr_params::modulus();
  auto buckets_of = [&](unsigned w) -> size_t {  // r >> wc fits 64 bits from wc = 192 up
    return w * c >= 192 ? std::min<uint64_t>(nb, bits_at(order.v, w * c, 64) + 1) : nb;
  };
  const size_t ranges = std::max<size_t>(1, (4 * size_t(tp.size()) + W - 1) / W);
  std::vector<Xyzz> partial(W * ranges, Xyzz::infinity());
  tp.parallel_for(W * ranges, [&](size_t tb, size_t te) {
    WindowScratch<Affine, Xyzz> scratch;
    for (size_t t = tb; t < te; ++t) {
      const unsigned w = unsigned(t / ranges);
      const size_t nbw = buckets_of(w), per = (nbw + ranges - 1) / ranges;
      const size_t lo = (t % ranges) * per, hi = std::min(nbw, lo + per);
      if (lo < hi) partial[t] = window_partial<Affine, Xyzz>(points, scalars, n, w, c, lo, hi, scratch);
    }
  }, W * ranges);
  Xyzz acc = Xyzz::infinity();
  for (unsigned w = W; w-- > 0;) {
    if (!acc.is_infinity())
      for (unsigned k = 0; k < c; ++k) acc = acc.dbl();
    for (size_t r = 0; r < ranges; ++r) acc += partial[w * ranges + r];
  }
  return acc.to_jacobian();
}

}  // namespace

CanonicalScalars to_canonical(std::span<const fr_t> first, std::span<const fr_t> second, ThreadPool* pool) {
  const size_t n = first.size() + second.size();
  CanonicalScalars out{std::unique_ptr<uint64_t[]>(new uint64_t[4 * n]), n};  // default-initialized: not zeroed
  ThreadPool& tp = pool ? *pool : ThreadPool::global();
  tp.parallel_for(n, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i)
      (i < first.size() ? first[i] : second[i - first.size()]).to_canonical(&out.limbs[4 * i]);
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
namespace {

// Montgomery-form scalars: the zero/one split reads them as they are; only where it does not
// pay are they all converted.
template <class Affine, class Jac, class Xyzz>
Jac msm_montgomery(std::span<const Affine> points, std::span<const fr_t> first, std::span<const fr_t> second,
                   ThreadPool* pool, unsigned c) {
  const size_t n = first.size() + second.size();
  c = check_msm_args(points.size(), n, c);
  ThreadPool& tp = pool ? *pool : ThreadPool::global();
  if (auto split = msm_split_bits<Affine, Jac, Xyzz>(points, MontgomeryView{first, second}, n, tp)) return *split;
  const CanonicalScalars s = to_canonical(first, second, &tp);
  return msm_impl<Affine, Jac, Xyzz>(points, s.data(), n, &tp, c, false);
}

}  // namespace

g1_jacobian_t msm_g1(std::span<const g1_affine_t> points, std::span<const fr_t> scalars, ThreadPool* pool,
                     unsigned c) {
  return msm_montgomery<g1_affine_t, g1_jacobian_t, g1_xyzz_t>(points, scalars, {}, pool, c);
}
g2_jacobian_t msm_g2(std::span<const g2_affine_t> points, std::span<const fr_t> scalars, ThreadPool* pool,
                     unsigned c) {
  return msm_montgomery<g2_affine_t, g2_jacobian_t, g2_xyzz_t>(points, scalars, {}, pool, c);
}
g2_jacobian_t msm_g2(std::span<const g2_affine_t> points, std::span<const fr_t> first, std::span<const fr_t> second,
                     ThreadPool* pool, unsigned c) {
  return msm_montgomery<g2_affine_t, g2_jacobian_t, g2_xyzz_t>(points, first, second, pool, c);
}

}  // namespace cuzk
