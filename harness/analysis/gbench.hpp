// Reading Google Benchmark's --benchmark_format=json output (the micro suite kind, compare).
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cuzk {

// Google Benchmark writes non-finite numbers as bare NaN / Infinity / -Infinity (e.g. the
// coefficient of variation of a counter that is 0 in every repetition), which is not JSON.
// Returns the text with each such token outside a string replaced by null.
std::string gbench_json_nonfinite_to_null(std::string_view text);

// A document nested deeper than limits::kMaxJsonDepth (prover/interop/input_limits.hpp).
class GbenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses Google Benchmark JSON output (non-finite numbers read as null); throws
// nlohmann::json::exception on anything else that is not JSON (parse_error, or out_of_range
// for a number such as 1e400), GbenchError when it nests deeper than the limit (copying such
// a document would overflow the stack).
nlohmann::json parse_gbench_json(std::string_view text);

// A field of a Google Benchmark object that must have type `want` when present (number_float
// accepts any number): absent or null gives `fallback`; another type throws GbenchError naming
// the field (nlohmann's value() would throw type_error, which names neither file nor field).
nlohmann::json gbench_field(const nlohmann::json& obj, const char* key, nlohmann::json::value_t want,
                            nlohmann::json fallback);

// A time in Google Benchmark's time_unit ("ns", "us", "ms", "s"; empty is ns) in nanoseconds;
// throws GbenchError on another unit.
double gbench_time_ns(double value, const std::string& unit);

// What is wrong with a benchmark entry's timing, naming the benchmark ("" when nothing is):
// real_time must be a finite number >= 0 (a negative or non-finite time would pass a gate).
std::string gbench_entry_problem(const nlohmann::json& entry);

}  // namespace cuzk
