// Compile-only check that the curve templates (prover/ec/curve.hpp) build as device code:
// a G1 XYZZ mixed addition (the MSM bucket update) and a G2 Jacobian doubling over arrays.
// Built into cuzk_cuda with the CUDA backend; nothing launches these kernels in production.
#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"

namespace cuzk {

__global__ void ec_check_g1_xyzz_madd(g1_xyzz_t* acc, const g1_affine_t* pts, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) acc[i] = acc[i].add(pts[i]);
}

__global__ void ec_check_g1_jacobian_add(g1_jacobian_t* acc, const g1_jacobian_t* pts, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) acc[i] = acc[i].add(pts[i]).add(g1_affine_t::infinity());
}

__global__ void ec_check_g2_jacobian_dbl(g2_jacobian_t* pts, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) pts[i] = pts[i].dbl();
}

__global__ void ec_check_g2_xyzz_madd(g2_xyzz_t* acc, const g2_affine_t* pts, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) acc[i] = (acc[i] + pts[i]).dbl();
}

}  // namespace cuzk
