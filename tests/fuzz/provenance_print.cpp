// Prints this build's provenance (source hash and variant flags) as one JSON object. CI's test
// command compares it with the default build's `cuzk-bench info --json`: two builds with
// different flags must embed the same source hash (scripts/test.sh).
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/measure/provenance.hpp"

int main() {
  const cuzk::Provenance& p = cuzk::build_provenance();
  nlohmann::json flags = nlohmann::json::object();
  for (const auto& [k, v] : cuzk::provenance_flags(p)) flags[k] = v;
  std::cout << nlohmann::json{{"source_hash", p.source_hash}, {"flags", flags}}.dump() << "\n";
  return 0;
}
