#include "harness/suite/pipeline_job.hpp"

#include <fmt/core.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

#include "harness/measure/clock.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/nvtx.hpp"
#include "harness/suite/porep_job.hpp"
#include "prover/engine/fault.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/instr/phase.hpp"
#include "prover/synth/synth.hpp"

namespace cuzk {
namespace {

// Why per-job samples carry no counters: counters read process-wide windows, and the jobs of a
// pipeline overlap in time, so no window is one job's.
constexpr const char* kNoCounters = "not counted per job in a pipeline (jobs overlap in time)";

// The phase sink installed while a run's jobs are in the engine: every scope's span, and GPU
// times with their arrival time, so they can be attributed to jobs afterwards by stage window
// (each stage runs one job or batch at a time, so its windows never overlap). Each scope is
// also an NVTX range, as under the Recorder, so Nsight Systems traces of a pipeline show them.
class SpanCollector final : public instr::PhaseSink {
 public:
  struct Gpu {
    std::string path;
    uint64_t ns, at;
  };
  struct Done {
    std::string path;
    uint64_t start, dur, tid;
  };
  void* begin(const std::string& path) override {
    fault::hang_point(path);  // test-only $CUZK_INJECT_FAULT hang_in (prover/engine/fault.hpp)
    nvtx::push(path.c_str());
    return new Open{path, now_ns(), uint64_t(::syscall(SYS_gettid))};
  }
  void end(void* token) override {
    std::unique_ptr<Open> o(static_cast<Open*>(token));
    const uint64_t t = now_ns();
    nvtx::pop();  // a scope closes on the thread that opened it
    std::lock_guard lk(mu_);
    spans_.push_back({o->path, o->start, t - o->start, o->tid});
  }
  void gpu_time(const std::string& path, uint64_t ns) override {
    std::lock_guard lk(mu_);
    gpu_.push_back({path, ns, now_ns()});
  }
  const std::vector<Done>& spans() const { return spans_; }
  const std::vector<Gpu>& gpu() const { return gpu_; }

