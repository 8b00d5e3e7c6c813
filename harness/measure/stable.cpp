#include "harness/measure/stable.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "prover/util/thread_pool.hpp"

namespace cuzk {

StableMode apply_stable_mode() {
  StableMode m;
  // Once per process: after it, this thread's CPU set is the driver's, not the process's.
  if (placement::current() || ThreadPool::global_exists())
    throw std::logic_error("--stable: a CPU placement or the worker pool already exists; apply stable mode once, "
                           "before any work");
  // The split first: a process that cannot keep a core free changes nothing.
  try {
    m.placement = placement::default_split(placement::allowed_cpus());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format(
        "--stable: {}; give the process at least 2 CPUs (taskset -c, the container's cpuset) or drop --stable", e.what()));
  }
  placement::set(m.placement);
  // CUDA reads the variable once, when it initializes; nothing in this process has yet (the
  // backend probe comes after this call). An empty value counts as unset, as CUDA treats it.
  const char* user = std::getenv("CUDA_MODULE_LOADING");
  if (user && *user) {
    m.cuda_module_loading = user;
    m.module_loading_set_by_user = true;
  } else {
    ::setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    m.cuda_module_loading = "EAGER";
  }
  // The pool now, so its workers start (and place themselves) before any measured work.
  m.pool_threads = ThreadPool::global().size();
  placement::pin_current_thread_to_driver();
  return m;
}

nlohmann::json describe(const StableMode& m) {
  return {{"stable", true},
          {"cuda_module_loading", m.cuda_module_loading},
          {"module_loading_set_by", m.module_loading_set_by_user ? "user" : "cuzk"},
          {"driver_cpus", m.placement.driver_cpus},
          {"worker_cpus", m.placement.worker_cpus},
          {"pool_threads", m.pool_threads},
          {"gpu_clocks", "read, never changed"}};
}

std::string summary(const StableMode& m) {
  return fmt::format(
      "stable mode: GPU-driving thread on CPU {}; pool of {} thread(s) on CPUs {}; CUDA_MODULE_LOADING={} (set by {}); "
      "GPU settings untouched",
      placement::cpu_list(m.placement.driver_cpus), m.pool_threads, placement::cpu_list(m.placement.worker_cpus),
      m.cuda_module_loading, m.module_loading_set_by_user ? "the user" : "cuzk");
}

std::optional<WarmupPlan> resolve_warmup(const std::optional<std::string>& text, std::optional<int> cap, bool stable) {
  if (cap && *cap < kSettleWindow)
    throw std::invalid_argument(fmt::format(
        "--warmup-cap must be at least {}, the warm-ups the settling rule compares (got {})", kSettleWindow, *cap));
  WarmupPlan plan;
  if (cap) plan.cap = *cap;
  if (text) {
    if (*text == "auto") {
      plan.mode = WarmupMode::kUntilSettled;
      return plan;
    }
    const char* end = text->data() + text->size();
    auto [ptr, ec] = std::from_chars(text->data(), end, plan.count);
    if (text->empty() || ec != std::errc() || ptr != end || plan.count < 0)
      throw std::invalid_argument(fmt::format("--warmup must be a number >= 0 or 'auto' (got \"{}\")", *text));
    if (cap)
      throw std::invalid_argument(
          fmt::format("--warmup-cap applies to --warmup auto, not to a fixed count (got --warmup {})", *text));
    return plan;
  }
  if (stable) {
    plan.mode = WarmupMode::kUntilSettled;
    return plan;
  }
  if (cap) throw std::invalid_argument("--warmup-cap needs --warmup auto (or --stable, where auto is the default)");
  return std::nullopt;
}

std::optional<double> settle_spread(const std::vector<uint64_t>& walls) {
  if (walls.size() < size_t(kSettleWindow)) return std::nullopt;
  std::vector<uint64_t> last(walls.end() - kSettleWindow, walls.end());
  std::sort(last.begin(), last.end());
  const double median = double(last[last.size() / 2]);  // the window is odd
  const double span = double(last.back() - last.front());
  if (median == 0) return span == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return span / median;
}

bool Warmups::more() const {
  const int done = int(walls_.size());
  return plan_.until_settled() ? !settled_ && done < plan_.cap : done < plan_.count;
}

void Warmups::add(uint64_t proof_wall_ns) {
  walls_.push_back(proof_wall_ns);
  if (plan_.until_settled()) {
    const std::optional<double> s = settle_spread(walls_);
    settled_ = s && *s <= kSettleSpread;
  }
}

WarmupOutcome Warmups::outcome() const {
  return {.mode = plan_.mode,
          .done = int(walls_.size()),
          .converged = settled_,
          .spread = settle_spread(walls_).value_or(0.0)};
}

std::string warmup_criterion() {
  return fmt::format("the proof phase's wall times of the last {} warm-ups span at most {}% of their median",
                     kSettleWindow, kSettleSpread * 100);
}

nlohmann::json describe(const WarmupOutcome& o, const WarmupPlan& plan) {
  if (o.mode == WarmupMode::kFixed) return {{"mode", "fixed"}, {"done", o.done}};
  return {{"mode", "auto"},          {"done", o.done},  {"converged", o.converged},
          {"spread", o.spread},      {"cap", plan.cap}, {"criterion", warmup_criterion()}};
}

}  // namespace cuzk
