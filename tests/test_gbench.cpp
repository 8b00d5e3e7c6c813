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
