// Suite files: every kind of error is reported (file:line and the key) before anything runs,
// and `run --suite quick --quick` writes a valid results file with the expected cases.
#include <filesystem>
#include <set>

#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "harness/suite/suite.hpp"
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
  CHECK(s.warmup_runs == 1);
  const auto& c = s.cases[0];
  CHECK(cuzk::suite::effective_params(c, false)["challenges"] == 2);
  CHECK(cuzk::suite::effective_params(c, true)["challenges"] == 1);
  CHECK(cuzk::suite::effective_params(c, true)["layers"] == 0);  // kind default
  CHECK(cuzk::suite::effective_reps(s, c, true) == 1);
  CHECK(cuzk::suite::effective_warmup_runs(s, c, false) == 1);
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
  SECTION("bad value: a float too large for any integer is refused by its type") {
    auto m = parse_error("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\ndepth = 1e300\n");
    CHECK(m.find("'depth' must be an integer") != std::string::npos);
    m = parse_error("name = \"x\"\n[defaults]\nreps = 1e300\n[[case]]\nname = \"c\"\nkind = \"porep\"\n");
    CHECK(m.find("reps' must be an integer") != std::string::npos);
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

TEST_CASE("circuit, phases and micro parameters are checked, each error naming the accepted values") {
  const std::string head = "name = \"x\"\n[[case]]\nname = \"c\"\n";
  SECTION("unknown circuit") {
    auto m = parse_error(head + "kind = \"porep\"\ncircuit = \"sha256\"\n");
    CHECK(m.find("bad.toml:5:11: case 'c': unknown circuit 'sha256' for kind 'porep' (known circuits: porep)") !=
          std::string::npos);
  }
  SECTION("a kind without circuits") {
    auto m = parse_error(head + "kind = \"micro\"\ncircuit = \"porep\"\n");
    CHECK(m.find("unknown circuit 'porep' for kind 'micro' (known circuits: none") != std::string::npos);
  }
  SECTION("a known circuit and known phases are accepted") {
    auto s = cuzk::suite::parse_suite_text(
        head + "kind = \"porep\"\ncircuit = \"porep\"\nphases = [\"proof/synth\", \"proof/prove/msm_b_g2\"]\n", "ok.toml");
    CHECK(s.cases[0].circuit == "porep");
    CHECK(s.cases[0].phases == std::vector<std::string>{"proof/synth", "proof/prove/msm_b_g2"});
  }
  SECTION("unknown phase") {
    auto m = parse_error(head + "kind = \"porep\"\nphases = [\"proof\", \"proof/synht\"]\n");
    CHECK(m.find("bad.toml:5:20: case 'c': unknown phase 'proof/synht' in 'phases' (known phases: proof, proof/queue,") !=
          std::string::npos);
    CHECK(m.find("proof/prove/assemble)") != std::string::npos);
  }
  SECTION("phases must be a list of strings") {
    CHECK(parse_error(head + "kind = \"porep\"\nphases = \"proof\"\n").find("'phases' must be an array") != std::string::npos);
    CHECK(parse_error(head + "kind = \"porep\"\nphases = [3]\n").find("unknown phase (not a string)") != std::string::npos);
  }
  SECTION("unknown micro group") {
    auto m = parse_error(head + "kind = \"micro\"\ngroup = \"fft\"\n");
    CHECK(m.find("bad.toml:5:9: case 'c': parameter 'group' = \"fft\" is not one of: arithmetic, msm, ntt, synthesis") !=
          std::string::npos);
  }
  SECTION("a string parameter given a number, an integer parameter given a string") {
    CHECK(parse_error(head + "kind = \"micro\"\ngroup = 3\n").find("parameter 'group' must be a string") != std::string::npos);
    CHECK(parse_error(head + "kind = \"micro\"\nmin_time_ms = \"5\"\n").find("parameter 'min_time_ms' must be an integer") !=
          std::string::npos);
  }
  SECTION("bad filter regex, also in a quick override") {
    CHECK(parse_error(head + "kind = \"micro\"\nfilter = \"BM_(\"\n").find("'filter' = \"BM_(\" is not a valid regular expression") !=
          std::string::npos);
    CHECK(parse_error(head + "kind = \"micro\"\nquick = { filter = \"[\" }\n").find("(with its quick overrides): 'filter'") !=
          std::string::npos);
  }
  SECTION("micro defaults") {
    auto s = cuzk::suite::parse_suite_text(head + "kind = \"micro\"\nquick = { filter = \"BM_fr_add\" }\n", "ok.toml");
    auto p = cuzk::suite::effective_params(s.cases[0], false);
    CHECK(p["group"] == "arithmetic");
    CHECK(p["filter"] == "");
    CHECK(cuzk::suite::effective_params(s.cases[0], true)["filter"] == "BM_fr_add");
  }
}

TEST_CASE("run refuses a bad suite file before running anything") {
  expect_rejected("name = \"x\"\n[[case]\n", "s.toml:2:");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"sorcery\"\n", "unknown kind 'sorcery'");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\ndepht = 8\n", "s.toml:5:1: case 'c': unknown parameter 'depht'");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\ndepth = -1\n", "'depth' = -1 is out of range");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\ncircuit = \"sha\"\n", "s.toml:5:11: case 'c': unknown circuit 'sha'");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"porep\"\nphases = [\"proof/sinth\"]\n", "unknown phase 'proof/sinth'");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"micro\"\ngroup = \"fft\"\n", "parameter 'group' = \"fft\" is not one of");
  expect_rejected("name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"stage\"\nlog_n = 40\n",
                  "s.toml:5:9: case 'c': parameter 'log_n' = 40 is out of range [1, 27]");
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
  for (const char* name : {"quick", "e2e", "micro", "stage"}) {
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
  CHECK(r.out.find("gpu-medium") == std::string::npos);  // quick = false
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

// The micro kind runs the Google Benchmark binaries built next to cuzk-bench (<build>/suites);
// one tiny benchmark keeps it to seconds. Group "arithmetic" runs two binaries: bench_ec
// matches nothing, which is fine within a group.
TEST_CASE("a micro case runs under --quick and records each benchmark repetition as a phase") {
  TempDir d;
  cuzk::test::spit(d.file("m.toml"), R"(name = "m"
[defaults]
quick = { reps = 2, warmup = 1 }
[[case]]
name = "fr-add"
kind = "micro"
group = "arithmetic"
quick = { filter = "^BM_fr_add$", min_time_ms = 5 }
)");
  auto r = cuzk::test::run_bench("run --suite m.toml --quick --out out.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("--benchmark_repetitions=3") != std::string::npos);  // 1 warm-up + 2 measured
  CHECK(r.err.find("[m] case 1/1 fr-add: repetition 2/2") != std::string::npos);
  auto f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.summary.has_value());
  REQUIRE(f.samples.size() == 3);
  CHECK(f.samples[0].value["warmup"] == true);
  for (auto& s : f.samples) {
    CHECK(s.value["case"] == "fr-add");
    CHECK(s.value["parameters"]["group"] == "arithmetic");
    REQUIRE(s.value["phases"].size() == 1);
    const auto& ph = s.value["phases"]["micro/BM_fr_add"];
    CHECK(ph["count"] == 1);
    CHECK(ph["wall_ns"].get<uint64_t>() > 0);
    CHECK(ph["wall_ns"].get<uint64_t>() < 1'000'000);  // one field addition: nanoseconds, not ms
  }
  CHECK(f.summary->value["phases"]["micro/BM_fr_add"]["n"] == 2);
  CHECK(r.out.find("micro/BM_fr_add") != std::string::npos);  // the terminal table

  SECTION("a missing binary is one error naming where it looked") {
    auto m = cuzk::test::run_bench("run --suite m.toml --quick --out out2.jsonl", d.path(), "CUZK_MICRO_DIR=/no/such/dir");
    CHECK(m.code == 1);
    CHECK(m.err.find("case 'fr-add': no benchmark binary at /no/such/dir/bench_ff") != std::string::npos);
  }
  SECTION("output without Google Benchmark's shape is that binary's error, naming the field") {
    // Stand-in binaries: bench_ff prints one malformed entry, bench_ec (the group's other binary)
    // matches nothing and prints nothing.
    struct Bad {
      std::string entry, expect;
    };
    const Bad bads[] = {
        {R"("real_time": "fast", "time_unit": "ns")", "benchmark 'BM_fr_add': real_time is \"fast\", expected a finite number >= 0"},
        {R"("real_time": -3, "time_unit": "ns")", "real_time is -3, expected a finite number >= 0"},
        {R"("real_time": 3, "time_unit": 5)", "Google Benchmark field 'time_unit' must be a string, not number"},
        {R"("real_time": 3, "time_unit": "hours")", "unknown Google Benchmark time_unit 'hours'"},
        {R"("real_time": 3, "repetition_index": "one")", "Google Benchmark field 'repetition_index' must be a number"},
        {R"("real_time": 3, "iterations": [1])", "Google Benchmark field 'iterations' must be a number, not array"},
    };
    const std::string fake = d.file("fake");
    std::filesystem::create_directories(fake);
    cuzk::test::spit(fake + "/bench_ec", "#!/bin/sh\n");
    std::filesystem::permissions(fake + "/bench_ec", std::filesystem::perms::owner_all);
    int k = 0;
    for (const Bad& b : bads) {
      cuzk::test::spit(fake + "/bench_ff", "#!/bin/sh\ncat <<'EOF'\n{\"benchmarks\": [{\"name\": \"BM_fr_add\", "
                                           "\"run_type\": \"iteration\", " + b.entry + "}]}\nEOF\n");
      std::filesystem::permissions(fake + "/bench_ff", std::filesystem::perms::owner_all);
      const std::string out = "bad" + std::to_string(k++) + ".jsonl";
      auto m = cuzk::test::run_bench("run --suite m.toml --quick --out " + out, d.path(), "CUZK_MICRO_DIR=" + fake);
      INFO(b.entry << "\n" << m.err);
      CHECK(m.code == 1);
      CHECK(m.err.find(fake + "/bench_ff: its --benchmark_format=json output: ") != std::string::npos);
      CHECK(m.err.find(b.expect) != std::string::npos);
      CHECK(m.err.find("type_error") == std::string::npos);
    }
  }
}

// The stage kind proves a synthetic partition (bench-only key) without parameters or synthesis:
// proof > prove > the backend's phases, nothing else; its proofs are not verified.
TEST_CASE("a stage case runs under --quick and records the proving stage's phases") {
  TempDir d;
  const std::string suite = std::string(CUZK_SOURCE_DIR) + "/suites/stage.toml";
  auto r = cuzk::test::run_bench("run --suite '" + suite + "' --case cpu-2e14 --quick --backend cpu --out out.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("[stage] cpu-2e14: building the synthetic partition 2^10 (distinct points; not timed)") !=
        std::string::npos);
  CHECK(r.err.find("[stage] case 1/1 cpu-2e14: repetition 1/1") != std::string::npos);
  auto f = cuzk::read_results(d.file("out.jsonl"));
  REQUIRE(f.summary.has_value());
  REQUIRE(f.samples.size() == 1);  // quick: one repetition, no warm-up
  const auto& smp = f.samples[0].value;
  CHECK(smp["case"] == "cpu-2e14");
  const auto& p = smp["parameters"];
  CHECK(p["log_n"] == 10);
  CHECK(p["table_log"] == 10);  // 0: distinct points, recorded as a table of 2^log_n
  CHECK(p["constraints"] == 1024);
  CHECK(p["backend"] == "cpu");
  CHECK(p["key"].get<std::string>().find("bench-only") == 0);
  const auto& ph = smp["phases"];
  for (const char* name : {"proof", "proof/prove", "proof/prove/ntt_h", "proof/prove/msm_h", "proof/prove/msm_l",
                           "proof/prove/msm_a", "proof/prove/msm_b_g1", "proof/prove/msm_b_g2", "proof/prove/assemble"}) {
    INFO(name);
    CHECK(ph.contains(name));
  }
  CHECK(!ph.contains("proof/synth"));
  CHECK(!ph.contains("proof/srs_load"));
  CHECK(!cuzk::test::exists(d.file("results")));  // no parameters generated
  CHECK(r.out.find("proof/prove/msm_h") != std::string::npos);  // the terminal table
}

TEST_CASE("a stage case's table_log, phases and backend") {
  const std::string head = "name = \"x\"\n[[case]]\nname = \"c\"\nkind = \"stage\"\n";
  SECTION("defaults; table_log at or above log_n means distinct points, and is accepted") {
    auto s = cuzk::suite::parse_suite_text(head + "log_n = 8\nquick = { log_n = 4 }\n", "ok.toml");
    auto p = cuzk::suite::effective_params(s.cases[0], false);
    CHECK(p["log_n"] == 8);
    CHECK(p["table_log"] == 20);
    CHECK(p["seed"] == 1);
  }
  SECTION("a table_log below log_n is recorded; the kind passes it to the partition") {
    TempDir d;
    cuzk::test::spit(d.file("t.toml"), head + "log_n = 8\ntable_log = 4\nreps = 1\nwarmup = 0\n");
    auto r = cuzk::test::run_bench("run --suite t.toml --out t.jsonl", d.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("building the synthetic partition 2^8 (points repeated from a table of 2^4; not timed)") !=
          std::string::npos);
    auto f = cuzk::read_results(d.file("t.jsonl"));
    REQUIRE(f.samples.size() == 1);
    CHECK(f.samples[0].value["parameters"]["table_log"] == 4);
    CHECK(f.samples[0].value["parameters"]["rs_seed"] == 1);
  }
  SECTION("phases: the ones it records are accepted, the others refused naming the kind") {
    auto s = cuzk::suite::parse_suite_text(head + "phases = [\"proof\", \"proof/prove/msm_h\"]\n", "ok.toml");
    CHECK(s.cases[0].phases.size() == 2);
    auto m = parse_error(head + "phases = [\"proof/prove\", \"proof/synth\"]\n");
    CHECK(m.find("bad.toml:5:26: case 'c': phase 'proof/synth' in 'phases' is not recorded by kind 'stage' (it "
                 "records: proof, proof/prove, proof/prove/pin_abc,") != std::string::npos);
  }
  SECTION("--backend cuda: runs where a GPU is usable, else refused before anything runs") {
    TempDir d;
    auto info = cuzk::test::run_bench("info --json", d.path());
    REQUIRE(info.code == 0);
    const bool gpu = nlohmann::json::parse(info.out).at("cuda_backend_usable").get<bool>();
    cuzk::test::spit(d.file("g.toml"), head + "log_n = 10\nreps = 1\nwarmup = 1\n");
    auto r = cuzk::test::run_bench("run --suite g.toml --backend cuda --out g.jsonl", d.path());
    INFO(r.out << r.err);
    if (gpu) {
      REQUIRE(r.code == 0);
      auto f = cuzk::read_results(d.file("g.jsonl"));
      REQUIRE(f.samples.size() == 2);
      CHECK(f.samples[0].value["phases"].contains("proof/prove/h2d/srs"));  // the warm-up uploads the key
      CHECK(f.samples[1].value["phases"].contains("proof/prove/msm_h"));
    } else {
      CHECK(r.code == 1);
      CHECK(r.err.find("backend 'cuda'") != std::string::npos);
      CHECK(r.err.find("--allow-cpu-fallback") != std::string::npos);
      CHECK(r.err.find("building the synthetic partition") == std::string::npos);
      CHECK(!cuzk::test::exists(d.file("g.jsonl")));
    }
  }
}
