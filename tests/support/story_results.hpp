// Results files shaped like the pinning story (ARCHITECTURE.md), with spans, for the tests of
// compare's accounting and summary: a proving stage whose main thread runs pin_abc (pinned
// build only), h2d and msm_h one after another while msm_b_g2 runs beside them on another
// thread, then assemble. Every duration is base * exp(N(0, sigma)) from a fixed seed.
#pragma once
#include <fmt/core.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "harness/measure/results.hpp"

namespace cuzk::test {

struct StorySpec {
  uint64_t seed = 1;
  int reps = 10;
  double sigma = 0.01;
  bool pinned = false;          // adds proof/prove/pin_abc before h2d
  double pin_ms = 90, h2d_ms = 210, msm_h_ms = 100, g2_ms = 300, assemble_ms = 5, synth_ms = 400;
  bool spans = true;            // record spans (else the accounting cannot see the overlap)
  std::string preset = "baseline";
  bool unread_counters = true;  // every phase carries two counters that are null for one reason
};

inline std::vector<nlohmann::json> story_samples(const StorySpec& s) {
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> noise(0.0, s.sigma);
  auto draw = [&](double ms) { return std::round(ms * 1e6 * std::exp(noise(rng))); };
  std::vector<nlohmann::json> out;
  for (int r = 0; r < s.reps; ++r) {
    struct Occ {
      std::string path;
      double start, dur;
      int tid;
    };
    std::vector<Occ> occ;
    const double synth = draw(s.synth_ms);
    occ.push_back({"proof/synth", 0, synth, 1});
    const double prove0 = synth;
    double t = prove0;
    const double g2 = draw(s.g2_ms);
    occ.push_back({"proof/prove/msm_b_g2", prove0, g2, 2});
    if (s.pinned) {
      const double pin = draw(s.pin_ms);
      occ.push_back({"proof/prove/pin_abc", t, pin, 1});
      t += pin;
    }
    const double h2d = draw(s.h2d_ms), msm = draw(s.msm_h_ms);
    occ.push_back({"proof/prove/h2d", t, h2d, 1});
    t += h2d;
    occ.push_back({"proof/prove/msm_h", t, msm, 1});
    t += msm;
    t = std::max(t, prove0 + g2);  // the main thread joins the G2 thread
    const double as = draw(s.assemble_ms);
    occ.push_back({"proof/prove/assemble", t, as, 1});
    t += as;
    occ.push_back({"proof/prove", prove0, t - prove0, 1});
    occ.push_back({"proof", 0, t, 1});
    nlohmann::json phases = nlohmann::json::object(), spans = nlohmann::json::array();
    for (const auto& o : occ) {
      nlohmann::json rec = {{"wall_ns", static_cast<int64_t>(o.dur)}, {"count", 1}, {"gpu_ns", nullptr},
                            {"counters", nlohmann::json::object()}, {"counter_scope", ""}};
      if (s.unread_counters) {
        rec["counters"] = {{"perf::PAGE-FAULTS", nullptr}, {"perf::TASK-CLOCK", nullptr}};
        const std::string why = "the PAPI component 'perf_event' is disabled here";
        rec["counter_errors"] = {{"perf::PAGE-FAULTS", why}, {"perf::TASK-CLOCK", why}};
        rec["counter_scope"] = "2 of 2 process threads";
      }
      phases[o.path] = rec;
      spans.push_back({{"path", o.path}, {"start_ns", static_cast<int64_t>(o.start)},
                       {"dur_ns", static_cast<int64_t>(o.dur)}, {"tid", o.tid}});
    }
    nlohmann::json sample = {{"schema", "cuzk.results"}, {"version", 1}, {"type", "sample"}, {"suite", "e2e"},
                             {"case", "story"}, {"parameters", {{"constraints", 1 << 20}, {"partitions", 1}}},
                             {"variant", s.preset}, {"repetition", r}, {"warmup", false}, {"phases", phases},
                             {"process_id", fmt::format("{:016x}", s.seed * 1000 + static_cast<uint64_t>(r))}};
    if (s.spans) {
      sample["spans"] = spans;
      sample["spans_dropped"] = 0;
    }
    out.push_back(sample);
  }
  return out;
}

inline void write_story(const std::string& path, const StorySpec& s) {
  ResultsWriter w(path, ResultsWriter::Mode::kOverwrite);
  HeaderInfo info;
  info.suite = "e2e";
  info.command_line = {"test"};
  if (s.unread_counters) {  // the header declares the counters the samples name (docs/results-format.md)
    const std::string why = "the PAPI component 'perf_event' is disabled here";
    info.counters = {{"perf::PAGE-FAULTS", false, why, "papi"}, {"perf::TASK-CLOCK", false, why, "papi"}};
  }
  nlohmann::json h = make_header(info);
  h["provenance"]["preset"] = s.preset;
  w.write(h);
  for (const auto& l : story_samples(s)) w.write(l);
}

}  // namespace cuzk::test
