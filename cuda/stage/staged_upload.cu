#include "cuda/stage/staged_upload.cuh"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "cuda/util/cuda_check.cuh"
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

unsigned StagedUploader::default_threads() {
  return unsigned(std::clamp<size_t>(placement::allowed_cpus().size() / 2, 2, 8));
}

namespace {
StagedUploadOptions with_defaults(StagedUploadOptions s) {
  const bool split = s.fill == Fill::split;
  s.threads = std::max(2u, s.threads ? s.threads : StagedUploader::default_threads());
  s.buffer_bytes = s.buffer_bytes ? std::max<size_t>(s.buffer_bytes, 4096) : size_t(split ? 16 : 4) << 20;
  s.buffers = s.buffers ? std::max(2u, s.buffers) : (split ? 4 : 2);
  return s;
}
}  // namespace

StagedUploader::StagedUploader(StagedUploadOptions staging)
    : staging_(with_defaults(staging)),
      pool_(std::make_unique<ThreadPool>(staging_.threads - 1)) {}  // the caller is the last one

StagedUploader::~StagedUploader() {
  for (auto& r : rings_)
    for (auto& b : r.buffers) {
      if (b.drained) {
        cudaEventSynchronize(b.drained);
        cudaEventDestroy(b.drained);
      }
      if (b.host) cudaFreeHost(b.host);
    }
}

void StagedUploader::allocate() {
  rings_.resize(staging_.fill == Fill::split ? 1 : staging_.threads);
  for (auto& r : rings_) {
    r.buffers.resize(staging_.buffers);
    for (auto& b : r.buffers) {
      if (cudaHostAlloc(&b.host, staging_.buffer_bytes, cudaHostAllocDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        b.host = nullptr;
        throw CudaError("cudaHostAlloc failed: cannot page-lock " + std::to_string(staging_.buffer_bytes >> 20) +
                        " MiB of host memory for an upload's staging buffers");
      }
      CUZK_CUDA_CHECK(cudaEventCreateWithFlags(&b.drained, cudaEventDisableTiming));
    }
  }
}

template <class FillFn>
void StagedUploader::stage(Ring& r, char* dst, const char* host, size_t len, cudaStream_t s, FillFn&& fill) {
  Buffer& b = r.buffers[r.next];
  r.next = (r.next + 1) % r.buffers.size();
  CUZK_CUDA_CHECK(cudaEventSynchronize(b.drained));  // its previous copy has left it
  fill(static_cast<char*>(b.host), host, len);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(dst, b.host, len, cudaMemcpyHostToDevice, s));
  CUZK_CUDA_CHECK(cudaEventRecord(b.drained, s));
}

void StagedUploader::copy(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  if (bytes == 0) return;
  if (is_page_locked(src)) {
    CUZK_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return;
  }
  if (rings_.empty()) allocate();
  auto* d = static_cast<char*>(dst);
  const auto* h = static_cast<const char*>(src);
  const size_t piece = staging_.buffer_bytes;
  const size_t pieces = (bytes + piece - 1) / piece;
  auto len_of = [&](size_t k) { return std::min(piece, bytes - k * piece); };

  if (staging_.fill == Fill::split) {
    for (size_t k = 0; k < pieces; ++k)
      stage(rings_[0], d + k * piece, h + k * piece, len_of(k), s, [&](char* buf, const char* from, size_t len) {
        pool_->parallel_for(len, [&](size_t lo, size_t hi) { std::memcpy(buf + lo, from + lo, hi - lo); },
                            pool_->size());
      });
    return;
  }
  // Fill::per_thread: thread `lane` stages through rings_[lane]; the pieces go to whichever
  // thread is free next, so a thread the OS delays holds up only its own piece.
  int device = 0;
  CUZK_CUDA_CHECK(cudaGetDevice(&device));
  std::atomic<size_t> next{0};
  const size_t lanes = std::min(rings_.size(), pieces);
  pool_->parallel_for(
      lanes,
      [&](size_t lo, size_t hi) {
        CUZK_CUDA_CHECK(cudaSetDevice(device));  // the pool's threads start on device 0
        for (size_t lane = lo; lane < hi; ++lane)
          for (size_t k; (k = next.fetch_add(1)) < pieces;)
            stage(rings_[lane], d + k * piece, h + k * piece, len_of(k), s,
                  [](char* buf, const char* from, size_t len) { std::memcpy(buf, from, len); });
      },
      lanes);
}

}  // namespace cuzk::cuda
