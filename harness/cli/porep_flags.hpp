// The PoRep-shaped circuit's flags (--challenges, --layers, --parents, --depth), shared by
// `prove`, `srs generate`, `circuit --describe` and `engine`, so that one circuit is
// the default everywhere: the parameters `srs generate` writes by default are the ones `prove`
// uses by default, and `circuit --describe` describes that circuit. Names, defaults, help and
// ranges are those of the suites' porep cases (harness/suite/porep_params.hpp).
#pragma once
#include <CLI/CLI.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "harness/suite/porep_params.hpp"
#include "prover/circuits/porep.hpp"

namespace cuzk::cli {

// The flags' values in the order of suite::porep_circuit_params(), from its defaults. Signed so
// that a negative value reaches checked_u32's message instead of wrapping.
struct PorepFlags {
  std::array<int64_t, suite::kPorepCircuitParams> values;
  PorepFlags() {
    for (size_t i = 0; i < values.size(); ++i) values[i] = suite::porep_circuit_params()[i].spec.def;
  }
};

// Declares the four flags on `sub`; returns how many of them were given (call after parsing).
std::function<size_t()> add_porep_flags(CLI::App* sub, PorepFlags& f);

// The checked circuit parameters; throws Error naming the flag or the invalid combination.
circuits::PorepParams porep_params(const PorepFlags& f);

// Refuses (Error, exit 2), before any work, a sector of `partitions` partitions of circuit `p`
// whose estimated memory (circuits::groth16_prove_bytes over the shape by arithmetic) exceeds
// what this process may still use (prover/util/process_limits.hpp); `who` starts the message
// (e.g. "prove", "case porep-big").
void check_sector_memory(const circuits::PorepParams& p, uint64_t partitions, const std::string& who);

}  // namespace cuzk::cli
