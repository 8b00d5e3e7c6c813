#include "daemon/server/metrics.hpp"

#include <fmt/core.h>

namespace cuzk::daemon {

void Metrics::observe(const std::string& phase, double seconds) {
  std::lock_guard lk(mu_);
  Histogram& h = phases_[phase];
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) {
      ++h.buckets[i];
      break;
    }
  ++h.count;
  h.sum += seconds;
}

void Metrics::count(const std::string& outcome) {
  std::lock_guard lk(mu_);
  ++outcomes_[outcome];
}

std::string Metrics::render(const std::map<std::string, uint32_t>& queued, uint32_t running) const {
  std::lock_guard lk(mu_);
  std::string out;
  out += "# HELP cuzk_queue_depth Jobs accepted and waiting for the engine, by priority.\n";
  out += "# TYPE cuzk_queue_depth gauge\n";
  for (const auto& [prio, n] : queued) out += fmt::format("cuzk_queue_depth{{priority=\"{}\"}} {}\n", prio, n);
  out += "# HELP cuzk_jobs_running Jobs in the engine (synthesis or proving).\n";
  out += "# TYPE cuzk_jobs_running gauge\n";
  out += fmt::format("cuzk_jobs_running {}\n", running);
  out += "# HELP cuzk_jobs_total Jobs that ended, by outcome (rejected: refused at submission).\n";
  out += "# TYPE cuzk_jobs_total counter\n";
  for (const char* o : {"done", "failed", "cancelled", "rejected"}) {
    auto it = outcomes_.find(o);
    out += fmt::format("cuzk_jobs_total{{outcome=\"{}\"}} {}\n", o, it == outcomes_.end() ? 0 : it->second);
  }
  out += "# HELP cuzk_job_phase_seconds Time of each job phase (proof: acceptance to proof written).\n";
  out += "# TYPE cuzk_job_phase_seconds histogram\n";
  for (const auto& [phase, h] : phases_) {
    uint64_t cum = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cum += h.buckets[i];
      out += fmt::format("cuzk_job_phase_seconds_bucket{{phase=\"{}\",le=\"{}\"}} {}\n", phase, kBuckets[i], cum);
    }
    out += fmt::format("cuzk_job_phase_seconds_bucket{{phase=\"{}\",le=\"+Inf\"}} {}\n", phase, h.count);
    out += fmt::format("cuzk_job_phase_seconds_sum{{phase=\"{}\"}} {}\n", phase, h.sum);
    out += fmt::format("cuzk_job_phase_seconds_count{{phase=\"{}\"}} {}\n", phase, h.count);
  }
  return out;
}

}  // namespace cuzk::daemon
