#include "harness/suite/porep_params.hpp"

namespace cuzk::suite {

const std::array<PorepCircuitParam, kPorepCircuitParams>& porep_circuit_params() {
  using circuits::PorepParams;
  static const std::array<PorepCircuitParam, kPorepCircuitParams> table = {{
      {{"challenges", 1, PorepParams::kMaxChallenges, 2, "challenges per partition"}, &PorepParams::challenges},
      {{"layers", 0, PorepParams::kMaxLayers, 0, "SHA-256 labeling layers (0: none)"}, &PorepParams::layers},
      {{"parents", 0, PorepParams::kMaxParents, 0, "parent labels per label"}, &PorepParams::parents},
      {{"depth", 1, PorepParams::kMaxDepth, 8, "binary tree depth"}, &PorepParams::depth},
  }};
  return table;
}

std::vector<ParamSpec> porep_case_params(const std::string& seed_help, const std::string& circuit_seed_help) {
  std::vector<ParamSpec> out = {{"partitions", 1, 1024, 2, "partition circuits per sector (one proof each)"}};
  for (const PorepCircuitParam& p : porep_circuit_params()) out.push_back(p.spec);
  out.push_back({"seed", 0, INT64_MAX, 1, seed_help});
  out.push_back({"circuit_seed", 0, INT64_MAX, 42, circuit_seed_help});
  out.push_back({"params_seed", 0, INT64_MAX, 1, "toxic-waste seed of the generated parameters"});
  return out;
}

}  // namespace cuzk::suite
