// One PoRep-shaped proving job as `cuzk-bench prove` and the suites' "porep" kind run it:
// parameters (a given file, or generated once from a seed and cached), witness generation
// (outside the measured proof), then per repetition one recorded sample with the phases
//   proof, proof/srs_load (the load in the first repetition, 0 once resident), proof/synth
//   (+ partition_<i>), proof/prove (+ ntt_h, msm_*, assemble per partition)
// and a verification of every proof after the sample (not timed). Warm-ups come first: a fixed
// count, or as many as it takes for the proof time to settle (harness/measure/stable.hpp).
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/measure/session.hpp"
#include "harness/measure/stable.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/groth16/keys.hpp"

namespace cuzk {

struct PorepJob {
  circuits::PorepParams circuit;
  uint32_t partitions = 1;
  uint64_t circuit_seed = 42;        // witness generation; partition i uses circuit_seed + i
  uint64_t params_seed = 1;          // toxic waste of generated parameters
  std::optional<uint64_t> rs_seed;   // r, s for partition i from rs_seed + i; absent: getrandom
  std::string params_file;           // "" -> results/local/params cache
  std::string suite = "prove", case_name = "porep";
  WarmupPlan warmup_plan;
  int reps = 1;
  std::string backend = "cpu";
  std::function<void(int rep, bool warm)> on_rep;  // progress: before each repetition and once after
  // The GPU counters pass (cli/gpu_counter_pass.hpp), run after the repetitions when set: it runs
  // the given proof as often as it needs (untimed) and returns the "gpu_counters" line's body.
  std::function<nlohmann::json(const std::function<void()>& one_proof)> gpu_counters;
};

// The cache path of generated parameters (results/local/params/, relative to the working dir).
std::string porep_params_cache_path(const circuits::PorepParams& p, uint64_t seed);

// The parameters file for `p`: `params_file` when given, else the cache path, generating the
// parameters there first when missing (the message names `suite` and `case_name`). The
// generation's fixed-base multiplications run on `backend`'s device where it has one
// (groth16::make_fixed_base_device: "cuda"), else on CPU threads; the file is the same.
std::string ensure_porep_params(const circuits::PorepParams& p, uint64_t circuit_seed, uint64_t params_seed,
                                const std::string& params_file, const std::string& suite, const std::string& case_name,
                                const std::string& backend = "cpu");

// Generates the keys of `circuit` from `params_seed`, on `backend`'s fixed-base device where it
// has one; `where` is set to that device's description, or "CPU threads".
groth16::ProvingKey generate_porep_keys(const circuits::PorepCircuit& circuit, uint64_t params_seed,
                                        const std::string& backend, std::string* where = nullptr);
// The same for the circuit of `p` from `circuit_seed`, then one line on stderr ("[suite] case:
// parameters generated in 33.9 s (fixed-base multiplications on ...)").
groth16::ProvingKey generate_porep_keys_reported(const circuits::PorepParams& p, uint64_t circuit_seed,
                                                 uint64_t params_seed, const std::string& backend,
                                                 const std::string& suite, const std::string& case_name);

// The parameters recorded in every sample of the job.
nlohmann::json porep_job_parameters(const PorepJob& job);

struct PorepJobResult {
  bool all_verified = true;      // false: a proof did not verify (each failure reported on stderr)
  WarmupOutcome warmup_outcome;  // what the warm-ups did (a note on stderr when auto hit the cap)
};

// Runs the job's warm-ups and repetitions into `session`. Throws groth16::ParamsError for
// unusable parameters.
PorepJobResult run_porep_job(Session& session, const PorepJob& job);

}  // namespace cuzk
