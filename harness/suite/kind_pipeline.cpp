// The suites' "pipeline" kind: N sector proofs per repetition through the pipelined engine
// (prover/engine/, docs/engine.md), one sample per job (harness/suite/pipeline_job.hpp).
#include <fmt/core.h>

#include "harness/suite/pipeline_job.hpp"
#include "harness/suite/porep_params.hpp"
#include "harness/suite/suite.hpp"

namespace cuzk::suite {
namespace {

using nlohmann::json;

uint32_t u32(const json& p, const char* key) { return uint32_t(p.at(key).get<int64_t>()); }


bool run_pipeline(RunContext& ctx) {
  const json& p = ctx.params;
  PipelineJob job;
  take_porep_case(job, ctx);
  job.warmup_runs = ctx.warmup_plan.count;
  job.jobs = u32(p, "jobs");
  job.config.max_batch_size = u32(p, "batch");
  job.config.overlap = p.at("overlap").get<int64_t>() != 0;
  job.config.lookahead = u32(p, "lookahead");
  job.config.memory_budget = uint64_t(p.at("budget_mib").get<int64_t>()) << 20;
  job.on_run = [&](int rep, bool warm, const std::vector<engine::JobRecord>& records, uint64_t wall_ns) {
    fmt::print(stderr, "[{}] {}: {} {}: {} jobs in {:.3f} s, {:.1f} proofs/min\n", ctx.suite, ctx.case_name,
               warm ? "warm-up" : "repetition", warm ? rep + 1 : rep - ctx.warmup_plan.count + 1, records.size(),
               wall_ns / 1e9, engine::proofs_per_minute(records.size(), wall_ns));
  };
  return run_pipeline_job(*ctx.session, job);
}

}  // namespace

KindSpec pipeline_kind() {
  KindSpec k{
      "pipeline",
      "N PoRep-shaped sector proofs through the pipelined engine (synthesis overlapping proving, batching)",
      {{"jobs", 1, 4096, 4, "sector proofs per repetition (one sample each)"},
       {"batch", 1, engine::Config::kMaxBatch, 1, "max sectors per prove_batch call"},
       {"overlap", 0, 1, 1, "1: synthesis of job N+1 overlaps proving of job N; 0: strictly one after another"},
       {"lookahead", 1, 64, 1, "batches synthesized ahead of the prover"},
       {"budget_mib", 0, INT64_MAX >> 20, 0, "memory budget for synthesized jobs in MiB (0: unlimited)"}},
      [](const json& p) { return porep_params(p).validate(); },
      run_pipeline};
  const std::vector<ParamSpec> porep = porep_case_params(
      "seed of r and s (job j, partition i: seed + j * partitions + i)",
      "witness generation seed (job j, partition i: + j * partitions + i)");
  k.params.insert(k.params.end(), porep.begin(), porep.end());
  return k;
}

}  // namespace cuzk::suite
