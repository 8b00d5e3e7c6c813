// compare (harness/analysis/compare.hpp, `cuzk-bench compare`) on synthetic results with known
// distributions (tests/support/synth_results.hpp) and on Google Benchmark JSON.
#include <fmt/core.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/gate.hpp"
#include "subprocess.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

using cuzk::test::SynthSpec;
using cuzk::test::TempDir;

namespace {

const cuzk::PhaseComparison* row(const cuzk::Comparison& c, const std::string& phase, const std::string& metric = "wall_ns") {
  return cuzk::find_row(c, phase, metric);
}

}  // namespace

TEST_CASE("A/A comparison: no phase reported faster or slower") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 101;
  b.seed = 202;
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  REQUIRE(c.rows.size() == 5);  // 4 wall rows + the GPU row of msm_h
  for (const auto& r : c.rows) {
    INFO(r.phase << " " << r.metric << " ratio " << r.ratio << " p " << r.p_value << " " << r.verdict);
    CHECK(r.observations_a == 10);
    CHECK(r.observations_b == 10);
    CHECK(r.exact_test);
    CHECK((r.verdict == "unchanged" || r.verdict == "too noisy"));
    CHECK(r.ci_low <= r.ratio);
    CHECK(r.ci_high >= r.ratio);
  }
  REQUIRE(row(c, "proof/prove/msm_h", "gpu_ns"));
  CHECK(row(c, "proof/prove/msm_h", "gpu_ns")->median_a > 0);
  CHECK(row(c, "proof/synth", "gpu_ns") == nullptr);  // gpu_ns null: no GPU row
  // Warm-ups (1.5x slower) are excluded by default.
  CHECK(row(c, "proof")->median_a == Approx(100e6).epsilon(0.02));
}

TEST_CASE("a 20% slowdown of one phase is reported for that phase only") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 101;
  b.seed = 202;
  b.slowdown["proof/synth"] = 1.2;
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  for (const auto& r : c.rows) {
    INFO(r.phase << " " << r.metric << " ratio " << r.ratio << " p " << r.p_value << " " << r.verdict);
    if (r.phase == "proof/synth" && r.metric == "wall_ns") {
      CHECK(r.verdict == "slower");
      CHECK(r.ratio == Approx(1.2).epsilon(0.02));
      CHECK(r.ci_low > 1.1);
      CHECK(r.p_value < 1e-4);
    } else {
      CHECK(r.verdict != "slower");
      CHECK(r.verdict != "faster");
    }
  }
  // The reverse direction is "faster".
  auto rev = cuzk::compare_files(d.file("b.jsonl"), d.file("a.jsonl"), {});
  CHECK(row(rev, "proof/synth")->verdict == "faster");
  // A larger threshold than the change makes it "unchanged" (significant but small).
  cuzk::CompareOptions o;
  o.phase_thresholds["proof/synth"] = 0.25;
  CHECK(row(cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), o), "proof/synth")->verdict == "unchanged");
}

TEST_CASE("verdict rule") {
  // significant and beyond the threshold
  CHECK(cuzk::compare_verdict(0.001, 1.10, 1.05, 1.15, 0.05, 0.03) == "slower");
  CHECK(cuzk::compare_verdict(0.001, 0.90, 0.85, 0.95, 0.05, 0.03) == "faster");
  // significant, within the threshold
  CHECK(cuzk::compare_verdict(0.001, 1.01, 1.005, 1.015, 0.05, 0.03) == "unchanged");
  // not significant, CI inside the band
  CHECK(cuzk::compare_verdict(0.4, 1.005, 0.99, 1.02, 0.05, 0.03) == "unchanged");
  // not significant, CI reaching beyond the band: cannot tell
  CHECK(cuzk::compare_verdict(0.3, 1.04, 0.95, 1.12, 0.05, 0.03) == "too noisy");
  CHECK(cuzk::compare_verdict(0.3, 1.00, 0.99, 1.04, 0.05, 0.03) == "too noisy");
}

