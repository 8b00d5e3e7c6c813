// The suites' "stage" kind: the proving stage alone, on one synthetic partition of 2^log_n
// constraints (prover/circuits/synthetic_partition.hpp) with a bench-only key: random points,
// repeated from a table of 2^table_log, not from a setup. Its proofs cannot verify and are not
// checked (run returns true); what it measures is the stage's work at a real partition's size
// and value mix, without generating parameters or synthesizing a circuit (2^27 constraints,
// one real PoRep partition, builds in seconds to a minute).
//
// The partition is built once per case, before the warm-ups and outside every sample; the
// backend is created before it, so that a missing GPU is reported first. Each warm-up and
// repetition is one sample: proof > prove > the backend's phases (ntt_h, msm_*, assemble; the
// CUDA backend adds h2d, h2d/srs in the first proof, which uploads the key, and pin_abc in the
// pinned variant). No proof/srs_load, proof/synth or proof/queue: the kind declares what it
// records (KindSpec::records), and a case's `phases` naming anything else is refused.
#include <fmt/core.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/measure/phases.hpp"
#include "harness/measure/session.hpp"
#include "harness/suite/suite.hpp"
#include "prover/circuits/synthetic_partition.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/instr/phase.hpp"

namespace cuzk::suite {
namespace {

using nlohmann::json;

constexpr const char* kKeyNote = "bench-only: random points, not from a setup (proofs cannot verify, not checked)";

// table_log as the partition takes it: 0 or >= log_n mean distinct points (== log_n).
unsigned effective_table_log(unsigned log_n, unsigned table_log) {
  return table_log == 0 || table_log >= log_n ? log_n : table_log;
}

std::vector<std::string> stage_phases() {
  std::vector<std::string> out;
  for (std::string_view p : kRequiredPhases)
    if (p == "proof" || p.starts_with("proof/prove")) out.emplace_back(p);
  return out;
}

bool run_stage(RunContext& ctx) {
  const json& p = ctx.params;
  const auto log_n = unsigned(p.at("log_n").get<int64_t>());
  const unsigned table_log = effective_table_log(log_n, unsigned(p.at("table_log").get<int64_t>()));
  const auto seed = uint64_t(p.at("seed").get<int64_t>());
  // The backend first: a missing GPU is reported before the partition is built.
  std::unique_ptr<groth16::Backend> backend = groth16::make_backend(ctx.backend);
  fmt::print(stderr, "[{}] {}: building the synthetic partition 2^{} ({}; not timed) ...\n", ctx.suite, ctx.case_name,
             log_n,
             table_log == log_n ? std::string("distinct points")
                                : fmt::format("points repeated from a table of 2^{}", table_log));
  const std::unique_ptr<circuits::SyntheticPartition> part = circuits::make_synthetic_partition(log_n, table_log);
  const json recorded = {{"log_n", log_n},
                         {"table_log", table_log},
                         {"constraints", uint64_t(1) << log_n},
                         {"backend", ctx.backend},
                         {"rs_seed", seed},
                         {"key", kKeyNote}};
  const groth16::Witness w = part->witness();
  const groth16::Randomness rs = groth16::Randomness::from_seed(seed);
  const int total = ctx.warmup_plan.count + ctx.reps;
  for (int i = 0; i < total; ++i) {
    const bool warm = i < ctx.warmup_plan.count;
    if (ctx.on_rep) ctx.on_rep(i, warm);
    const SampleInfo info{.suite = ctx.suite,
                          .case_name = ctx.case_name,
                          .parameters = recorded,
                          .repetition = warm ? i : i - ctx.warmup_plan.count,
                          .warm = warm};
    ctx.session->measure(info, [&] {
      instr::Phase proof("proof");
      instr::Phase prove("prove");
      (void)backend->prove(part->pk, w, rs);  // not verified: the key is random
    });
  }
  if (ctx.on_rep) ctx.on_rep(total, false);
  return true;
}

}  // namespace

KindSpec stage_kind() {
  using circuits::kSyntheticMaxLogN;
  KindSpec k{
      "stage",
      "the proving stage of one synthetic partition of 2^log_n constraints with a bench-only key (random points, "
      "repeated from a table of 2^table_log; proofs cannot verify, and are not checked)",
      {{"log_n", 1, kSyntheticMaxLogN, 16, "constraints and variables: 2^log_n (27: one real PoRep partition)"},
       {"table_log", 0, kSyntheticMaxLogN, 20,
        "the key's points repeat a table of 2^table_log random points (0 or >= log_n: every point distinct)"},
       {"seed", 0, INT64_MAX, 1, "seed of r and s"}},
      // Every combination is valid: a table_log at or above log_n means distinct points.
      nullptr,
      run_stage};
  k.records = stage_phases();
  return k;
}

}  // namespace cuzk::suite
