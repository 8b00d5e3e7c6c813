#include "cuda/profiling/gpu_activity_cupti.hpp"

#include <cupti.h>
#include <fmt/core.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace cuzk::cuda::gpu_activity {
namespace {

namespace ga = instr::gpu_activity;

// Each buffer holds many records; a larger one means fewer completions while the work runs.
constexpr size_t kBufferBytes = size_t(8) << 20;
constexpr size_t kRecordAlign = 8;  // CUPTI requires 8-byte aligned buffers

// The activity kinds enabled, in enabling order (disabled in reverse).
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                         CUPTI_ACTIVITY_KIND_MEMSET,
                                         // External correlation records precede runtime API records only.
                                         CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

std::string cupti_text(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) return fmt::format("CUPTI error {}", static_cast<int>(r));
  return s;
}

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) throw GpuActivityError(fmt::format("GPU activity: {} failed: {}", what, cupti_text(r)));
}

// What the buffer callbacks gathered: CUPTI calls them on its own thread or inside a flush.
struct Store {
  std::mutex mu;
  std::vector<ga::Activity> activities;
  std::unordered_map<uint64_t, uint64_t> launched_in;  // runtime API correlation id -> opening id
  uint64_t dropped = 0;
};
Store g_store;
std::atomic<bool> g_exists{false};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kRecordAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t /*size*/, size_t valid) {
  std::vector<ga::Activity> acts;
  std::vector<std::pair<uint64_t, uint64_t>> links;
  CUpti_Activity* rec = nullptr;
  while (buffer && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
        acts.push_back({ga::Kind::kKernel, k->start, k->end, k->streamId, k->deviceId, k->correlationId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
        acts.push_back({ga::Kind::kMemcpy, m->start, m->end, m->streamId, m->deviceId, m->correlationId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
        acts.push_back({ga::Kind::kMemset, m->start, m->end, m->streamId, m->deviceId, m->correlationId});
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
        if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) links.emplace_back(x->correlationId, x->externalId);
        break;
      }
      default:  // runtime API records: enabled only for the correlation records above
        break;
    }
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) != CUPTI_SUCCESS) dropped = 0;
  std::free(buffer);
  std::lock_guard lk(g_store.mu);
  g_store.activities.insert(g_store.activities.end(), acts.begin(), acts.end());
  for (const auto& [corr, ext] : links) g_store.launched_in[corr] = ext;
  g_store.dropped += dropped;
}

void clear_store() {
  std::lock_guard lk(g_store.mu);
  g_store.activities.clear();
  g_store.launched_in.clear();
  g_store.dropped = 0;
}

class CuptiCollector final : public ga::OpeningSink, public ga::Collector {
 public:
  CuptiCollector() {
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
    size_t enabled = 0;
    try {
      for (CUpti_ActivityKind k : kKinds) {
        check(cuptiActivityEnable(k), "cuptiActivityEnable");
        ++enabled;
      }
    } catch (...) {
      while (enabled > 0) cuptiActivityDisable(kKinds[--enabled]);
      throw;
    }
  }
  ~CuptiCollector() override {
    unwrap();
    for (size_t i = std::size(kKinds); i > 0; --i) cuptiActivityDisable(kKinds[i - 1]);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    clear_store();
    g_exists = false;
  }

  void attach() override {
    // Records of work before the window (between samples) are flushed and forgotten.
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    clear_store();
    wrap();
  }
  void detach() override {
    unwrap();
    // Forced: buffers still being filled are handed over too (the phases' work has finished:
    // GPU phases wait for their stream before they close).
    const CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS) flush_error_ = "cuptiActivityFlushAll failed: " + cupti_text(r);
  }
  ga::Batch take() override {
    ga::Batch b;
    b.openings = take_openings();
    std::lock_guard lk(g_store.mu);
    b.activities.swap(g_store.activities);
    b.launched_in.swap(g_store.launched_in);
    b.dropped = g_store.dropped;
    g_store.dropped = 0;
    b.error = std::move(flush_error_);  // a failed flush leaves records behind
    flush_error_.clear();
    return b;
  }

 protected:
  uint64_t now_ns() override {
    uint64_t t = 0;
    cuptiGetTimestamp(&t);
    return t;
  }
  void opened(uint64_t id) override { cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id); }
  void closing(uint64_t /*id*/) override {
    uint64_t last = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }

 private:
  std::string flush_error_;
};

}  // namespace

std::shared_ptr<instr::gpu_activity::Collector> make_cupti_collector() {
  if (g_exists.exchange(true)) throw GpuActivityError("GPU activity: a collector exists already in this process");
  try {
    return std::make_shared<CuptiCollector>();
  } catch (...) {
    g_exists = false;
    throw;
  }
}

}  // namespace cuzk::cuda::gpu_activity
