// The key generation's fixed-base multiplications on a CUDA device (a plain C++ header: no CUDA
// types). groth16::generate_keys hands them a device through KeygenOptions; the keys come out the
// same bit for bit as on CPU threads (prover/groth16/setup.hpp).
#pragma once
#include <memory>

#include "prover/groth16/setup.hpp"

namespace cuzk::cuda {

// The device `device`'s fixed-base multiplications. G2 has a device kernel only in builds with
// CUZK_GPU_G2 (its Fp2 arithmetic is the slow part of compiling the CUDA library, as for the
// G2 MSM); without it has_g2() is false and G2 stays on CPU threads. Throws
// groth16::BackendUnavailable without a usable GPU.
std::unique_ptr<groth16::FixedBaseDevice> make_fixed_base_device(int device = 0);

}  // namespace cuzk::cuda
