// The H polynomial on the device: the same result as groth16::compute_h (prover/groth16/
// prover.hpp), from a, b, c already on the device.
#pragma once
#include "cuda/ntt/ntt.cuh"
#include "prover/groth16/keys.hpp"

namespace cuzk::cuda {

// a, b, c: device arrays of n = 2^log_n evaluations (zero-padded past the constraints); all
// three are overwritten. Returns the device array holding H's MSM scalars (a or b) and sets
// *count to their number (n - 1 for bellman keys, n for snarkjs keys).
fr_t* compute_h_device(NttContext& ntt, groth16::HConvention conv, fr_t* a, fr_t* b, fr_t* c, unsigned log_n,
                       size_t* count, cudaStream_t s);

}  // namespace cuzk::cuda
