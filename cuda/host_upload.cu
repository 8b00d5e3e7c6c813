#include "cuda/host_upload.cuh"

#include <algorithm>
#include <cstring>

#include "cuda/check.cuh"
#include "prover/util/cpu_placement.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk::cuda {

bool is_page_locked(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();  // an unknown pointer is ordinary pageable memory
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

unsigned HostUploader::default_threads() {
  return unsigned(std::clamp<size_t>(placement::allowed_cpus().size() / 2, 2, 8));
}

HostUploader::HostUploader(size_t buffer_bytes, unsigned buffers, unsigned threads)
    : buffer_bytes_(std::max<size_t>(buffer_bytes, 4096)),
      count_(std::max(2u, buffers)),
      // ThreadPool(0) would mean every core
      pool_(std::make_unique<ThreadPool>(std::max(2u, threads ? threads : default_threads()) - 1)) {}

HostUploader::~HostUploader() {
  for (auto& b : ring_) {
    if (b.drained) {
      cudaEventSynchronize(b.drained);
      cudaEventDestroy(b.drained);
    }
    if (b.host) cudaFreeHost(b.host);
  }
}

void HostUploader::allocate() {
  ring_.resize(count_);
  for (auto& b : ring_) {
    if (cudaHostAlloc(&b.host, buffer_bytes_, cudaHostAllocDefault) != cudaSuccess) {
      (void)cudaGetLastError();
      b.host = nullptr;
      throw CudaError("cudaHostAlloc failed: cannot page-lock " + std::to_string(buffer_bytes_ >> 20) +
                      " MiB of host memory for an upload's staging buffers");
    }
    CUZK_CUDA_CHECK(cudaEventCreateWithFlags(&b.drained, cudaEventDisableTiming));
  }
}

void HostUploader::copy(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  if (is_page_locked(src)) {
    CUZK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return;
  }
  if (ring_.empty()) allocate();
  auto* d = static_cast<char*>(dst);
  const auto* h = static_cast<const char*>(src);
  for (size_t off = 0; off < bytes; off += buffer_bytes_) {
    const size_t len = std::min(buffer_bytes_, bytes - off);
    Buffer& b = ring_[next_];
    next_ = (next_ + 1) % ring_.size();
    CUZK_CUDA_CHECK(cudaEventSynchronize(b.drained));  // its previous copy has left it
    pool_->parallel_for(len, [&](size_t lo, size_t hi) { std::memcpy(static_cast<char*>(b.host) + lo, h + off + lo, hi - lo); },
                        pool_->size());
    CUZK_CUDA_CHECK(cudaMemcpyAsync(d + off, b.host, len, cudaMemcpyHostToDevice, s));
    CUZK_CUDA_CHECK(cudaEventRecord(b.drained, s));
  }
}

}  // namespace cuzk::cuda
