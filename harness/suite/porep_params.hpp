// The parameters of a PoRep-shaped sector, declared once for every place that takes them: the
// suites' "porep" and "pipeline" kinds read them from cases, and `prove`, `srs generate`,
// `circuit --describe` and `engine` take the circuit's as flags (harness/cli/porep_flags.hpp),
// so that one circuit is the default everywhere.
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "harness/suite/suite.hpp"
#include "prover/circuits/porep.hpp"

namespace cuzk::suite {

// One parameter of the circuit: its name (the flag is --<name>), range, default and help, and
// the field of PorepParams it sets. The ranges are a first check; PorepParams::validate() has
// the last word on the combination.
struct PorepCircuitParam {
  ParamSpec spec;
  uint32_t circuits::PorepParams::*field;
};

// challenges, layers, parents and depth, in that order.
constexpr size_t kPorepCircuitParams = 4;
const std::array<PorepCircuitParam, kPorepCircuitParams>& porep_circuit_params();

// The parameters of a kind that proves PoRep-shaped sectors: partitions, the circuit's, and the
// seeds of r and s (`seed`), of the witness (`circuit_seed`) and of the generated parameters
// (`params_seed`). The help of the first two seeds says how the kind spreads them over proofs.
std::vector<ParamSpec> porep_case_params(const std::string& seed_help, const std::string& circuit_seed_help);

}  // namespace cuzk::suite
