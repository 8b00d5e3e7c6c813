// The suites' "sector" kind: one named sector shape streamed partition by partition under a
// host-memory budget (harness/suite/sector_job.hpp, docs/engine.md "Sector streaming"), so a
// real-size sector (32g: 10 partitions of ~131M constraints) runs where the whole sector would
// not fit. Each warm-up and repetition is one sample; every proof is verified after it.
#include <fmt/core.h>

#include <string>
#include <vector>

#include "harness/suite/sector_job.hpp"
#include "harness/suite/suite.hpp"

namespace cuzk::suite {
namespace {

using nlohmann::json;

std::vector<std::string> shape_names() {
  std::vector<std::string> out;
  for (const auto& s : engine::sector_shapes()) out.push_back(s.name);
  return out;
}

bool run_sector(RunContext& ctx) {
  const json& p = ctx.params;
  SectorJobSpec spec;
  spec.shape = p.at("sector").get<std::string>();
  if (const int64_t mib = p.at("budget_mib").get<int64_t>(); mib > 0) spec.budget_bytes = uint64_t(mib) << 20;
  if (const int64_t g = p.at("gpus").get<int64_t>(); g > 0) spec.gpus = uint32_t(g);
  if (const int64_t s = p.at("synth_threads").get<int64_t>(); s > 0) spec.synth_threads = uint32_t(s);
  if (const int64_t t = p.at("partition_threads").get<int64_t>(); t > 0) spec.partition_threads = uint32_t(t);
  spec.backend = ctx.backend;
  spec.rs_seed = uint64_t(p.at("seed").get<int64_t>());
  spec.circuit_seed = uint64_t(p.at("circuit_seed").get<int64_t>());
  spec.params_seed = uint64_t(p.at("params_seed").get<int64_t>());
  spec.suite = ctx.suite;
  spec.case_name = ctx.case_name;
  spec.warmups = ctx.warmup_plan.count;
  spec.reps = ctx.reps;
  spec.on_rep = ctx.on_rep;
  const engine::SectorPlan plan = sector_job_plan(spec);
  check_sector_job(plan, sector_params_missing(plan, spec), fmt::format("case {}", ctx.case_name));
  return run_sector_job(*ctx.session, spec, plan).all_verified;
}

}  // namespace

KindSpec sector_kind() {
  return KindSpec{
      "sector",
      "one named sector shape streamed partition by partition under a host-memory budget: synthesis of partition "
      "k+1 overlaps the proving of k, one backend per device (docs/engine.md)",
      {string_param("sector", "2e12x3", shape_names(), "the sector shape (engine::sector_shapes)"),
       {"budget_mib", 0, INT64_MAX >> 20, 0,
        "MiB for synthesized partitions (0: 3/4 of what the process may use once the parameters are taken off)"},
       {"gpus", 0, 1024, 0, "devices to prove on (0: every device of the backend)"},
       {"synth_threads", 0, 4096, 0, "partitions synthesized at once (0: engine::choose_synth_threads' default)"},
       {"partition_threads", 0, 4096, 0,
        "threads synthesizing one partition (0: the cores shared among those at once; 1: serial synthesis)"},
       {"seed", 0, INT64_MAX, 1, "seed of r and s: partition k uses seed + k"},
       {"circuit_seed", 0, INT64_MAX, 42, "witness generation seed: partition k uses circuit_seed + k"},
       {"params_seed", 0, INT64_MAX, 1, "toxic-waste seed of the generated parameters"}},
      nullptr,
      run_sector};
}

}  // namespace cuzk::suite
