// How StagedUploader (cuda/stage/staged_upload.cuh) stages pageable host memory for the copy engine:
// plain C++, so that the proving stage's options (cuda/stage/cuda_backend.hpp), the tests and the
// benchmarks can choose it without CUDA's headers.
#pragma once
#include <cstddef>

namespace cuzk::cuda {

// How the host threads share the staging.
enum class Fill {
  // All threads fill one buffer together, then its copy is enqueued and they go on to the next
  // (one ring for all). Every buffer ends in a join of the threads, which costs enough that
  // small buffers stage at half the rate (docs/cuda-backend.md#staging-per-thread).
  split,
  // Each thread takes the next piece of the copy, fills a buffer of its own ring with it and
  // enqueues that buffer's copy itself: no join until the whole copy is enqueued, so small
  // buffers stage as fast as split's large ones and a delayed thread holds up only its piece.
  per_thread,
};

struct StagedUploadOptions {
  Fill fill = Fill::per_thread;
  unsigned threads = 0;     // filling threads, the caller among them (at least 2; 0: StagedUploader::default_threads())
  size_t buffer_bytes = 0;  // 0: 16 MiB for Fill::split, 4 MiB for Fill::per_thread
  unsigned buffers = 0;     // buffers in a ring, each thread's with Fill::per_thread (at least 2;
                            // 0: 4 for Fill::split, 2 for Fill::per_thread)
};

}  // namespace cuzk::cuda
