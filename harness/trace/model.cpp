#include "harness/trace/model.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <unordered_map>

#include "harness/trace/kernel_name.hpp"

namespace cuzk::trace {

namespace {

// nsys serialises a process id into bits 24-47 of globalTid and globalPid (the exporter's
// documentation, "Serialized GlobalId").
int64_t pid_of(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }

const char* memory_kind(int k) {
  switch (k) {
    case kMemPageable: return "pageable";
    case kMemPinned: return "pinned";
    case kMemDevice: return "device";
    case 0: return "unknown";
    default: return "other";
  }
}

using Interval = std::pair<int64_t, int64_t>;

// Sorted, disjoint intervals covering the same time as `v`.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  }
  return out;
}

int64_t length(const std::vector<Interval>& disjoint) {
  int64_t n = 0;
  for (const auto& [s, e] : disjoint) n += e - s;
  return n;
}

// The innermost range of `ranges` (one thread's, sorted by start) that holds time t, or -1: the
// latest-starting range that has not ended, since ranges of one thread nest.
int64_t innermost(const std::vector<std::pair<int64_t, size_t>>& by_start, const std::vector<Range>& ranges, int64_t t) {
  auto it = std::upper_bound(by_start.begin(), by_start.end(), std::make_pair(t, SIZE_MAX));
  while (it != by_start.begin()) {
    --it;
    if (ranges[it->second].end >= t) return static_cast<int64_t>(it->second);
  }
  return -1;
}

// Per activity, the time during which no activity of the same process and device runs on
// another stream.
std::vector<double> exposed_times(const std::vector<Activity>& acts, const std::vector<int64_t>& pid) {
  using Key = std::pair<int64_t, int64_t>;  // (pid, device)
  std::map<Key, std::map<int64_t, std::vector<Interval>>> streams;
  for (size_t i = 0; i < acts.size(); ++i)
    streams[{pid[i], acts[i].device}][acts[i].stream].push_back({acts[i].start, acts[i].end});
  std::map<Key, std::map<int64_t, std::vector<Interval>>> busy;
  for (auto& [k, m] : streams)
    for (auto& [s, v] : m) busy[k][s] = merged(std::move(v));
  std::vector<double> out(acts.size());
  for (size_t i = 0; i < acts.size(); ++i) {
    const Activity& a = acts[i];
    std::vector<Interval> cover;
    for (const auto& [s, v] : busy[{pid[i], a.device}]) {
      if (s == a.stream) continue;
      auto it = std::lower_bound(v.begin(), v.end(), Interval{a.start, a.start},
                                 [](const Interval& x, const Interval& y) { return x.second < y.first; });
      for (; it != v.end() && it->first < a.end; ++it)
        if (it->second > a.start) cover.push_back({std::max(it->first, a.start), std::min(it->second, a.end)});
    }
    out[i] = static_cast<double>((a.end - a.start) - length(merged(std::move(cover))));
  }
  return out;
}

std::string geometry_of(const Activity& a) {
  return fmt::format("grid {},{},{} block {},{},{}", a.grid[0], a.grid[1], a.grid[2], a.block[0], a.block[1],
                     a.block[2]);
}

}  // namespace

std::string copy_name(int copy_kind, int src_kind, int dst_kind) {
  switch (copy_kind) {
    case kCopyHtoD: return fmt::format("memcpy HtoD {}", memory_kind(src_kind));
    case kCopyDtoH: return fmt::format("memcpy DtoH {}", memory_kind(dst_kind));
    case kCopyDtoD: return "memcpy DtoD";
    case kCopyPtoP: return "memcpy PtoP";
    default: return fmt::format("memcpy kind {}", copy_kind);
  }
}

