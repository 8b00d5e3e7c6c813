// N PoRep-shaped sector proofs through the pipelined engine (prover/engine/), as the suites'
// "pipeline" kind and `cuzk-bench engine` run them (docs/engine.md):
//   parameters (a given file, or generated once and cached like `cuzk-bench prove`), witness
//   generation for every job (input preparation, outside the measurement), one Engine for all
//   repetitions with the parameters preloaded (readiness), then per repetition N jobs submitted
//   at once and, per job, one sample with the phases
//     proof, proof/queue, proof/srs_load, proof/synth (+ partition_<i>), proof/prove (+ ntt_h,
//     msm_*, assemble, ...: the batch's prove_batch call), pipeline (the whole run's wall time)
//   plus the top-level field "pipeline" (run, job, wall time, throughput, batch size), and a
//   verification of every proof after the run (not timed).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/measure/session.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/engine/engine.hpp"

namespace cuzk {

struct PipelineJob {
  circuits::PorepParams circuit;
  uint32_t partitions = 2;
  uint32_t jobs = 4;                // sectors per repetition
  engine::Config config;
  uint64_t circuit_seed = 42;       // job j, partition i: witnesses from circuit_seed + j * partitions + i
  uint64_t params_seed = 1;
  uint64_t rs_seed = 1;             // job j, partition i: r, s from rs_seed + j * partitions + i
  std::string params_file;          // "" -> results/local/params cache
  std::string backend = "cpu";
  std::string suite = "engine", case_name = "pipeline";
  int warmup_runs = 0, reps = 1;
  std::function<void(int rep, bool warm)> on_rep;           // before each repetition and once after
  std::function<void(const std::string& params)> on_ready;  // parameters resident (readiness)
  // After each repetition: the jobs' records (in submission order), the run's wall time.
  std::function<void(int rep, bool warm, const std::vector<engine::JobRecord>&, uint64_t wall_ns)> on_run;
  // A job that failed (its reason), after it failed; the engine goes on with the other jobs.
  std::function<void(int rep, bool warm, const std::string& job_id, const std::string& reason)> on_job_failed;
};

// The parameters recorded in every sample of the job.
nlohmann::json pipeline_job_parameters(const PipelineJob& job);

// Runs the repetitions into `session`. Returns false when a proof did not verify or a job failed
// (each reported on stderr, failures also through on_job_failed): a failed job (a backend error,
// a device out of memory) gets no sample, and the engine keeps serving the others and the next
// repetitions (docs/reliability.md). Throws groth16::ParamsError (bad parameters: an input
// error, not a fault) and what preloading failed with; interrupt::Interrupted between
// repetitions once SIGINT/SIGTERM arrived (harness/measure/interrupt.hpp).
bool run_pipeline_job(Session& session, const PipelineJob& job);

}  // namespace cuzk
