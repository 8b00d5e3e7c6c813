#include "prover/instr/gpu_activity.hpp"

#include <algorithm>
#include <memory>

namespace cuzk::instr::gpu_activity {

uint64_t union_length(std::vector<std::pair<uint64_t, uint64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  uint64_t total = 0, cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (e <= s) continue;  // empty
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

namespace {

std::string parent_path(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// Each opening's parent (an index into openings, or -1): the one the collector named when it is
// in the batch, else the latest-opened opening of the parent path that was open at its open.
std::vector<long> resolve_parents(const std::vector<Opening>& openings) {
  std::unordered_map<uint64_t, long> by_id;
  std::unordered_map<std::string, std::vector<long>> by_path;
  for (size_t i = 0; i < openings.size(); ++i) {
    by_id.emplace(openings[i].id, static_cast<long>(i));
    by_path[openings[i].path].push_back(static_cast<long>(i));
  }
  std::vector<long> parent(openings.size(), -1);
  for (size_t i = 0; i < openings.size(); ++i) {
    const Opening& o = openings[i];
    if (o.parent != 0) {
      auto it = by_id.find(o.parent);
      if (it != by_id.end() && it->second != static_cast<long>(i)) {
        parent[i] = it->second;
        continue;
      }
    }
    auto candidates = by_path.find(parent_path(o.path));
    if (candidates == by_path.end() || parent_path(o.path).empty()) continue;
    for (long c : candidates->second) {
      const Opening& p = openings[static_cast<size_t>(c)];
      if (p.open_ns <= o.open_ns && o.open_ns <= p.close_ns &&
          (parent[i] < 0 || p.open_ns >= openings[static_cast<size_t>(parent[i])].open_ns))
        parent[i] = c;
    }
  }
  return parent;
}

}  // namespace

Attribution attribute(const Batch& batch) {
  Attribution out;
  const auto& openings = batch.openings;
  std::unordered_map<uint64_t, size_t> by_id;
  for (size_t i = 0; i < openings.size(); ++i) by_id.emplace(openings[i].id, i);
  const std::vector<long> parent = resolve_parents(openings);

  // Each opening's activities: its own and, walking up, every descendant's.
  std::vector<std::vector<const Activity*>> mine(openings.size());
  for (const Activity& a : batch.activities) {
    auto l = batch.launched_in.find(a.correlation);
    auto o = l == batch.launched_in.end() ? by_id.end() : by_id.find(l->second);
    if (o == by_id.end()) {
      ++out.unattributed;
      continue;
    }
    // Bounded walk: a parent chain never needs more steps than there are openings (no cycles).
    long i = static_cast<long>(o->second);
    for (size_t steps = 0; i >= 0 && steps <= openings.size(); ++steps) {
      mine[static_cast<size_t>(i)].push_back(&a);
      i = parent[static_cast<size_t>(i)];
    }
  }

  for (size_t i = 0; i < openings.size(); ++i) {
    if (mine[i].empty()) continue;
    const Opening& o = openings[i];
    uint64_t span_end = std::max(o.open_ns, o.close_ns);
    for (const Activity* a : mine[i]) span_end = std::max(span_end, a->end_ns);
    std::vector<std::pair<uint64_t, uint64_t>> kernels, copies, all;
    for (const Activity* a : mine[i]) {
      // Clipped to the span: a record stamped before its phase opened (clock skew) counts from the open.
      const std::pair<uint64_t, uint64_t> iv{std::max(a->start_ns, o.open_ns), std::min(a->end_ns, span_end)};
      (a->kind == Kind::kMemcpy ? copies : kernels).push_back(iv);
      all.push_back(iv);
    }
    PhaseTimes& t = out.phases[o.path];
    t.kernel_ns += union_length(std::move(kernels));
    t.copy_ns += union_length(std::move(copies));
    t.idle_ns += (span_end - o.open_ns) - union_length(std::move(all));
    t.activities += mine[i].size();
  }
  return out;
}

namespace {
// The innermost opening of this thread under an OpeningSink (0: none), for Opening::parent.
thread_local uint64_t t_innermost = 0;
struct Token {
  uint64_t id = 0, saved_innermost = 0;
  size_t index = 0;
  void* inner = nullptr;
};
}  // namespace

void* OpeningSink::begin(const std::string& path) {
  auto* t = new Token;
  {
    std::lock_guard lk(mu_);
    t->id = next_id_++;
    t->index = openings_.size();
    openings_.push_back({t->id, path, t_innermost, 0, 0});
  }
  t->saved_innermost = t_innermost;
  t_innermost = t->id;
  opened(t->id);
  const uint64_t open = now_ns();
  {
    std::lock_guard lk(mu_);
    openings_[t->index].open_ns = open;
  }
  if (inner_) {
    try {
      t->inner = inner_->begin(path);
    } catch (...) {  // the phase never opened: undo the push, so the thread's stack stays balanced
      closing(t->id);
      t_innermost = t->saved_innermost;
      delete t;
      throw;
    }
  }
  return t;
}

void OpeningSink::end(void* token) {
  std::unique_ptr<Token> t(static_cast<Token*>(token));
  if (inner_) inner_->end(t->inner);
  const uint64_t close = now_ns();
  closing(t->id);
  t_innermost = t->saved_innermost;
  std::lock_guard lk(mu_);
  if (t->index < openings_.size() && openings_[t->index].id == t->id) openings_[t->index].close_ns = close;
}

void OpeningSink::gpu_time(const std::string& path, uint64_t gpu_ns) {
  if (inner_) inner_->gpu_time(path, gpu_ns);
}

void OpeningSink::wrap() {
  {
    std::lock_guard lk(mu_);
    openings_.clear();
  }
  inner_ = sink();
  set_sink(this);
}

void OpeningSink::unwrap() {
  if (sink() == this) set_sink(inner_);
}

std::vector<Opening> OpeningSink::take_openings() {
  std::lock_guard lk(mu_);
  std::vector<Opening> out;
  out.swap(openings_);
  return out;
}

}  // namespace cuzk::instr::gpu_activity
