// The PoRep-shaped circuit's flags (--challenges, --layers, --parents, --depth), shared by
// `prove`, `srs generate`, `circuit --describe` and `engine`, so that one circuit is
// the default everywhere: the parameters `srs generate` writes by default are the ones `prove`
// uses by default, and `circuit --describe` describes that circuit.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>

#include "prover/circuits/porep.hpp"

namespace cuzk::cli {

// Signed so that a negative value reaches checked_u32's message instead of wrapping.
struct PorepFlags {
  int64_t challenges = 2, layers = 0, parents = 0, depth = 8;
};

// Declares the four flags on `sub`; returns how many of them were given (call after parsing).
std::function<size_t()> add_porep_flags(CLI::App* sub, PorepFlags& f);

// The checked circuit parameters; throws Error naming the flag or the invalid combination.
circuits::PorepParams porep_params(const PorepFlags& f);

}  // namespace cuzk::cli