TEST_CASE("few samples: warning, and no verdict of change") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 1;
  b.seed = 2;
  a.reps = b.reps = 3;
  b.slowdown["proof/synth"] = 1.2;
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  auto* r = row(c, "proof/synth");
  REQUIRE(r);
  CHECK(r->verdict != "slower");  // 3 vs 3: smallest possible p is 0.1
  CHECK(r->p_value == Approx(0.1));
  bool warned = false;
  for (const auto& w : r->warnings) warned = warned || w.find("too few samples") != std::string::npos;
  CHECK(warned);
  CHECK(cuzk::format_table(c).find("too few samples") != std::string::npos);
}

TEST_CASE("counter deltas beside time deltas") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 5;
  b.seed = 6;
  b.page_fault_factor = 3;
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  auto* r = row(c, "proof/synth");
  REQUIRE(r);
  REQUIRE(r->counters.size() == 2);
  for (const auto& cd : r->counters) {
    INFO(cd.name << " " << cd.note);
    if (cd.name == "perf::PAGE-FAULTS") {
      REQUIRE(cd.ratio);
      CHECK(*cd.ratio == Approx(3).epsilon(0.01));
      CHECK(cd.note == "x3");
    } else {
      CHECK(cd.name == "PAPI_TOT_CYC");
      CHECK_FALSE(cd.ratio);
      CHECK(cd.note.find("n/a") != std::string::npos);
      CHECK(cd.note.find("event does not exist") != std::string::npos);
    }
  }
  std::string t = cuzk::format_table(c);
  CHECK(t.find("perf::PAGE-FAULTS x3") != std::string::npos);
  // PAPI_TOT_CYC could not be read on either side in any row: said once under the table, with
  // its reason, and in no row (the JSON keeps it per row).
  INFO(t);
  CHECK(t.find("PAPI_TOT_CYC n/a") == std::string::npos);
  const std::string once = "counters PAPI_TOT_CYC: n/a (event does not exist) on both sides in every row";
  REQUIRE(t.find(once) != std::string::npos);
  CHECK(t.find(once) == t.rfind(once));
  CHECK(cuzk::format_markdown(c).find(once) != std::string::npos);
  CHECK(cuzk::to_json(c)["rows"][0]["counters"].size() == 2);
}

TEST_CASE("os::cpu_per_wall as the primary metric judges the phase by processes, or by rounds") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 7;
  b.seed = 8;
  // Every phase's CPU time is `cores` times its wall time: os::cpu_per_wall 2 on A, 3 on B.
  auto with_cpu = [](SynthSpec& s, int cores, bool rounds) {
    s.reps = 8;
    s.processes = 2;
    s.edit_header = [](nlohmann::json& h) {
      for (const char* n : {"os::utime_ns", "os::stime_ns"}) {
        h["counters"]["requested"].push_back(n);
        h["counters"]["available"].push_back(n);
      }
    };
    s.edit_sample = [cores, rounds](nlohmann::json& sample, int rep) {
      for (auto& [phase, rec] : sample["phases"].items()) {
        const int64_t wall = rec["wall_ns"].get<int64_t>();
        rec["counters"]["os::utime_ns"] = wall * (cores - 1);
        rec["counters"]["os::stime_ns"] = wall;
      }
      sample["primary_metric"] = "os::cpu_per_wall";
      if (rounds) sample["round_id"] = rep;
    };
  };
  for (const bool rounds : {false, true}) {
    INFO((rounds ? "with" : "without") << " round ids");
    with_cpu(a, 2, rounds);
    with_cpu(b, 3, rounds);
    cuzk::test::write_synth(d.file("a.jsonl"), a);
    cuzk::test::write_synth(d.file("b.jsonl"), b);
    auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
    const auto* r = cuzk::primary_row(c, "proof/synth");
    REQUIRE(r);
    CHECK(r->metric == "os::cpu_per_wall");
    CHECK(r->design == (rounds ? "paired" : "blocks"));
    CHECK(r->unit == (rounds ? "rounds" : "processes"));
    CHECK(r->observations_a == (rounds ? 8 : 2));
    CHECK(r->median_a == Approx(2.0));
    CHECK(r->median_b == Approx(3.0));
    CHECK(r->ratio == Approx(1.5));
    CHECK_FALSE(row(c, "proof/synth")->primary);  // wall time shown, not judged
  }
}

