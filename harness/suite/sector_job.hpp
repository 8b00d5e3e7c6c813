// One streamed sector as `cuzk-bench prove --sector` and the suites' "sector" kind run it
// (prover/engine/sector_stream.hpp, docs/engine.md "Sector streaming"): the checks before any
// work (device count, budget against one partition, what this machine can hold), parameters
// (given, generated once and cached, or where the file would not fit the disk generated in
// memory and held on the devices), then per repetition one recorded sample with the
// phases proof, proof/srs_load, proof/synth (+ partition_<k>), proof/prove (+ partition_<k>, with
// its "gpu_index", and the backend's phases under it), a top-level "sector" object (per-partition
// timestamps and devices, peak resident partitions, peak RSS), a progress line per partition on
// stderr, and every proof verified after the sample (not timed).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/measure/session.hpp"
#include "prover/engine/sector_stream.hpp"

namespace cuzk {

// The default budget for synthesized partitions: 3/4 of what this process may still use
// (limits::memory_headroom: MemAvailable, the cgroup's limit, ulimit -v) once the resident
// parameters' estimate is taken off; 0 (unlimited) when no limit is known.
uint64_t default_sector_budget(uint64_t key_bytes);

// Parses a --memory-budget value in GiB (a positive decimal number); throws
// std::invalid_argument naming the flag and the text.
uint64_t parse_budget_gib(const std::string& text, const std::string& flag = "--memory-budget");

struct SectorJobSpec {
  std::string shape;                     // a sector_shapes() name
  std::optional<uint64_t> budget_bytes;  // absent: default_sector_budget
  std::optional<uint32_t> gpus;          // absent: every device of the backend
  std::optional<uint32_t> synth_threads; // absent: engine::choose_synth_threads' rule
  std::optional<uint32_t> partition_threads;  // absent: engine::choose_partition_threads' rule
  std::string backend = "cpu";
  uint64_t circuit_seed = 42, params_seed = 1;
  std::optional<uint64_t> rs_seed;
  std::string params_file;  // "" -> the results/local/params cache
  bool params_in_memory = false;  // generate them in memory for this run even where the file would fit
  std::string suite = "prove", case_name = "sector";
  int warmups = 0, reps = 1;
  std::function<void(int rep, bool warm)> on_rep;
};

// The plan of a spec, checked: the shape's name, the device count (--gpus against the backend's
// devices) and the budget's syntax. Throws std::invalid_argument with one clear line.
engine::SectorPlan sector_job_plan(const SectorJobSpec& spec);

// Refuses, before any work, what cannot run: a budget below one partition
// (engine::SectorBudgetError) and parameters plus the resident partitions beyond what this
// process may use (std::invalid_argument naming the limit); `generating`: the parameters are
// to be generated first, whose estimate (circuits::groth16_prove_bytes) is larger.
void check_sector_job(const engine::SectorPlan& plan, bool generating, const std::string& who);
// Whether run_sector_job would generate parameters (no file given, and none cached yet or
// params_in_memory).
bool sector_params_missing(const engine::SectorPlan& plan, const SectorJobSpec& spec);
// Whether it would generate them in memory, not cached: asked for (params_in_memory, no file
// given), or missing and a key of `key_bytes` (plus 1 GiB) would not fit the free disk space
// beside the cache. Such a key is held on the devices
// (engine::SectorStream::hold_key), the host keeping only the queries their backend reads there.
bool sector_params_in_memory(const circuits::PorepParams& circuit, uint64_t key_bytes, const SectorJobSpec& spec);

// The "sector" object of a sample line from a streamed sector's result (timestamps relative to
// the sector's start).
nlohmann::json sector_json(const engine::SectorPlan& plan, const engine::SectorResult& r);

struct SectorJobResult {
  bool all_verified = true;
  engine::SectorResult last;  // the last repetition's
};

// Runs the spec's warm-ups and repetitions into `session` (call sector_job_plan and
// check_sector_job first). Throws groth16::ParamsError for unusable parameters.
SectorJobResult run_sector_job(Session& session, const SectorJobSpec& spec, const engine::SectorPlan& plan);

}  // namespace cuzk
