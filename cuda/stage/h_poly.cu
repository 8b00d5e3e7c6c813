#include "cuda/stage/h_poly.cuh"

namespace cuzk::cuda {

fr_t* compute_h_device(NttContext& ntt, groth16::HConvention conv, fr_t* a, fr_t* b, fr_t* c, unsigned log_n,
                       size_t* count, cudaStream_t s) {
  const size_t n = size_t(1) << log_n;
  const NttContext::Tables& t = ntt.tables(log_n, s);
  // The coset of groth16::compute_h: bellman shifts by the generator 7, snarkjs by the
  // primitive 2n-th root of unity.
  const fr_t shift = conv == groth16::HConvention::kBellman ? fr_t::from_u64(7) : fr_t::root_of_unity(log_n + 1);
  for (fr_t* v : {a, b, c}) {
    ntt.dif_inverse(v, log_n, s);                                    // reversed coefficients (times n)
    ntt.scale(v, log_n, shift, t.n_inv, /*reversed=*/true, s);  // coset polynomial
    ntt.dit_forward(v, log_n, s);                                    // natural coset evaluations
  }
  if (conv == groth16::HConvention::kSnarkjs) {
    h_pointwise(a, b, c, fr_t::one(), n, s);
    *count = n;
    return a;
  }
  const fr_t zinv = (shift.pow(uint64_t(n)) - fr_t::one()).inv();  // 1 / Z on the coset
  h_pointwise(a, b, c, zinv, n, s);
  ntt.dif_inverse_natural(a, b, log_n, s);                          // H's coefficients (times n), in b
  ntt.scale(b, log_n, shift.inv(), t.n_inv, /*reversed=*/false, s);
  *count = n - 1;  // deg H <= n - 2
  return b;
}

}  // namespace cuzk::cuda
