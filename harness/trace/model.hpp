// One trace's GPU work by phase (docs/trace-diff.md#model): each kernel, copy and memset belongs
// to the innermost NVTX range, on the launching thread, in which the CUDA runtime call that
// launched it started; its "exposed" part is the time no activity of the same process runs on
// another stream of the same device.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/trace/nsys_export.hpp"

namespace cuzk::trace {

// Work launched outside every NVTX range gathers under this pseudo-phase.
constexpr const char* kNoPhase = "(outside any range)";

struct ModelOptions {
  bool normalize = true;  // fold kernel names (kernel_name.hpp); false keeps them as exported
};

// One item of a phase, summed over its occurrences: a kernel (by name), a copy kind
// ("memcpy HtoD pageable") or "memset".
struct ItemTotals {
  std::string kind;  // "kernel", "copy" or "memset"
  uint64_t launches = 0;
  double total_ns = 0, exposed_ns = 0, bytes = 0;
  std::vector<double> durations;  // every launch, in launch order
  std::string geometry;           // kernels: "grid x,y,z block x,y,z" of every launch, or "varies"
  int64_t registers = -1;         // kernels: registers per thread of every launch; -1 where they vary
};

struct PhaseTotals {
  uint64_t occurrences = 0, launches = 0;
  // Sums over occurrences: busy is the union of the activities' intervals in each occurrence,
  // idle its GPU span (first start to last end) less busy.
  double busy_ns = 0, idle_ns = 0, kernel_ns = 0, copy_ns = 0, memset_ns = 0, exposed_ns = 0;
  std::map<std::string, ItemTotals> items;
  // (item, k): the duration of the item's k-th launch (from 1) in each occurrence that has one.
  std::map<std::pair<std::string, uint32_t>, std::vector<double>> kth;
};

struct TraceModel {
  std::string path;
  std::map<std::string, PhaseTotals> phases;
};

// The name of a copy by direction and host memory kind: "memcpy HtoD pinned", "memcpy DtoD".
std::string copy_name(int copy_kind, int src_kind, int dst_kind);
TraceModel build_model(const Export& e, const ModelOptions& o = {});
// Reads and models every file, in order; throws TraceError on the first bad one.
std::vector<TraceModel> load_models(const std::vector<std::string>& files, const ModelOptions& o = {});

}  // namespace cuzk::trace
