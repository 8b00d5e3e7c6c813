// Montgomery's trick for many inverses at the price of one.
#pragma once
#include <cstddef>

namespace cuzk {

// Replaces every nonzero d[k] (k < n) by its inverse with one field inversion and three products
// per element; zeros stay zero (the batched affine additions mark the pairs the formula cannot
// take with them). prefix: scratch of n elements. Host code (F::inv).
template <class F>
void batch_invert_nonzero(F* d, F* prefix, size_t n) {
  F acc = F::one();
  for (size_t k = 0; k < n; ++k) {
    prefix[k] = acc;
    if (!d[k].is_zero()) acc = acc * d[k];
  }
  F inv = acc.inv();
  for (size_t k = n; k-- > 0;) {  // 1/d_k = inv * prefix_k, then drop d_k from inv
    if (d[k].is_zero()) continue;
    const F dinv = inv * prefix[k];
    inv = inv * d[k];
    d[k] = dinv;
  }
}

}  // namespace cuzk
