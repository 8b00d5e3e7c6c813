// The parts of the noise diagnosis that its files share (noise.hpp is the interface): the
// samples as the analysis groups them, reading a sample's environment, and the diagnosis sentence.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/analysis/noise.hpp"

namespace cuzk::noise::detail {

using json = nlohmann::json;

// One analysed sample line, with what the analysis needs of it.
struct SampleRef {
  size_t file = 0, line = 0, order = 0;
  bool warmup = false;
  int64_t repetition = 0;
  const json* phases = nullptr;
  std::map<std::string, double> env;  // numeric readings only
};

struct Process {
  std::string id;
  std::map<std::string, std::vector<SampleRef>> by_case;  // case key -> samples, repetition order
};

struct EnvTally {
  size_t numeric = 0;
  std::set<double> values;
  std::string reason;                         // first reason given for a null
  std::vector<double> value_at, interval_at;  // pairs with the sample's env.interval_ns
};

// A reading whose ranks follow the window's length exactly (e.g. the +- resolution of a rate,
// ticks / wall) is a function of the sample's own duration: it would "explain" the time
// perfectly without saying anything about the machine. Needs enough samples for an exact
// monotone match not to happen by chance (1 in n! for an unrelated reading).
constexpr size_t kWindowDerivedMinSamples = 6;
constexpr double kWindowDerivedRho = 0.999;

// NoiseError naming the file and line.
[[noreturn]] void fail_at(const ResultsFile& f, const ResultsLine& l, const std::string& what);
// Reads the sample's "env" (optional): numeric readings into `ref`, every reading into `tally`.
void read_env(const ResultsFile& f, const ResultsLine& l, SampleRef& ref, std::map<std::string, EnvTally>& tally);
// The case's name, with its parameters when it has any: the key rows are grouped by.
std::string case_key_of(const json& s);
// One sentence naming the dominant source of the row's noise, from significant findings only.
std::string diagnose(const PhaseNoise& r, double alpha);

}  // namespace cuzk::noise::detail
