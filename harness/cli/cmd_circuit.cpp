// `cuzk-bench circuit --describe [--challenges N --layers N --parents N --depth N | --r1cs FILE]`:
// the shape of a circuit: constraints, variables (inputs, aux) and the number of terms in each of
// the matrices A, B, C; of the PoRep-shaped circuit by arithmetic from small instances
// (prover/circuits/porep_shape.hpp), of a circom circuit by a shape-only synthesis pass.
#include <fmt/core.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/cli/commands.hpp"
#include "harness/cli/porep_flags.hpp"
#include "harness/measure/output_file.hpp"
#include "prover/circom/circom.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/synth/synth.hpp"

namespace cuzk::cli {
namespace {

struct CircuitOptions {
  bool describe = false;
  bool json = false;
  PorepFlags porep;  // the same defaults as prove and srs generate
  std::string r1cs;
};

int run_circuit(const CircuitOptions& o, bool porep_flags_given) {
  if (!o.describe) throw Error("nothing to do: pass --describe (see cuzk-bench circuit --help)");
  std::string what;
  r1cs::ShapeCounts s;
  if (!o.r1cs.empty()) {
    if (porep_flags_given)
      throw Error("--r1cs describes a circom circuit; --challenges/--layers/--parents/--depth apply to the PoRep-shaped circuit only");
    check_input_file(o.r1cs, "--r1cs");
    try {
      s = synth::count_shape(circom::CircomCircuit(circom::read_r1cs(o.r1cs)));
    } catch (const circom::FormatError& e) {
      throw Error(e.what());
    }
    what = "circom " + o.r1cs;
  } else {
    const circuits::PorepParams p = porep_params(o.porep);
    s = circuits::porep_shape_by_parts(p);  // any size: the circuit itself is never built
    what = "porep " + p.to_string();
  }
  if (o.json) {
    nlohmann::json j = {{"circuit", what},     {"constraints", s.constraints}, {"inputs", s.inputs},
                        {"aux", s.aux},        {"variables", s.inputs + s.aux}, {"nnz_a", s.nnz_a},
                        {"nnz_b", s.nnz_b},    {"nnz_c", s.nnz_c}};
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  fmt::print("circuit      {}\n", what);
  fmt::print("constraints  {}\n", s.constraints);
  fmt::print("variables    {} (inputs {} including \"one\", aux {})\n", s.inputs + s.aux, s.inputs, s.aux);
  fmt::print("nnz A        {}\n", s.nnz_a);
  fmt::print("nnz B        {}\n", s.nnz_b);
  fmt::print("nnz C        {}\n", s.nnz_c);
  fmt::print("(non-zero terms as enforced, including the input constraints input_i * 0 = 0)\n");
  return kExitOk;
}

Registrar reg_circuit("circuit", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("circuit", "describe a circuit's shape: constraints, variables, non-zeros per matrix");
  auto o = std::make_shared<CircuitOptions>();
  sub->add_flag("--describe", o->describe, "print the circuit's shape (PoRep-shaped: by arithmetic, at any size; circom: a shape-only pass)");
  sub->add_flag("--json", o->json, "machine-readable output");
  auto porep_given = add_porep_flags(sub, o->porep);
  sub->add_option("--r1cs", o->r1cs, "a circom .r1cs file (BLS12-381 Fr) instead of the PoRep-shaped circuit");
  return [=] {
    return run_circuit(*o, porep_given() > 0);
  };
});

}  // namespace
}  // namespace cuzk::cli
