// Internals shared by the three pieces of `compare`: loading the two inputs (compare_load.cpp:
// cuzk JSON Lines or Google Benchmark JSON), the analysis (compare.cpp) and the output formats
// (compare_format.cpp). Not for use outside those files.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/analysis/compare.hpp"

namespace cuzk::compare_detail {

constexpr int64_t kNoRound = -1;  // a sample without "round_id"

// The values of one metric of a phase, each with the process id ("" when unknown) and the round
// (kNoRound when unknown) behind it; added together, so the three can never get out of step.
class MetricValues {
 public:
  void add(double value, const std::string& process, int64_t round) {
    values_.push_back(value);
    processes_.push_back(process);
    rounds_.push_back(round);
  }
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  const std::vector<double>& values() const { return values_; }
  const std::vector<std::string>& processes() const { return processes_; }
  const std::vector<int64_t>& rounds() const { return rounds_; }

 private:
  std::vector<double> values_;
  std::vector<std::string> processes_;
  std::vector<int64_t> rounds_;
};

struct PhaseData {
  MetricValues wall, gpu;
  size_t gpu_null = 0;
  // GPU kernel time without gaps (gpu_kernel_ns, where collected), and the samples without it.
  MetricValues gpu_kernel;
  size_t gpu_kernel_missing = 0;
  double gpu_copy_total = 0;  // gpu_copy_ns over the samples that have it
  std::map<std::string, MetricValues> counters;            // non-null values
  std::map<std::string, size_t> counter_null;              // null values of each counter
  std::map<std::string, std::string> counter_null_reason;  // last reason seen for a null
  // Counters from a separate untimed pass (gpu::), not from the samples: shown, never judging the phase.
  std::set<std::string> untimed_counters;
};

struct Span {
  std::string path;
  double start = 0, end = 0;  // ns from the sample's start
  int64_t tid = 0;            // the OS thread that ran it
};

// One measured sample as the accounting needs it: every phase's wall time side by side.
struct SampleRecord {
  std::string process;                 // "" when unknown
  int64_t round = kNoRound;
  std::map<std::string, double> wall;  // phase -> wall_ns (summed over its occurrences)
  std::vector<Span> spans;
  bool spans_complete = false;         // "spans" recorded and none dropped
};

struct CaseData {
  std::string suite, case_name, params;
  size_t samples = 0;
  std::map<std::string, size_t> per_process;  // process id -> samples ("" counts samples without one)
  std::map<int64_t, size_t> per_round;        // round id -> samples (kNoRound counts samples without one)
  // The counter every sample names as its "primary_metric" ("" when none does); mixed: samples
  // name different ones, or only some name one.
  std::string primary_metric;
  bool primary_metric_mixed = false;
  std::map<std::string, PhaseData> phases;
  std::vector<SampleRecord> records;          // cuzk files only (Google Benchmark has no phase tree)
};

// The completions of one load case (suite "load"): every job's load.round and load.done_s,
// warm-ups and samples left out as disturbed included (a completion is a completion), for the
// throughput rows (load_rows.cpp).
struct LoadCompletion {
  int64_t round = 0;
  double done_s = 0;  // seconds from the step's start to the reply
};
struct LoadCase {
  std::vector<LoadCompletion> done;
  size_t samples = 0, without_done = 0;  // its samples, and those without load.done_s
};

struct SideData {
  std::string path, format;
  nlohmann::json provenance = nlohmann::json::object(), machine = nlohmann::json::object();
  std::string identity;
  // The header's "injected" ({"spec", "slowdowns"}, harness/measure/inject.hpp): null when the
  // file was written without $CUZK_INJECT_SLOWDOWN, and always for Google Benchmark JSON.
  nlohmann::json injected;
  std::map<std::string, CaseData> cases;  // key: suite \x1f case \x1f params
  std::map<std::string, LoadCase> load;   // suite "load" cases, by the same key
  size_t warmups_skipped = 0;
  EnvSummary env;
};

// Reads one input, detecting its format; throws CompareError naming the file (and line).
SideData load_side(const std::string& path, const CompareOptions& o);
// The same on text already read (`path` names it in messages): what the fuzz target `gbench`
// runs after the Google Benchmark reader.
SideData load_side_text(const std::string& path, const std::string& text, const CompareOptions& o);
// The key of a case in SideData::cases.
std::string key_of(const std::string& suite, const std::string& case_name, const std::string& params);
// A signed time change: "+90.4 ms", "-70.2 ms".
std::string signed_ns(double ns);
// A row's value and signed change in its metric's unit: times for wall_ns and gpu_ns, counts for
// a counter judging the phase ("1234567", "+6173").
bool is_time_metric(const std::string& metric);
std::string value_text(const std::string& metric, double v);
std::string signed_value_text(const std::string& metric, double v);

// Each side's median, MAD and IQR of its observations into the row.
void describe_sides(PhaseComparison& r, const std::vector<double>& a, const std::vector<double>& b);

// The observations of one side: the values, or each process's median of them (block design).
std::vector<double> observations(const MetricValues& v, bool blocks);

// The unit of observation chosen for one case (docs/compare.md, "Designs").
enum class Design { kSamples, kBlocks, kPaired };
struct CaseDesign {
  Design design = Design::kSamples;
  std::vector<int64_t> rounds;  // paired: the rounds both sides have, ascending
  std::string reason;           // "paired by round (12 rounds on both sides; ...)"
};
const char* design_name(Design d);  // "samples", "blocks", "paired"
// Chooses the design of a case from AnalysisChoices::design (and the older --blocks); throws
// CompareError when "paired" was asked and the case cannot be paired.
CaseDesign choose_design(const CaseData& a, const CaseData& b, const SideData& sa, const SideData& sb, const CompareOptions& o);

// Each round's median of the values (paired design): round -> median of that round's values.
std::map<int64_t, double> round_medians(const MetricValues& v);

// compare_accounting.cpp: the accounting of every parent phase of one case (both sides loaded).
std::vector<Accounting> account_case(const CaseData& a, const CaseData& b, const CaseDesign& design,
                                     const CompareOptions& o);
// load_rows.cpp: the tail and throughput rows of one load case both sides have (key: key_of);
// a case whose throughput cannot be measured adds the reason to `warnings`.
std::vector<PhaseComparison> load_rows(const SideData& a, const SideData& b, const std::string& key,
                                       const CompareOptions& o, std::vector<std::string>& warnings);
// compare_summary.cpp: the summary paragraph of one case from its rows and accounting.
CaseSummary summarize_case(const Comparison& c, const std::string& suite, const std::string& case_name,
                           const std::string& params, const CompareOptions& o);

}  // namespace cuzk::compare_detail
