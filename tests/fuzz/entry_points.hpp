// One "parse these bytes" function per reader of outside input, shared by the libFuzzer targets
// (tests/fuzz/fuzz_<target>.cpp) and the regression replay (tests/test_fuzz_regressions.cpp).
//
// Each runs the reader on `data` and returns normally when it parsed the input or refused it
// with the reader's own error type (the one the CLI turns into a one-line message). Any other
// exception escapes and a crash, hang or sanitizer report is a bug: that is what the fuzzer
// looks for and what the replay test fails on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace cuzk::fuzz {

using Bytes = std::span<const uint8_t>;

void parse_r1cs(Bytes data);         // circom .r1cs            (circom::FormatError)
void parse_wtns(Bytes data);         // circom .wtns            (circom::FormatError)
void parse_zkey(Bytes data);         // snarkjs .zkey           (interop::ZkeyError)
void parse_params(Bytes data);       // cuzk parameter file     (groth16::ParamsError)
void parse_proof_json(Bytes data);   // snarkjs proof.json      (interop::JsonError)
void parse_public_json(Bytes data);  // snarkjs public.json     (interop::JsonError)
void parse_vk_json(Bytes data);      // snarkjs verification_key.json (interop::JsonError)
void parse_results(Bytes data);      // results JSON Lines      (ResultsError)
void parse_suite(Bytes data);        // suite TOML              (SuiteError)
void parse_gate(Bytes data);         // gate thresholds TOML    (GateError)
void parse_gbench(Bytes data);       // Google Benchmark JSON   (nlohmann::json::exception, GbenchError; then compare's loading: CompareError)
void parse_manifest(Bytes data);     // matrix manifest.json    (matrix::MatrixError)
// "gpu_counters" results lines: `data` follows a fixed header and sample line of one case, so
// every input reaches the gpu_counters checks (ResultsError), then compare's use of the
// metrics as gpu:: counters of that case's phases (CompareError).
void parse_gpu_counters(Bytes data);
// BLS12-381 point encodings (48/96 bytes G1, 96/192 G2; errors are decode_error values). A
// point that decodes must encode back to the same bytes: any other outcome throws
// std::logic_error, which is a bug.
void parse_g1(Bytes data);
void parse_g2(Bytes data);

struct Target {
  std::string_view name;  // the fuzz target is fuzz_<name>; regressions in tests/fixtures/fuzz/<name>/
  void (*run)(Bytes);
};
std::span<const Target> targets();

}  // namespace cuzk::fuzz