TraceModel build_model(const Export& e, const ModelOptions& o) {
  TraceModel m;
  m.path = e.path;
  // The ranges of each thread, by start.
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, size_t>>> by_thread;
  for (size_t i = 0; i < e.ranges.size(); ++i) by_thread[e.ranges[i].global_tid].push_back({e.ranges[i].start, i});
  for (auto& [tid, v] : by_thread) std::sort(v.begin(), v.end());

  // correlationId -> the runtime calls with it (one per process that used it).
  std::unordered_map<int64_t, std::vector<size_t>> calls;
  for (size_t i = 0; i < e.calls.size(); ++i) calls[e.calls[i].correlation].push_back(i);

  const size_t n = e.activities.size();
  std::vector<int64_t> pid(n, -1), range(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const Activity& a = e.activities[i];
    auto it = calls.find(a.correlation);
    if (it == calls.end()) {
      if (a.global_pid >= 0) pid[i] = pid_of(a.global_pid);
      continue;
    }
    const RuntimeCall* call = &e.calls[it->second.front()];
    for (size_t c : it->second)
      if (a.global_pid < 0 || pid_of(e.calls[c].global_tid) == pid_of(a.global_pid)) {
        call = &e.calls[c];
        break;
      }
    pid[i] = pid_of(call->global_tid);
    auto t = by_thread.find(call->global_tid);
    if (t != by_thread.end()) range[i] = innermost(t->second, e.ranges, call->start);
  }
  const std::vector<double> exposed = exposed_times(e.activities, pid);

  // The activities of each range occurrence, in launch order (-1: outside every range).
  std::map<int64_t, std::vector<size_t>> occurrences;
  for (size_t i = 0; i < n; ++i) occurrences[range[i]].push_back(i);
  for (size_t r = 0; r < e.ranges.size(); ++r) ++m.phases[e.ranges[r].text].occurrences;
  for (auto& [r, idx] : occurrences) {
    std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return e.activities[x].start < e.activities[y].start; });
    PhaseTotals& p = m.phases[r < 0 ? std::string(kNoPhase) : e.ranges[static_cast<size_t>(r)].text];
    if (r < 0) p.occurrences = 1;
    std::vector<Interval> ivs;
    std::map<std::string, uint32_t> k;
    for (size_t i : idx) {
      const Activity& a = e.activities[i];
      const double d = static_cast<double>(a.end - a.start);
      ivs.push_back({a.start, a.end});
      std::string name;
      ItemTotals* it = nullptr;
      switch (a.kind) {
        case ActivityKind::kernel:
          name = o.normalize ? normalize_kernel_name(a.name) : demangle(a.name);
          p.kernel_ns += d;
          break;
        case ActivityKind::memcpy:
          name = copy_name(a.copy_kind, a.src_kind, a.dst_kind);
          p.copy_ns += d;
          break;
        case ActivityKind::memset:
          name = "memset";
          p.memset_ns += d;
          break;
      }
      const bool first = !p.items.count(name);
      it = &p.items[name];
      it->kind = a.kind == ActivityKind::kernel ? "kernel" : a.kind == ActivityKind::memcpy ? "copy" : "memset";
      if (a.kind == ActivityKind::kernel) {
        const std::string g = geometry_of(a);
        if (first) {
          it->geometry = g;
          it->registers = a.registers;
        } else {
          if (it->geometry != g) it->geometry = "varies";
          if (it->registers != a.registers) it->registers = -1;
        }
      }
      ++it->launches;
      it->total_ns += d;
      it->exposed_ns += exposed[i];
      it->bytes += static_cast<double>(a.bytes);
      it->durations.push_back(d);
      p.kth[{name, ++k[name]}].push_back(d);
      p.exposed_ns += exposed[i];
      ++p.launches;
    }
    const auto u = merged(ivs);
    const double busy = static_cast<double>(length(u));
    p.busy_ns += busy;
    if (!u.empty()) p.idle_ns += static_cast<double>(u.back().second - u.front().first) - busy;
  }
  return m;
}

std::vector<TraceModel> load_models(const std::vector<std::string>& files, const ModelOptions& o) {
  std::vector<TraceModel> out;
  for (const auto& f : files) out.push_back(build_model(read_nsys_export(f), o));
  return out;
}

}  // namespace cuzk::trace
