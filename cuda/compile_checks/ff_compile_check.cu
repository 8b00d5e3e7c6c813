// Compile check: the field headers build as device code (nvcc, sm_90). Never launched by the
// prover; it keeps prover/ff/ honest about being host+device. Kept small on purpose: every field
// operation is force-inlined, and an Fp12 kernel costs ptxas minutes.
#include "prover/ff/bls12_381.hpp"

namespace cuzk {

__global__ void ff_compile_check_kernel(fr_t* fr_out, const fr_t* fr_a, const fr_t* fr_b, fp_t* fp_out,
                                        const fp_t* fp_a, const fp_t* fp_b, fp2_t* fp2_out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  fr_out[i] = fr_a[i] * fr_b[i] + fr_a[i].sqr() - fr_b[i] + fr_t::from_u64(uint64_t(i));
  fp_out[i] = fp_a[i] * fp_b[i] - fp_a[i].dbl() + fp_t::one();
  fp2_t z{fp_a[i], fp_b[i]};
  fp2_out[i] = (z * z.conjugate()).mul_by_nonresidue().frobenius_map(i);
}

// Fermat inversion and the root-of-unity table path, separately (loops, not unrolled)
__global__ void ff_compile_check_inv_kernel(fr_t* fr_io, fp_t* fp_io, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  fr_io[i] = fr_io[i].inv() * fr_t::root_of_unity(i & 31);
  fp_io[i] = fp_io[i].inv();
}

}  // namespace cuzk
