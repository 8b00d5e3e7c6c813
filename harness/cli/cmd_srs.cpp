// `cuzk-bench srs generate|inspect`: Groth16 parameters for the PoRep-shaped circuit.
//
//   cuzk-bench srs generate [--challenges N --layers N --parents N --depth N] [--params-seed N]
//                           [--backend cpu|cuda] -o FILE
//   cuzk-bench srs inspect FILE [--json]
// Generated parameters come from seeded toxic waste (deterministic, for benchmarks; the seed
// is stored in the file). Not a trusted setup.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "harness/cli/commands.hpp"
#include "harness/cli/porep_flags.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/suite/porep_job.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/setup.hpp"

namespace cuzk::cli {
namespace {

struct SrsOptions {
  PorepFlags porep;  // the same defaults as prove: its default parameters are these
  uint64_t seed = 1;
  uint64_t circuit_seed = 42;
  std::string out, in;
  std::string backend = "cpu";  // where the fixed-base multiplications run; the file is the same
  bool force = false, json = false;
};

int run_generate(const SrsOptions& o) {
  const circuits::PorepParams P = porep_params(o.porep);
  if (o.out.empty()) throw Error("srs generate needs -o FILE");
  check_output_file(o.out, "-o", o.force);
  // save_params renames a temporary over the path: never over a device node or FIFO (as root
  // that would replace /dev/full); a parameter file is memory-mapped later anyway.
  if (std::error_code ec; std::filesystem::exists(o.out, ec) && !std::filesystem::is_regular_file(o.out, ec))
    throw Error(fmt::format("-o {} is not a regular file (parameter files are memory-mapped by prove)", o.out));
  check_sector_memory(P, 1, "srs generate");
  const std::string backend = resolve_backend(o.backend, false, "--backend cpu makes the same file on CPU threads");
  const auto t0 = std::chrono::steady_clock::now();
  std::string where;
  auto pk = generate_porep_keys(circuits::PorepCircuit::generate(P, o.circuit_seed), o.seed, backend, &where);
  try {
    groth16::save_params(pk, o.out);
  } catch (const groth16::ParamsError& e) {
    throw Error(e.what());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("wrote {} for {} ({} constraints, domain {}, seed {}) in {:.2f} s (fixed-base multiplications on {})\n",
             o.out, P.to_string(), pk.num_constraints, pk.domain_size, o.seed, s, where);
  return kExitOk;
}

int run_inspect(const SrsOptions& o) {
  check_input_file(o.in);
  const auto t0 = std::chrono::steady_clock::now();
  groth16::ProvingKey pk;
  try {
    pk = groth16::load_params(o.in);
  } catch (const groth16::ParamsError& e) {
    throw Error(e.what());
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json j = {{"file", o.in},
                      {"version", groth16::kParamsVersion},
                      {"convention", pk.convention == groth16::HConvention::kBellman ? "bellman" : "snarkjs"},
                      {"num_inputs", pk.num_inputs},
                      {"num_aux", pk.num_aux},
                      {"num_constraints", pk.num_constraints},
                      {"domain_size", pk.domain_size},
                      {"seed", pk.seed},
                      {"points", {{"ic", pk.vk.ic.size()}, {"a", pk.a_query.size()}, {"b_g1", pk.b_g1_query.size()},
                                  {"b_g2", pk.b_g2_query.size()}, {"h", pk.h_query.size()}, {"l", pk.l_query.size()}}},
                      {"load_ms", ms}};
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return kExitOk;
  }
  fmt::print("{}: cuzk parameters v{}, {} convention, checksums ok\n", o.in, groth16::kParamsVersion,
             j["convention"].get<std::string>());
  fmt::print("  circuit   {} inputs (with one), {} aux, {} constraints, domain {}\n", pk.num_inputs, pk.num_aux,
             pk.num_constraints, pk.domain_size);
  fmt::print("  points    ic {}, a {}, b_g1 {}, b_g2 {}, h {}, l {}\n", pk.vk.ic.size(), pk.a_query.size(),
             pk.b_g1_query.size(), pk.b_g2_query.size(), pk.h_query.size(), pk.l_query.size());
  fmt::print("  seed      {}\n  load      {:.2f} ms (mmap + checksum)\n", pk.seed, ms);
  return kExitOk;
}

Registrar reg_srs("srs", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("srs", "generate or inspect Groth16 parameter files");
  sub->require_subcommand(1);
  auto o = std::make_shared<SrsOptions>();
  auto* gen = sub->add_subcommand("generate", "parameters for the PoRep-shaped circuit from a seed (not a trusted setup)");
  add_porep_flags(gen, o->porep);
  // prove calls this seed --params-seed (its --seed is r and s); --seed stays as an alias.
  gen->add_option("--params-seed,--seed", o->seed, "toxic-waste seed (prove's --params-seed; --seed is an older alias)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  gen->add_option("--backend", o->backend,
                  "where the fixed-base multiplications run: cpu, or cuda (the GPU; the same file)")
      ->capture_default_str();
  gen->add_option("-o,--out", o->out, "parameter file to write")->required();
  gen->add_flag("--force", o->force, "replace an existing file");
  auto* ins = sub->add_subcommand("inspect", "validate a parameter file and print its shape");
  ins->add_option("file", o->in, "parameter file")->required();
  ins->add_flag("--json", o->json, "machine-readable output");
  return [=] { return gen->parsed() ? run_generate(*o) : run_inspect(*o); };
});

}  // namespace
}  // namespace cuzk::cli
