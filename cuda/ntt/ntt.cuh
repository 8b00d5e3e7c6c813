// Fr NTTs on the device (device pointers, one stream), for the proving stage and the tests.
//
// Layout: radix-2, decimation in frequency (DIF: natural order in, bit-reversed out) and in
// time (DIT: bit-reversed in, natural out). A kernel pass runs several consecutive
// butterfly stages of one group of elements in shared memory, so a 2^24 transform reads and
// writes global memory 3 times instead of 24 (the split: NttPlan). Twiddles are one device table per (domain,
// direction), each stage's run contiguous, computed on the device and kept for the context's
// lifetime.
//
// With DIF for the inverse and DIT for the forward transform, the H computation never needs a
// bit reversal between its steps: iNTT (natural -> reversed coefficients), coset scaling by the
// reversed index, NTT (reversed -> natural evaluations); H's last iNTT stores natural order.
#pragma once
#include <cuda_runtime.h>

#include <map>
#include <memory>

#include "cuda/util/cuda_check.cuh"
#include "cuda/util/device_array.cuh"
#include "cuda/ntt/ntt_plan.hpp"
#include "prover/ff/fr.hpp"

namespace cuzk::cuda {

// x^(2^b) for b < 32: lets a thread raise x to its index with one product per set bit.
struct PowTable {
  fr_t p[32];
  static PowTable of(const fr_t& x);
};

class NttContext {
 public:
  // The twiddle tables of domain 2^log_n (built on first use on `stream`).
  struct Tables {
    DeviceArray<fr_t> fwd, inv;  // per stage s, omega^(+-j 2^s) for j < n/2^(s+1) (ntt.cu)
    fr_t omega, omega_inv, n_inv;
  };
  const Tables& tables(unsigned log_n, cudaStream_t stream);

  // The pass plan of every later transform (benchmarks sweep it); {} is the default rule.
  // Throws std::invalid_argument for a plan the kernels cannot run.
  void set_plan(NttPlan plan);
  NttPlan plan_for(unsigned log_n) const;

  // In place on d[0..2^log_n). inverse: DIF with omega^-1 (natural -> reversed, NOT scaled by
  // 1/n); forward: DIT with omega (reversed -> natural).
  void dif_inverse(fr_t* d, unsigned log_n, cudaStream_t s);
  void dit_forward(fr_t* d, unsigned log_n, cudaStream_t s);
  void dif_forward(fr_t* d, unsigned log_n, cudaStream_t s);  // DIF with omega (natural -> reversed)
  // dif_inverse, but natural order out, into out != in (in is overwritten): the last pass
  // stores each element at its bit-reversed place.
  void dif_inverse_natural(fr_t* in, fr_t* out, unsigned log_n, cudaStream_t s);
  // Plain transforms, natural order in and out: DIF whose last pass stores bit-reversed (through
  // a scratch array of 2^log_n elements kept by the context when the transform takes more than
  // one pass).
  void forward(fr_t* d, unsigned log_n, cudaStream_t s);
  void inverse(fr_t* d, unsigned log_n, cudaStream_t s);  // scaled by 1/n
  // Coset variants on g*<omega>: forward takes coefficients, inverse returns them.
  void coset_forward(fr_t* d, unsigned log_n, const fr_t& g, cudaStream_t s);
  void coset_inverse(fr_t* d, unsigned log_n, const fr_t& g, cudaStream_t s);
  // d[i] *= c * x^(idx(i)), idx(i) = i or the log_n-bit reversal of i.
  void scale(fr_t* d, unsigned log_n, const fr_t& x, const fr_t& c, bool reversed_index, cudaStream_t s);

 private:
  // The passes of one transform: the first reads src, the last writes dst (bit-reversed with
  // rev_out, DIF only), the others run in place in mid.
  void passes(const fr_t* src, fr_t* mid, fr_t* dst, unsigned log_n, const fr_t* tw, bool dit, bool rev_out,
              cudaStream_t s);
  void dif_natural(fr_t* in, fr_t* out, unsigned log_n, const fr_t* tw, cudaStream_t s);
  fr_t* scratch(size_t n);
  NttPlan plan_;
  DeviceArray<fr_t> scratch_;
  std::map<unsigned, std::unique_ptr<Tables>> tables_;
  DeviceArray<fr_t> scale_tables_;  // scale()'s two power tables, rebuilt per call
};

// a[i] = (a[i] * b[i] - c[i]) * z for i < n.
void h_pointwise(fr_t* a, const fr_t* b, const fr_t* c, const fr_t& z, size_t n, cudaStream_t s);
// d[i] = 0 for i in [from, to).
void fill_zero(fr_t* d, size_t from, size_t to, cudaStream_t s);

}  // namespace cuzk::cuda
