// `cuzk-bench run --suite NAME|FILE [--quick] [--reps N] [--warmup N|auto [--warmup-cap N]]
//                  [--stable] [--backend cpu|cuda] [--out FILE] [--force] [--case NAME]... [--run-timeout S]`
//
// Runs every case of a suite (docs/suites.md) in this process and writes ONE results file
// (default results/local/<suite>-<UTC time>-<pid>.jsonl). The suite file is parsed and
// validated completely before anything runs; progress goes to stderr. --warmup auto and
// --stable (harness/measure/stable.hpp) are for the e2e (porep) cases; other kinds keep their fixed
// warm-ups, and under --stable run with this thread on every CPU again, since their child
// processes and engine threads inherit its CPU set. SIGINT/SIGTERM: docs/reliability.md.
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>

#include <chrono>
#include <memory>
#include <set>

#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/gpu_activity_flag.hpp"
#include "harness/cli/gpu_counter_pass.hpp"
#include "harness/cli/porep_flags.hpp"
#include "harness/cli/run_failures.hpp"
#include "harness/cli/sim_exec.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/session.hpp"
#include "harness/measure/stable.hpp"
#include "harness/suite/suite.hpp"
#include "prover/util/cpu_placement.hpp"

namespace cuzk::cli {
namespace {

struct RunOptions {
  std::string suite;
  bool quick = false;
  std::optional<int> reps;           // nullopt: from the suite
  double run_timeout = 0;            // --run-timeout: child processes (micro kind); 0: none
  std::optional<WarmupPlan> warmup_plan;  // nullopt: from the suite
  bool stable = false;
  std::string backend = "cpu";
  bool allow_cpu_fallback = false;
  std::string out;
  bool force = false;
  std::vector<std::string> cases;
  std::optional<std::string> counters;
  std::optional<std::string> gpu_counters;  // --gpu-counters (else $CUZK_GPU_COUNTERS)
  bool list = false;
  bool cache_sim = false;  // --cache-sim (with --counters sim)
  bool gpu_activity = false;  // --gpu-activity: GPU time without gaps (docs/counters.md)
};

std::vector<std::string> run_default_counters() { return with_os_defaults({"perf::PAGE-FAULTS", "perf::TASK-CLOCK"}); }

std::string fmt_secs(double s) {
  if (s < 60) return fmt::format("{:.1f}s", s);
  return fmt::format("{}m{:02d}s", int(s) / 60, int(s) % 60);
}

int run_suite(RunOptions o) {
  if (o.reps && *o.reps < 1) throw Error(fmt::format("--reps must be at least 1 (got {})", *o.reps));
  // `sim` expands here; a sim run re-executes under callgrind once the suite and cases are checked.
  const SimRequest sim_req = resolve_sim_counters(o.counters, run_default_counters(), o.cache_sim);
  if (sim::any_sim(sim_req.counters)) {
    o.counters = join_counters(sim_req.counters);
    check_sim_compatible(o.stable, o.backend, o.gpu_counters.has_value());
  }
  check_run_timeout(o.run_timeout);

  // Stable mode before the backend probe initializes CUDA, and before the pool exists.
  std::optional<StableMode> stable;
  if (o.stable && !o.list) {
    try {
      stable = apply_stable_mode();
    } catch (const std::exception& e) {
      throw Error(e.what());
    }
    fmt::print(stderr, "{}\n", summary(*stable));
  }
  // Everything about the request is checked before anything runs, the backend included.
  o.backend = resolve_backend(o.backend, o.allow_cpu_fallback);
  check_gpu_activity(o.gpu_activity, o.backend);
  suite::Suite s;
  try {
    s = suite::load_suite_file(suite::resolve_suite(o.suite));
  } catch (const suite::SuiteError& e) {
    throw Error(e.what());
  }
  const bool warmup_auto = o.warmup_plan && o.warmup_plan->until_settled();
  struct Planned {
    const suite::Case* c;
    nlohmann::json params;
    int reps;
    // Until settled under --warmup auto for a kind that supports it; count: the fixed count, or
    // until settled the fewest it can take.
    WarmupPlan warmup_plan;
    std::optional<WarmupOutcome> outcome = {};  // after the case ran
  };
  std::vector<Planned> plan;
  std::set<std::string> wanted(o.cases.begin(), o.cases.end());
  for (auto& name : wanted) {
    bool found = false;
    for (auto& c : s.cases) found |= c.name == name;
    if (!found) {
      std::string known;
      for (auto& c : s.cases) known += (known.empty() ? "" : ", ") + c.name;
      throw Error(fmt::format("--case {}: suite '{}' has no such case (its cases: {})", name, s.name, known));
    }
  }
  for (auto& c : s.cases) {
    if (!wanted.empty() && !wanted.count(c.name)) continue;
    if (o.quick && !c.in_quick && wanted.empty()) continue;
    if (!c.backends.empty() && std::find(c.backends.begin(), c.backends.end(), o.backend) == c.backends.end()) {
      if (!wanted.empty())
        throw Error(fmt::format("--case {}: this case is for backend(s) {}, not --backend {}", c.name,
                                fmt::format("{}", fmt::join(c.backends, ", ")), o.backend));
      fmt::print(stderr, "[{}] skipping case {}: for --backend {} only\n", s.name, c.name, fmt::format("{}", fmt::join(c.backends, ", ")));
      continue;
    }
    const bool auto_here = warmup_auto && suite::kind_specs().at(c.kind).warms_until_settled;
    const int fixed = o.warmup_plan && o.warmup_plan->mode == WarmupMode::kFixed
                          ? o.warmup_plan->count
                          : suite::effective_warmup_runs(s, c, o.quick);
    WarmupPlan planned{.mode = auto_here ? WarmupMode::kUntilSettled : WarmupMode::kFixed,
                       .count = auto_here ? kSettleWindow : fixed};
    if (o.warmup_plan) planned.cap = o.warmup_plan->cap;
    plan.push_back({&c, suite::effective_params(c, o.quick), o.reps ? *o.reps : suite::effective_reps(s, c, o.quick),
                    planned});
  }
  if (plan.empty()) throw Error(fmt::format("suite '{}': no case to run{}", s.name, o.quick ? " under --quick" : ""));
  // A case proving sectors too large for this machine's memory is refused before any case runs.
  for (auto& p : plan) {
    const nlohmann::json& q = p.params;
    if (o.list || !q.contains("challenges") || !q.contains("layers") || !q.contains("parents") || !q.contains("depth"))
      continue;
    circuits::PorepParams P;
    P.challenges = q["challenges"].get<uint32_t>();
    P.layers = q["layers"].get<uint32_t>();
    P.parents = q["parents"].get<uint32_t>();
    P.depth = q["depth"].get<uint32_t>();
    if (P.validate().empty()) check_sector_memory(P, q.value("partitions", uint64_t(1)), "case " + p.c->name);
  }
  if (o.list) {
    fmt::print("suite {} ({}): {}\n", s.name, s.path, s.description);
    for (auto& p : plan) {
      fmt::print("  {:<16} {:<8} reps {} warmup {}  {}\n", p.c->name, p.c->kind, p.reps,
                 p.warmup_plan.until_settled() ? fmt::format("auto (at most {})", p.warmup_plan.cap)
                                                : std::to_string(p.warmup_plan.count),
                 p.params.dump());
      if (!p.c->description.empty()) fmt::print("  {:<16} {}\n", "", p.c->description);
    }
    return kExitOk;
  }
  if (auto rc = run_under_callgrind_if_needed(sim_req)) return *rc;
  for (auto& p : plan)
    if (!p.c->primary_metric.empty() &&
        std::find(sim_req.counters.begin(), sim_req.counters.end(), p.c->primary_metric) == sim_req.counters.end())
      fmt::print(stderr, "[{}] case {}: its primary_metric {} is not among the counters recorded (add --counters {})\n",
                 s.name, p.c->name, p.c->primary_metric,
                 sim::is_sim_name(p.c->primary_metric) ? std::string("sim") : p.c->primary_metric);
  for (auto& p : plan)
    if (warmup_auto && !p.warmup_plan.until_settled())
      fmt::print(stderr, "[{}] case {} ({} kind): --warmup auto applies to porep cases; it keeps {} fixed warm-up(s)\n",
                 s.name, p.c->name, p.c->kind, p.warmup_plan.count);

  SessionOptions so;
  if (stable) so.header_extra = {{"stable", describe(*stable)}};
  so.suite = s.name;
  so.out = o.out.empty() ? default_results_path(s.name) : o.out;
  so.overwrite = o.force;
  so.counters = o.counters;
  so.default_counters = run_default_counters();
  // CUPTI's Activity API is set up before any file is written or any work runs.
  if (o.gpu_activity) so.gpu_activity = make_gpu_activity_collector();
  // GPU counters are checked on this GPU before any file is written or any work runs.
  std::shared_ptr<GpuCounterPass> gpu_pass;
  try {
    gpu_pass = gpu_counter_pass_for(o.gpu_counters, o.backend);
  } catch (const CounterError& e) {
    throw Error(e.what());
  }
  // SIGINT/SIGTERM stop the run after the sample in flight (or discard it after
  // interrupt::kStopSeconds), with the summary saying so: exit 130/143 (docs/reliability.md).
  interrupt::install();
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(so);
  } catch (const std::exception& e) {
    throw Error(e.what());
  }

