#include "harness/suite/porep_job.hpp"

#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "prover/groth16/backend.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/instr/phase.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/synth/sliced.hpp"
#include "prover/synth/synth.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk {

std::string porep_params_cache_path(const circuits::PorepParams& p, uint64_t seed) {
  std::filesystem::create_directories("results/local/params");
  return fmt::format("results/local/params/porep-c{}-l{}-p{}-d{}-seed{}.params", p.challenges, p.layers, p.parents,
                     p.depth, seed);
}

groth16::ProvingKey generate_porep_keys(const circuits::PorepCircuit& circuit, uint64_t params_seed,
                                        const std::string& backend, std::string* where) {
  std::unique_ptr<groth16::FixedBaseDevice> device = groth16::make_fixed_base_device(backend);
  if (where) *where = device ? device->describe() : "CPU threads";
  // The QAP at tau straight from a sliced synthesis on every core: no matrices are kept (at
  // 130M constraints they would be tens of GiB beside the keys).
  const r1cs::ShapeCounts counts = circuits::porep_shape_by_parts(circuit.params());
  const groth16::ToxicWaste tw = groth16::ToxicWaste::from_seed(params_seed);
  groth16::QapAtTau q = groth16::QapAtTau::zeros(counts.inputs, counts.aux, counts.constraints);
  {
    const std::vector<fr_t> lag = groth16::lagrange_at_tau(tw.tau, counts.constraints, nullptr);
    synth::evaluate_qap_sliced(circuit, counts, synth::QapColumns{q.u.data(), q.v.data(), q.w.data(), lag.data(), counts.inputs},
                               ThreadPool::global().size());
  }
  groth16::ProvingKey pk = groth16::generate_keys(std::move(q), tw, groth16::KeygenOptions{nullptr, device.get()});
  pk.seed = params_seed;
  return pk;
}

groth16::ProvingKey generate_porep_keys_reported(const circuits::PorepParams& p, uint64_t circuit_seed,
                                                 uint64_t params_seed, const std::string& backend,
                                                 const std::string& suite, const std::string& case_name) {
  const auto t0 = std::chrono::steady_clock::now();
  std::string where;
  auto pk = generate_porep_keys(circuits::PorepCircuit::generate(p, circuit_seed), params_seed, backend, &where);
  fmt::print(stderr, "[{}] {}: parameters generated in {:.1f} s (fixed-base multiplications on {})\n", suite, case_name,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), where);
  return pk;
}

std::string ensure_porep_params(const circuits::PorepParams& p, uint64_t circuit_seed, uint64_t params_seed,
                                const std::string& params_file, const std::string& suite, const std::string& case_name,
                                const std::string& backend) {
  if (!params_file.empty()) return params_file;
  const std::string path = porep_params_cache_path(p, params_seed);
  if (!std::filesystem::exists(path)) {
    fmt::print(stderr, "[{}] {}: generating parameters for {} ({} constraints; once, cached in {})\n", suite, case_name,
               p.to_string(), circuits::porep_shape_by_parts(p).constraints, path);
    groth16::save_params(generate_porep_keys_reported(p, circuit_seed, params_seed, backend, suite, case_name), path);
  }
  return path;
}

nlohmann::json porep_job_parameters(const PorepJob& job) {
  const auto& P = job.circuit;
  return {{"partitions", job.partitions},
          {"challenges", P.challenges},
          {"layers", P.layers},
          {"parents", P.parents},
          {"depth", P.depth},
          {"constraints", circuits::porep_shape_by_parts(P).constraints},
          {"backend", job.backend},
          {"rs_seed", job.rs_seed ? nlohmann::json(*job.rs_seed) : nlohmann::json("secure")},
          {"circuit_seed", job.circuit_seed},
          {"params_seed", job.params_seed}};
}

