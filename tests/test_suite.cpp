// Suite files: every kind of error is reported (file:line and the key) before anything runs,
// and `run --suite quick --quick` writes a valid results file with the expected cases.
#include <set>

#include "catch.hpp"
#include "harness/results.hpp"
#include "harness/suite.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;

namespace {

std::string parse_error(const std::string& text) {
  try {
    cuzk::suite::parse_suite_text(text, "bad.toml");
  } catch (const cuzk::suite::SuiteError& e) {
    return e.what();
  }
  return "";
}

const char* kGood = R"(name = "t"
description = "test"
[defaults]
reps = 2
warmup = 1
quick = { reps = 1, warmup = 0 }

[[case]]
name = "tiny"
kind = "porep"
partitions = 2
challenges = 2
depth = 8
quick = { challenges = 1 }

[[case]]
name = "big"
kind = "porep"
layers = 1
parents = 2
quick = false
)";

// Runs `cuzk-bench run --suite FILE` on a bad suite file: exit 2, the message, no results.
void expect_rejected(const std::string& text, const std::string& message) {
  TempDir d;
  cuzk::test::spit(d.file("s.toml"), text);
  auto r = cuzk::test::run_bench("run --suite s.toml --out out.jsonl", d.path());
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(!cuzk::test::exists(d.file("out.jsonl")));
  CHECK(!cuzk::test::exists(d.file("results")));  // nothing ran: no results, no parameters
}

}  // namespace

TEST_CASE("a valid suite parses with defaults and quick overrides") {
  auto s = cuzk::suite::parse_suite_text(kGood, "good.toml");
  REQUIRE(s.name == "t");
  REQUIRE(s.cases.size() == 2);
  CHECK(s.reps == 2);
  CHECK(s.warmup == 1);
  const auto& c = s.cases[0];
  CHECK(cuzk::suite::effective_params(c, false)["challenges"] == 2);
  CHECK(cuzk::suite::effective_params(c, true)["challenges"] == 1);
  CHECK(cuzk::suite::effective_params(c, true)["layers"] == 0);  // kind default
  CHECK(cuzk::suite::effective_reps(s, c, true) == 1);
  CHECK(cuzk::suite::effective_warmup(s, c, false) == 1);
  CHECK(!s.cases[1].in_quick);
}

TEST_CASE("each kind of suite error names the place and the key") {
  SECTION("malformed TOML gives file:line") {
    auto m = parse_error("name = \"x\"\n[[case]\nkind = 1\n");
    CHECK(m.find("bad.toml:2:") != std::string::npos);
    CHECK(m.find("malformed TOML") != std::string::npos);
  }
  SECTION("unknown kind") {
    auto m = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"sorcery\"\n");
    CHECK(m.find("bad.toml:4:") != std::string::npos);
    CHECK(m.find("unknown kind 'sorcery'") != std::string::npos);
  }
  SECTION("unknown parameter") {
    auto m = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\nchalenges = 2\n");
    CHECK(m.find("bad.toml:5:") != std::string::npos);
    CHECK(m.find("unknown parameter 'chalenges'") != std::string::npos);
  }
  SECTION("bad value: wrong type") {
    auto m = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\ndepth = \"eight\"\n");
    CHECK(m.find("bad.toml:5:") != std::string::npos);
    CHECK(m.find("'depth' must be an integer") != std::string::npos);
  }
  SECTION("bad value: out of range") {
    auto m = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\npartitions = 0\n");
    CHECK(m.find("bad.toml:5:") != std::string::npos);
    CHECK(m.find("'partitions' = 0 is out of range") != std::string::npos);
  }
  SECTION("bad value in a quick override") {
    auto m = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\nquick = { depth = 99 }\n");
    CHECK(m.find("(quick)") != std::string::npos);
    CHECK(m.find("'depth' = 99") != std::string::npos);
  }
  SECTION("unknown top-level key and missing pieces") {
    CHECK(parse_error("name = \"x\"\nrepz = 3\n[[case]]\nname = \"c\"\nkind = \"porep\"\n").find("bad.toml:2:1: unknown key 'repz'") !=
          std::string::npos);
    CHECK(parse_error("[[case]]\nname = \"c\"\nkind = \"porep\"\n").find("missing required key 'name'") != std::string::npos);
    CHECK(parse_error("name = \"x\"\n").find("no cases") != std::string::npos);
    CHECK(parse_error("name = \"x\"\n[[case]]\nname = \"c\"\n").find("missing required key 'kind'") != std::string::npos);
    CHECK(parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\n")
              .find("duplicate case name 'c'") != std::string::npos);
  }
  SECTION("parameters valid one by one but not together") {
    auto m = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\nchallenges = 3\ndepth = 1\n");
    CHECK(m.find("bad.toml:2:1: case 'c': --challenges 3 exceeds") != std::string::npos);
    auto q = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\ndepth = 1\nquick = { challenges = 3 }\n");
    CHECK(q.find("case 'c' (with its quick overrides): --challenges 3 exceeds") != std::string::npos);
  }
  SECTION("bad backends entry") {
    auto m = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\nbackends = [\"tpu\"]\n");
    CHECK(m.find("bad.toml:5:13: case 'c': 'backends' entries must be") != std::string::npos);
  }
  SECTION("a valid file gives no error") { CHECK(parse_error(kGood).empty()); }
}

