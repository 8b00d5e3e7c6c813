// Suites: declarative TOML files in suites/ that name cases to measure (docs/suites.md).
//
// A suite file is parsed and validated completely (every case, with and without its quick
// overrides) before anything runs; every problem is a SuiteError whose message starts with
// "file:line:column:" where toml++ knows the position, and names the key at fault.
//
// Case kinds are a registry (kind_specs()): "porep", "micro" (harness/suite/kind_micro.cpp),
// "pipeline" (kind_pipeline.cpp), "stage" (kind_stage.cpp), "sector" (kind_sector.cpp), and others added by giving a
// KindSpec with its parameters and its runner.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/measure/stable.hpp"
#include "prover/circuits/porep.hpp"

namespace cuzk {
class Session;
}

namespace cuzk::suite {

class SuiteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One parameter a kind accepts: an integer in [min, max] with a default, or (type kString,
// see string_param) a string, restricted to `choices` when that is not empty.
struct ParamSpec {
  enum class Type { kInt, kString };
  std::string name;
  int64_t min = 0;
  int64_t max = INT64_MAX;
  int64_t def = 0;
  std::string help;
  Type type = Type::kInt;
  std::string str_def = {};               // the default of a kString parameter
  std::vector<std::string> choices = {};  // kString: the accepted values; empty: any string
};
inline ParamSpec string_param(std::string name, std::string def, std::vector<std::string> choices, std::string help) {
  ParamSpec p;
  p.name = std::move(name);
  p.str_def = std::move(def);
  p.choices = std::move(choices);
  p.help = std::move(help);
  p.type = ParamSpec::Type::kString;
  return p;
}

// What a runner gets: the session to record into, the case, its effective parameters.
struct RunContext {
  Session* session = nullptr;
  std::string suite;
  std::string case_name;
  nlohmann::json params;   // effective parameters (defaults filled in, quick applied)
  int reps = 1;
  // Until settled (--warmup auto) only for a kind with KindSpec::warms_until_settled, which
  // reports what it did in warmup_outcome; other kinds run warmup_plan.count warm-ups.
  WarmupPlan warmup_plan;
  std::optional<WarmupOutcome> warmup_outcome;  // set by the runner
  std::string backend = "cpu";
  // Called before each repetition (index 0 .. warm-ups+reps-1) and once after the last.
  std::function<void(int rep, bool warm)> on_rep;
  // The GPU counters pass after a porep case's repetitions (PorepJob::gpu_counters); other kinds
  // ignore it.
  std::function<nlohmann::json(const std::function<void()>&)> gpu_counters;
  // run --run-timeout: the longest a child process of a kind (micro's benchmark binaries) may
  // run before it is killed (harness/measure/process.hpp run_child); 0: no limit.
  double run_timeout_s = 0;
};

struct KindSpec {
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  // Cross-parameter check of effective parameters; "" when valid.
  std::function<std::string(const nlohmann::json& params)> validate;
  // Runs every repetition of one case; returns false when a result failed its check
  // (e.g. a proof did not verify).
  std::function<bool(RunContext& ctx)> run;
  // Circuits a case of this kind may name in its optional `circuit` key; empty: none.
  std::vector<std::string> circuits = {};
  // Its runner honours a RunContext::warmup_plan until settled (others run their fixed count).
  bool warms_until_settled = false;
  // The required phases (kRequiredPhases) its samples can hold; a case's `phases` naming another
  // is refused. Empty: not declared (any required phase is accepted).
  std::vector<std::string> records = {};
};

// The registered kinds, by name.
const std::map<std::string, KindSpec>& kind_specs();
// Kinds defined in their own files (harness/kind_<name>.cpp), registered by kind_specs().
KindSpec micro_kind();
KindSpec pipeline_kind();
KindSpec stage_kind();
KindSpec sector_kind();

// The PoRep-shaped circuit of a case's effective parameters (challenges, layers, parents,
// depth), for the kinds that prove it.
circuits::PorepParams porep_params(const nlohmann::json& params);

// The fields every PoRep-proving job (PorepJob, PipelineJob) takes from its case and run: the
// circuit, partitions, the three seeds, names, repetitions, backend and progress callback (the
// warm-ups are the caller's: the jobs take them differently).
template <class Job>
void take_porep_case(Job& job, const RunContext& ctx) {
  const nlohmann::json& p = ctx.params;
  job.circuit = porep_params(p);
  job.partitions = uint32_t(p.at("partitions").get<int64_t>());
  job.circuit_seed = uint64_t(p.at("circuit_seed").get<int64_t>());
  job.params_seed = uint64_t(p.at("params_seed").get<int64_t>());
  job.rs_seed = uint64_t(p.at("seed").get<int64_t>());
  job.suite = ctx.suite;
  job.case_name = ctx.case_name;
  job.reps = ctx.reps;
  job.backend = ctx.backend;
  job.on_rep = ctx.on_rep;
}

struct Case {
  std::string name;
  std::string kind;
  std::string description;
  nlohmann::json params = nlohmann::json::object();  // as written (validated)
  nlohmann::json quick = nlohmann::json::object();   // parameter overrides under --quick
  std::optional<int> reps, warmup_runs, quick_reps, quick_warmup_runs;  // keys reps, warmup
  bool in_quick = true;  // false: skipped under --quick
  std::vector<std::string> backends;  // backends the case is for ("cpu", "cuda"); empty: any
  std::string circuit;                // optional `circuit`: one of its kind's circuits
  std::vector<std::string> phases;    // optional `phases`: required phase names it reports/gates on
  // optional `primary_metric`: a counter (sim::instructions, os::utime_ns, ...) that compare judges
  // this case's phases by instead of time; every sample of the case carries it
  std::string primary_metric;
  std::string where;     // "file:line:col" of the case table
};

struct Suite {
  std::string name;
  std::string description;
  std::string path;  // the file it came from
  int reps = 3, warmup_runs = 1;
  int quick_reps = 1, quick_warmup_runs = 0;
  std::vector<Case> cases;
};

// Parses and validates; throws SuiteError("<source>:<line>:<col>: ...").
Suite parse_suite_text(const std::string& text, const std::string& source);
Suite load_suite_file(const std::string& path);

// NAME -> <dir>/NAME.toml for dir in: ./suites, $CUZK_SUITES_DIR, <source tree>/suites;
// a value containing '/' or ending in ".toml" is a file path. Throws SuiteError when not found.
std::string resolve_suite(const std::string& name_or_file);

// Effective parameters of a case: kind defaults, then the case, then (quick) its overrides.
nlohmann::json effective_params(const Case& c, bool quick);
int effective_reps(const Suite& s, const Case& c, bool quick);
int effective_warmup_runs(const Suite& s, const Case& c, bool quick);

}  // namespace cuzk::suite
