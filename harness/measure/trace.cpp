#include "harness/measure/trace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "harness/measure/phases.hpp"

namespace cuzk {

using nlohmann::json;

namespace {

// Counter tracks ("ph": "C"): for each numeric counter of the root's direct children (proof/synth,
// proof/prove, ...: they run one after another, so their process-wide counters do not overlap),
// the phase's counter per millisecond of its wall time, from each occurrence's start to its end
// (0 between). A record sums its occurrences, so every occurrence of a phase shows its average
// rate. Counters of deeper phases stay in the X events' args.
void add_counter_tracks(json& events, int pid, const json& spans, const json& phases, TraceStats& st) {
  std::string root;
  for (const auto& x : spans) {
    const std::string p = x["path"].get<std::string>();
    if (p.find('/') == std::string::npos) root = p;
  }
  if (root.empty()) return;
  for (const auto& x : spans) {
    const std::string path = x["path"].get<std::string>();
    if (!is_direct_child(root, path)) continue;
    auto r = phases.find(path);
    if (r == phases.end() || !r->contains("counters")) continue;
    const double wall_ms = (*r)["wall_ns"].get<double>() / 1e6;
    if (wall_ms <= 0) continue;
    const double start = static_cast<double>(x["start_ns"].get<int64_t>()) / 1000.0;
    const double end = start + static_cast<double>(x["dur_ns"].get<uint64_t>()) / 1000.0;
    for (const auto& [name, v] : (*r)["counters"].items()) {
      if (!v.is_number()) continue;
      const std::string track = name + " per ms";
      events.push_back({{"ph", "C"}, {"name", track}, {"pid", pid}, {"ts", start}, {"args", {{track, v.get<double>() / wall_ms}}}});
      events.push_back({{"ph", "C"}, {"name", track}, {"pid", pid}, {"ts", end}, {"args", {{track, 0.0}}}});
      ++st.counter_events;
    }
  }
}

}  // namespace

json make_trace(const ResultsFile& results, TraceStats* stats) {
  TraceStats st;
  json events = json::array();
  // GPU counters of an untimed counters pass (a "gpu_counters" line per case): shown in the args
  // of every occurrence of their phase in that case's samples.
  std::map<std::string, json> gpu;  // case key -> phases object
  auto case_key = [](const json& l) { return l["suite"].dump() + l["case"].dump() + l["parameters"].dump(); };
  for (const auto& g : results.gpu_counters) gpu[case_key(g.value)] = g.value["phases"];
  int pid = 0;
  for (const auto& line : results.samples) {
    const json& s = line.value;
    ++pid;
    auto sp = s.find("spans");
    if (sp == s.end() || sp->empty()) {
      ++st.samples_without_spans;
      continue;
    }
    ++st.samples_with_spans;
    std::string pname = fmt::format("{} #{}{} [{}] (line {})", s["case"].get<std::string>(), s["repetition"].get<int64_t>(),
                                    s["warmup"].get<bool>() ? " warm-up" : "", s["variant"].get<std::string>(), line.line);
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", pname}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
    std::set<int64_t> tids;
    const json& phases = s["phases"];
    for (const auto& x : *sp) {
      const std::string path = x["path"].get<std::string>();
      const int64_t tid = x["tid"].get<int64_t>();
      tids.insert(tid);
      json args = json::object();
      auto r = phases.find(path);
      if (r != phases.end()) {
        args["sample_wall_ns"] = (*r)["wall_ns"];
        args["sample_count"] = (*r)["count"];
        args["gpu_ns"] = (*r)["gpu_ns"];
        for (const char* f : kGpuActivityFields)  // GPU time without gaps, where collected
          if (r->contains(f)) args[f] = (*r)[f];
        if (!(*r)["counters"].empty()) args["counters"] = (*r)["counters"];
        if (r->contains("counter_errors") && !(*r)["counter_errors"].empty()) args["counter_errors"] = (*r)["counter_errors"];
        if (r->contains("counter_scope") && !(*r)["counter_scope"].get<std::string>().empty())
          args["counter_scope"] = (*r)["counter_scope"];
      }
      if (auto g = gpu.find(case_key(s)); g != gpu.end() && g->second.contains(path))
        args["gpu_counters"] = g->second[path];  // from the untimed counters pass, not this sample
      events.push_back({{"ph", "X"},
                        {"cat", "phase"},
                        {"name", path},
                        {"pid", pid},
                        {"tid", tid},
                        {"ts", static_cast<double>(x["start_ns"].get<int64_t>()) / 1000.0},
                        {"dur", static_cast<double>(x["dur_ns"].get<uint64_t>()) / 1000.0},
                        {"args", args}});
      ++st.events;
    }
    for (int64_t t : tids)
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", t}, {"args", {{"name", fmt::format("thread {}", t)}}}});
    add_counter_tracks(events, pid, *sp, phases, st);
  }
  if (st.samples_with_spans == 0) {
    throw ResultsError(fmt::format("{}: no sample has spans, so there is nothing to trace ({} sample(s) without "
                                   "spans; record with spans enabled)",
                                   results.path, st.samples_without_spans));
  }
  if (stats) *stats = st;
  json meta = {{"source", results.path},
               {"tool", kToolName},
               {"tool_version", kToolVersion},
               {"suite", results.header.value.value("suite", "")}};
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", meta}};
}

}  // namespace cuzk
