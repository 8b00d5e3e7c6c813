// Internals shared by the three pieces of `compare`: loading the two inputs (compare_load.cpp:
// cuzk JSON Lines or Google Benchmark JSON), the analysis (compare.cpp) and the output formats
// (compare_format.cpp). Not for use outside those files.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/compare.hpp"

namespace cuzk::compare_detail {

struct PhaseData {
  std::vector<double> wall, gpu;
  std::vector<std::string> wall_process, gpu_process;  // the process id behind each value ("" when unknown)
  size_t gpu_null = 0;
  std::map<std::string, std::vector<double>> counters;       // non-null values
  std::map<std::string, std::string> counter_null_reason;    // last reason seen for a null
};

struct CaseData {
  std::string suite, case_name, params;
  size_t samples = 0;
  std::map<std::string, size_t> per_process;  // process id -> samples ("" counts samples without one)
  std::map<std::string, PhaseData> phases;
};

struct Side {
  std::string path, format;
  nlohmann::json provenance = nlohmann::json::object(), machine = nlohmann::json::object();
  std::string identity;
  std::map<std::string, CaseData> cases;  // key: suite \x1f case \x1f params
  size_t warmups_skipped = 0;
  EnvSummary env;
};

// Reads one input, detecting its format; throws CompareError naming the file (and line).
Side load_side(const std::string& path, const CompareOptions& o);
// The key of a case in Side::cases.
std::string key_of(const std::string& suite, const std::string& case_name, const std::string& params);
// A ratio as a signed percentage change ("+3.1%").
std::string pct(double ratio);

}  // namespace cuzk::compare_detail