 private:
  struct Open {
    std::string path;
    uint64_t start, tid;
  };
  std::mutex mu_;
  std::vector<Done> spans_;
  std::vector<Gpu> gpu_;
};

// Installs a sink for the lifetime of the object, then puts the previous one back (the
// engine's stages are idle on both ends, so no scope is open across the switch).
struct SinkGuard {
  explicit SinkGuard(instr::PhaseSink* s) : prev(instr::sink()) { instr::set_sink(s); }
  ~SinkGuard() { instr::set_sink(prev); }
  instr::PhaseSink* prev;
};

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// One job's sample: the engine's record for the stage phases, the collected spans inside the
// job's stage windows for their sub-phases.
Sample job_sample(const engine::JobRecord& r, const SpanCollector& c, uint64_t run_wall_ns,
                  const std::vector<CounterStatus>& counters) {
  Sample s;
  auto phase = [&](const std::string& path) -> PhaseRecord& {
    PhaseRecord& p = s.phases[path];
    for (const auto& cs : counters) {
      p.counters[cs.name] = std::nullopt;
      p.counter_errors[cs.name] = kNoCounters;
    }
    return p;
  };
  auto set = [&](const std::string& path, uint64_t ns) {
    PhaseRecord& p = phase(path);
    p.wall_ns = ns;
    p.count = 1;
  };
  set("proof", r.total_ns());
  set("proof/queue", r.queue_ns());
  set("proof/srs_load", r.srs_load_ns());
  set("proof/synth", r.synth_ns());
  set("proof/prove", r.prove_ns());
  set("pipeline", run_wall_ns);

  auto inside = [](uint64_t b, uint64_t e, uint64_t t0, uint64_t t1) { return b >= t0 && e <= t1; };
  auto span = [&](const std::string& path, uint64_t start, uint64_t dur, uint64_t tid) {
    s.spans.push_back({path, int64_t(start) - int64_t(r.submitted_at), dur, tid});
  };
  for (const auto& d : c.spans()) {
    const uint64_t e = d.start + d.dur;
    const bool synth_side = (d.path == "proof/srs_load" || starts_with(d.path, "proof/synth")) &&
                            inside(d.start, e, r.srs_begin, r.synth_end);
    const bool prove_side = starts_with(d.path, "proof/prove") && inside(d.start, e, r.prove_begin, r.prove_end);
    if (!synth_side && !prove_side) continue;
    span(d.path, d.start, d.dur, d.tid);
    if (d.path == "proof/srs_load" || d.path == "proof/synth" || d.path == "proof/prove") continue;  // from the record
    PhaseRecord& p = s.phases.count(d.path) ? s.phases[d.path] : phase(d.path);
    p.wall_ns += d.dur;
    p.count += 1;
  }
  for (const auto& g : c.gpu())
    // A backend reports GPU time once the device work completed, inside its prove call.
    if (starts_with(g.path, "proof/prove") && g.at >= r.prove_begin && g.at <= r.prove_end) {
      PhaseRecord& p = s.phases.count(g.path) ? s.phases[g.path] : phase(g.path);
      p.gpu_ns = p.gpu_ns.value_or(0) + g.ns;
    }
  span("proof", r.submitted_at, r.total_ns(), 0);
  s.wall_ns = r.total_ns();
  return s;
}

// The parameters file of the job: the given one, or generated once per shape and cached.
// (The same steps as run_porep_job's; a shared helper belongs in porep_job.cpp.)
}  // namespace

nlohmann::json pipeline_job_parameters(const PipelineJob& job) {
  const auto& P = job.circuit;
  return {{"jobs", job.jobs},
          {"batch", job.config.max_batch_size},
          {"overlap", job.config.overlap ? 1 : 0},
          {"lookahead", job.config.lookahead},
          {"budget_mib", job.config.memory_budget / (1024 * 1024)},
          {"partitions", job.partitions},
          {"challenges", P.challenges},
          {"layers", P.layers},
          {"parents", P.parents},
          {"depth", P.depth},
          {"constraints", circuits::PorepCircuit::shape(P).constraints},
          {"job_estimate_bytes", engine::estimate_job_bytes(P, job.partitions)},
          {"backend", job.backend},
          {"rs_seed", job.rs_seed},
          {"circuit_seed", job.circuit_seed},
          {"params_seed", job.params_seed}};
}

bool run_pipeline_job(Session& session, const PipelineJob& job) {
  const std::string params =
      ensure_porep_params(job.circuit, job.circuit_seed, job.params_seed, job.params_file, job.suite, job.case_name,
                          job.backend);
  // Witness generation (native hashing) is input preparation, outside every sample.
  std::vector<engine::Job> jobs;
  for (uint32_t j = 0; j < job.jobs; ++j)
    jobs.push_back(engine::make_porep_job(fmt::format("{}-{}", job.case_name, j), job.circuit, job.partitions,
                                          job.circuit_seed + uint64_t(j) * job.partitions,
                                          job.rs_seed + uint64_t(j) * job.partitions, params));

  engine::Engine eng(job.config, job.backend);
  // Readiness: the parameters are loaded before the first job, so every job's srs_load is 0.
  const uint64_t t_preload = now_ns();
  eng.preload(params);
  eng.wait_ready();
  const uint64_t preload_ns = now_ns() - t_preload;
  if (job.on_ready) job.on_ready(params);

  const nlohmann::json recorded = pipeline_job_parameters(job);
  bool all_verified = true;
  for (int rep = 0; rep < job.warmup_runs + job.reps; ++rep) {
    interrupt::check();  // SIGINT/SIGTERM: the previous repetition's samples are all written
    const bool warm = rep < job.warmup_runs;
    if (job.on_rep) job.on_rep(rep, warm);
    SpanCollector collector;
    std::vector<engine::JobResult> results;
    uint64_t t0 = 0, wall = 0;
    {
      SinkGuard guard(&collector);
      t0 = now_ns();
      std::vector<std::future<engine::JobResult>> futures = eng.submit_all(jobs);
      // Every future is waited for before anything is rethrown: no job outlives the sink.
      std::exception_ptr params_error;
      for (uint32_t j = 0; j < job.jobs; ++j) {
        try {
          results.push_back(futures[j].get());
        } catch (const groth16::ParamsError&) {
          if (!params_error) params_error = std::current_exception();
          results.emplace_back();
        } catch (const std::exception& e) {
          results.emplace_back();
          fmt::print(stderr, "cuzk-bench: error: {}: job {} ({} {}) failed: {}\n", job.case_name, jobs[j].id,
                     warm ? "warm-up" : "repetition", warm ? rep : rep - job.warmup_runs, e.what());
          if (job.on_job_failed) job.on_job_failed(rep, warm, jobs[j].id, e.what());
        }
      }
      wall = now_ns() - t0;
      if (params_error) std::rethrow_exception(params_error);
    }
    const int run = warm ? rep : rep - job.warmup_runs;
    size_t proved = 0;  // the throughput counts the proofs made, not the jobs asked for
    for (const auto& r : results) proved += r.pk != nullptr;
    const double ppm = engine::proofs_per_minute(proved, wall);
    std::vector<engine::JobRecord> records;
    for (uint32_t j = 0; j < job.jobs; ++j) {
      if (!results[j].pk) {  // failed: no sample (reported above)
        all_verified = false;
        continue;
      }
      const engine::JobRecord& r = results[j].record;
      records.push_back(r);
      nlohmann::json extra = {{"pipeline",
                               {{"run", run},
                                {"job", j},
                                {"jobs", job.jobs},
                                {"run_wall_ns", wall},
                                {"proofs_per_minute", ppm},
                                {"batch_size", r.batch_size},
                                {"preload_ns", preload_ns}}}};
      session.record({.suite = job.suite,
                      .case_name = job.case_name,
                      .parameters = recorded,
                      .repetition = run * int(job.jobs) + int(j),
                      .warm = warm},
                     job_sample(r, collector, wall, session.counter_status()), extra);
    }
    if (job.on_run) job.on_run(rep, warm, records, wall);
    // Verification checks the proofs; it is not part of the timed run.
    for (uint32_t j = 0; j < job.jobs; ++j)
      for (uint32_t i = 0; i < job.partitions && results[j].pk; ++i)
        if (!groth16::verify(results[j].pk->vk, results[j].proofs[i], (*jobs[j].partitions)[i].public_inputs())) {
          fmt::print(stderr, "cuzk-bench: error: {}: the proof of job {} partition {} (repetition {}) does not verify\n",
                     job.case_name, j, i, rep);
          all_verified = false;
        }
  }
  if (job.on_rep) job.on_rep(job.warmup_runs + job.reps, false);
  return all_verified;
}

}  // namespace cuzk