  int total_reps = 0;
  bool open_ended = false;  // an auto case may take more warm-ups than planned
  for (auto& p : plan) {
    total_reps += p.reps + p.warmup_plan.count;
    open_ended |= p.warmup_plan.until_settled();
  }
  fmt::print(stderr, "[{}] {} case(s), {}{} repetition(s){}; results: {}\n", s.name, plan.size(),
             open_ended ? "at least " : "", total_reps, o.quick ? " (quick)" : "", session->path());
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int done = 0;
  bool ok = true;
  for (size_t i = 0; i < plan.size(); ++i) {
    auto& p = plan[i];
    const suite::KindSpec& kind = suite::kind_specs().at(p.c->kind);
    suite::RunContext ctx;
    ctx.session = session.get();
    ctx.suite = s.name;
    ctx.case_name = p.c->name;
    ctx.params = p.params;
    ctx.reps = p.reps;
    ctx.warmup_plan = p.warmup_plan;
    ctx.backend = o.backend;
    ctx.gpu_counters = gpu_counters_hook(gpu_pass, s.name);
    ctx.run_timeout_s = o.run_timeout;
    int case_start = done;
    auto warm_done = std::make_shared<int>(0);  // warm-ups started so far (auto: not known ahead)
    ctx.on_rep = [&, i, case_start, warm_done](int rep, bool warm) {
      if (warm) *warm_done = rep + 1;
      if (warm && rep >= p.warmup_plan.count) ++total_reps;  // auto: one more warm-up than planned
      done = case_start + rep;
      const int measured = rep - *warm_done;
      if (!warm && measured >= p.reps) return;
      const double e = elapsed();
      std::string est = done > 0 ? ", about " + fmt_secs(e / done * (total_reps - done)) + " left" : "";
      const WarmupPlan& w = p.warmup_plan;
      const std::string of = !warm               ? fmt::format("{}/{}", measured + 1, p.reps)
                             : w.until_settled() ? fmt::format("{} (auto, at most {})", rep + 1, w.cap)
                                                 : fmt::format("{}/{}", rep + 1, w.count);
      fmt::print(stderr, "[{}] case {}/{} {}: {} {} (elapsed {}{})\n", s.name, i + 1, plan.size(), p.c->name,
                 warm ? "warm-up" : "repetition", of, fmt_secs(e), est);
    };
    // Under --stable only the porep job keeps this thread on the driver CPU: micro benchmark
    // processes and the pipeline engine's threads inherit this thread's CPU set.
    // A case judged by a counter says so in each of its samples (compare reads it).
    session->set_sample_fields(p.c->primary_metric.empty() ? nlohmann::json::object()
                                                           : nlohmann::json{{"primary_metric", p.c->primary_metric}});
    const bool widen = stable && !kind.warms_until_settled;
    if (widen) placement::pin_current_thread_to_all();
    try {
      ok &= kind.run(ctx);
    } catch (const Error&) {
      throw;
    } catch (const interrupt::Interrupted& e) {  // Session::measure: the sample in flight was written
      session->finish_interrupted(e.sig, "completed");
      throw Error(fmt::format("{} during case '{}': stopped after the sample in flight; results: {}", e.what(), p.c->name,
                              session->path()),
                  interrupt::exit_code(e.sig));
    } catch (const std::exception& e) {
      if (const int sig = interrupt::signal_received()) {  // a child of the case got the signal too
        session->finish_interrupted(sig, "discarded");
        throw Error(fmt::format("interrupted by {} during case '{}': the sample in flight was discarded ({}); results: {}",
                                interrupt::signal_name(sig), p.c->name, e.what(), session->path()),
                    interrupt::exit_code(sig));
      }
      throw Error(fmt::format("case '{}': {}", p.c->name, e.what()), kExitFailure);
    }
    if (widen) placement::pin_current_thread_to_driver();
    p.outcome = ctx.warmup_outcome;
    done = case_start + p.reps + *warm_done;
  }
  // Under --warmup auto the summary line records what each case's warm-ups did.
  nlohmann::json extra = nlohmann::json::object();
  if (warmup_auto) {
    nlohmann::json cases = nlohmann::json::object();
    bool converged = true;
    for (auto& p : plan) {
      WarmupOutcome w;  // a kind without auto warm-ups ran its fixed count
      w.done = p.warmup_plan.count;
      if (p.outcome) w = *p.outcome;
      cases[p.c->name] = describe(w, *o.warmup_plan);
      if (w.mode == WarmupMode::kUntilSettled) converged &= w.converged;
    }
    extra["warmup"] = {{"mode", "auto"}, {"converged", converged}, {"cap", o.warmup_plan->cap},
                       {"criterion", warmup_criterion()}, {"cases", cases}};
  }
  nlohmann::json summary = session->finish(extra);
  fmt::print(stderr, "[{}] done in {}\n", s.name, fmt_secs(elapsed()));
  (void)summary;  // the file's summary line pools every case; the terminal shows one table per case
  for (auto& p : plan) {
    std::vector<nlohmann::json> mine;
    for (auto& smp : session->samples())
      if (smp.value("case", "") == p.c->name) mine.push_back(smp);
    const int warm = p.outcome ? p.outcome->done : p.warmup_plan.count;
    fmt::print("case {} ({} repetition(s), {} warm-up): {}\n", p.c->name, p.reps, warm, p.params.dump());
    print_summary_table(make_summary(mine, 0), session->counter_status());
  }
  fmt::print("results: {}\n", session->path());
  if (!ok) fmt::print(stderr, "cuzk-bench: error: some proofs failed to verify\n");
  return ok ? kExitOk : kExitFailure;
}

Registrar reg_run("run", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("run", "run a suite (suites/NAME.toml or a file) and write one results file");
  auto o = std::make_shared<RunOptions>();
  auto counters = std::make_shared<std::string>();
  auto warmup_text = std::make_shared<std::string>();
  auto warmup_cap = std::make_shared<int>(kDefaultWarmupCap);
  sub->add_option("--suite", o->suite, "suite name (suites/NAME.toml) or suite file")->required();
  sub->add_flag("--quick", o->quick, "apply each case's quick overrides and the suite's quick reps/warm-up");
  sub->add_option("--reps", o->reps, "measured repetitions per case, at least 1 (default: from the suite)");
  sub->add_option("--run-timeout", o->run_timeout,
                  "seconds a child process of a case (micro benchmarks) may run before it is killed (0: no limit; "
                  "docs/reliability.md)")
      ->check(finite_in(0, kMaxRunTimeout));
  auto* wopt = sub->add_option("--warmup", *warmup_text,
                               "warm-up repetitions per case (default: from the suite), or 'auto': porep cases warm "
                               "up until the proof time settles (the default under --stable)");
  auto* capopt = sub->add_option("--warmup-cap", *warmup_cap, "the most warm-ups of --warmup auto")->capture_default_str();
  sub->add_flag("--stable", o->stable,
                "stable measurement for porep cases: GPU-driving thread on its own core, pool on the others, eager CUDA "
                "module loading, --warmup auto (docs/ab.md)");
  sub->add_option("--backend", o->backend, "cpu or cuda")->capture_default_str();
  sub->add_flag("--allow-cpu-fallback", o->allow_cpu_fallback, "use the cpu backend when --backend cannot run here (no GPU)");
  sub->add_option("--out", o->out, "results file (default results/local/<suite>-<UTC time>-<pid>.jsonl)");
  sub->add_flag("--force", o->force, "overwrite --out if it exists");
  sub->add_option("--case", o->cases, "run only this case (repeatable)");
  sub->add_flag("--list", o->list, "validate the suite and print the cases that would run, with their parameters; run nothing");
  auto gpu_counters = std::make_shared<std::string>();
  auto* gopt = sub->add_option("--gpu-counters", *gpu_counters,
                               "GPU metrics per GPU phase of porep cases, from an untimed counters pass after each case's "
                               "repetitions (Nsight Compute names, or 'default'; default $CUZK_GPU_COUNTERS; docs/counters.md)");
  auto* copt = sub->add_option("--counters", *counters, "comma-separated counters: PAPI events, os:: counters, or 'sim' (sim:: counters: the suite runs again under Valgrind's callgrind) (default $CUZK_COUNTERS, else perf::PAGE-FAULTS, perf::TASK-CLOCK and the default os:: counters; docs/counters.md)");
  sub->add_flag("--gpu-activity", o->gpu_activity,
                "GPU time without gaps: gpu_kernel_ns, gpu_copy_ns and gpu_idle_ns per GPU phase from CUPTI's Activity "
                "API, collected in every repetition and attributed after it (--backend cuda; docs/counters.md)");
  sub->add_flag("--cache-sim", o->cache_sim,
                "with --counters sim: simulate caches and branches too (sim::l1_misses, sim::ll_misses, "
                "sim::branch_mispredicts; slower)");
  return [=] {
    RunOptions opt = *o;
    if (copt->count() > 0) opt.counters = *counters;
    if (gopt->count() > 0) opt.gpu_counters = *gpu_counters;
    try {
      opt.warmup_plan =
          resolve_warmup(wopt->count() > 0 ? std::optional<std::string>(*warmup_text) : std::nullopt,
                         capopt->count() > 0 ? std::optional<int>(*warmup_cap) : std::nullopt, opt.stable);
    } catch (const std::invalid_argument& e) {
      throw Error(e.what());
    }
    return run_suite(opt);
  };
});

}  // namespace
}  // namespace cuzk::cli
