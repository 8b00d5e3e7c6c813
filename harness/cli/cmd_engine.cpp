// `cuzk-bench engine`: the pipelined proving engine (docs/engine.md) on N PoRep-shaped sectors.
//
//   cuzk-bench engine [--params FILE | --partitions N --challenges N --layers N --parents N --depth N]
//                     [--jobs N] [--batch N] [--overlap on|off] [--lookahead N] [--budget-mib N]
//                     [--backend cpu|cuda [--allow-cpu-fallback]] [--ready-file FILE] [--reps N --warmup N] [--out FILE]
//
// It preloads the parameters, then signals readiness: the line "cuzk-engine: ready params=<path>"
// on stdout, flushed at once, and (with --ready-file) the file, created atomically. Then it runs
// the jobs, prints each job's record and the throughput, and writes a results file (one sample
// per job, like a "pipeline" suite case). A failed job is reported (stderr, the summary's
// "failed_jobs") and the others go on; exit 1 then. SIGINT/SIGTERM: docs/reliability.md.
#include <fmt/core.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>

#include "harness/cli/commands.hpp"
#include "harness/cli/porep_flags.hpp"
#include "harness/suite/pipeline_job.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/session.hpp"
#include "prover/engine/engine.hpp"
#include "prover/groth16/params_file.hpp"