TEST_CASE("machine mismatch is refused unless allowed") {
  TempDir d;
  SynthSpec a, b;
  b.seed = 2;
  b.edit_header = [](nlohmann::json& h) { h["machine"]["cpu_model"] = "Imaginary CPU 9000"; };
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  std::string msg;
  try {
    cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  } catch (const cuzk::CompareError& e) {
    msg = e.what();
  }
  INFO(msg);
  CHECK(msg.find("different machines") != std::string::npos);
  CHECK(msg.find("Imaginary CPU 9000") != std::string::npos);
  cuzk::CompareOptions o;
  o.allow_machine_mismatch = true;
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), o);
  CHECK(!c.warnings.empty());
}

TEST_CASE("cases are matched by suite, case and parameters") {
  TempDir d;
  SynthSpec a, b;
  b.seed = 2;
  b.parameters = {{"size", 16}};
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  CHECK(c.rows.empty());
  CHECK(c.cases_only_a.size() == 1);
  CHECK(c.cases_only_b.size() == 1);
}

TEST_CASE("Google Benchmark JSON: iterations per benchmark name") {
  TempDir d;
  cuzk::test::spit(d.file("a.json"), cuzk::test::synth_gbench_json(1, 1.0));
  cuzk::test::spit(d.file("b.json"), cuzk::test::synth_gbench_json(2, 1.25));
  auto c = cuzk::compare_files(d.file("a.json"), d.file("b.json"), {});
  REQUIRE(c.rows.size() == 2);
  auto* fr = row(c, "BM_fr_mul");
  auto* g1 = row(c, "BM_g1_add/8");
  REQUIRE(fr);
  REQUIRE(g1);
  CHECK(fr->observations_a == 8);  // aggregates ignored
  CHECK(fr->median_a == Approx(25000).epsilon(0.03));  // us -> ns
  CHECK(fr->verdict != "slower");
  CHECK(g1->verdict == "slower");
  cuzk::test::spit(d.file("c.json"), cuzk::test::synth_gbench_json(3, 1.0, "otherhost"));
  CHECK_THROWS_AS(cuzk::compare_files(d.file("a.json"), d.file("c.json"), {}), cuzk::CompareError);
  CHECK_THROWS_AS(cuzk::compare_files(d.file("a.json"), d.file("nonexistent.json"), {}), cuzk::CompareError);
}

