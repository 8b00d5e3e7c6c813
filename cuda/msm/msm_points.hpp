// The groups the device MSM runs over (cuda/msm/msm.cuh, cuda/testing/entry_points.hpp), as traits naming each
// group's three point forms: affine (the bases), XYZZ (buckets and partial sums) and Jacobian
// (the result). A plain C++ header: g++-compiled code names the groups too (DeviceMsm<P>).
#pragma once
#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"

namespace cuzk::cuda {

struct G1Points {
  using affine = g1_affine_t;
  using xyzz = g1_xyzz_t;
  using jacobian = g1_jacobian_t;
};

struct G2Points {
  using affine = g2_affine_t;
  using xyzz = g2_xyzz_t;
  using jacobian = g2_jacobian_t;
};

}  // namespace cuzk::cuda
