// `cuzk-bench prove`: the prover's own job, recorded phase by phase through the harness.
//
//   PoRep-shaped sector:  cuzk-bench prove [--partitions N --challenges N --layers N --parents N
//                         --depth N] [--params FILE] [--reps N --warmup N|auto --warmup-cap N
//                         --out FILE] [--stable]
//   streamed sector:      cuzk-bench prove --sector NAME [--memory-budget GiB] [--gpus N] [--synth-threads N]
//                         [--plan] (prover/engine/sector_stream.hpp; docs/engine.md "Sector streaming")
//   circom inputs:        cuzk-bench prove --zkey circuit.zkey --wtns witness.wtns [--r1cs F]
//                         --proof proof.json --public public.json [--vk verification_key.json]
//
// With no flags it proves a small sector (2 partitions) in seconds, so a newcomer sees it work.
// Parameters for the PoRep-shaped circuit are generated once from a seed and cached under
// results/local/params/ (memory-mapped on later runs); proof/srs_load is the load time in the
// first repetition and 0 once the parameters are resident. --stable (harness/measure/stable.hpp) places
// the threads and loads CUDA modules eagerly before the backend probe touches the GPU.
#include <fmt/core.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "harness/cli/commands.hpp"
#include "harness/cli/gpu_activity_flag.hpp"
#include "harness/cli/gpu_counter_pass.hpp"
#include "harness/cli/porep_flags.hpp"
#include "harness/cli/prove_circom.hpp"
#include "harness/cli/rep_progress.hpp"
#include "harness/cli/sim_exec.hpp"
#include "harness/suite/porep_job.hpp"
#include "harness/suite/sector_job.hpp"
#include "harness/measure/session.hpp"
#include "harness/measure/stable.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/instr/phase.hpp"
#include "prover/synth/synth.hpp"
#include "prover/util/process_limits.hpp"

