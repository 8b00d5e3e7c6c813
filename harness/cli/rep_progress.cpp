#include "harness/cli/rep_progress.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

namespace cuzk::cli {

std::string format_seconds(double s) {
  if (s < 60) return fmt::format("{:.1f}s", s);
  return fmt::format("{}m{:02d}s", int(s) / 60, int(s) % 60);
}

std::function<void(int rep, bool warm)> rep_progress(const std::string& label, const WarmupPlan& plan, int reps) {
  const bool until_settled = plan.until_settled();
  const int warmup_runs = until_settled ? 0 : plan.count;
  if (!until_settled && warmup_runs + reps <= 1) return {};
  struct State {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    int warm_done = 0;  // warm-ups started (auto: not known ahead)
  };
  auto st = std::make_shared<State>();
  return [=](int rep, bool warm) {
    if (warm) st->warm_done = rep + 1;
    const int measured = rep - st->warm_done;
    if (!warm && measured >= reps) return;  // the call after the last repetition
    const double e = std::chrono::duration<double>(std::chrono::steady_clock::now() - st->t0).count();
    const int total = std::max(warmup_runs, st->warm_done) + reps;
    const std::string left = rep > 0 ? ", about " + format_seconds(e / rep * (total - rep)) + " left" : "";
    const std::string of = !warm           ? fmt::format("{}/{}", measured + 1, reps)
                           : until_settled ? fmt::format("{} (auto, at most {})", rep + 1, plan.cap)
                                           : fmt::format("{}/{}", rep + 1, warmup_runs);
    fmt::print(stderr, "[{}] {} {} (elapsed {}{})\n", label, warm ? "warm-up" : "repetition", of, format_seconds(e), left);
    std::fflush(stderr);
  };
}

}  // namespace cuzk::cli
