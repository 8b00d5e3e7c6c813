// `cuzk-bench verify --vk verification_key.json --proof proof.json --public public.json`:
// checks a Groth16 proof in snarkjs's JSON formats (ours or snarkjs's) with cuzk's verifier.
// Exit codes: 0 the proof is valid; 1 it is not (the pairing check fails, or a proof point is
// not a valid group element); 2 bad input (unreadable or malformed file, wrong number of public
// inputs for the key), with the file and field named.
#include <fmt/core.h>

#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/cli/commands.hpp"
#include "harness/measure/output_file.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/instr/phase.hpp"
#include "prover/interop/snarkjs_json.hpp"

namespace cuzk::cli {
namespace {

struct VerifyOptions {
  std::string vk, proof, pub;
  bool quiet = false;
};

// Reads one input with `read`; a fault of the JSON library (a field of the wrong type, say) is
// bad input naming the file, like the readers' own errors.
template <typename T, typename Read>
T read_input(const std::string& path, const char* flag, Read read) {
  check_input_file(path, flag);
  try {
    return read(path);
  } catch (const interop::JsonError&) {
    throw;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: malformed JSON: {}", path, e.what()));
  } catch (const std::bad_alloc&) {
    throw Error(fmt::format("{}: too large to read", path));
  }
}

int run_verify(const VerifyOptions& o) {
  groth16::VerifyingKey vk;
  std::vector<fr_t> publics;
  groth16::Proof proof;
  try {
    vk = read_input<groth16::VerifyingKey>(o.vk, "--vk", interop::read_vk_json);
    publics = read_input<std::vector<fr_t>>(o.pub, "--public", interop::read_public_json);
    proof = read_input<groth16::Proof>(o.proof, "--proof", interop::read_proof_json);
  } catch (const interop::JsonError& e) {
    if (e.kind() == interop::JsonError::kInvalidPoint) {
      if (!o.quiet) fmt::print("INVALID: {}\n", e.what());
      return kExitFailure;
    }
    throw Error(e.what());
  }
  if (publics.size() + 1 != vk.ic.size())
    throw Error(fmt::format("{}: {} public signals, but the verification key {} expects {} (IC has {} points)", o.pub,
                            publics.size(), o.vk, vk.ic.size() - 1, vk.ic.size()));
  bool ok;
  {
    instr::Phase ph("verify");
    ok = groth16::verify(vk, proof, publics);
  }
  if (!o.quiet) fmt::print("{}: {} against {} with {}\n", ok ? "OK" : "INVALID", o.proof, o.vk, o.pub);
  return ok ? kExitOk : kExitFailure;
}

Registrar reg_verify("verify", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("verify", "verify a Groth16 proof given in snarkjs's JSON formats (exit 0 valid, 1 invalid, 2 bad input)");
  auto o = std::make_shared<VerifyOptions>();
  sub->add_option("--vk", o->vk, "verification_key.json (snarkjs format, curve bls12381)")->required();
  sub->add_option("--proof", o->proof, "proof.json (snarkjs format)")->required();
  sub->add_option("--public", o->pub, "public.json: the public signals, decimal strings")->required();
  sub->add_flag("--quiet,-q", o->quiet, "print nothing on stdout; the exit code tells (bad input still gets its one error line)");
  return [o] { return run_verify(*o); };
});

}  // namespace
}  // namespace cuzk::cli
