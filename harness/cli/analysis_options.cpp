#include "harness/cli/analysis_options.hpp"

#include <fmt/core.h>

#include <cmath>
#include <string>
#include <vector>

#include "harness/cli/commands.hpp"

namespace cuzk::cli {

namespace {

// "a, b or c".
std::string one_of(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

// A flag whose values are the names of an enum's members (choice_name); any other value is a
// parse error listing them in `values`' order (exit 2, one line).
template <class E>
CLI::Option* add_choice(CLI::App* sub, const std::string& flag, E& target, std::vector<E> values, const std::string& help) {
  std::vector<std::string> names;
  for (E v : values) names.push_back(choice_name(v));
  return sub
      ->add_option_function<std::string>(
          flag,
          [&target, values, flag, names](const std::string& s) {
            for (E v : values)
              if (s == choice_name(v)) {
                target = v;
                return;
              }
            throw CLI::ValidationError(fmt::format("{} must be {} (got \"{}\")", flag, one_of(names), s));
          },
          help)
      ->default_str(choice_name(target));
}

}  // namespace

void add_analysis_options(CLI::App* sub, AnalysisChoices& a) {
  add_choice(sub, "--metric", a.metric_choice, {MetricChoice::kAuto, MetricChoice::kWall},
             "auto: a phase with GPU time in every sample is judged by it, wall time shown beside; wall: judge wall time");
  add_choice(sub, "--design", a.design,
             {DesignChoice::kPaired, DesignChoice::kBlocks, DesignChoice::kSamples, DesignChoice::kAuto},
             "unit of observation: paired (per-round log ratios, where every sample has a round_id), blocks "
             "(per-process medians), samples (every sample), auto (paired, else blocks where repetitions share a "
             "process, else samples)");
  add_choice(sub, "--paired-ci", a.paired_ci, {PairedCi::kT, PairedCi::kBootstrap},
             "the paired design's reported CI: t (t interval of the mean log ratio over rounds) or bootstrap "
             "(rounds resampled)");
  // The older spelling, kept for scripts: --blocks off is --design samples. CLI11 runs option
  // callbacks in declaration order, so --design's value is known here.
  sub->add_option_function<std::string>(
         "--blocks",
         [&a](const std::string& v) {
           if (v == "auto") return;
           if (v != "off")
             throw CLI::ValidationError(
                 fmt::format("--blocks must be auto or off (got \"{}\"; --design is the option now)", v));
           if (a.design != DesignChoice::kAuto && a.design != DesignChoice::kSamples)
             throw CLI::ValidationError(fmt::format(
                 "--blocks off means --design samples, which contradicts --design {}", choice_name(a.design)));
           a.design = DesignChoice::kSamples;
         },
         "older spelling of --design: off = samples, auto = --design's choice")
      ->default_str("auto");
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
  if (!(a.env_thresholds.others_busy_cores >= 0) || !std::isfinite(a.env_thresholds.others_busy_cores))
    throw Error(fmt::format("--max-other-load must be a number of cores >= 0 (got {})", a.env_thresholds.others_busy_cores));
}

}  // namespace cuzk::cli
