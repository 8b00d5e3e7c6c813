// Limits that every reader of outside input applies before it allocates or recurses, so that a
// hostile or corrupt file is refused at once with a message, instead of exhausting memory,
// the stack or time (docs/fuzzing.md lists them and how to raise them).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cuzk::limits {

// Constraints, wires and witness values a circuit file may declare (.r1cs, .wtns, .zkey).
// Default 2^28 (the largest domain the .zkey reader takes); $CUZK_MAX_CONSTRAINTS raises it.
inline constexpr uint64_t kDefaultMaxConstraints = uint64_t(1) << 28;
inline constexpr const char* kMaxConstraintsEnv = "CUZK_MAX_CONSTRAINTS";
// The limit in force: $CUZK_MAX_CONSTRAINTS when set to a positive integer, else the default.
uint64_t max_constraints();
// "<what> declares N, over the limit of M (raise it with CUZK_MAX_CONSTRAINTS=...)".
std::string over_max_constraints(const std::string& what, uint64_t declared);

// JSON nesting (arrays and objects) that the JSON readers accept: every format cuzk reads
// nests a handful of levels; nlohmann's copy and dump recurse once per level, so a
// 100,000-deep document would overflow the stack.
inline constexpr size_t kMaxJsonDepth = 64;

// Input files that are one document, read whole (prover/interop/input_file.hpp): their size
// is checked from fstat before a byte is read. JSON documents (matrix manifest.json and
// attribution.json, Google Benchmark output, snarkjs proof, public and verification-key JSON)
// are kilobytes to a few megabytes; TOML files (suites, gate thresholds) are written by hand.
inline constexpr uint64_t kMaxJsonDocumentBytes = uint64_t(64) << 20;
inline constexpr uint64_t kMaxTomlBytes = uint64_t(4) << 20;

// The deepest nesting of [ and { in `text`, outside strings (a pre-scan: no allocation, no
// recursion; malformed JSON is left to the parser).
size_t json_nesting_depth(std::string_view text);

}  // namespace cuzk::limits