TEST_CASE("Google Benchmark JSON with fields of the wrong type: one error naming the file and field") {
  // Found in review of compare's loader (now under fuzz_gbench): nlohmann's value() threw
  // type_error, which the CLI printed as "malformed results: [json.exception.type_error.306] ...".
  TempDir d;
  const std::string bench = R"("benchmarks":[{"name":"BM_x","real_time":3,"time_unit":"ns"}])";
  auto error_of = [&](const std::string& doc) {
    cuzk::test::spit(d.file("g.json"), doc);
    try {
      (void)cuzk::compare_files(d.file("g.json"), d.file("g.json"), {});
    } catch (const cuzk::CompareError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(error_of("{\"context\":5," + bench + "}") == d.file("g.json") + ": Google Benchmark field 'context' must be an object, not number");
  CHECK(error_of("{\"context\":{\"host_name\":7}," + bench + "}") ==
        d.file("g.json") + ": Google Benchmark field 'host_name' must be a string, not number");
  CHECK(error_of("{\"context\":{\"num_cpus\":\"16\"}," + bench + "}") ==
        d.file("g.json") + ": Google Benchmark field 'num_cpus' must be a number, not string");
  CHECK(error_of(R"({"benchmarks":[{"name":"BM_x","real_time":3,"run_type":1}]})") ==
        d.file("g.json") + ": Google Benchmark field 'run_type' must be a string, not number");
  CHECK(error_of(R"({"benchmarks":[{"name":"BM_x","real_time":3,"time_unit":"hours"}]})") ==
        d.file("g.json") + ": unknown Google Benchmark time_unit 'hours' (one of ns, us, ms, s)");
  auto r = cuzk::test::run_bench("compare g.json g.json", d.path());
  CHECK(r.code == 2);
  CHECK(r.err == "cuzk-bench: error: g.json: unknown Google Benchmark time_unit 'hours' (one of ns, us, ms, s)\n");
}

TEST_CASE("cuzk-bench compare: table, markdown, json, exit codes") {
  TempDir d;
  SynthSpec a, b, m;
  a.seed = 101;
  b.seed = 202;
  b.slowdown["proof/synth"] = 1.2;
  m.seed = 3;
  m.edit_header = [](nlohmann::json& h) { h["machine"]["cpu_model"] = "Imaginary CPU 9000"; };
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  cuzk::test::write_synth(d.file("m.jsonl"), m);
  auto t = cuzk::test::run_bench("compare a.jsonl b.jsonl", d.path());
  INFO(t.out << t.err);
  CHECK(t.code == 0);
  CHECK(t.out.find("slower +") != std::string::npos);
  CHECK(t.out.find("B/A [95% CI]") != std::string::npos);
  auto md = cuzk::test::run_bench("compare a.jsonl b.jsonl --markdown", d.path());
  CHECK(md.code == 0);
  CHECK(md.out.find("| --- |") != std::string::npos);
  auto js = cuzk::test::run_bench("compare a.jsonl b.jsonl --json --alpha 0.01 --threshold 0.05", d.path());
  CHECK(js.code == 0);
  auto j = nlohmann::json::parse(js.out);
  CHECK(j["rows"].size() == 5);
  int slower = 0;
  for (const auto& r : j["rows"]) slower += r["verdict"] == "slower";
  CHECK(slower == 1);
  auto mm = cuzk::test::run_bench("compare a.jsonl m.jsonl", d.path());
  INFO(mm.err);
  CHECK(mm.code == 2);
  CHECK(mm.err.find("Imaginary CPU 9000") != std::string::npos);
  CHECK(cuzk::test::run_bench("compare a.jsonl m.jsonl --allow-machine-mismatch", d.path()).code == 0);
  CHECK(cuzk::test::run_bench("compare a.jsonl missing.jsonl", d.path()).code == 2);
}

namespace {
// A header as make_header writes it under CUZK_INJECT_SLOWDOWN=spec (harness/measure/inject.hpp).
std::function<void(nlohmann::json&)> injected_header(const std::string& phase, double pct) {
  return [=](nlohmann::json& h) {
    h["injected"] = {{"spec", fmt::format("{}={:g}%", phase, pct)},
                     {"slowdowns", {{{"phase", phase}, {"pct", pct}, {"metric", "wall_ns"}}}}};
  };
}
std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}
}  // namespace

TEST_CASE("an injected file beside a plain one is refused unless allowed") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 101;
  b.seed = 202;
  b.slowdown["proof/synth"] = 1.1;
  b.edit_header = injected_header("proof/synth", 10);
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  const std::string pa = d.file("a.jsonl"), pb = d.file("b.jsonl");
  auto refusal = [](const std::string& x, const std::string& y) {
    try {
      cuzk::compare_files(x, y, {});
    } catch (const cuzk::CompareError& e) {
      return std::string(e.what());
    }
    return std::string("no CompareError");
  };
  CHECK(refusal(pa, pb) == "B (" + pb + ") was written under CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\" and A (" + pa +
                               ") was not: an injected slowdown is not a real change; pass --allow-injected to compare them anyway");
  // The other way round names A as the injected side.
  CHECK(refusal(pb, pa).rfind("A (" + pb + ") was written under CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\" and B (" + pa +
                              ") was not", 0) == 0);

  cuzk::CompareOptions o;
  o.allow_injected = true;
  auto c = cuzk::compare_files(pa, pb, o);
  const std::string w = joined(c.warnings);
  INFO(w);
  CHECK(w.find("B (" + pb + ") was written under CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\" and A (" + pa + ") was not") !=
        std::string::npos);
  CHECK(c.injected_a.is_null());
  CHECK(c.injected_b["spec"] == "proof/synth=10%");
  const auto* synth = row(c, "proof/synth");
  REQUIRE(synth);
  CHECK(synth->verdict == "slower");  // compared as usual
  // Every output carries it: the JSON per side and in its warnings, the table and markdown.
  const auto j = cuzk::to_json(c);
  CHECK(j["a"]["injected"].is_null());
  CHECK(j["b"]["injected"]["slowdowns"][0]["phase"] == "proof/synth");
  CHECK(joined(j["warnings"].get<std::vector<std::string>>()).find("proof/synth=10%") != std::string::npos);
  CHECK(cuzk::format_table(c).find("CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\"") != std::string::npos);
  CHECK(cuzk::format_markdown(c).find("CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\"") != std::string::npos);

  // Two plain files: no such warning, and the JSON says null on both sides.
  auto plain = cuzk::compare_files(pa, pa, {});
  CHECK(joined(plain.warnings).find("CUZK_INJECT_SLOWDOWN") == std::string::npos);
  CHECK(cuzk::to_json(plain)["b"]["injected"].is_null());
}

