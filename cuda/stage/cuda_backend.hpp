// The CUDA backend as the rest of cuzk sees it (a plain C++ header: no CUDA types), so that
// g++-compiled code (the CLI, tests, benchmarks) can register it, choose its stage options and
// make one. It brings the backend's errors (cuda/util/cuda_error.hpp) and the device probe
// (cuda/util/device_probe.hpp) along, which its callers catch and call.
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "cuda/stage/staged_upload_options.hpp"
#include "cuda/util/cuda_error.hpp"
#include "cuda/util/device_probe.hpp"

namespace cuzk::groth16 {
class Backend;
struct Witness;
}

namespace cuzk::cuda {

// Makes the CUDA backend known to groth16::make_backend("cuda"). Call once from main().
void register_backend();

// How the CUDA backend's proving stage moves data and orders its phases (cuda/stage/backend.cu).
// Builds fix both through variant flags; tests and benchmarks set them per backend, to compare
// the variants in one binary.
struct StageOptions {
  // The CUDA device (ordinal) the backend runs on; every call sets it on the calling thread
  // first, so several backends (one per device) can serve one process.
  int device = 0;
  bool pin_abc = false;  // CUZK_PINNED_HOST: page-lock a, b, c (pin_abc) before copying them
  bool overlap = false;  // CUZK_GPU_OVERLAP: uploads on a copy stream beside the kernels
  // Window bits of the MSMs over the assignment (msm_l, msm_a, msm_b_g1 and, on the device,
  // msm_b_g2); 0: the rule for a mostly-0/1 assignment (gpu_msm_window_bits_sparse, on a sample
  // of its values), where msm_h keeps the rule for full-width scalars. Benchmarks sweep it.
  unsigned assignment_window_bits = 0;
  // Window bits of msm_h, whose scalars (H's coefficients) are full-width; 0: the rule for n
  // full-width scalars (gpu_msm_window_bits: about n / 2^8 buckets up to 2^23 scalars, 20 bits
  // above; the widths for cuts per bucket where equal_chunks is off). Benchmarks sweep it (wider
  // windows: fewer of them, so fewer point additions, against more buckets to reduce;
  // docs/cuda-backend.md#msm-window-rule).
  unsigned h_window_bits = 0;
  // Sort the assignment's digits once for all of its MSMs (cuda/msm/msm.cuh, DigitPlan), where they
  // fit one sort; off: each MSM sorts its own (the former way, for the A/B).
  bool share_digits = true;
  // Sort only the non-zero digits in the assignment's MSMs (Msm::set_skip_zero_digits; msm_h's
  // scalars are full-width and sort every digit either way); off: every digit, zeros included
  // (the former way, for the A/B).
  bool skip_zero_digits = true;
  // The bucket sums of every MSM of the stage in equal chunks across buckets (on) or each
  // bucket's run in chunks of its own (off); unset (the default): Msm::set_equal_chunks's rule,
  // equal chunks for msm_h where its buckets hold 128 digits or fewer (2^23-2^26 scalars at the
  // rule's 20 bits), per bucket for the assignment's MSMs. Set, for the A/B.
  std::optional<bool> equal_chunks = std::nullopt;
  // The later rounds of every MSM's bucket sums cut so that each fills the GPU
  // (Msm::set_fill_later_rounds); off: in chunks of the first round's size (the former way, for
  // the A/B).
  bool fill_later_rounds = true;
  // How pageable a, b, c and z are staged for the copy engine (cuda/stage/staged_upload_options.hpp): filling
  // threads, buffers per thread or one buffer at a time (Fill::split, the former way), buffer
  // sizes. The overlapped stage's compute stream waits first for the assignment's upload, which
  // the host's copying bounds (docs/cuda-backend.md#staging-per-thread).
  StagedUploadOptions staged_upload{};
};
// The options of this build's variant flags.
StageOptions build_stage_options();

// The window bits the stage gives w's assignment MSMs by default (assignment_window_bits 0):
// the sparse rule (cuda/msm/msm_params.hpp, gpu_msm_window_bits_sparse) on a sample of w's values.
unsigned default_assignment_window_bits(const groth16::Witness& w);

// The CUDA backend with explicit options (groth16::make_backend("cuda") takes
// build_stage_options()). Throws groth16::BackendUnavailable without a usable GPU,
// std::invalid_argument for a device index beyond the devices present.
std::unique_ptr<groth16::Backend> make_cuda_backend(StageOptions options);

// Where this build's CUDA backend runs msm_b_g2: on the device (CUZK_GPU_G2=ON, a GPU phase
// after msm_b_g1) or on CPU threads beside the GPU work (the default).
bool msm_b_g2_on_gpu();

}  // namespace cuzk::cuda
