// The daemon's metrics in the Prometheus text exposition format, version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/): counters of jobs by outcome,
// the queue depth by priority, and a latency histogram per job phase.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace cuzk::daemon {

class Metrics {
 public:
  // Bucket upper bounds in seconds: 10 ms to 30 min, roughly x2.5 apart.
  static constexpr std::array<double, 13> kBuckets = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300, 1800};

  void observe(const std::string& phase, double seconds);
  void count(const std::string& outcome);  // done, failed, cancelled, rejected

  // `queued`: priority name -> jobs; `running`: jobs in the engine.
  std::string render(const std::map<std::string, uint32_t>& queued, uint32_t running) const;

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};  // cumulative at render time, not here
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Histogram> phases_;
  std::map<std::string, uint64_t> outcomes_;
};

}  // namespace cuzk::daemon
