#include "prover/ntt/ntt.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "prover/util/thread_pool.hpp"

namespace cuzk {
namespace {

ThreadPool& pick(ThreadPool* p) { return p ? *p : ThreadPool::global(); }

size_t bit_reverse(size_t x, unsigned bits) {
  size_t r = 0;
  for (unsigned i = 0; i < bits; ++i) {
    r = (r << 1) | (x & 1);
    x >>= 1;
  }
  return r;
}

// Small transforms are not worth the pool's synchronisation.
constexpr size_t kParallelThreshold = 1u << 12;

}  // namespace

Domain Domain::at_least(size_t min_size) {
  unsigned k = 0;
  while ((size_t(1) << k) < min_size) {
    ++k;
    if (k > 32) throw std::invalid_argument("NTT domain of " + std::to_string(min_size) + " points exceeds 2^32");
  }
  return Domain(k);
}

Domain::Domain(unsigned log_n) : n_(size_t(1) << log_n), log_n_(log_n) {
  if (log_n > 32) throw std::invalid_argument("NTT domain 2^" + std::to_string(log_n) + " exceeds Fr's 2-adicity 32");
  omega_ = fr_t::root_of_unity(log_n);
  omega_inv_ = omega_.inv();
  n_inv_ = fr_t::from_u64(n_).inv();
  const size_t half = n_ / 2;
  tw_fwd_.resize(half);
  tw_inv_.resize(half);
  // Filled in parallel blocks, each block starting from a direct power.
  pick(nullptr).parallel_for(half, [&](size_t b, size_t e) {
    fr_t w = omega_.pow(uint64_t(b)), wi = omega_inv_.pow(uint64_t(b));
    for (size_t j = b; j < e; ++j) {
      tw_fwd_[j] = w;
      tw_inv_[j] = wi;
      w *= omega_;
      wi *= omega_inv_;
    }
  });
}

fr_t Domain::coset_generator() { return fr_t::from_u64(7); }

void Domain::transform(std::span<fr_t> a, const std::vector<fr_t>& tw, ThreadPool* pool) const {
  if (a.size() != n_)
    throw std::invalid_argument("NTT input has " + std::to_string(a.size()) + " elements, domain has " +
                                std::to_string(n_));
  if (n_ <= 1) return;
  ThreadPool& tp = pick(pool);
  const bool par = n_ >= kParallelThreshold;
  // Bit-reversal permutation, then iterative Cooley-Tukey (decimation in time).
  auto permute = [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      size_t j = bit_reverse(i, log_n_);
      if (i < j) std::swap(a[i], a[j]);
    }
  };
  if (par) tp.parallel_for(n_, permute); else permute(0, n_);
  const size_t half = n_ / 2;
  for (size_t m = 1; m < n_; m <<= 1) {
    const size_t stride = half / m;  // twiddle step for this stage
    // Butterfly k in [0, n/2): group k / m, offset j = k % m; contiguous k touch contiguous memory.
    auto stage = [&, m, stride](size_t kb, size_t ke) {
      for (size_t k = kb; k < ke; ++k) {
        size_t j = k & (m - 1);
        size_t i = ((k - j) << 1) + j;
        fr_t t = a[i + m] * tw[j * stride];
        a[i + m] = a[i] - t;
        a[i] += t;
      }
    };
    if (par) tp.parallel_for(half, stage); else stage(0, half);
  }
}

void Domain::forward(std::span<fr_t> a, ThreadPool* pool) const { transform(a, tw_fwd_, pool); }

void Domain::inverse(std::span<fr_t> a, ThreadPool* pool) const {
  transform(a, tw_inv_, pool);
  const fr_t s = n_inv_;
  auto scale = [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) a[i] *= s;
  };
  if (n_ >= kParallelThreshold) pick(pool).parallel_for(n_, scale); else scale(0, n_);
}

void scale_by_powers(std::span<fr_t> a, const fr_t& g, ThreadPool* pool) {
  auto body = [&](size_t b, size_t e) {
    fr_t p = g.pow(uint64_t(b));
    for (size_t i = b; i < e; ++i) {
      a[i] *= p;
      p *= g;
    }
  };
  if (a.size() >= kParallelThreshold) pick(pool).parallel_for(a.size(), body); else body(0, a.size());
}

void Domain::coset_forward(std::span<fr_t> a, const fr_t& g, ThreadPool* pool) const {
  scale_by_powers(a, g, pool);
  forward(a, pool);
}

void Domain::coset_inverse(std::span<fr_t> a, const fr_t& g, ThreadPool* pool) const {
  inverse(a, pool);
  scale_by_powers(a, g.inv(), pool);
}

fr_t Domain::vanishing_on_coset(const fr_t& g) const { return g.pow(uint64_t(n_)) - fr_t::one(); }

}  // namespace cuzk
