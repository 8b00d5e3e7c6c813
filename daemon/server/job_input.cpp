#include "daemon/server/job_input.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cuzk::daemon {
namespace fs = std::filesystem;
using Code = InputError::Code;

namespace {

uint64_t unsigned_field(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
    throw InputError(Code::invalid, fmt::format("input: \"{}\" must be a non-negative integer, got {}", key, v.dump()));
  return v.get<uint64_t>();
}

}  // namespace

JobInput parse_job_input(const std::string& text, const InputLimits& limits) {
  if (text.size() > limits.max_input_bytes)
    throw InputError(Code::too_large, fmt::format("input: {} bytes, more than the daemon's limit of {} (--max-input-bytes)",
                                                  text.size(), limits.max_input_bytes));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(Code::invalid, fmt::format("input: not JSON ({})", e.what()));
  }
  if (!j.is_object()) throw InputError(Code::invalid, "input: expected a JSON object such as {\"partitions\": 2}");
  JobInput in;
  for (const auto& [key, value] : j.items()) {
    if (key == "partitions") {
      const uint64_t p = unsigned_field(j, "partitions");
      if (p < 1 || p > limits.max_partitions)
        throw InputError(Code::invalid, fmt::format("input: \"partitions\" {} is out of range [1, {}] (--max-partitions)", p,
                                                    limits.max_partitions));
      in.partitions = uint32_t(p);
    } else if (key == "circuit_seed") {
      in.circuit_seed = unsigned_field(j, "circuit_seed");
    } else if (key == "rs_seed") {
      in.rs_seed = unsigned_field(j, "rs_seed");
    } else {
      throw InputError(Code::invalid,
                       fmt::format("input: unknown key \"{}\" (expected partitions, circuit_seed, rs_seed)", key));
    }
  }
  return in;
}

std::string canonical_json(const JobInput& in) {
  return nlohmann::json{{"partitions", in.partitions}, {"circuit_seed", in.circuit_seed}, {"rs_seed", in.rs_seed}}.dump();
}

std::string read_input_file(const std::string& path, const std::string& input_dir, const InputLimits& limits) {
  if (input_dir.empty())
    throw InputError(Code::permission_denied,
                     fmt::format("input_path {}: this daemon takes no input files (start it with --input-dir)", path));
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(input_dir, ec);
  const fs::path file = fs::weakly_canonical(fs::path(input_dir) / path, ec);
  if (ec) throw InputError(Code::invalid, fmt::format("input_path {}: {}", path, ec.message()));
  // Inside the folder: the folder's path is a prefix of the file's, component by component.
  auto [d, f] = std::mismatch(dir.begin(), dir.end(), file.begin(), file.end());
  if (d != dir.end() || f == file.end())
    throw InputError(Code::permission_denied,
                     fmt::format("input_path {}: outside the input folder {}", path, dir.string()));
  if (!fs::exists(file, ec)) throw InputError(Code::not_found, fmt::format("input_path {}: no such file", path));
  if (!fs::is_regular_file(file, ec))
    throw InputError(Code::invalid, fmt::format("input_path {}: not a regular file", path));
  const auto size = fs::file_size(file, ec);
  if (ec || size > limits.max_input_bytes)
    throw InputError(Code::too_large, fmt::format("input_path {}: {} bytes, more than the daemon's limit of {}", path,
                                                  size, limits.max_input_bytes));
  std::ifstream is(file, std::ios::binary);
  std::ostringstream ss;
  ss << is.rdbuf();
  if (!is && !is.eof()) throw InputError(Code::invalid, fmt::format("input_path {}: cannot read it", path));
  return ss.str();
}

}  // namespace cuzk::daemon
