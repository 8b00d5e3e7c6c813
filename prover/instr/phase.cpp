#include "prover/instr/phase.hpp"

#include <atomic>

namespace cuzk::instr {
namespace {
std::atomic<PhaseSink*> g_sink{nullptr};
thread_local std::string t_current;
}  // namespace

void set_sink(PhaseSink* s) { g_sink.store(s, std::memory_order_release); }
PhaseSink* sink() { return g_sink.load(std::memory_order_acquire); }
const std::string& current_path() { return t_current; }

static std::string join(const std::string& parent, const std::string& name) {
  if (!name.empty() && name[0] == '/') return name.substr(1);
  if (parent.empty()) return name;
  return parent + "/" + name;
}

Phase::Phase(const char* name) { open(join(t_current, name)); }
Phase::Phase(const std::string& name, const std::string& parent) { open(join(parent, name)); }

void Phase::open(std::string path) {
  path_ = std::move(path);
  saved_parent_ = t_current;
  t_current = path_;
  sink_ = g_sink.load(std::memory_order_acquire);
  if (sink_) token_ = sink_->begin(path_);
}

Phase::~Phase() {
  if (sink_) sink_->end(token_);
  t_current = saved_parent_;
}

void report_gpu_time(const std::string& path, uint64_t gpu_ns) {
  if (PhaseSink* s = g_sink.load(std::memory_order_acquire)) s->gpu_time(path, gpu_ns);
}

}  // namespace cuzk::instr
