// The output model's printers (harness/analysis/output/): one Table or Summary, three renderings.
#include <string>

#include "catch.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"

using namespace cuzk::output;

namespace {

Table sample(Rule rule) {
  Table t({{"phase", Align::left, ""}, {"median", Align::right, "median_ns"}, {"verdict", Align::left, ""}});
  t.rule = rule;
  t.add_row({"proof", Cell("1.5 ms", 1.5e6), "slower"});
  t.add_row({"msm|h", Cell("12.0 ms", 12e6), "unchanged "});
  return t;
}

}  // namespace

TEST_CASE("text: columns flush left two spaces apart, last cell unpadded, trailing spaces cut") {
  CHECK(text(sample(Rule::none)) ==
        "phase  median   verdict\n"
        "proof  1.5 ms   slower\n"
        "msm|h  12.0 ms  unchanged\n");
}

TEST_CASE("text: the rule ends under the last title or under the widest last cell") {
  const std::string header = "phase  median   verdict\n";
  CHECK(text(sample(Rule::header)).substr(header.size()).starts_with(std::string(7 + 9 + 7, '-') + "\n"));
  CHECK(text(sample(Rule::widest)).substr(header.size()).starts_with(std::string(7 + 9 + 10, '-') + "\n"));
}

TEST_CASE("markdown: alignment per column, pipes in cells escaped, short rows filled") {
  Table t = sample(Rule::none);
  t.add_row({"short"});
  CHECK(markdown(t) ==
        "| phase | median | verdict |\n"
        "| --- | ---: | --- |\n"
        "| proof | 1.5 ms | slower |\n"
        "| msm\\|h | 12.0 ms | unchanged  |\n"
        "| short |  |  |\n");
}

TEST_CASE("json: a cell's value under its column's key, else its text") {
  Table t = sample(Rule::none);
  t.notes.push_back("n: samples");
  const auto j = to_json(t);
  CHECK(j["rows"][0]["phase"] == "proof");
  CHECK(j["rows"][0]["median_ns"] == 1.5e6);
  CHECK(j["rows"][1]["verdict"] == "unchanged ");
  CHECK(j["notes"][0] == "n: samples");
}

TEST_CASE("summary: text and Markdown leave out empty sections; JSON keeps them empty") {
  Summary s{"PASS", {"baseline a, candidate b"}, {{"Errors", {}}, {"Warnings", {"one"}}}};
  CHECK(markdown(s) == "## PASS\n\nbaseline a, candidate b\n\n### Warnings\n\n- one\n\n");
  CHECK(text(s) == "PASS\nbaseline a, candidate b\nWarnings:\n  one\n");
  CHECK(to_json(s)["sections"]["Errors"].empty());
}

TEST_CASE("format: percentages, changes and p-values") {
  CHECK(pct(0.123) == "12.3%");
  CHECK(pct_short(0.05) == "5%");
  CHECK(pct_digits(0.0123) == "1.23");
  CHECK(signed_pct_digits(0.0123) == "+1.23");
  CHECK(change_pct(1.052) == "+5.2%");
  CHECK(change_pct(0.9) == "-10.0%");
  CHECK(pval(0.0004) == "4.0e-04");
  CHECK(sig3(1234) == "1234");
}

TEST_CASE("format: durations as a person reads them") {
  CHECK(duration(42.4) == "42 s");
  CHECK(duration(89.4) == "89 s");
  CHECK(duration(734) == "12 min");
  CHECK(duration(3569) == "59 min");
  CHECK(duration(3600) == "1 h 00 min");
  CHECK(duration(4020) == "1 h 07 min");
  CHECK(duration(-1) == "?");
}