namespace cuzk::cli {
namespace {

// --sector's help: every named shape with its description (prover/engine/sector_stream.cpp).
std::string sector_names_help() {
  std::string h = "stream a named sector partition by partition under --memory-budget (docs/engine.md):";
  for (const auto& s : engine::sector_shapes()) h += "\n  " + s.name + ": " + s.description;
  return h;
}

struct ProveOptions {
  int64_t partitions = 2;
  PorepFlags porep;             // the defaults of srs generate and circuit --describe too
  std::string params;           // parameter file; "" -> cache under results/local/params
  uint64_t params_seed = 1;     // toxic-waste seed for generated parameters
  std::optional<uint64_t> seed; // r, s seed; absent -> cryptographic randomness
  uint64_t circuit_seed = 42;   // witness generation seed
  int reps = 1;
  WarmupPlan warmup_plan;       // --warmup N|auto, --warmup-cap; auto by default under --stable
  std::optional<StableMode> stable;  // applied (--stable)
  std::string out;
  bool force = false;
  std::optional<std::string> counters;
  std::optional<std::string> gpu_counters;  // --gpu-counters (else $CUZK_GPU_COUNTERS)
  std::string backend = "cpu";
  bool allow_cpu_fallback = false;
  CircomProveOptions circom;
  // Streamed sector (--sector): the shape, budget, device count and --plan.
  std::string sector;
  std::optional<std::string> memory_budget;
  std::optional<int64_t> gpus;
  std::optional<int64_t> synth_threads;
  std::optional<int64_t> partition_threads;
  bool plan = false;
  bool params_in_memory = false;  // --params-in-memory
  bool gpu_activity = false;  // --gpu-activity: GPU time without gaps (docs/counters.md)
};

std::vector<std::string> prove_default_counters() { return with_os_defaults({"perf::PAGE-FAULTS", "perf::TASK-CLOCK"}); }

// The backend to prove on (the CPU where --allow-cpu-fallback allows it), then what it can
// measure: --gpu-activity needs one with GPU work.
void resolve_prove_backend(ProveOptions& o) {
  o.backend = resolve_backend(o.backend, o.allow_cpu_fallback);
  check_gpu_activity(o.gpu_activity, o.backend);
}

// The results file and recorder of a prove run; bad counters or an unwritable path fail here.
std::unique_ptr<Session> open_session(const ProveOptions& o) {
  SessionOptions so;
  if (o.stable) so.header_extra = {{"stable", describe(*o.stable)}};
  so.suite = "prove";
  so.out = o.out;
  so.overwrite = o.force;
  so.counters = o.counters;
  so.default_counters = prove_default_counters();
  // CUPTI's Activity API is set up before the results file is opened or any work runs.
  if (o.gpu_activity) so.gpu_activity = make_gpu_activity_collector();
  try {
    return std::make_unique<Session>(so);
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
}

// circom inputs: one recorded sample around the whole job (its phases: proof/srs_load,
// proof/synth (a, b, c from the witness), proof/prove/...).
int run_prove_circom_recorded(const ProveOptions& o) {
  // Every path before the results file is opened: a rejected command leaves nothing behind.
  check_circom_paths(o.circom, {{"--out", o.out}});
  std::unique_ptr<Session> session = open_session(o);
  int rc = kExitInternal;
  nlohmann::json params = {{"zkey", o.circom.zkey}, {"wtns", o.circom.wtns}, {"backend", o.backend}};
  session->measure({.suite = "prove", .case_name = "circom", .parameters = params, .repetition = 0},
                   [&] { rc = run_prove_circom(o.circom); });
  session->finish();
  fmt::print("results: {}\n", session->path());
  return rc;
}

int run_prove_porep(const ProveOptions& o) {
  const uint32_t parts = checked_u32("--partitions", o.partitions, 1);
  const circuits::PorepParams P = porep_params(o.porep);
  check_sector_memory(P, parts, "prove");
  const auto shape = circuits::porep_shape_by_parts(P);

  if (!o.params.empty() && !std::filesystem::exists(o.params))
    throw Error(fmt::format("--params {}: no such file (omit --params to generate and cache parameters)", o.params));
  if (!o.params.empty()) {
    check_input_file(o.params, "--params");
    check_distinct({{"--params", o.params}}, {{"--out", o.out}});
  }
  // GPU counters are checked on this GPU before any file is written or any work runs.
  std::shared_ptr<GpuCounterPass> gpu_pass;
  try {
    gpu_pass = gpu_counter_pass_for(o.gpu_counters, o.backend);
  } catch (const CounterError& e) {
    throw Error(e.what());
  }
  std::unique_ptr<Session> session = open_session(o);
  PorepJob job;
  job.circuit = P;
  job.partitions = parts;
  job.circuit_seed = o.circuit_seed;
  job.params_seed = o.params_seed;
  job.rs_seed = o.seed;
  job.params_file = o.params;
  job.warmup_plan = o.warmup_plan;
  job.reps = o.reps;
  job.backend = o.backend;  // resolved before the session opened (resolve_backend)
  job.gpu_counters = gpu_counters_hook(gpu_pass, "prove");
  job.on_rep = rep_progress("prove", o.warmup_plan, o.reps);
  PorepJobResult result;
  try {
    result = run_porep_job(*session, job);
  } catch (const groth16::ParamsError& e) {
    throw Error(e.what());
  }
  // The warm-up count of auto is known only now: the summary line records it.
  const bool until_settled = o.warmup_plan.until_settled();
  nlohmann::json summary =
      session->finish(until_settled ? nlohmann::json{{"warmup", describe(result.warmup_outcome, o.warmup_plan)}}
                                    : nlohmann::json::object());
  const std::string settled = !until_settled                     ? ""
                              : result.warmup_outcome.converged ? " (auto: settled)"
                                                                : " (auto: cap reached, not settled)";
  fmt::print("proved {} x {} partition(s) of {} ({} constraints each), {} warm-up{}; {}\n", o.reps, parts, P.to_string(),
             shape.constraints, result.warmup_outcome.done, settled,
             result.all_verified ? "every proof verified" : "SOME PROOFS FAILED TO VERIFY");
  print_summary_table(summary, session->counter_status());
  fmt::print("results: {}\n", session->path());
  return result.all_verified ? kExitOk : kExitFailure;
}

// The streamed sector's spec from the options; bad values are one clear line (exit 2).
SectorJobSpec sector_spec(const ProveOptions& o) {
  SectorJobSpec spec;
  spec.shape = o.sector;
  try {
    if (o.memory_budget) spec.budget_bytes = parse_budget_gib(*o.memory_budget);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  if (o.gpus) {
    if (*o.gpus < 1) throw Error(fmt::format("--gpus must be at least 1 (got {})", *o.gpus));
    spec.gpus = uint32_t(std::min<int64_t>(*o.gpus, INT32_MAX));
  }
  if (o.synth_threads) {
    if (*o.synth_threads < 1) throw Error(fmt::format("--synth-threads must be at least 1 (got {})", *o.synth_threads));
    spec.synth_threads = uint32_t(std::min<int64_t>(*o.synth_threads, 4096));
  }
  if (o.partition_threads) {
    if (*o.partition_threads < 1)
      throw Error(fmt::format("--partition-threads must be at least 1 (got {})", *o.partition_threads));
    spec.partition_threads = uint32_t(std::min<int64_t>(*o.partition_threads, 4096));
  }
  spec.backend = o.backend;
  spec.circuit_seed = o.circuit_seed;
  spec.params_seed = o.params_seed;
  spec.rs_seed = o.seed;
  spec.params_file = o.params;
  spec.params_in_memory = o.params_in_memory;
  spec.case_name = "sector-" + o.sector;
  spec.warmups = o.warmup_plan.count;
  spec.reps = o.reps;
  return spec;
}

engine::SectorPlan checked_sector_plan(const SectorJobSpec& spec) {
  try {
    return sector_job_plan(spec);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
}

// `prove --sector NAME`: one sector streamed partition by partition under the memory budget.
int run_prove_sector(const ProveOptions& o) {
  SectorJobSpec spec = sector_spec(o);
  const engine::SectorPlan plan = checked_sector_plan(spec);
  if (!o.params.empty()) {
    if (!std::filesystem::exists(o.params))
      throw Error(fmt::format("--params {}: no such file (omit --params to generate and cache parameters)", o.params));
    check_input_file(o.params, "--params");
    check_distinct({{"--params", o.params}}, {{"--out", o.out}});
  }
  try {
    check_sector_job(plan, sector_params_missing(plan, spec), "prove --sector " + o.sector);
  } catch (const std::exception& e) {  // the budget below one partition, or beyond this machine
    throw Error(e.what());
  }
  fmt::print(stderr,
             "sector {}: {} partition(s) of {} constraints, at most {} resident ({} each, budget {}), {} synthesized at "
             "once ({} thread(s) each), {} device(s)\n",
             o.sector, plan.partitions, plan.shape.constraints, plan.max_resident,
             limits::format_bytes(plan.partition_bytes),
             plan.budget_bytes == 0 ? std::string("unlimited") : limits::format_bytes(plan.budget_bytes),
             plan.synth_threads, plan.partition_threads, plan.devices);
  std::unique_ptr<Session> session = open_session(o);
  spec.on_rep = rep_progress("prove", o.warmup_plan, o.reps);
  SectorJobResult result;
  try {
    result = run_sector_job(*session, spec, plan);
  } catch (const groth16::ParamsError& e) {
    throw Error(e.what());
  }
  nlohmann::json summary = session->finish();
  const double gib = double(uint64_t(1) << 30);
  const auto& gpu_used = result.last.peak_device_used_bytes();
  fmt::print("proved {} x sector {} ({} partition(s) of {} constraints), peak {} resident, peak rss {:.1f} GiB{}; {}\n",
             o.reps, o.sector, plan.partitions, plan.shape.constraints, result.last.peak_resident,
             double(result.last.peak_rss_bytes) / gib,
             gpu_used ? fmt::format(", GPU memory in use {:.1f} GiB at most", double(*gpu_used) / gib) : "",
             result.all_verified ? "every proof verified" : "SOME PROOFS FAILED TO VERIFY");
  print_summary_table(summary, session->counter_status());
  fmt::print("results: {}\n", session->path());
  return result.all_verified ? kExitOk : kExitFailure;
}

Registrar reg_prove("prove", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("prove", "prove a PoRep-shaped sector (default) or circom inputs, recording every phase");
  auto o = std::make_shared<ProveOptions>();
  auto counters = std::make_shared<std::string>();
  auto seed = std::make_shared<uint64_t>(0);
  auto warmup_text = std::make_shared<std::string>("0");
  auto warmup_cap = std::make_shared<int>(kDefaultWarmupCap);
  auto stable = std::make_shared<bool>(false);
  auto* parts_opt = sub->add_option("--partitions", o->partitions, "partition circuits per sector (one proof each)")
                        ->capture_default_str();
  auto porep_given = add_porep_flags(sub, o->porep);
  auto* sector_opt = sub->add_option(
      "--sector", o->sector,
      sector_names_help());
  auto budget_text = std::make_shared<std::string>();
  auto* budget_opt = sub->add_option("--memory-budget", *budget_text,
                                     "with --sector: GiB for synthesized partitions (default: 3/4 of what this process "
                                     "may use once the parameters are taken off)");
  auto gpus = std::make_shared<int64_t>(0);
  auto* gpus_opt =
      sub->add_option("--gpus", *gpus, "with --sector: devices to prove on (default: all of the backend's)");
  auto synth_threads = std::make_shared<int64_t>(0);
  auto* synth_opt = sub->add_option(
      "--synth-threads", *synth_threads,
      "with --sector: partitions synthesized at once (default: 2, or with --partition-threads T the cores divided by "
      "T; at most the resident limit)");
  auto partition_threads = std::make_shared<int64_t>(0);
  auto* partition_threads_opt = sub->add_option(
      "--partition-threads", *partition_threads,
      "with --sector: threads synthesizing one partition, its challenges in parallel (default: the cores shared among "
      "the partitions synthesized at once; 1: serial synthesis)");
  sub->add_flag("--plan", o->plan,
                "with --sector: print the plan (constraints, bytes, resident partitions, devices) and exit");
  sub->add_flag("--params-in-memory", o->params_in_memory,
                "with --sector: generate the parameters in memory for this run (not cached) and hold them on the "
                "devices, the host keeping only what proving reads there (what a key too large for the disk gets)");
  sub->add_option("--params", o->params, "parameter file (default: generated once and cached in results/local/params)");
  sub->add_option("--params-seed", o->params_seed, "toxic-waste seed of generated parameters (srs generate's too)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  auto* seed_opt = sub->add_option("--seed", *seed, "seed for r and s (reproducible proofs; default: getrandom)")
                       ->check(CLI::NonNegativeNumber);
  sub->add_option("--reps", o->reps, "measured repetitions")->capture_default_str();
  auto* wopt = sub->add_option("--warmup", *warmup_text,
                               "warm-up repetitions (recorded with warmup=true), or 'auto': until the proof time settles "
                               "(the default under --stable)")
                   ->capture_default_str();
  auto* capopt = sub->add_option("--warmup-cap", *warmup_cap, "the most warm-ups of --warmup auto")->capture_default_str();
  sub->add_flag("--stable", *stable,
                "stable measurement: GPU-driving thread on its own core, pool on the others, eager CUDA module "
                "loading, --warmup auto (docs/ab.md)");
  sub->add_option("--out", o->out, "results file (default results/local/prove-<UTC time>-<pid>.jsonl)");
  sub->add_flag("--force", o->force, "replace existing output files: --out, and in circom mode --proof, --public, --vk");
  auto* copt = sub->add_option("--counters", *counters, "comma-separated counters: PAPI events, os:: counters, or 'sim' (sim:: counters: the command runs again under Valgrind's callgrind) (default $CUZK_COUNTERS, else perf::PAGE-FAULTS, perf::TASK-CLOCK and the default os:: counters; docs/counters.md)");
  auto cache_sim = std::make_shared<bool>(false);
  sub->add_flag("--cache-sim", *cache_sim,
                "with --counters sim: simulate caches and branches too (sim::l1_misses, sim::ll_misses, "
                "sim::branch_mispredicts; slower)");
  auto gpu_counters = std::make_shared<std::string>();
  auto* gopt = sub->add_option("--gpu-counters", *gpu_counters,
                               "GPU metrics per GPU phase from an untimed counters pass after the repetitions (Nsight "
                               "Compute names, comma-separated, or 'default'; default $CUZK_GPU_COUNTERS; docs/counters.md)");
  sub->add_option("--backend", o->backend, "cpu or cuda")->capture_default_str();
  sub->add_flag("--gpu-activity", o->gpu_activity,
                "GPU phases' kernel, copy and idle time from CUPTI's Activity API, beside their CUDA-event time "
                "(--backend cuda; docs/counters.md)");
  sub->add_flag("--allow-cpu-fallback", o->allow_cpu_fallback, "use the cpu backend when --backend cannot run here (no GPU)");
  // circom inputs
  auto* zkey = sub->add_option("--zkey", o->circom.zkey, "snarkjs .zkey (circom mode)");
  sub->add_option("--wtns", o->circom.wtns, "circom witness .wtns (circom mode)");
  sub->add_option("--r1cs", o->circom.r1cs, "circom .r1cs (optional in circom mode: checks the witness first)");
  sub->add_option("--proof", o->circom.proof_out, "proof.json to write (circom mode)");
  sub->add_option("--public", o->circom.public_out, "public.json to write (circom mode)");
  sub->add_option("--vk", o->circom.vk_out, "also write verification_key.json (circom mode)");
  return [=] {
    ProveOptions opt = *o;
    if (budget_opt->count() > 0) opt.memory_budget = *budget_text;
    if (gpus_opt->count() > 0) opt.gpus = *gpus;
    if (synth_opt->count() > 0) opt.synth_threads = *synth_threads;
    if (partition_threads_opt->count() > 0) opt.partition_threads = *partition_threads;
    if (sector_opt->count() == 0 && (opt.memory_budget || opt.gpus || opt.synth_threads || opt.partition_threads ||
                                     opt.plan || opt.params_in_memory))
      throw Error(
          "--memory-budget, --gpus, --synth-threads, --partition-threads, --plan and --params-in-memory need --sector");
    if (opt.params_in_memory && !opt.params.empty())
      throw Error("--params-in-memory generates the parameters: drop --params, or drop --params-in-memory to use the file");
    // Every mode: a bad count is refused before anything runs or is written.
    if (opt.reps < 1) throw Error(fmt::format("--reps must be at least 1 (got {})", opt.reps));
    if (copt->count() > 0) opt.counters = *counters;
    if (gopt->count() > 0) opt.gpu_counters = *gpu_counters;
    // `sim` expands here; a sim run re-executes under callgrind once the request is checked.
    const SimRequest sim_req = resolve_sim_counters(opt.counters, prove_default_counters(), *cache_sim);
    if (sim::any_sim(sim_req.counters)) {
      opt.counters = join_counters(sim_req.counters);
      check_sim_compatible(*stable, opt.backend, opt.gpu_counters.has_value());
    }
    std::optional<WarmupPlan> plan;
    try {
      plan = resolve_warmup(wopt->count() > 0 ? std::optional<std::string>(*warmup_text) : std::nullopt,
                            capopt->count() > 0 ? std::optional<int>(*warmup_cap) : std::nullopt, *stable);
    } catch (const std::invalid_argument& e) {
      throw Error(e.what());
    }
    opt.warmup_plan = plan.value_or(WarmupPlan{});
    if (seed_opt->count() > 0) {
      opt.seed = *seed;
      opt.circom.seed = *seed;
    }
    if (zkey->count() > 0) {
      if (opt.circom.wtns.empty() || opt.circom.proof_out.empty() || opt.circom.public_out.empty())
        throw Error("circom mode needs --zkey, --wtns, --proof and --public");
      if (*stable || opt.warmup_plan.until_settled())
        throw Error("--stable and --warmup auto apply to the PoRep-shaped sector; circom mode proves once (drop them)");
      if (opt.gpu_counters) throw Error("--gpu-counters applies to the PoRep-shaped sector, not circom mode");
      if (opt.reps != 1 || opt.warmup_plan.count > 0)
        throw Error("--reps and --warmup apply to the PoRep-shaped sector; circom mode proves once (drop them)");
      opt.circom.force = opt.force;
      check_circom_paths(opt.circom, {{"--out", opt.out}});
      if (auto rc = run_under_callgrind_if_needed(sim_req)) return *rc;
      resolve_prove_backend(opt);
      opt.circom.backend = opt.backend;
      return run_prove_circom_recorded(opt);
    }
    if (!opt.circom.wtns.empty() || !opt.circom.r1cs.empty() || !opt.circom.proof_out.empty() ||
        !opt.circom.public_out.empty() || !opt.circom.vk_out.empty())
      throw Error("--wtns/--r1cs/--proof/--public need --zkey (circom mode)");
    if (sector_opt->count() > 0) {
      if (parts_opt->count() > 0 || porep_given() > 0)
        throw Error("--sector names the whole shape: drop --partitions, --challenges, --layers, --parents and --depth");
      if (*stable || opt.warmup_plan.until_settled() || opt.gpu_counters || sim::any_sim(sim_req.counters))
        throw Error("--sector runs without --stable, --warmup auto, --gpu-counters and sim counters");
      if (opt.plan) {
        fmt::print("{}", checked_sector_plan(sector_spec(opt)).describe());
        return kExitOk;
      }
      resolve_prove_backend(opt);
      return run_prove_sector(opt);
    }
    if (auto rc = run_under_callgrind_if_needed(sim_req)) return *rc;
    if (*stable) {  // before the backend probe initializes CUDA, and before the pool exists
      try {
        opt.stable = apply_stable_mode();
      } catch (const std::exception& e) {
        throw Error(e.what());
      }
      fmt::print(stderr, "{}\n", summary(*opt.stable));
    }
    resolve_prove_backend(opt);
    return run_prove_porep(opt);
  };
});

}  // namespace
}  // namespace cuzk::cli
