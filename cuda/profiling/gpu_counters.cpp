// GPU counters through CUPTI's Range Profiler: see gpu_counters.hpp. Host code only, compiled
// by the C++ compiler (so fmt works, which nvcc's host pass does not compile). The call sequence follows
// CUPTI's documentation of cupti_range_profiler.h and cupti_profiler_host.h (CUDA 13.0): host
// object -> metrics -> config image -> passes; per group: enable on the context, counter data
// image, set config (user ranges, user replay), start/push/pop/stop until every pass is
// submitted, decode, then evaluate each range's metrics on the host.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <fmt/core.h>

#include <cmath>

#include "cuda/profiling/gpu_counters.hpp"

namespace cuzk::cuda::gpu_counters {
namespace {


// A CUPTI parameter struct: zeroed, with its size set (CUPTI's convention: `T p = {T_STRUCT_SIZE}`,
// written so that every field is initialized).
template <class T>
T params(size_t size) {
  T p{};
  p.structSize = size;
  return p;
}

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : fmt::format("CUPTI error {}", static_cast<int>(r));
}

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) throw GpuCounterError(fmt::format("{}: {}", what, cupti_error(r)));
}

void deinit_host(CUpti_Profiler_Host_Object* host) {
  if (!host) return;
  auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = host;
  cuptiProfilerHostDeinitialize(&p);
}

// A configuration of some metrics: the host object that evaluates them and the config image.
struct Config {
  std::vector<std::string> metrics;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<uint8_t> image;
  size_t passes = 0;
};

// Builds the configuration of `metrics`; CUPTI's result of the first failing step otherwise.
CUptiResult make_config(const std::string& chip, const std::vector<uint8_t>& avail,
                        const std::vector<std::string>& metrics, Config& out) {
  auto hi = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = chip.c_str();
  hi.pCounterAvailabilityImage = avail.data();
  if (CUptiResult r = cuptiProfilerHostInitialize(&hi); r != CUPTI_SUCCESS) return r;
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  auto am = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  am.pHostObject = hi.pHostObject;
  am.ppMetricNames = names.data();
  am.numMetrics = names.size();
  CUptiResult r = cuptiProfilerHostConfigAddMetrics(&am);
  auto cs = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  cs.pHostObject = hi.pHostObject;
  if (r == CUPTI_SUCCESS) r = cuptiProfilerHostGetConfigImageSize(&cs);
  std::vector<uint8_t> image(r == CUPTI_SUCCESS ? cs.configImageSize : 0);
  auto ci = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  ci.pHostObject = hi.pHostObject;
  ci.configImageSize = image.size();
  ci.pConfigImage = image.data();
  if (r == CUPTI_SUCCESS) r = cuptiProfilerHostGetConfigImage(&ci);
  auto np = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  np.configImageSize = image.size();
  np.pConfigImage = image.data();
  if (r == CUPTI_SUCCESS) r = cuptiProfilerHostGetNumOfPasses(&np);
  if (r != CUPTI_SUCCESS) {
    deinit_host(hi.pHostObject);
    return r;
  }
  deinit_host(out.host);
  out = {metrics, hi.pHostObject, std::move(image), np.numOfPasses};
  return CUPTI_SUCCESS;
}

// A range's metric values over its occurrences in one pass: sums add up; every other metric
// (averages, percentages, rates) is the mean over occurrences.
bool is_sum(const std::string& metric) {
  return metric.size() > 4 && metric.compare(metric.size() - 4, 4, ".sum") == 0;
}

}  // namespace

struct RangeProfiler::Impl {
  CUcontext ctx = nullptr;
  std::vector<uint8_t> avail;
  std::vector<Config> groups;
  size_t max_ranges = 64;
  CUpti_RangeProfiler_Object* active = nullptr;
  std::map<std::string, std::map<std::string, std::optional<double>>> results;
  std::map<std::string, std::map<std::string, size_t>> occurrences;
  ~Impl() {
    for (auto& g : groups) deinit_host(g.host);
  }
};

const std::vector<std::string>& default_metrics() {
  static const std::vector<std::string> v = {
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",  // compute: share of the SMs' peak
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",  // memory: share of DRAM's peak
      "lts__t_sector_hit_rate.pct",                          // L2 hit rate
      "sm__warps_active.avg.pct_of_peak_sustained_active",   // achieved occupancy
      "pcie__read_bytes.sum",                                // the host link, for uploads
      "pcie__write_bytes.sum",
  };
  return v;
}

