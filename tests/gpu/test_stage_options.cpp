// The CUDA proving stage's options are checked before any device is touched
// (make_cuda_backend, cuda/stage/backend.cu), so these run everywhere, CI's machines without a GPU
// among them: a bad value is one std::invalid_argument that names it, the bounds themselves are
// accepted, and good options end in a backend or, without a GPU, in BackendUnavailable.
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "cuda/stage/cuda_backend.hpp"
#include "prover/groth16/backend.hpp"

using namespace cuzk;
using Catch::Matchers::Contains;

namespace {
// Past the option checks: a backend where a GPU is, BackendUnavailable where none is.
void passes_the_checks(const cuda::StageOptions& o) {
  if (cuda::probe_device().available)
    CHECK(cuda::make_cuda_backend(o) != nullptr);
  else
    CHECK_THROWS_AS(cuda::make_cuda_backend(o), groth16::BackendUnavailable);
}
}  // namespace

TEST_CASE("the CUDA stage refuses bad window bits before touching a device") {
  for (unsigned bad : {1u, 21u, 64u}) {
    INFO("assignment window bits " << bad);
    CHECK_THROWS_WITH(cuda::make_cuda_backend({.assignment_window_bits = bad}), Contains("assignment window bits"));
    CHECK_THROWS_AS(cuda::make_cuda_backend({.assignment_window_bits = bad}), std::invalid_argument);
  }
  for (unsigned bad : {1u, 21u, 64u}) {
    INFO("msm_h window bits " << bad);
    CHECK_THROWS_WITH(cuda::make_cuda_backend({.h_window_bits = bad}), Contains("msm_h window bits"));
    CHECK_THROWS_AS(cuda::make_cuda_backend({.h_window_bits = bad}), std::invalid_argument);
  }
  for (unsigned ok : {0u, 2u, 12u, 20u}) {
    INFO("window bits " << ok);
    passes_the_checks({.assignment_window_bits = ok});
    passes_the_checks({.h_window_bits = ok});
  }
}

TEST_CASE("the CUDA stage refuses a mistaken staging before taking threads or pinned memory") {
  const cuda::StagedUploadOptions bad[] = {{.threads = 257}, {.buffer_bytes = (size_t(1) << 30) + 1}, {.buffers = 65},
                               {.fill = cuda::Fill::split, .threads = 1000, .buffer_bytes = size_t(16) << 30}};
  for (const cuda::StagedUploadOptions& s : bad) {
    INFO("threads " << s.threads << ", buffers " << s.buffers << ", buffer bytes " << s.buffer_bytes);
    CHECK_THROWS_AS(cuda::make_cuda_backend({.staged_upload = s}), std::invalid_argument);
    CHECK_THROWS_WITH(cuda::make_cuda_backend({.staged_upload = s}), Contains("staging of"));
  }
  // The bounds themselves, and the defaults (0), pass; no buffer is allocated before an upload.
  for (const cuda::StagedUploadOptions& s : {cuda::StagedUploadOptions{}, cuda::StagedUploadOptions{.threads = 256, .buffer_bytes = size_t(1) << 30, .buffers = 64},
                                 cuda::StagedUploadOptions{.fill = cuda::Fill::split, .threads = 2, .buffer_bytes = 1, .buffers = 1}}) {
    INFO("threads " << s.threads << ", buffers " << s.buffers << ", buffer bytes " << s.buffer_bytes);
    passes_the_checks({.staged_upload = s});
  }
}
