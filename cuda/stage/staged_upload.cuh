// Host-to-device copies from any host memory without making the caller pin it.
//
// cudaMemcpyAsync from pageable memory is a copy the driver stages through its own small pinned
// buffers, one piece at a time, on the calling thread, several times slower than a copy from
// page-locked memory; pinning the caller's memory (cudaHostRegister) costs about as much as that
// slow copy again (docs/cuda-backend.md#staging-rather-than-pinning). StagedUploader instead keeps pinned
// buffers of its own: host threads copy the next pieces into free buffers while the copy engine
// drains the previous ones, so the copy runs at the slower of the two rates and the caller's
// memory is never registered. Page-locked sources are copied directly.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "cuda/stage/staged_upload_options.hpp"

namespace cuzk {
class ThreadPool;
}

namespace cuzk::cuda {

// Whether host memory at p is page-locked (cudaHostAlloc, or inside a cudaHostRegister'ed
// range), so that the copy engine can read it directly.
bool is_page_locked(const void* p);

class StagedUploader {
 public:
  // The pinned buffers are allocated on the first staged copy.
  explicit StagedUploader(StagedUploadOptions staging = {});
  // Half the CPUs the process may use, between 2 and 8: the copy is bound by the host's copying
  // up to 8 threads or more, and half the cores stay with the CPU's own work (the staging sweep:
  // results/reference/h200/stage-2026-12-02/README.md).
  static unsigned default_threads();
  ~StagedUploader();  // waits for the copies out of its buffers
  StagedUploader(const StagedUploader&) = delete;
  StagedUploader& operator=(const StagedUploader&) = delete;

  // Enqueues dst[0, bytes) <- src[0, bytes) on stream s. Returns once every byte is enqueued:
  // a pageable source has then been read completely (the caller may change it), a page-locked
  // one is read by the copy engine in stream order and must stay valid until s gets there.
  // The pieces of one copy may reach the stream in any order (Fill::per_thread); everything
  // enqueued on s after copy() returns runs after all of them. Not for two callers at once.
  // Throws CudaError on failure (also when the pinned buffers cannot be allocated).
  void copy(void* dst, const void* src, size_t bytes, cudaStream_t s);

 private:
  struct Buffer {
    void* host = nullptr;
    cudaEvent_t drained = nullptr;  // recorded after the copy out of it
  };
  struct Ring {
    std::vector<Buffer> buffers;
    size_t next = 0;
  };
  void allocate();
  // Copies host[0, len) into the ring's next buffer, once its previous copy has left it, with
  // fill(buffer, host, len), and enqueues the copy to dst on s.
  template <class FillFn>
  void stage(Ring& r, char* dst, const char* host, size_t len, cudaStream_t s, FillFn&& fill);
  StagedUploadOptions staging_;
  std::vector<Ring> rings_;  // one (Fill::split) or one per thread
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace cuzk::cuda
