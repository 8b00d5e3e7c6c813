// Google Benchmark JSON with non-finite statistics (bare NaN / Infinity) reads, with those
// values as null, and nothing inside strings is touched.
#include "catch.hpp"
#include "harness/analysis/gbench.hpp"

TEST_CASE("bare NaN and Infinity in Google Benchmark JSON read as null") {
  const std::string text = R"({"benchmarks":[{"name":"BM_x NaN inf","cv":NaN,"a":-Infinity,"b":Infinity,"c":-nan,"real_time":1.5}]})";
  auto doc = cuzk::parse_gbench_json(text);
  const auto& b = doc["benchmarks"][0];
  CHECK(b["name"] == "BM_x NaN inf");
  CHECK(b["cv"].is_null());
  CHECK(b["a"].is_null());
  CHECK(b["b"].is_null());
  CHECK(b["c"].is_null());
  CHECK(b["real_time"] == 1.5);
  CHECK(cuzk::gbench_json_nonfinite_to_null(R"({"s":"a\"NaN","n":-1e3})") == R"({"s":"a\"NaN","n":-1e3})");
  CHECK_THROWS(cuzk::parse_gbench_json("{\"a\": Nope}"));
}

TEST_CASE("a negative or non-finite real_time is named, with its benchmark") {
  auto doc = cuzk::parse_gbench_json(
      R"({"benchmarks":[{"name":"BM_ok","real_time":1.5},{"name":"BM_neg","real_time":-3},{"name":"BM_nan","real_time":NaN},)"
      R"({"name":"BM_inf","real_time":Infinity},{"real_time":1}]})");
  const auto& b = doc["benchmarks"];
  CHECK(cuzk::gbench_entry_problem(b[0]).empty());
  CHECK(cuzk::gbench_entry_problem(b[1]) == "benchmark 'BM_neg': real_time is -3, expected a finite number >= 0");
  CHECK(cuzk::gbench_entry_problem(b[2]) == "benchmark 'BM_nan': real_time is null, expected a finite number >= 0");
  CHECK(cuzk::gbench_entry_problem(b[3]) == "benchmark 'BM_inf': real_time is null, expected a finite number >= 0");
  CHECK(cuzk::gbench_entry_problem(b[4]) == "benchmark entry without a name");
  CHECK_THROWS_AS(cuzk::parse_gbench_json(std::string(100, '[') + std::string(100, ']')), cuzk::GbenchError);
}

TEST_CASE("a number beyond a double's range throws a json::exception (found by fuzz_gbench)") {
  CHECK_THROWS_AS(cuzk::parse_gbench_json(R"({"benchmarks":[{"name":"x","real_time":2e308}]})"), nlohmann::json::exception);
}