TEST_CASE("two injected files are compared, with a warning naming both specs") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 101;
  b.seed = 202;
  a.edit_header = injected_header("proof", 5);
  b.edit_header = injected_header("proof/synth", 10);
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});  // allow_injected not needed
  const std::string w = joined(c.warnings);
  INFO(w);
  CHECK(w.find("A (" + d.file("a.jsonl") + ") was written under CUZK_INJECT_SLOWDOWN=\"proof=5%\"") != std::string::npos);
  CHECK(w.find("B (" + d.file("b.jsonl") + ") under CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\"") != std::string::npos);
  CHECK(c.injected_a["spec"] == "proof=5%");
  CHECK(c.injected_b["spec"] == "proof/synth=10%");
}

TEST_CASE("gate refuses an injected candidate beside a plain baseline unless allowed") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 101;
  b.seed = 202;
  b.edit_header = injected_header("proof/synth", 10);
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  cuzk::test::spit(d.file("t.toml"), "[default]\nmax_slowdown = 0.05\n");
  cuzk::GateOptions o;
  auto g = cuzk::run_gate(d.file("a.jsonl"), d.file("b.jsonl"), d.file("t.toml"), o);
  REQUIRE(g.errors.size() == 1);
  CHECK(g.exit_code == 2);
  CHECK(g.errors[0].find("pass --allow-injected") != std::string::npos);
  o.allow_injected = true;
  g = cuzk::run_gate(d.file("a.jsonl"), d.file("b.jsonl"), d.file("t.toml"), o);
  INFO(joined(g.errors));
  CHECK(g.exit_code == 0);
  CHECK(joined(g.warnings).find("CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\"") != std::string::npos);
  auto cli = cuzk::test::run_bench("gate --baseline a.jsonl --candidate b.jsonl --thresholds t.toml", d.path());
  CHECK(cli.code == 2);
  CHECK(cuzk::test::run_bench("gate --baseline a.jsonl --candidate b.jsonl --thresholds t.toml --allow-injected", d.path())
            .code == 0);
}

TEST_CASE("cuzk-bench compare: injected beside plain is exit 2 with one error line; --allow-injected compares") {
  TempDir d;
  SynthSpec a, b;
  a.seed = 101;
  b.seed = 202;
  b.edit_header = injected_header("proof/synth", 10);
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  auto r = cuzk::test::run_bench("compare a.jsonl b.jsonl", d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "cuzk-bench: error: B (b.jsonl) was written under CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\" and A (a.jsonl) "
                 "was not: an injected slowdown is not a real change; pass --allow-injected to compare them anyway\n");
  auto ok = cuzk::test::run_bench("compare a.jsonl b.jsonl --allow-injected", d.path());
  INFO(ok.out << ok.err);
  CHECK(ok.code == 0);
  CHECK(ok.out.find("warning: B (b.jsonl) was written under CUZK_INJECT_SLOWDOWN=\"proof/synth=10%\"") != std::string::npos);
}
