// The GPU counters pass: see gpu_counter_pass.hpp.
#include "harness/cli/gpu_counter_pass.hpp"

#include <fmt/core.h>

#include <cstdlib>
#include <thread>

#include "harness/measure/counters.hpp"
#include "harness/measure/phases.hpp"
#include "prover/instr/phase.hpp"

#if CUZK_HAVE_GPU_COUNTERS
#include "cuda/profiling/gpu_counters.hpp"
#endif

namespace cuzk {

std::vector<std::string> gpu_counters_from(const std::optional<std::string>& flag) {
  std::optional<std::string> v = flag;
  if (!v)
    if (const char* env = std::getenv("CUZK_GPU_COUNTERS")) v = std::string(env);
  if (!v || v->empty()) return {};
  if (*v == "default") {
#if CUZK_HAVE_GPU_COUNTERS
    return cuda::gpu_counters::default_metrics();
#else
    return {"default"};  // refused by GpuCounterPass with the reason
#endif
  }
  return parse_counter_list(*v);
}

std::shared_ptr<GpuCounterPass> gpu_counter_pass_for(const std::optional<std::string>& flag, const std::string& backend) {
  const std::vector<std::string> metrics = gpu_counters_from(flag);
  if (metrics.empty()) return nullptr;
  if (backend != "cuda") throw CounterError("--gpu-counters needs --backend cuda (the counters are the GPU's)");
  return std::make_shared<GpuCounterPass>(metrics);
}

std::function<nlohmann::json(const std::function<void()>&)> gpu_counters_hook(std::shared_ptr<GpuCounterPass> pass,
                                                                             const std::string& who) {
  if (!pass) return nullptr;
  return [pass, who](const std::function<void()>& one_proof) {
    fmt::print(stderr, "[{}] GPU counters pass: the proof runs {} more time(s), untimed\n", who, pass->passes());
    return pass->run(one_proof);
  };
}

#if CUZK_HAVE_GPU_COUNTERS

namespace gc = cuda::gpu_counters;

namespace {

// The sink of the counters pass: a CUPTI range for each direct child of the stage opened on the
// stage's thread; every other scope is ignored.
class RangeSink final : public instr::PhaseSink {
 public:
  RangeSink(gc::RangeProfiler& prof, const std::string& stage) : prof_(prof), stage_(stage) {}
  void* begin(const std::string& path) override {
    if (path == stage_) {
      stage_thread_ = std::this_thread::get_id();
      return &kIgnored;
    }
    if (!is_direct_child(stage_, path) || std::this_thread::get_id() != stage_thread_) return &kIgnored;
    prof_.push(path);
    return &kPushed;
  }
  void end(void* token) override {
    if (token == &kPushed) prof_.pop();
  }
  void gpu_time(const std::string&, uint64_t) override {}

 private:
  static inline char kIgnored = 0, kPushed = 0;
  gc::RangeProfiler& prof_;
  std::string stage_;
  std::thread::id stage_thread_;
};

}  // namespace

struct GpuCounterPass::Impl {
  std::vector<std::string> metrics;
  std::string stage;
  size_t passes = 0;
  std::vector<Status> status;
  std::string chip;
  std::unique_ptr<gc::RangeProfiler> prof;  // during run() only
};

GpuCounterPass::GpuCounterPass(const std::vector<std::string>& metrics, std::string stage)
    : impl_(std::make_unique<Impl>()) {
  impl_->metrics = metrics;
  impl_->stage = std::move(stage);
  // Validates now, then lets the profiler go: the timed repetitions run with no CUPTI profiler
  // initialized, and run() sets up a fresh one.
  try {
    gc::RangeProfiler check(metrics);
    impl_->passes = check.passes();
    impl_->chip = check.chip();
    for (const auto& st : check.status()) impl_->status.push_back({st.name, st.available, st.reason});
  } catch (const std::exception& e) {
    throw CounterError(fmt::format("--gpu-counters: {}", e.what()));
  }
}

size_t GpuCounterPass::passes() const { return impl_->passes; }
const std::vector<GpuCounterPass::Status>& GpuCounterPass::status() const { return impl_->status; }
std::string GpuCounterPass::chip() const { return impl_->chip; }

nlohmann::json GpuCounterPass::run(const std::function<void()>& one_proof) {
  impl_->prof = std::make_unique<gc::RangeProfiler>(impl_->metrics);
  RangeSink sink(*impl_->prof, impl_->stage);
  instr::set_sink(&sink);
  try {
    impl_->prof->collect(one_proof);
  } catch (...) {
    instr::set_sink(nullptr);
    throw;
  }
  instr::set_sink(nullptr);
  nlohmann::json metrics = nlohmann::json::object(), phases = nlohmann::json::object();
  for (const auto& st : impl_->prof->status())
    metrics[st.name] = {{"available", st.available}, {"reason", st.reason}};
  for (const auto& [range, values] : impl_->prof->results()) {
    nlohmann::json v = nlohmann::json::object();
    for (const auto& [m, x] : values) v[m] = x ? nlohmann::json(*x) : nlohmann::json(nullptr);
    phases[range] = v;
  }
  nlohmann::json line = {{"method", fmt::format("CUPTI Range Profiler on {}: one user range per direct child of {} on the thread "
                                 "that drives the GPU; user replay: the proof ran {} times (passes), untimed; a "
                                 "phase occurring several times sums .sum metrics and averages the others",
                                 impl_->prof->chip(), impl_->stage, impl_->prof->passes())},
          {"chip", impl_->prof->chip()},
          {"passes", impl_->prof->passes()},
          {"metrics", metrics},
          {"phases", phases}};
  impl_->prof.reset();
  return line;
}

#else  // no CUPTI in this build

struct GpuCounterPass::Impl {
  std::vector<Status> status;
};

GpuCounterPass::GpuCounterPass(const std::vector<std::string>&, std::string) {
  throw CounterError(
      "--gpu-counters: this build has no GPU counters (they need the CUDA backend and CUPTI from the CUDA toolkit at "
      "configure time)");
}
size_t GpuCounterPass::passes() const { return 0; }
const std::vector<GpuCounterPass::Status>& GpuCounterPass::status() const { return impl_->status; }
std::string GpuCounterPass::chip() const { return ""; }
nlohmann::json GpuCounterPass::run(const std::function<void()>&) { return nullptr; }

#endif

GpuCounterPass::~GpuCounterPass() = default;

}  // namespace cuzk