TEST_CASE("run refuses a bad suite file before running anything") {
  expect_rejected("name = \"x\"\n[[case]\n", "s.toml:2:");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"sorcery\"\n", "unknown kind 'sorcery'");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\ndepht = 8\n", "s.toml:5:1: case 'c': unknown parameter 'depht'");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\ndepth = -1\n", "'depth' = -1 is out of range");
  // The first case is fine, the second is bad: still nothing runs.
  expect_rejected(
      "name = \"x\"\n[[case]]\nname = \"ok\"\nkind = \"porep\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\nchallenges = 5\ndepth = 2\n",
      "s.toml:5:1: case 'c': --challenges 5 exceeds the 4 nodes");
  TempDir d;
  auto r = cuzk::test::run_bench("run --suite no-such-suite", d.path());
  CHECK(r.code == 2);
  CHECK(r.err.find("no suite named 'no-such-suite'") != std::string::npos);
}

TEST_CASE("the shipped suites are valid") {
  for (const char* name : {"quick", "e2e"}) {
    INFO(name);
    auto s = cuzk::suite::load_suite_file(std::string(CUZK_SOURCE_DIR) + "/suites/" + name + ".toml");
    CHECK(s.name == name);
    CHECK(!s.cases.empty());
  }
  TempDir d;
  auto r = cuzk::test::run_bench("run --suite '" + std::string(CUZK_SOURCE_DIR) + "/suites/e2e.toml' --quick --list", d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("cpu-small") != std::string::npos);
  CHECK(r.out.find("gpu-large") == std::string::npos);  // quick = false
  CHECK(!cuzk::test::exists(d.file("results")));
}

TEST_CASE("run --suite quick --quick writes a valid results file with the expected cases") {
  TempDir d;
  const std::string suite = std::string(CUZK_SOURCE_DIR) + "/suites/quick.toml";
  auto expected = cuzk::suite::load_suite_file(suite);
  REQUIRE(cuzk::test::share_params_cache(d));
  auto r = cuzk::test::run_bench("run --suite '" + suite + "' --quick --out out.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("[quick] case 1/") != std::string::npos);  // progress on stderr
  auto f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.summary.has_value());
  std::set<std::string> want, got;
  for (auto& c : expected.cases)
    if (c.in_quick) want.insert(c.name);
  size_t measured = 0;
  for (auto& s : f.samples) {
    CHECK(s.value["suite"] == "quick");
    got.insert(s.value["case"].get<std::string>());
    CHECK(s.value.contains("parameters"));
    CHECK(s.value["parameters"].contains("partitions"));
    if (!s.value["warmup"].get<bool>()) ++measured;
  }
  CHECK(got == want);
  CHECK(measured >= want.size());
}
