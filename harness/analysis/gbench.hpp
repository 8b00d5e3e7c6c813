// Reading Google Benchmark's --benchmark_format=json output (the micro suite kind, compare).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace cuzk {

// Google Benchmark writes non-finite numbers as bare NaN / Infinity / -Infinity (e.g. the
// coefficient of variation of a counter that is 0 in every repetition), which is not JSON.
// Returns the text with each such token outside a string replaced by null.
std::string gbench_json_nonfinite_to_null(std::string_view text);

// Parses Google Benchmark JSON output (non-finite numbers read as null); throws
// nlohmann::json::parse_error on anything else that is not JSON.
nlohmann::json parse_gbench_json(std::string_view text);

}  // namespace cuzk
