#include "harness/cli/porep_flags.hpp"

#include "harness/cli/commands.hpp"

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

}  // namespace cuzk::cli