namespace cuzk::cli {
namespace {

struct EngineOptions {
  int64_t partitions = 2;
  PorepFlags porep;  // the circuit of `prove` and `srs generate` by default
  std::string params;
  uint64_t params_seed = 1, circuit_seed = 42, seed = 1;
  int64_t jobs = 4, batch = 1, lookahead = 1, budget_mib = 0;
  std::string overlap = "on";
  std::string backend = "cpu";
  bool allow_cpu_fallback = false;
  std::string ready_file;
  int reps = 1, warmup_runs = 0;
  std::string out;
  bool force = false;
  std::optional<std::string> counters;
};

double ms(uint64_t ns) { return ns / 1e6; }

int run_engine(const EngineOptions& o) {
  // Everything about the request is checked before anything runs.
  PipelineJob job;
  job.partitions = checked_u32("--partitions", o.partitions, 1);
  job.circuit = porep_params(o.porep);
  job.jobs = checked_u32("--jobs", o.jobs, 1);
  job.config.max_batch_size = checked_u32("--batch", o.batch, 1);
  if (job.config.max_batch_size > engine::Config::kMaxBatch)
    throw Error(fmt::format("--batch {} is out of range [1, {}]", o.batch, engine::Config::kMaxBatch));
  job.config.lookahead = checked_u32("--lookahead", o.lookahead, 1);
  if (o.overlap != "on" && o.overlap != "off") throw Error(fmt::format("--overlap {}: expected on or off", o.overlap));
  job.config.overlap = o.overlap == "on";
  if (o.budget_mib < 0) throw Error(fmt::format("--budget-mib {} is out of range (at least 0; 0: unlimited)", o.budget_mib));
  job.config.memory_budget = uint64_t(o.budget_mib) << 20;
  if (o.reps < 1) throw Error(fmt::format("--reps must be at least 1 (got {})", o.reps));
  if (o.warmup_runs < 0) throw Error(fmt::format("--warmup must be 0 or more (got {})", o.warmup_runs));
  check_sector_memory(job.circuit, job.partitions, "engine");
  const uint64_t need = engine::estimate_job_bytes(job.circuit, job.partitions);
  if (job.config.memory_budget != 0 && need > job.config.memory_budget)
    throw Error(fmt::format("--budget-mib {}: one job ({} partition(s) of {}) needs about {:.1f} MiB, more than the budget",
                            o.budget_mib, job.partitions, job.circuit.to_string(), need / 1048576.0));
  if (!o.params.empty() && !std::filesystem::exists(o.params))
    throw Error(fmt::format("--params {}: no such file (omit --params to generate and cache parameters)", o.params));
  if (!o.ready_file.empty()) {
    const auto dir = std::filesystem::path(o.ready_file).parent_path();
    if (!dir.empty() && !std::filesystem::is_directory(dir))
      throw Error(fmt::format("--ready-file {}: the folder {} does not exist", o.ready_file, dir.string()));
  }
  job.params_file = o.params;
  job.params_seed = o.params_seed;
  job.circuit_seed = o.circuit_seed;
  job.rs_seed = o.seed;
  job.backend = resolve_backend(o.backend, o.allow_cpu_fallback);
  job.suite = "engine";
  job.case_name = "engine";
  job.warmup_runs = o.warmup_runs;
  job.reps = o.reps;

  // SIGINT/SIGTERM: the run in flight ends (or, after interrupt::kStopSeconds, is discarded),
  // the summary says so, exit 130/143 (docs/reliability.md).
  interrupt::install();
  // Read by the watchdog's last words, so declared before the session (whose destructor clears
  // them): whether a run of --jobs jobs is between its submission and its samples, and the
  // failed jobs so far.
  std::atomic<bool> in_run{false};
  std::mutex failed_mu;
  nlohmann::json failed = nlohmann::json::array();
  auto failed_jobs = [&] {
    std::lock_guard lk(failed_mu);
    return failed.empty() ? nlohmann::json::object() : nlohmann::json{{"failed_jobs", failed}};
  };
  SessionOptions so;
  so.suite = "engine";
  so.out = o.out;
  so.overwrite = o.force;
  so.counters = o.counters;
  so.default_counters = {};
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(so);
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
  // The engine's jobs are no Session::measure samples: what is in flight is a run of jobs.
  interrupt::set_last_words(
      [&](int sig) { session->finish_interrupted(sig, in_run ? "discarded" : "none", failed_jobs()); });

  job.on_rep = [&](int rep, bool) { in_run = rep < job.warmup_runs + job.reps; };
  job.on_ready = [&](const std::string& params) {
    // Readiness is a signal, never a guess: the line goes out unbuffered, then the file.
    const std::string line = engine::ready_line(params);
    fmt::print("{}\n", line);
    std::fflush(stdout);
    if (!o.ready_file.empty()) engine::write_ready_file(o.ready_file, line + "\n");
  };
  job.on_run = [&](int rep, bool warm, const std::vector<engine::JobRecord>& records, uint64_t wall_ns) {
    in_run = false;  // its samples are written
    fmt::print("{} {}: {} job(s), batch <= {}, overlap {}, lookahead {}\n", warm ? "warm-up" : "run",
               warm ? rep : rep - o.warmup_runs, records.size(), job.config.max_batch_size, o.overlap,
               job.config.lookahead);
    fmt::print("  {:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6}\n", "job", "queue ms", "srs ms", "synth ms",
               "prove ms", "total ms", "batch");
    for (const auto& r : records)
      fmt::print("  {:<12} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>6}\n", r.id, ms(r.queue_ns()),
                 ms(r.srs_load_ns()), ms(r.synth_ns()), ms(r.prove_ns()), ms(r.total_ns()), r.batch_size);
    fmt::print("  throughput: {} sector proof(s) in {:.3f} s = {:.2f} proofs/min\n", records.size(), wall_ns / 1e9,
               engine::proofs_per_minute(records.size(), wall_ns));
    std::fflush(stdout);
  };
  // A failed job (backend error, device out of memory) is reported and the engine goes on.
  job.on_job_failed = [&](int rep, bool warm, const std::string& id, const std::string& reason) {
    std::lock_guard lk(failed_mu);
    failed.push_back({{"run", warm ? rep : rep - o.warmup_runs}, {"warmup", warm}, {"job", id}, {"reason", reason}});
  };
  bool all_ok = false;
  auto stopped = [&](int sig) {
    session->finish_interrupted(sig, "completed", failed_jobs());
    return Error(fmt::format("interrupted by {}: stopped after the run in flight; results: {}", interrupt::signal_name(sig),
                             session->path()),
                 interrupt::exit_code(sig));
  };
  try {
    all_ok = run_pipeline_job(*session, job);
  } catch (const interrupt::Interrupted& e) {
    throw stopped(e.sig);
  } catch (const groth16::ParamsError& e) {
    throw Error(e.what());
  } catch (const std::exception& e) {
    throw Error(e.what(), kExitFailure);
  }
  // A signal during the last run: that run completed and was written, and the summary says so.
  if (const int sig = interrupt::signal_received()) throw stopped(sig);
  session->finish(failed_jobs());
  if (!failed.empty())
    fmt::print("{} JOB(S) FAILED (the engine kept serving the others; see stderr)\n", failed.size());
  fmt::print("{}\n", all_ok ? "every proof verified" : failed.empty() ? "SOME PROOFS FAILED TO VERIFY" : "not every job proved");
  fmt::print("results: {}\n", session->path());
  return all_ok ? kExitOk : kExitFailure;
}

Registrar reg_engine("engine", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand(
      "engine", "run N sector proofs through the pipelined engine: preload, ready signal, per-job records, throughput");
  auto o = std::make_shared<EngineOptions>();
  auto counters = std::make_shared<std::string>();
  sub->add_option("--params", o->params, "parameter file (default: generated once and cached in results/local/params)");
  sub->add_option("--partitions", o->partitions, "partition circuits per sector")->capture_default_str();
  add_porep_flags(sub, o->porep);
  sub->add_option("--params-seed", o->params_seed, "toxic-waste seed of generated parameters")->capture_default_str();
  sub->add_option("--circuit-seed", o->circuit_seed, "witness seed (job j, partition i: + j * partitions + i)")
      ->capture_default_str();
  sub->add_option("--seed", o->seed, "r/s seed (job j, partition i: + j * partitions + i)")->capture_default_str();
  sub->add_option("--jobs", o->jobs, "sector proofs per run")->capture_default_str();
  sub->add_option("--batch", o->batch, "max sectors per proving call (1..8)")->capture_default_str();
  sub->add_option("--overlap", o->overlap, "on: synthesis of job N+1 overlaps proving of job N; off: one after another")
      ->capture_default_str();
  sub->add_option("--lookahead", o->lookahead, "batches synthesized ahead of the prover")->capture_default_str();
  sub->add_option("--budget-mib", o->budget_mib, "memory budget for synthesized jobs in MiB (0: unlimited)")
      ->capture_default_str();
  sub->add_option("--backend", o->backend, "cpu or cuda")->capture_default_str();
  sub->add_flag("--allow-cpu-fallback", o->allow_cpu_fallback, "use the cpu backend when --backend cannot run here");
  sub->add_option("--ready-file", o->ready_file, "create this file (atomically) once the parameters are resident");
  sub->add_option("--reps", o->reps, "measured runs of --jobs jobs")->capture_default_str();
  sub->add_option("--warmup", o->warmup_runs, "warm-up runs (recorded with warmup=true)")->capture_default_str();
  sub->add_option("--out", o->out, "results file (default results/local/engine-<UTC time>-<pid>.jsonl)");
  sub->add_flag("--force", o->force, "overwrite --out if it exists");
  auto* copt = sub->add_option("--counters", *counters, "comma-separated PAPI events (per-job samples record them as null)");
  return [=] {
    EngineOptions opt = *o;
    if (copt->count() > 0) opt.counters = *counters;
    return run_engine(opt);
  };
});

}  // namespace
}  // namespace cuzk::cli
