// Reading for the noise diagnosis: results files, each sample's environment readings, and the
// key a sample's case is grouped by (noise_detail.hpp).
#include <fmt/core.h>

#include "harness/analysis/noise_detail.hpp"

namespace cuzk::noise {
namespace detail {

[[noreturn]] void fail_at(const ResultsFile& f, const ResultsLine& l, const std::string& what) {
  throw NoiseError(fmt::format("{}:{}: {}", f.path, l.line, what));
}

void read_env(const ResultsFile& f, const ResultsLine& l, SampleRef& ref, std::map<std::string, EnvTally>& tally) {
  const json& e = l.value["env"];
  if (!e.is_object()) fail_at(f, l, fmt::format("field 'env' must be an object, not {}", e.dump()));
  const json errors = e.value("errors", json::object());
  if (!errors.is_object()) fail_at(f, l, "field 'env.errors' must be an object (reading -> reason)");
  const json interval = e.value("interval_ns", json(nullptr));
  if (!interval.is_null() && !interval.is_number())
    fail_at(f, l, fmt::format("field 'env.interval_ns' must be a number or null, not {}", interval.dump()));
  if (e.contains("values")) {
    const json& v = e["values"];
    if (!v.is_object()) fail_at(f, l, "field 'env.values' must be an object (reading -> number or null)");
    for (const auto& [name, x] : v.items()) {
      EnvTally& t = tally[name];
      if (x.is_number()) {
        ref.env[name] = x.get<double>();
        ++t.numeric;
        t.values.insert(x.get<double>());
        if (interval.is_number()) {
          t.value_at.push_back(x.get<double>());
          t.interval_at.push_back(interval.get<double>());
        }
      } else if (!x.is_null()) {
        fail_at(f, l, fmt::format("env value '{}' must be a number or null, not {}", name, x.dump()));
      }
    }
  }
  for (const auto& [name, why] : errors.items()) {
    if (!why.is_string()) fail_at(f, l, fmt::format("env error of '{}' must be a string, not {}", name, why.dump()));
    EnvTally& t = tally[name];
    if (t.reason.empty()) t.reason = why.get<std::string>();
  }
}

std::string case_key_of(const json& s) {
  std::string key = s.value("case", std::string());
  const json params = s.value("parameters", json::object());
  if (params.is_object() && !params.empty()) key += " " + params.dump();
  return key;
}

}  // namespace detail

Analysis analyse_files(const std::vector<std::string>& paths, const Options& o) {
  std::vector<ResultsFile> files;
  for (const std::string& p : paths) {
    try {
      files.push_back(read_results(p));
    } catch (const ResultsError& e) {
      throw NoiseError(e.what());
    }
  }
  return analyse(files, o);
}

}  // namespace cuzk::noise