RangeProfiler::RangeProfiler(const std::vector<std::string>& metrics, size_t max_ranges)
    : impl_(std::make_unique<Impl>()) {
  impl_->max_ranges = max_ranges;
  if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess)
    throw GpuCounterError(fmt::format("no CUDA device for GPU counters: {}", cudaGetErrorString(e)));
  // The driver's cuCtxGetCurrent through the runtime (linking libcuda would stop binaries from
  // starting where no driver is installed).
  using GetCtx = CUresult (*)(CUcontext*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess || !fn ||
      reinterpret_cast<GetCtx>(fn)(&impl_->ctx) != CUDA_SUCCESS || !impl_->ctx)
    throw GpuCounterError("no current CUDA context for GPU counters");
  auto ip = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  check(cuptiProfilerInitialize(&ip), "cuptiProfilerInitialize");
  int device = 0;
  cudaGetDevice(&device);
  auto cn = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  cn.deviceIndex = static_cast<size_t>(device);
  check(cuptiDeviceGetChipName(&cn), "cuptiDeviceGetChipName");
  chip_ = cn.pChipName;
  auto ca = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  ca.ctx = impl_->ctx;
  check(cuptiProfilerGetCounterAvailability(&ca), "reading the GPU's counter availability");
  impl_->avail.resize(ca.counterAvailabilityImageSize);
  ca.pCounterAvailabilityImage = impl_->avail.data();
  check(cuptiProfilerGetCounterAvailability(&ca), "reading the GPU's counter availability");

  // Each metric alone: unknown names are errors, known ones that cannot be configured are null.
  std::vector<std::string> unknown, usable;
  for (const auto& m : metrics) {
    Config c;
    const CUptiResult r = make_config(chip_, impl_->avail, {m}, c);
    deinit_host(c.host);
    MetricStatus st{m, r == CUPTI_SUCCESS, ""};
    if (r == CUPTI_ERROR_INVALID_PARAMETER || r == CUPTI_ERROR_INVALID_METRIC_NAME) {
      unknown.push_back(m);
      continue;
    }
    if (r != CUPTI_SUCCESS) st.reason = fmt::format("cannot be configured on {}: {}", chip_, cupti_error(r));
    status_.push_back(st);
    if (st.available) usable.push_back(m);
  }
  if (!unknown.empty()) {
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "'" : ", '") + u + "'";
    throw GpuCounterError(fmt::format(
        "unknown GPU metric {} on {} (names are Nsight Compute's, e.g. dram__bytes_read.sum; `ncu --query-metrics` "
        "lists them)",
        list, chip_));
  }
  // Groups: a metric joins the first group whose configuration still builds with it.
  for (const auto& m : usable) {
    bool placed = false;
    for (auto& g : impl_->groups) {
      std::vector<std::string> with = g.metrics;
      with.push_back(m);
      if (make_config(chip_, impl_->avail, with, g) == CUPTI_SUCCESS) {
        placed = true;
        break;
      }
    }
    if (!placed) {
      Config c;
      check(make_config(chip_, impl_->avail, {m}, c), "configuring a GPU metric");
      impl_->groups.push_back(std::move(c));
    }
  }
}

RangeProfiler::~RangeProfiler() {
  impl_.reset();  // the host objects first
  // Leaves no profiler initialized behind: work after this object runs as if CUPTI were absent.
  auto dp = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
  cuptiProfilerDeInitialize(&dp);
}

size_t RangeProfiler::passes() const {
  size_t n = 0;
  for (const auto& g : impl_->groups) n += g.passes;
  return n;
}

void RangeProfiler::push(const std::string& range) {
  if (!impl_->active) return;  // outside collect(): nothing to profile
  auto p = params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = impl_->active;
  p.pRangeName = range.c_str();
  check(cuptiRangeProfilerPushRange(&p), "cuptiRangeProfilerPushRange");
}

void RangeProfiler::pop() {
  if (!impl_->active) return;
  auto p = params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = impl_->active;
  check(cuptiRangeProfilerPopRange(&p), "cuptiRangeProfilerPopRange");
}

