#include "harness/measure/recorder.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include "harness/measure/clock.hpp"
#include "harness/measure/inject.hpp"
#include "harness/measure/nvtx.hpp"
#include "prover/engine/fault.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk {

namespace {
uint64_t os_tid() {
  thread_local const uint64_t tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  return tid;
}
}  // namespace

struct Recorder::Open {
  std::string path;
  uint64_t t0;
  CounterSet::Reading start;
};

Recorder::Recorder(RecorderOptions options) : opts_(std::move(options)) {
  counters_ = std::make_unique<CounterSet>(opts_.counters);
  counting_ = !counters_->counted().empty();
  sim_instructions_ = counters_->value_index("sim::instructions");
}

Recorder::~Recorder() { uninstall(); }

void Recorder::install() {
  if (counting_ && opts_.enlist_global_pool) counters_->enlist_pool(ThreadPool::global());
  {
    std::lock_guard<std::mutex> lk(mu_);
    agg_.clear();
    spans_.clear();
    spans_dropped_ = 0;
    sample_t0_ = now_ns();
  }
  instr::set_sink(this);
  installed_ = true;
}

void Recorder::uninstall() {
  if (installed_ && instr::sink() == this) instr::set_sink(nullptr);
  installed_ = false;
}

const std::vector<CounterStatus>& Recorder::counter_status() const { return counters_->status(); }

void* Recorder::begin(const std::string& path) {
  fault::hang_point(path);  // test-only $CUZK_INJECT_FAULT hang_in (prover/engine/fault.hpp)
  if (nvtx::kCompiledIn && opts_.nvtx) nvtx::push(path.c_str());
  auto* o = new Open{path, 0, {}};
  if (counting_) {
    counters_->enlist_this_thread();
    o->start = counters_->read();
  }
  o->t0 = now_ns();
  return o;
}

void Recorder::end(void* token) {
  // Calibration-only injected slowdown ($CUZK_INJECT_SLOWDOWN, harness/measure/inject.hpp): busy-waits
  // or runs planted work here, before the end time is taken; a no-op (one branch) when the
  // variable is unset. Planted work under sim counters sizes itself by the phase's instructions.
  struct SoFar {
    const Recorder* r;
    const Open* o;
  } so_far{this, static_cast<Open*>(token)};
  inject::InstructionsSoFar instructions = nullptr;
  if (sim_instructions_ >= 0) {
    instructions = [](const void* ctx) -> int64_t {
      const auto* c = static_cast<const SoFar*>(ctx);
      const CounterSet::Reading now = c->r->counters_->read();
      const auto k = static_cast<size_t>(c->r->sim_instructions_);
      if (!now.ok || !c->o->start.ok || k >= now.values.size() || k >= c->o->start.values.size()) return -1;
      return now.values[k] - c->o->start.values[k];
    };
  }
  inject::on_phase_end(so_far.o->path, so_far.o->t0, instructions, &so_far);
  const uint64_t t1 = now_ns();
  std::unique_ptr<Open> o(static_cast<Open*>(token));
  CounterSet::Reading stop;
  if (counting_) stop = counters_->read();
  if (nvtx::kCompiledIn && opts_.nvtx) nvtx::pop();
  const uint64_t dur = t1 - o->t0;
  std::lock_guard<std::mutex> lk(mu_);
  Agg& a = agg_[o->path];
  a.wall_ns += dur;
  a.count += 1;
  if (counting_) {
    if (a.counters.empty()) a.counters.assign(stop.values.size(), 0);
    if (!o->start.ok || !stop.ok || o->start.values.size() != stop.values.size()) {
      a.counter_read_failed = true;
      a.counter_error = !stop.ok ? stop.error : o->start.error;
    } else {
      for (size_t i = 0; i < stop.values.size(); ++i) a.counters[i] += stop.values[i] - o->start.values[i];
    }
    a.threads = std::max(a.threads, stop.threads);
    a.retired = std::max(a.retired, stop.retired);
  }
  if (opts_.spans) {
    if (spans_.size() < opts_.max_spans) {
      spans_.push_back({std::move(o->path), static_cast<int64_t>(o->t0) - static_cast<int64_t>(sample_t0_), dur,
                        os_tid()});
    } else {
      ++spans_dropped_;
    }
  }
}

void Recorder::gpu_time(const std::string& path, uint64_t gpu_ns) {
  gpu_ns = inject::scale_gpu_time(path, gpu_ns);  // calibration only (harness/measure/inject.hpp); unchanged otherwise
  std::lock_guard<std::mutex> lk(mu_);
  Agg& a = agg_[path];
  a.gpu_ns += gpu_ns;
  a.has_gpu = true;
}

Sample Recorder::take_sample() {
  std::unordered_map<std::string, Agg> agg;
  Sample s;
  {
    std::lock_guard<std::mutex> lk(mu_);
    const uint64_t t = now_ns();
    s.wall_ns = t - sample_t0_;
    sample_t0_ = t;
    agg.swap(agg_);
    s.spans.swap(spans_);
    s.spans_dropped = spans_dropped_;
    spans_dropped_ = 0;
  }
  const auto& status = counters_->status();
  const auto& counted = counters_->counted();
  for (auto& [path, a] : agg) {
    PhaseRecord r;
    r.wall_ns = a.wall_ns;
    r.count = a.count;
    if (a.has_gpu) r.gpu_ns = a.gpu_ns;
    for (const auto& st : status) {
      r.counters[st.name] = std::nullopt;
      if (!st.available) r.counter_errors[st.name] = st.reason;
    }
    if (counting_) {
      for (size_t k = 0; k < counted.size(); ++k) {
        const std::string& name = status[counted[k]].name;
        if (a.count == 0) {
          r.counter_errors[name] = "phase only reported GPU time (no host scope to count)";
        } else if (a.counter_read_failed) {
          r.counter_errors[name] = a.counter_error;
        } else {
          r.counters[name] = a.counters[k];
        }
      }
      CounterSet::Reading scope;
      scope.threads = a.threads;
      scope.retired = a.retired;
      scope.os = counters_->counts_os();
      scope.sim = counters_->counts_sim();
      r.counter_scope = CounterSet::scope_text(scope);
    } else if (!status.empty()) {
      r.counter_scope = "none (no requested counter is available)";
    }
    s.phases.emplace(path, std::move(r));
  }
  return s;
}

}  // namespace cuzk
