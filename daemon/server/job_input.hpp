// A job's input as the daemon accepts it (docs/daemon.md#inputs): JSON naming the sector to
// prove, inline or in a file under the daemon's input folder. Every check gives an InputError
// with the gRPC status it maps to and a message that names what was wrong.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cuzk::daemon {

class InputError : public std::runtime_error {
 public:
  enum class Code { invalid, not_found, permission_denied, too_large };
  InputError(Code c, const std::string& what) : std::runtime_error(what), code(c) {}
  Code code;
};

// kind "porep": {"partitions": N, "circuit_seed": S, "rs_seed": R}; partition i's witness comes
// from circuit_seed + i, its r and s from rs_seed + i (as `cuzk-bench prove`).
struct JobInput {
  uint32_t partitions = 1;
  uint64_t circuit_seed = 42;
  uint64_t rs_seed = 1;
};

struct InputLimits {
  uint32_t max_partitions = 16;
  size_t max_input_bytes = 64 * 1024;
};

// Parses and checks `text`; unknown keys are refused (a typo must not silently prove
// something else).
JobInput parse_job_input(const std::string& text, const InputLimits& limits);
// The canonical JSON of an input: equal inputs give equal text (idempotency checks).
std::string canonical_json(const JobInput& in);

// Reads the input file `path`, which must resolve (symbolic links and ".." included) to a
// regular file inside `input_dir`, of at most limits.max_input_bytes. An empty `input_dir`
// refuses every path.
std::string read_input_file(const std::string& path, const std::string& input_dir, const InputLimits& limits);

}  // namespace cuzk::daemon
