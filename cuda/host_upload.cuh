// Host-to-device copies from any host memory without making the caller pin it.
//
// cudaMemcpyAsync from pageable memory is a copy the driver stages through its own small pinned
// buffers, one piece at a time, on the calling thread: about 5 GB/s on the H200's host (2^24
// G1 points and scalars, 2.1 GB, took 0.45 s; docs/cuda-backend.md), against about 40 GB/s
// from page-locked memory. Pinning the caller's memory (cudaHostRegister) costs about as much
// as that slow copy again (pin_abc: 106 ms for 1.5 GiB). HostUploader instead keeps a small
// ring of pinned buffers of its own: several host threads copy the next piece into a free
// buffer while the copy engine drains the previous one, so the copy runs at the slower of the
// two rates and the caller's memory is never registered. Page-locked sources are copied
// directly.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace cuzk {
class ThreadPool;
}

namespace cuzk::cuda {

// Whether host memory at p is page-locked (cudaHostAlloc, or inside a cudaHostRegister'ed
// range), so that the copy engine can read it directly.
bool is_page_locked(const void* p);

class HostUploader {
 public:
  // `buffers` pinned buffers of `buffer_bytes` each (allocated on the first staged copy), filled
  // by `threads` host threads (the caller among them; at least 2; 0: default_threads()).
  explicit HostUploader(size_t buffer_bytes = size_t(16) << 20, unsigned buffers = 4, unsigned threads = 0);
  // Half the CPUs the process may use, between 2 and 8. On the H200's host (16 cores; 1 GiB
  // through buffers of 16 MiB, BM_staged_upload, 2026-12-02) 2 threads staged 6.3 GB/s, 4
  // threads 24, 8 threads 29 to 47 (two runs), 12 threads 52, where the copy engine takes about
  // 55 GB/s from pinned memory (docs/cuda-backend.md): the copy is bound by the host's copying
  // up to 8 threads or more, and half the cores stay with the CPU's own work.
  static unsigned default_threads();
  ~HostUploader();  // waits for the copies out of its buffers
  HostUploader(const HostUploader&) = delete;
  HostUploader& operator=(const HostUploader&) = delete;

  // Enqueues dst[0, bytes) <- src[0, bytes) on stream s. Returns once every byte is enqueued:
  // a pageable source has then been read completely (the caller may change it), a page-locked
  // one is read by the copy engine in stream order and must stay valid until s gets there.
  // Throws CudaError on failure (also when the pinned buffers cannot be allocated).
  void copy(void* dst, const void* src, size_t bytes, cudaStream_t s);

 private:
  struct Buffer {
    void* host = nullptr;
    cudaEvent_t drained = nullptr;  // recorded after the copy out of it
  };
  void allocate();
  size_t buffer_bytes_;
  unsigned count_;
  std::vector<Buffer> ring_;
  size_t next_ = 0;
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace cuzk::cuda