void RangeProfiler::collect(const std::function<void()>& workload) {
  impl_->results.clear();
  impl_->occurrences.clear();
  for (auto& g : impl_->groups) {
    auto en = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    en.ctx = impl_->ctx;
    check(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
    CUpti_RangeProfiler_Object* obj = en.pRangeProfilerObject;
    struct Disable {
      CUpti_RangeProfiler_Object* o;
      Impl* impl;
      ~Disable() {
        impl->active = nullptr;
        auto d = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
        d.pRangeProfilerObject = o;
        cuptiRangeProfilerDisable(&d);
      }
    } disable{obj, impl_.get()};
    std::vector<const char*> names;
    for (const auto& m : g.metrics) names.push_back(m.c_str());
    auto ds = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    ds.pRangeProfilerObject = obj;
    ds.pMetricNames = names.data();
    ds.numMetrics = names.size();
    ds.maxNumOfRanges = impl_->max_ranges;
    ds.maxNumRangeTreeNodes = static_cast<uint32_t>(impl_->max_ranges);
    check(cuptiRangeProfilerGetCounterDataSize(&ds), "cuptiRangeProfilerGetCounterDataSize");
    std::vector<uint8_t> data(ds.counterDataSize);
    auto di = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    di.pRangeProfilerObject = obj;
    di.counterDataSize = data.size();
    di.pCounterData = data.data();
    check(cuptiRangeProfilerCounterDataImageInitialize(&di), "cuptiRangeProfilerCounterDataImageInitialize");
    auto sc = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    sc.pRangeProfilerObject = obj;
    sc.configSize = g.image.size();
    sc.pConfig = g.image.data();
    sc.counterDataImageSize = data.size();
    sc.pCounterDataImage = data.data();
    sc.range = CUPTI_UserRange;
    sc.replayMode = CUPTI_UserReplay;
    sc.maxRangesPerPass = impl_->max_ranges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    check(cuptiRangeProfilerSetConfig(&sc), "cuptiRangeProfilerSetConfig");
    impl_->active = obj;
    for (size_t pass = 0;; ++pass) {
      if (pass > g.passes + 1)
        throw GpuCounterError(fmt::format("CUPTI asked for more than the {} passes it announced", g.passes));
      auto st = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
      st.pRangeProfilerObject = obj;
      check(cuptiRangeProfilerStart(&st), "cuptiRangeProfilerStart");
      workload();
      cudaDeviceSynchronize();
      auto sp = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
      sp.pRangeProfilerObject = obj;
      check(cuptiRangeProfilerStop(&sp), "cuptiRangeProfilerStop");
      if (sp.isAllPassSubmitted) break;
    }
    impl_->active = nullptr;
    auto dd = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    dd.pRangeProfilerObject = obj;
    check(cuptiRangeProfilerDecodeData(&dd), "cuptiRangeProfilerDecodeData");
    if (dd.numOfRangeDropped)
      throw GpuCounterError(fmt::format("{} ranges did not fit (at most {} per pass)", dd.numOfRangeDropped,
                                        impl_->max_ranges));
    auto gi = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    gi.pCounterDataImage = data.data();
    gi.counterDataImageSize = data.size();
    check(cuptiRangeProfilerGetCounterDataInfo(&gi), "cuptiRangeProfilerGetCounterDataInfo");
    std::vector<double> vals(names.size());
    for (size_t r = 0; r < gi.numTotalRanges; ++r) {
      auto ri = params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
      ri.pCounterDataImage = data.data();
      ri.counterDataImageSize = data.size();
      ri.rangeIndex = r;
      ri.rangeDelimiter = "/";
      check(cuptiRangeProfilerCounterDataGetRangeInfo(&ri), "cuptiRangeProfilerCounterDataGetRangeInfo");
      auto ev = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      ev.pHostObject = g.host;
      ev.pCounterDataImage = data.data();
      ev.counterDataImageSize = data.size();
      ev.rangeIndex = r;
      ev.ppMetricNames = names.data();
      ev.numMetrics = names.size();
      ev.pMetricValues = vals.data();
      check(cuptiProfilerHostEvaluateToGpuValues(&ev), "cuptiProfilerHostEvaluateToGpuValues");
      const std::string range = ri.rangeName ? ri.rangeName : fmt::format("range {}", r);
      for (size_t k = 0; k < names.size(); ++k) {
        auto& slot = impl_->results[range][g.metrics[k]];
        size_t& n = impl_->occurrences[range][g.metrics[k]];
        if (!std::isfinite(vals[k])) continue;
        const double prev = slot.value_or(0.0);
        slot = is_sum(g.metrics[k]) ? prev + vals[k] : (prev * static_cast<double>(n) + vals[k]) / static_cast<double>(n + 1);
        ++n;
      }
    }
  }
}

std::map<std::string, std::map<std::string, std::optional<double>>> RangeProfiler::results() const {
  auto out = impl_->results;
  for (auto& [range, values] : out)
    for (const auto& st : status_)
      if (!st.available) values[st.name] = std::nullopt;
  return out;
}

}  // namespace cuzk::cuda::gpu_counters
