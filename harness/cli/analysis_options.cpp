#include "harness/cli/analysis_options.hpp"

#include <fmt/core.h>

#include <cmath>

#include "harness/cli/commands.hpp"

namespace cuzk::cli {

void add_analysis_options(CLI::App* sub, AnalysisChoices& a) {
  sub->add_option("--metric", a.metric,
                  "auto: a phase with GPU time in every sample is judged by it, wall time shown beside; wall: judge wall time")
      ->capture_default_str();
  sub->add_option("--design", a.design,
                  "unit of observation: paired (per-round log ratios, where every sample has a round_id), blocks "
                  "(per-process medians), samples (every sample), auto (paired, else blocks where repetitions share a "
                  "process, else samples)")
      ->capture_default_str();
  sub->add_option("--paired-ci", a.paired_ci,
                  "the paired design's reported CI: t (t interval of the mean log ratio over rounds) or bootstrap "
                  "(rounds resampled)")
      ->capture_default_str();
  // The older spelling, kept for scripts: --blocks off is --design samples.
  sub->add_option("--blocks", a.blocks, "older spelling of --design: off = samples, auto = --design's choice")
      ->capture_default_str();
  sub->add_flag("--drop-disturbed", a.drop_disturbed,
                "leave out samples taken while the GPU throttled or other work loaded the host (counted in a warning)");
  sub->add_option("--max-other-load", a.env_thresholds.others_busy_cores,
                  "cores busy with other processes beyond which a sample counts as loaded")
      ->capture_default_str()
      ->check(finite_in(0, 1e6));
}

CLI::Validator finite_in(double lo, double hi, bool open_lo, bool open_hi) {
  const std::string range = fmt::format("{}{}, {}{}", open_lo ? "(" : "[", lo, hi, open_hi ? ")" : "]");
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || !std::isfinite(v) || v < lo || v > hi || (open_lo && v == lo) ||
            (open_hi && v == hi))
          return fmt::format("must be a number in {} (got {})", range, s);
        return {};
      },
      "NUMBER in " + range);
}

void add_bootstrap_options(CLI::App* sub, int& resamples, uint64_t& seed) {
  sub->add_option("--resamples", resamples, "bootstrap resamples (at least 100)")
      ->capture_default_str()
      ->check(CLI::Range(100, 100'000'000));
  sub->add_option("--seed", seed, "bootstrap seed")->capture_default_str()->check(CLI::NonNegativeNumber);
}

void add_allow_injected_flag(CLI::App* sub, bool& allow) {
  sub->add_flag("--allow-injected", allow,
                "compare a file written under CUZK_INJECT_SLOWDOWN with a plain one (a warning says which side was injected)");
}

void check_analysis_options(const AnalysisChoices& a) {
  if (a.metric != "auto" && a.metric != "wall")
    throw Error(fmt::format("--metric must be auto or wall (got \"{}\")", a.metric));
  if (a.design != "auto" && a.design != "paired" && a.design != "blocks" && a.design != "samples")
    throw Error(fmt::format("--design must be paired, blocks, samples or auto (got \"{}\")", a.design));
  if (a.paired_ci != "t" && a.paired_ci != "bootstrap")
    throw Error(fmt::format("--paired-ci must be t or bootstrap (got \"{}\")", a.paired_ci));
  if (a.blocks != "auto" && a.blocks != "off")
    throw Error(fmt::format("--blocks must be auto or off (got \"{}\"; --design is the option now)", a.blocks));
  if (a.blocks == "off" && a.design != "auto" && a.design != "samples")
    throw Error(fmt::format("--blocks off means --design samples, which contradicts --design {}", a.design));
  if (!(a.env_thresholds.others_busy_cores >= 0) || !std::isfinite(a.env_thresholds.others_busy_cores))
    throw Error(fmt::format("--max-other-load must be a number of cores >= 0 (got {})", a.env_thresholds.others_busy_cores));
}

}  // namespace cuzk::cli
