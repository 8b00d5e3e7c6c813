// GPU hardware counters per range of GPU work, through CUPTI's Range Profiler (a plain C++
// header, so that g++-compiled code can use it). docs/counters.md, "GPU counters".
//
// Why the Range Profiler (cupti_range_profiler.h) and not PM Sampling: it gives exact values
// per user range (a phase), which is what a per-phase table needs; PM Sampling gives a time
// series that would have to be cut at the phases' GPU intervals, and its sampling interval
// bounds what a short phase can show. The price: the metrics need several passes over the same
// work (user replay: the caller runs the workload once per pass), so counters come from a
// separate counters pass and never from a timed sample.
//
// Metric names are Nsight Compute's (dram__bytes_read.sum, ...). A name the chip does not know
// is an error up front (GpuCounterError, before any work). A known metric that cannot be
// collected here (not configurable on this chip, or not together with the others) is
// reported unavailable with CUPTI's reason and its value is null. Metrics that CUPTI cannot put
// in one configuration (the PCIe ones with the SM and memory ones on GH100) are collected in
// separate groups, each with its own passes.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::cuda::gpu_counters {

class GpuCounterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The default metric set: SM throughput, DRAM bytes and throughput, L2 hit rate, warps active,
// and the host link (PCIe) bytes for the upload phases.
const std::vector<std::string>& default_metrics();

struct MetricStatus {
  std::string name;
  bool available = false;
  std::string reason;  // why not ("" when available)
};

// One profiling of a workload. Needs a CUDA device and the current thread's context.
class RangeProfiler {
 public:
  // Throws GpuCounterError for an unknown metric name, no device, or CUPTI failing to start
  // (e.g. insufficient privileges: the reason names it).
  explicit RangeProfiler(const std::vector<std::string>& metrics, size_t max_ranges = 64);
  ~RangeProfiler();
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  const std::vector<MetricStatus>& status() const { return status_; }
  std::string chip() const { return chip_; }
  // How many times collect() will run the workload (the sum over the groups' passes).
  size_t passes() const;

  // Runs `workload` once per pass of every group. The workload calls push()/pop() around each
  // range of GPU work, the same ranges in the same order every time, on this thread, not nested.
  void collect(const std::function<void()>& workload);
  void push(const std::string& range);
  void pop();

  // After collect(): range name -> metric -> value (null where the metric is unavailable).
  std::map<std::string, std::map<std::string, std::optional<double>>> results() const;

  struct Impl;

 private:
  std::vector<MetricStatus> status_;
  std::string chip_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk::cuda::gpu_counters
