// `cuzk-bench calibrate`: false-alarm rate and minimum detectable slowdown of `compare` on this
// machine, from A/A and injected-slowdown comparisons (harness/analysis/calibrate.hpp,
// docs/calibration.md). SIGINT/SIGTERM: docs/reliability.md.
#include <fmt/core.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "harness/analysis/calibrate.hpp"
#include "harness/analysis/gate.hpp"
#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/measure/duet.hpp"
#include "harness/measure/inject.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/output_lock.hpp"
#include "harness/measure/process.hpp"
#include "prover/util/cpu_placement.hpp"

namespace cuzk::cli {
namespace {

double parse_pct(const std::string& s, const char* flag) {
  std::string t = s;
  while (!t.empty() && (t.back() == '%' || t.back() == ' ')) t.pop_back();
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !(v > 0) || !std::isfinite(v)) throw Error(fmt::format("{}: \"{}\" is not a positive percentage", flag, s));
  return v;
}

Registrar reg_calibrate("calibrate", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand(
      "calibrate", "measure the false-alarm rate and the smallest detectable slowdown of compare on this machine");
  auto o = std::make_shared<calibrate::Options>();
  auto slowdowns = std::make_shared<std::string>("1,2,3,5,10");
  auto target = std::make_shared<std::string>("3%");
  auto threshold = std::make_shared<std::string>();
  auto power = std::make_shared<double>(90);
  auto phases = std::make_shared<std::vector<std::string>>();
  sub->add_option("--workload", o->workload, "selfmeasure (fast, synthetic) or prove (the PoRep-shaped sector)")
      ->capture_default_str();
  sub->add_option("--trials", o->trials, "trials per row (A/A and each slowdown)")->capture_default_str();
  sub->add_option("--runs", o->runs, "runs (processes) per side of each comparison")->capture_default_str();
  sub->add_option("--reps", o->reps, "measured repetitions per process (> 1: per-process medians, the block design)")
      ->capture_default_str();
  sub->add_flag("--stable", o->stable, "run the workload with --stable (docs/ab.md)");
  sub->add_option("--phase", *phases,
                  "phases whose verdicts are calibrated, where slowdowns are injected (repeatable or comma-separated; "
                  "default proof)")
      ->delimiter(',');
  sub->add_option("--slowdowns", *slowdowns, "injected slowdowns, percent, comma-separated")->capture_default_str();
  sub->add_option("--target-effect", *target, "effect (percent) for the runs-needed estimate")->capture_default_str();
  sub->add_option("--power", *power, "detection power, percent (e.g. 90)")
      ->capture_default_str()
      ->check(finite_in(0, 100, true, true));
  sub->add_option("--pool-a", o->pool_a, "plain runs in the pool (default 4 x --runs)");
  sub->add_option("--pool-b", o->pool_b, "runs per slowdown level (default 2 x --runs)");
  sub->add_option("--seed", o->seed, "seed of the run order and of the trial draws")->capture_default_str();
  sub->add_option("--noise-threshold", *threshold, "compare's noise threshold, percent (default: compare's)");
  sub->add_option("--bench", o->bench, "cuzk-bench binary to run (default: this one)");
  sub->add_option("--workload-arg", o->workload_args, "extra argument for the workload subcommand (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--out-dir", o->out_dir, "output folder (default results/local/calibrate-<UTC time>)");
  auto draw = std::make_shared<std::string>();
  sub->add_option("--draw", *draw,
                  "how trials draw their sides from the pool: unpaired (independent runs), paired (both sides from the "
                  "same rounds, analysed paired by round), or both side by side (default unpaired; paired with --duet)");
  sub->add_flag("--duet", o->duet,
                "run the pool's pairs at the same time, each on half of the CPUs (A with A', A with each level), halves "
                "swapped per round (docs/calibration.md)");
  sub->add_option("--counter", o->counter,
                  "calibrate a per-phase counter instead of time (e.g. sim::instructions; the workload must record it, "
                  "see --workload-arg); injections plant work (:work)");
  sub->add_option("--gate", o->gate_thresholds,
                  "gate every trial with this thresholds file (docs/gating.md): the A/A trials count the gate's false "
                  "failures per merge, the slowdown levels its detections");
  add_analysis_options(sub, o->compare.analysis);
  return [=] {
    calibrate::Options opt = *o;
    opt.draw = *draw;
    check_analysis_options(opt.compare.analysis);
    // Before the folder exists: a duet on one CPU is refused with nothing written.
    if (opt.duet) {
      try {
        (void)duet::split_halves(placement::allowed_cpus());
      } catch (const std::invalid_argument& e) {
        throw Error(e.what());
      }
    }
    if (!phases->empty()) opt.phases = *phases;
    opt.slowdowns = parse_number_list("--slowdowns", *slowdowns, "1,2,3,5,10");
    opt.target_effect = parse_pct(*target, "--target-effect");
    opt.power = *power / 100;
    if (!threshold->empty()) opt.compare.noise_threshold = parse_pct(*threshold, "--noise-threshold") / 100;
    if (inject::active())
      throw Error(fmt::format("{} is set in calibrate's own environment: unset it (calibrate injects by itself)",
                              inject::kEnvVar));
    opt.log = [](const std::string& s) {
      std::fprintf(stderr, "%s\n", s.c_str());
      std::fflush(stderr);
    };
    // A thresholds file that does not parse is bad input: refused before the folder exists.
    if (!opt.gate_thresholds.empty()) {
      try {
        (void)load_thresholds(opt.gate_thresholds);
      } catch (const GateError& e) {
        throw Error(fmt::format("--gate: {}", e.what()));
      }
    }
    // The folder before any run: an unwritable one is bad input, found now rather than after
    // the pool has run; it is claimed until the calibration is written (output_lock.hpp).
    if (opt.out_dir.empty()) opt.out_dir = "results/local/calibrate-" + utc_stamp();  // named by an interruption too
    FolderClaim claim(opt.out_dir, "--out-dir", /*require_empty=*/false);
    // Before the first pool run: a signal ends the run in flight and the calibration, exit 130/143.
    interrupt::install();
    calibrate::Result r;
    try {
      r = calibrate::run(opt);
    } catch (const interrupt::Interrupted& e) {
      throw Error(fmt::format("{}: no calibration was written; the pool runs that finished are listed in "
                              "{}/pool/index.json",
                              e.what(), opt.out_dir),
                  interrupt::exit_code(e.sig));
    } catch (const std::invalid_argument& e) {
      throw Error(e.what());
    } catch (const CompareError& e) {
      throw Error(e.what());
    }
    fmt::print("{}", calibrate::format_table(r));
    fmt::print("written: {}/calibration.json, {}/calibration.md (pool runs in {}/pool)\n", r.out_dir, r.out_dir,
               r.out_dir);
    return kExitOk;
  };
});

}  // namespace
}  // namespace cuzk::cli
