// Synthetic cuzk results files with known distributions, for the compare/gate tests.
// Each phase's wall time is drawn independently: base * exp(N(0, sigma)), from a fixed seed,
// so files are deterministic. A "slowdown" multiplies one phase's times.
#pragma once
#include <algorithm>
#include <cmath>
#include <fmt/core.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "harness/measure/results.hpp"

namespace cuzk::test {

struct SynthSpec {
  uint64_t seed = 1;
  int reps = 10;
  int warmup = 1;
  double sigma = 0.01;  // relative noise (log-normal)
  // phase -> base wall ns; gpu phases also get gpu_ns = 0.8 * wall
  std::map<std::string, double> phases = {{"proof", 100e6}, {"proof/synth", 60e6}, {"proof/prove", 40e6},
                                          {"proof/prove/msm_h", 20e6}};
  std::vector<std::string> gpu_phases = {"proof/prove/msm_h"};
  std::map<std::string, double> slowdown;  // phase -> factor (1.2 = 20% slower)
  double page_faults = 250;                // counter perf::PAGE-FAULTS per phase (before factor)
  double page_fault_factor = 1;            // multiplies the page faults of every phase
  std::string suite = "synthetic", case_name = "c1";
  nlohmann::json parameters = {{"size", 8}};
  std::function<void(nlohmann::json&)> edit_header;  // tweak the header (machine, flags)
  // Block design: > 0 spreads the measured repetitions over this many processes (consecutive
  // repetitions share one, "process_id" set), each with its own offset exp(N(0, process_sigma)).
  int processes = 0;
  double process_sigma = 0;
  std::function<void(nlohmann::json& sample, int rep)> edit_sample;  // tweak a measured sample
};

inline nlohmann::json synth_header(const SynthSpec& s) {
  HeaderInfo info;
  info.suite = s.suite;
  info.command_line = {"test"};
  info.counters = {{"perf::PAGE-FAULTS", true, "", "papi"}, {"PAPI_TOT_CYC", false, "event does not exist", "papi"}};
  nlohmann::json h = make_header(info);
  if (s.edit_header) s.edit_header(h);
  return h;
}

inline std::vector<nlohmann::json> synth_samples(const SynthSpec& s) {
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> noise(0.0, s.sigma);
  std::vector<nlohmann::json> out;
  std::vector<double> offset(std::max(1, s.processes), 1.0);
  if (s.processes > 0) {
    std::normal_distribution<double> between(0.0, s.process_sigma);
    for (auto& o : offset) o = std::exp(between(rng));
  }
  const int per_process = s.processes > 0 ? std::max(1, (s.reps + s.processes - 1) / s.processes) : 0;
  for (int w = 0; w < 2; ++w) {
    int n = w == 0 ? s.warmup : s.reps;
    for (int r = 0; r < n; ++r) {
      const int proc = s.processes > 0 && w == 1 ? r / per_process : 0;
      nlohmann::json phases = nlohmann::json::object();
      for (const auto& [p, base] : s.phases) {
        double f = (s.slowdown.count(p) ? s.slowdown.at(p) : 1.0) * offset[proc];
        double wall = std::round(base * f * std::exp(noise(rng)) * (w == 0 ? 1.5 : 1.0));
        bool gpu = std::find(s.gpu_phases.begin(), s.gpu_phases.end(), p) != s.gpu_phases.end();
        nlohmann::json rec = {{"wall_ns", static_cast<int64_t>(wall)},
                              {"count", 1},
                              {"gpu_ns", gpu ? nlohmann::json(static_cast<int64_t>(0.8 * wall)) : nlohmann::json(nullptr)},
                              {"counters", {{"perf::PAGE-FAULTS", static_cast<int64_t>(s.page_faults * s.page_fault_factor + r % 3)},
                                            {"PAPI_TOT_CYC", nullptr}}},
                              {"counter_errors", {{"PAPI_TOT_CYC", "event does not exist"}}},
                              {"counter_scope", "1 of 1 process threads"}};
        phases[p] = rec;
      }
      out.push_back({{"schema", "cuzk.results"}, {"version", 1}, {"type", "sample"}, {"suite", s.suite},
                     {"case", s.case_name}, {"parameters", s.parameters}, {"variant", "default"},
                     {"repetition", r}, {"warmup", w == 0}, {"phases", phases}});
      if (s.processes > 0) out.back()["process_id"] = fmt::format("{:016x}", s.seed * 1000 + proc);
      if (w == 1 && s.edit_sample) s.edit_sample(out.back(), r);
    }
  }
  return out;
}

// Writes a complete results file (header, samples; summary when `with_summary`).
inline void write_synth(const std::string& path, const SynthSpec& s, bool with_summary = true) {
  ResultsWriter w(path, ResultsWriter::Mode::kOverwrite);
  w.write(synth_header(s));
  auto samples = synth_samples(s);
  for (const auto& l : samples) w.write(l);
  if (with_summary) {
    nlohmann::json sum = make_summary(samples, 1000);
    w.write(sum);
  }
}

// Google Benchmark JSON: BM_fr_mul and BM_g1_add/8, 8 iterations each plus a mean aggregate;
// BM_g1_add/8 is multiplied by slow_factor.
inline std::string synth_gbench_json(uint64_t seed, double slow_factor, const std::string& host = "devbox") {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0, 0.01);
  nlohmann::json b = nlohmann::json::array();
  for (const char* name : {"BM_fr_mul", "BM_g1_add/8"}) {
    double base = std::string(name) == "BM_fr_mul" ? 25.0 : 3.5;  // us
    double f = std::string(name) == "BM_g1_add/8" ? slow_factor : 1.0;
    for (int i = 0; i < 8; ++i)
      b.push_back({{"name", name}, {"run_name", name}, {"run_type", "iteration"}, {"repetitions", 8},
                   {"repetition_index", i}, {"iterations", 1000}, {"real_time", base * f * std::exp(nd(rng))},
                   {"cpu_time", base * f}, {"time_unit", "us"}});
    b.push_back({{"name", std::string(name) + "_mean"}, {"run_name", name}, {"run_type", "aggregate"},
                 {"aggregate_name", "mean"}, {"real_time", base}, {"time_unit", "us"}});
  }
  nlohmann::json doc = {{"context", {{"host_name", host}, {"num_cpus", 2}, {"mhz_per_cpu", 2400},
                                     {"executable", "./bench_ff"}, {"library_build_type", "release"}}},
                        {"benchmarks", b}};
  return doc.dump(2);
}

}  // namespace cuzk::test
