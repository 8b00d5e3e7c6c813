// Placeholder until the snarkjs .zkey import lands (replaced by the interop work).
#include "harness/cli/prove_circom.hpp"

#include "harness/cli/commands.hpp"

namespace cuzk::cli {
int run_prove_circom(const CircomProveOptions&) {
  throw Error("proving circom inputs needs the .zkey import, which this build does not have yet");
}
}  // namespace cuzk::cli
