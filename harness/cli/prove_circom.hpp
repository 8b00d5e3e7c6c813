// `cuzk-bench prove` for circom inputs: a snarkjs .zkey (which carries the A and B coefficients)
// and a circom .wtns, optionally the .r1cs (checked against the zkey, and used to check that the
// witness satisfies every constraint before proving). Writes snarkjs's proof.json and public.json
// (and verification_key.json on request), all or nothing, each atomically. The lead's cmd_prove.cpp wires the flags:
//   cuzk-bench prove --zkey circuit.zkey --wtns witness.wtns [--r1cs circuit.r1cs]
//                    --proof proof.json --public public.json [--vk verification_key.json] [--seed N]
// Phases (relative to the caller's open phase): proof/srs_load (read the .zkey), proof/synth
// (read the .wtns, r1cs checks, a/b/c), proof/prove (the backend's proving stage: ntt_h, msm_*, assemble),
// proof/verify (our own pairing check of the new proof), proof/write.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/measure/output_file.hpp"

namespace cuzk::cli {

struct CircomProveOptions {
  std::string zkey, wtns, r1cs /*optional*/, proof_out, public_out, vk_out /*optional*/;
  std::optional<uint64_t> seed;  // r, s from this seed (reproducible); absent: a secure source
  bool quiet = false;            // no summary on stdout
  std::string backend = "cpu";   // groth16::make_backend name (checked by the caller)
  bool force = false;            // replace existing --proof/--public/--vk files
};

// Checks every path before any work or any file is opened: inputs readable (not folders),
// outputs writable, not existing unless o.force, none the same file as an input or another
// output (`more_outputs`: the caller's, e.g. the results file). Throws Error / FileError.
void check_circom_paths(const CircomProveOptions& o, const std::vector<NamedPath>& more_outputs);

// Returns kExitOk, or kExitFailure when the new proof does not verify (an unsatisfying witness
// that no --r1cs caught). Throws cuzk::cli::Error (exit 2) for unreadable, malformed or
// mismatched inputs, naming the file and the fault.
int run_prove_circom(const CircomProveOptions& o);

}  // namespace cuzk::cli
