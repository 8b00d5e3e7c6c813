// The pipelined proving engine, shaped like the Filecoin C2 proving engine this project models
// (docs/engine.md):
//
//   submit(job) -> input queue -> [synthesis thread] -> ready queue -> [proving thread] -> future
//
// - A job is one sector: the P partition circuits of the PoRep-shaped circuit (witnesses
//   already generated: they are the job's input, as C2's vanilla proofs are), the parameters
//   file to prove with, and the r/s seed.
// - Parameters are loaded once (ParamsCache) and stay resident; preload() loads them ahead of
//   the first job and is_ready()/wait_ready() say when that is done, so callers wait on a
//   signal instead of sleeping.
// - With overlap on, synthesis of job N+1 runs while job N is proved; the ready queue holds at
//   most `lookahead` batches of synthesized jobs, so synthesis cannot run arbitrarily far ahead
//   of the prover. With overlap off, one thread runs the stages strictly one after another.
// - Up to max_batch_size synthesized sectors that use the same parameters go into one
//   Backend::prove_batch call.
// - Memory: each job's synthesized a/b/c and assignment is estimated from the circuit's shape;
//   a job that cannot fit the budget even alone is refused at submit, otherwise synthesis waits
//   while the budget is in use.
// Every failure (bad parameters, over budget, backend error, shutdown) reaches the caller as
// an exception through the job's future.
// A sector too large to hold whole (real size: 10 partitions of ~131M constraints) is proved
// partition by partition by SectorStream (sector_stream.hpp) instead.
#pragma once
#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/circuits/porep.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/keys.hpp"

namespace cuzk::engine {

// A job the engine refused or dropped (over the memory budget, engine shut down, bad job).
class EngineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Config {
  uint32_t max_batch_size = 1;  // sectors per prove_batch call, 1..kMaxBatch
  uint32_t lookahead = 1;       // batches synthesized ahead of the prover (>= 1; overlap only)
  bool overlap = true;          // false: synthesis and proving strictly one after another
  uint64_t memory_budget = 0;   // bytes for synthesized jobs; 0 = unlimited
  static constexpr uint32_t kMaxBatch = 8;
};

struct Job {
  std::string id;
  circuits::PorepParams circuit;
  // The partition circuits with their witnesses (shared: the caller keeps them to verify).
  std::shared_ptr<const std::vector<circuits::PorepCircuit>> partitions;
  std::optional<uint64_t> rs_seed;  // partition i uses Randomness::from_seed(rs_seed + i); absent: secure
  std::string params_path;          // the parameters file; jobs with the same path batch together
  // Set by the caller to withdraw the job: the engine checks it before synthesis and before
  // proving (a prove_batch call already running is not interrupted) and fails the job with
  // JobCancelled. Absent: the job cannot be cancelled.
  std::shared_ptr<const std::atomic<bool>> cancelled;
};

// A job withdrawn through Job::cancelled before it was proved.
class JobCancelled : public EngineError {
 public:
  using EngineError::EngineError;
};

// Generates the witnesses of a job (partition i from circuit_seed + i, as `cuzk-bench prove`
// does). This is input preparation: call it before submit, outside any timing.
Job make_porep_job(std::string id, const circuits::PorepParams& circuit, uint32_t partitions, uint64_t circuit_seed,
                   std::optional<uint64_t> rs_seed, std::string params_path);

// Host steady-clock nanoseconds. Durations: queue + srs_load + synth + prove == total, where
// queue is all the time the job waited (input queue, memory budget, look-ahead slot, prover).
struct JobRecord {
  std::string id;
  uint32_t batch_size = 0;  // sectors in the prove_batch call that proved this job
  uint32_t partitions = 0;
  uint64_t estimated_bytes = 0;
  // Timestamps (steady clock, ns since its epoch), for traces and for attributing sub-phases;
  // the durations below derive from them.
  uint64_t submitted_at = 0, srs_begin = 0, synth_begin = 0, synth_end = 0, prove_begin = 0, prove_end = 0;
  bool srs_waited = false;  // the job waited for its parameters to load (not already cached)

  uint64_t srs_load_ns() const { return srs_waited ? synth_begin - srs_begin : 0; }
  uint64_t synth_ns() const { return synth_end - synth_begin; }
  uint64_t prove_ns() const { return prove_end - prove_begin; }
  uint64_t total_ns() const { return prove_end - submitted_at; }
  // The rest of the total: waiting for a worker, a batch, or the parameters of another job.
  uint64_t queue_ns() const { return total_ns() - srs_load_ns() - synth_ns() - prove_ns(); }
};

struct JobResult {
  JobRecord record;
  std::vector<groth16::Proof> proofs;  // one per partition
  std::shared_ptr<const groth16::ProvingKey> pk;  // the key it was proved with (for verification)
};

// Estimated bytes one job holds from synthesis until its proof is done: per partition the a, b,
// c evaluations (one field element per constraint each) plus the assignment (inputs + aux).
uint64_t estimate_job_bytes(const circuits::PorepParams& circuit, uint32_t partitions);

// Sector proofs per minute: `proofs` finished in `wall_ns`.
double proofs_per_minute(uint64_t proofs, uint64_t wall_ns);

class Engine {
 public:
  // Throws std::invalid_argument for a bad config.
  Engine(Config config, std::unique_ptr<groth16::Backend> backend);
  // Backend by name (groth16::make_backend: throws std::invalid_argument / BackendUnavailable).
  Engine(Config config, const std::string& backend_name);
  // Shuts down: see shutdown().
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Starts loading `path` in the background; the future carries a load error.
  std::shared_future<void> preload(const std::string& path);
  // True once every preload has finished successfully.
  bool is_ready() const;
  // Blocks until every preload has finished; rethrows the first preload error.
  void wait_ready();
  // The parameter files resident (or loading), and dropping one (ParamsCache::evict).
  std::vector<std::string> resident_params() const;
  bool evict_params(const std::string& path);

  // Queues a job; the future carries its result, or the reason it failed.
  std::future<JobResult> submit(Job job);
  // Queues several jobs at once (one after another in the queue, visible to the stages
  // together), so batches form the same way on every run of a benchmark.
  std::vector<std::future<JobResult>> submit_all(std::vector<Job> jobs);

  // Stops the engine: the stages finish what they hold, every job still queued (input or
  // synthesized-but-unproved) fails with EngineError. Idempotent; later submits fail.
  void shutdown();

  const Config& config() const;
  groth16::Backend& backend();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Readiness protocol of `cuzk-bench engine` (docs/engine.md): the line printed (and flushed)
// once the parameters are resident, and the optional ready file, created atomically (written
// to a temporary file in the same folder, then renamed) so a watcher never sees it partial.
std::string ready_line(const std::string& params_path);
void write_ready_file(const std::string& path, const std::string& text);

}  // namespace cuzk::engine