PorepJobResult run_porep_job(Session& session, const PorepJob& job) {
  const auto& P = job.circuit;
  const auto shape = circuits::PorepCircuit::shape(P);
  const std::string params_path =
      ensure_porep_params(P, job.circuit_seed, job.params_seed, job.params_file, job.suite, job.case_name, job.backend);
  // Witness generation (native hashing) is input preparation, outside the measured proof.
  std::vector<circuits::PorepCircuit> circuits;
  for (uint32_t i = 0; i < job.partitions; ++i) circuits.push_back(circuits::PorepCircuit::generate(P, job.circuit_seed + i));

  // The backend first: a missing GPU is reported before any work (BackendUnavailable).
  std::unique_ptr<groth16::Backend> backend = groth16::make_backend(job.backend);
  const nlohmann::json recorded = porep_job_parameters(job);
  std::optional<groth16::ProvingKey> pk;  // resident after the first load
  // One proof of the sector, the work inside every recorded sample and every counters pass.
  auto one_proof = [&] {
    instr::Phase proof("proof");
    {
      instr::Phase srs("srs_load");
      if (!pk) {
        pk = groth16::load_params(params_path);
        groth16::check_params_shape(*pk, shape.inputs, shape.aux, shape.constraints, "the circuit " + P.to_string());
      }
    }
    auto assignments = synth::synthesize_partitions(circuits);
    instr::Phase prove("prove");
    // One proving call for the sector's partitions, as the engine this project models makes.
    std::vector<groth16::Witness> ws;
    std::vector<groth16::Randomness> rs;
    for (uint32_t i = 0; i < job.partitions; ++i) {
      const auto& pa = assignments[i];
      ws.push_back(groth16::witness_of(pa));
      rs.push_back(job.rs_seed ? groth16::Randomness::from_seed(*job.rs_seed + i) : groth16::Randomness::secure());
    }
    return backend->prove_batch(*pk, ws, rs);
  };
  PorepJobResult result;
  int rep = 0;  // on_rep's index: warm-ups, then measured repetitions
  // One recorded proof (`index` counts warm-ups and measured repetitions apart); returns the
  // wall time of its `proof` phase.
  auto prove_once = [&](bool warm, int index) {
    if (job.on_rep) job.on_rep(rep++, warm);
    std::vector<groth16::Proof> proofs;
    const nlohmann::json line = session.measure(
        {.suite = job.suite, .case_name = job.case_name, .parameters = recorded, .repetition = index, .warm = warm},
        [&] { proofs = one_proof(); });
    // Verification checks the proofs; it is not part of the timed proving job.
    for (uint32_t i = 0; i < job.partitions; ++i) {
      if (!groth16::verify(pk->vk, proofs[i], circuits[i].public_inputs())) {
        fmt::print(stderr, "cuzk-bench: error: {}: the proof of partition {} ({} {}) does not verify\n", job.case_name,
                   i, warm ? "warm-up" : "repetition", index);
        result.all_verified = false;
      }
    }
    return line.at("phases").at("proof").at("wall_ns").get<uint64_t>();
  };

  Warmups warmups(job.warmup_plan);
  for (int i = 0; warmups.more(); ++i) warmups.add(prove_once(true, i));
  result.warmup_outcome = warmups.outcome();
  if (result.warmup_outcome.mode == WarmupMode::kUntilSettled && !result.warmup_outcome.converged)
    fmt::print(stderr,
               "[{}] {}: the warm-ups did not settle within the cap of {} (the last {} proof times span {:.1f}% of "
               "their median; the rule asks at most {:.0f}%); measuring anyway, raise --warmup-cap to wait longer\n",
               job.suite, job.case_name, job.warmup_plan.cap, kSettleWindow, result.warmup_outcome.spread * 100,
               kSettleSpread * 100);
  for (int i = 0; i < job.reps; ++i) prove_once(false, i);
  if (job.on_rep) job.on_rep(rep, false);
  if (job.gpu_counters) {
    nlohmann::json body = job.gpu_counters([&] { one_proof(); });
    body["suite"] = job.suite;
    body["case"] = job.case_name;
    body["parameters"] = recorded;
    session.write_gpu_counters(body);
  }
  return result;
}

}  // namespace cuzk
