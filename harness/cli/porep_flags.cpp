#include "harness/cli/porep_flags.hpp"

#include <fmt/core.h>

#include "harness/cli/commands.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/util/process_limits.hpp"

namespace cuzk::cli {

std::function<size_t()> add_porep_flags(CLI::App* sub, PorepFlags& f) {
  const auto& table = suite::porep_circuit_params();
  std::array<CLI::Option*, suite::kPorepCircuitParams> opts;
  for (size_t i = 0; i < table.size(); ++i)
    opts[i] = sub->add_option("--" + table[i].spec.name, f.values[i], "PoRep-shaped circuit: " + table[i].spec.help)
                  ->capture_default_str();
  return [=] {
    size_t n = 0;
    for (CLI::Option* o : opts) n += o->count();
    return n;
  };
}

circuits::PorepParams porep_params(const PorepFlags& f) {
  const auto& table = suite::porep_circuit_params();
  circuits::PorepParams p;
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string flag = "--" + table[i].spec.name;
    p.*table[i].field = checked_u32(flag.c_str(), f.values[i], table[i].spec.min);
  }
  if (std::string err = p.validate(); !err.empty()) throw Error(err);
  return p;
}

void check_sector_memory(const circuits::PorepParams& p, uint64_t partitions, const std::string& who) {
  const r1cs::ShapeCounts s = circuits::porep_shape_by_parts(p);
  const uint64_t need = circuits::groth16_prove_bytes(s, partitions);
  const std::string what =
      fmt::format("{}: {} partition(s) of {} ({} constraints each)", who, partitions, p.to_string(), s.constraints);
  if (std::string err = limits::check_memory_request(need, what, limits::read_memory_limits()); !err.empty())
    throw Error(err);
}

}  // namespace cuzk::cli
