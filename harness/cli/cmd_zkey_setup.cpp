// `cuzk-bench zkey-setup --r1cs circuit.r1cs --out circuit.zkey [--seed N] [--force]`: a snarkjs-format
// Groth16 .zkey for a circom circuit from seeded toxic waste (interop::setup_zkey). For tests
// and benchmarks only, NOT a trusted setup: whoever knows the seed can forge proofs. Both
// `snarkjs groth16 prove` and `cuzk-bench prove --zkey` accept the file; scripts/bench-snarkjs.sh
// uses it because a snarkjs powers-of-tau ceremony of 2^17 takes hours on two cores.
#include <fmt/core.h>

#include <memory>
#include <string>

#include "harness/cli/commands.hpp"
#include "harness/measure/output_file.hpp"
#include "prover/circom/circom.hpp"
#include "prover/interop/zkey.hpp"

namespace cuzk::cli {
namespace {

struct ZkeySetupOptions {
  std::string r1cs, out;
  uint64_t seed = 1;
  bool force = false;
};

int run_zkey_setup(const ZkeySetupOptions& o) {
  // Every path is checked before the (slow) setup: nothing is replaced by surprise.
  check_input_file(o.r1cs, "--r1cs");
  check_distinct({{"--r1cs", o.r1cs}}, {{"--out", o.out}});
  check_output_file(o.out, "--out", o.force);
  std::vector<uint8_t> bytes;
  try {
    circom::R1csFile r1cs = circom::read_r1cs(o.r1cs);
    bytes = interop::setup_zkey(r1cs, o.seed);
  } catch (const circom::FormatError& e) {
    throw Error(e.what());
  } catch (const interop::ZkeyError& e) {
    throw Error(o.r1cs + ": " + e.what());
  }
  write_output_file(o.out, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  fmt::print("wrote {} ({} bytes; test keys from seed {}, NOT a trusted setup)\n", o.out, bytes.size(), o.seed);
  return kExitOk;
}

Registrar reg_zkey_setup("zkey-setup", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand(
      "zkey-setup", "write a snarkjs-format Groth16 .zkey for a circom .r1cs from seeded toxic waste (test keys, NOT a trusted setup)");
  auto o = std::make_shared<ZkeySetupOptions>();
  sub->add_option("--r1cs", o->r1cs, "circom .r1cs (compiled with --prime bls12381)")->required();
  sub->add_option("--out", o->out, "the .zkey to write")->required();
  sub->add_option("--seed", o->seed, "toxic-waste seed (default 1)");
  sub->add_flag("--force", o->force, "replace --out if it exists");
  return [o] { return run_zkey_setup(*o); };
});

}  // namespace
}  // namespace cuzk::cli
