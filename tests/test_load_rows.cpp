// Load runs judged by their tails and throughput: the tail rows and their CI, the throughput
// rows, how compare shows them and how gate judges them (harness/analysis/load_rows.hpp,
// docs/compare.md and docs/gating.md, "Load runs"; the tests themselves, Mood's and the t tests,
// are in test_stats.cpp). Every file here is synthetic with a fixed seed: no timing, so the
// verdicts are the same on a loaded machine.
#include <fmt/core.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/gate.hpp"
#include "harness/analysis/load_rows.hpp"
#include "harness/analysis/pr_comment.hpp"
#include "harness/analysis/stats.hpp"
#include "harness/measure/results.hpp"
#include "synth_results.hpp"
#include "test_util.hpp"

namespace {

using nlohmann::json;
using cuzk::test::TempDir;

// One side of a load A/B as `cuzk-bench load` writes it: suite "load", one sample per job with
// the client's latency (phase "request") and the daemon's phases, and the load object.
struct LoadSpec {
  uint64_t latency_seed = 1;  // the jobs' latencies
  uint64_t gap_seed = 1;      // the spacing of their completions
  std::vector<int64_t> rounds = {0};
  int jobs = 60, warmup = 2;
  double sigma = 0.03;           // log-normal spread of the latencies
  double latency_s = 4;          // their median
  double gap_s = 2, gap_sigma = 0.05;  // seconds between completions and its spread
  double tail_factor = 1;        // multiplies each round's measured latencies above its 80th percentile
  bool done_s = true;            // write load.done_s
  std::string case_name = "open-0.5";
};

std::vector<json> load_samples(const LoadSpec& s) {
  std::mt19937_64 lat_rng(s.latency_seed), gap_rng(s.gap_seed);
  std::normal_distribution<double> lat_noise(0, s.sigma), gap_noise(0, s.gap_sigma);
  std::vector<json> out;
  for (int64_t round : s.rounds) {
    std::vector<double> latency(size_t(s.jobs));
    for (auto& l : latency) l = s.latency_s * std::exp(lat_noise(lat_rng));
    if (s.tail_factor != 1) {
      const double cut = cuzk::quantile({latency.begin() + s.warmup, latency.end()}, 0.8);
      for (size_t k = size_t(s.warmup); k < latency.size(); ++k)
        if (latency[k] > cut) latency[k] *= s.tail_factor;
    }
    double done = 0;
    for (int k = 0; k < s.jobs; ++k) {
      done += s.gap_s * std::exp(gap_noise(gap_rng));
      auto rec = [](double seconds) {
        return json{{"wall_ns", static_cast<uint64_t>(seconds * 1e9)}, {"count", 1}, {"gpu_ns", nullptr}, {"counters", json::object()}};
      };
      const double l = latency[size_t(k)];
      json load = {{"job_id", fmt::format("j{}-{}", round, k)}, {"round", round}, {"arrival_s", done - l}, {"batch_size", 1}};
      if (s.done_s) load["done_s"] = done;
      out.push_back({{"schema", "cuzk.results"}, {"version", 1}, {"type", "sample"}, {"suite", "load"},
                     {"case", s.case_name},
                     {"parameters", {{"mode", "open"}, {"offered_per_s", 0.5}, {"clients", 0}, {"partitions", 1}, {"jobs", s.jobs}}},
                     {"variant", "default"}, {"repetition", round * s.jobs + k}, {"warmup", k < s.warmup},
                     {"phases", {{"request", rec(l)}, {"proof", rec(0.9 * l)}, {"proof/queue", rec(0.3 * l)}}},
                     {"wall_ns", static_cast<uint64_t>(l * 1e9)}, {"load", load}});
    }
  }
  return out;
}

void write_load(const std::string& path, const LoadSpec& s) {
  cuzk::ResultsWriter w(path, cuzk::ResultsWriter::Mode::kOverwrite);
  cuzk::HeaderInfo info;
  info.suite = "load";
  info.command_line = {"test"};
  w.write(cuzk::make_header(info));
  const auto samples = load_samples(s);
  for (const auto& l : samples) w.write(l);
  w.write(cuzk::make_summary(samples, 1000));
}


bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

bool any_has(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (has(l, what)) return true;
  return false;
}

// A gate of two load files with the thresholds `toml`.
cuzk::GateResult gate(const std::string& a, const std::string& b, const std::string& toml) {
  const cuzk::GateThresholds t = cuzk::parse_thresholds(toml, "t.toml");
  const cuzk::GateOptions o;
  return cuzk::gate_comparison(cuzk::compare_files(a, b, cuzk::gate_compare_options(t, o)), t, o);
}

std::string lines(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& l : v) s += l + "\n";
  return s;
}

// Two load files in a fresh folder: a.jsonl, the baseline, and b.jsonl.
struct LoadPair {
  TempDir d;
  LoadPair(const LoadSpec& a, const LoadSpec& b) {
    write_load(d.file("a.jsonl"), a);
    write_load(d.file("b.jsonl"), b);
  }
  std::string a() const { return d.file("a.jsonl"); }
  std::string b() const { return d.file("b.jsonl"); }
  cuzk::Comparison compare() const { return cuzk::compare_files(a(), b(), {}); }
  cuzk::GateResult gate(const std::string& toml) const { return ::gate(a(), b(), toml); }
};

// Latencies drawn with `seed`, the slowest fifth of each round's measured jobs `tail` times longer.
LoadSpec drawn(uint64_t seed, double tail = 1, int jobs = 60) {
  LoadSpec s;
  s.latency_seed = seed;
  s.tail_factor = tail;
  s.jobs = jobs;
  return s;
}

// The same latencies on both sides, 20 jobs a round, B's completions spaced 20% wider.
LoadPair throughput_pair(std::vector<int64_t> rounds_a = {0, 1, 2, 3}, std::vector<int64_t> rounds_b = {0, 1, 2, 3}) {
  LoadSpec a, b;
  a.rounds = std::move(rounds_a);
  b.rounds = std::move(rounds_b);
  a.jobs = b.jobs = 20;
  a.gap_seed = 11;
  b.gap_seed = 12;
  b.gap_s = a.gap_s * 1.2;
  return LoadPair(a, b);
}

const char* kDefault = "[default]\nmax_slowdown = 0.05\n";

}  // namespace

TEST_CASE("quantile metric names: p and a percent, both ways", "[load_rows]") {
  CHECK(cuzk::quantile_metric(0.9) == "p90");
  CHECK(cuzk::quantile_metric(0.99) == "p99");
  CHECK(cuzk::quantile_metric(0.999) == "p99.9");
  CHECK(cuzk::metric_quantile("p99.9").value() == Approx(0.999));
  CHECK(cuzk::metric_quantile("p50").value() == Approx(0.5));
  for (const char* bad : {"p0", "p100", "pxx", "p", "p9x", "p.5", "p5.", "99", "p-5", "wall_ns", "p1e1"})
    CHECK_FALSE(cuzk::metric_quantile(bad).has_value());
  // The jobs that give quantile_ci an upper end: one fewer has none.
  for (const auto& [q, n] : {std::pair{0.99, size_t(453)}, std::pair{0.9, size_t(42)}, std::pair{0.5, size_t(6)}}) {
    CHECK(cuzk::jobs_for_upper_bound(q, 0.975) == n);
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = double(i + 1);
    CHECK_FALSE(cuzk::quantile_ci(v, q, 0.975).hi_open);
    v.pop_back();
    CHECK(cuzk::quantile_ci(v, q, 0.975).hi_open);
  }
}

TEST_CASE("compare: an A/A of load files finds no tail change", "[load_rows]") {
  const cuzk::Comparison c = LoadPair(drawn(1), drawn(2)).compare();
  for (const char* m : {"p90", "p99"}) {
    const auto* r = cuzk::find_row(c, "request", m);
    REQUIRE(r);
    INFO(m << " p " << r->p_value << " ratio " << r->ratio << " verdict " << r->verdict);
    CHECK(r->kind == "tail");
    CHECK(r->unit == "jobs");
    CHECK(r->observations_a == 58);  // measured jobs: the 2 warm-ups left out
    CHECK(r->p_value > 0.05);
    CHECK(r->verdict != "slower");
    CHECK(r->verdict != "faster");
  }
}

TEST_CASE("compare: a tail 1.5x longer is slower at p90 while the median row is unchanged", "[load_rows]") {
  const cuzk::Comparison c = LoadPair(drawn(1), drawn(2, 1.5)).compare();
  const auto* p90 = cuzk::find_row(c, "request", "p90");
  const auto* median = cuzk::find_row(c, "request", "wall_ns");
  REQUIRE(p90);
  REQUIRE(median);
  INFO(cuzk::format_table(c));
  CHECK(p90->verdict == "slower");
  CHECK(p90->p_value < 0.01);
  CHECK(p90->ratio > 1.4);
  CHECK(p90->primary);
  CHECK(median->verdict == "unchanged");
  // The phase's own row is still the one a per-phase reader finds.
  CHECK(cuzk::primary_row(c, "request") == median);
  // The summary has a sentence of its own for them; the phases' part does not count them.
  REQUIRE(c.summaries.size() == 1);
  CHECK(has(c.summaries[0].text, "Under load: request p90"));
  CHECK_FALSE(has(c.summaries[0].text, "significant changes, largest first: request"));
}

TEST_CASE("compare: a p99 of 30 jobs has no upper bound and reads too noisy, not unchanged", "[load_rows]") {
  const cuzk::Comparison c = LoadPair(drawn(1, 1, 32), drawn(2, 1, 32)).compare();
  const auto* r = cuzk::find_row(c, "request", "p99");
  REQUIRE(r);
  CHECK(r->observations_a == 30);
  CHECK(std::isinf(r->ci_high));
  CHECK(r->verdict == "too noisy");
  CHECK(any_has(r->warnings, "at least 453 jobs a side"));
  // JSON has no infinity: the open end is null.
  const json j = cuzk::to_json(c);
  bool seen = false;
  for (const auto& x : j["rows"])
    if (x["metric"] == "p99") {
      seen = true;
      CHECK(x["ci_high"].is_null());
      CHECK(x["kind"] == "tail");
    }
  CHECK(seen);
  // Nor has the p90 (42 jobs would give it one): too noisy as well, never a claim of "unchanged".
  const auto* p90 = cuzk::find_row(c, "request", "p90");
  REQUIRE(p90);
  CHECK(std::isinf(p90->ci_high));
  CHECK(p90->verdict == "too noisy");
}

TEST_CASE("compare: the throughput row of paired rounds reads the time between completions", "[load_rows]") {
  const cuzk::Comparison c = throughput_pair().compare();
  const auto* r = cuzk::find_row(c, "request", "throughput");
  REQUIRE(r);
  CHECK(r->kind == "throughput");
  CHECK(r->unit == "rounds");
  CHECK(r->design == "paired");
  CHECK(r->observations_a == 4);
  CHECK(r->samples_a == 80);  // warm-ups are completions too
  CHECK(r->median_a == Approx(0.5).epsilon(0.05));  // completions per second, A
  CHECK(r->median_b < r->median_a);
  CHECK(r->ratio == Approx(1.2).epsilon(0.03));  // B/A of the time between completions
  CHECK(r->verdict == "slower");
  // The printers name it and say how it reads.
  const std::string table = cuzk::format_table(c), md = cuzk::format_markdown(c);
  for (const auto* text : {&table, &md}) {
    CHECK(has(*text, "throughput"));
    CHECK(has(*text, "time between completions"));
    CHECK(has(*text, "/s"));
    CHECK(has(*text, "4 rounds"));
  }
  CHECK(has(c.summaries.at(0).text, "throughput 0.5"));
}

TEST_CASE("compare: throughput of unpaired rounds is Welch's; one round has no test", "[load_rows]") {
  {
    const cuzk::Comparison c = throughput_pair({0, 1, 2, 3}, {4, 5, 6}).compare();
    const auto* r = cuzk::find_row(c, "request", "throughput");
    REQUIRE(r);
    CHECK(r->design == "samples");
    CHECK(r->ci_method == "welch");
    CHECK(r->observations_b == 3);
    CHECK(r->verdict == "slower");
  }
  {
    const cuzk::Comparison c = throughput_pair({0}, {0}).compare();
    const auto* r = cuzk::find_row(c, "request", "throughput");
    REQUIRE(r);
    CHECK(r->p_value == 1.0);
    CHECK(std::isnan(r->ci_low));
    CHECK(r->verdict == "too noisy");
    CHECK(any_has(r->warnings, "load --rounds"));
  }
}

TEST_CASE("compare: files without load.done_s have no throughput row, and a warning says why", "[load_rows]") {
  LoadSpec a, b;
  a.rounds = b.rounds = {0, 1, 2};
  b.done_s = false;
  const LoadPair f(a, b);
  const cuzk::Comparison c = f.compare();
  CHECK_FALSE(cuzk::find_row(c, "request", "throughput"));
  CHECK(cuzk::find_row(c, "request", "p90"));
  CHECK(any_has(c.warnings, "no throughput row"));
  CHECK(any_has(c.warnings, "load.done_s"));
  // And [throughput] cannot be gated on them: an error, not a pass.
  const auto g = f.gate(std::string(kDefault) + "[throughput]\nmax_drop = 0.1\n");
  INFO(lines(g.errors));
  CHECK(g.exit_code == 2);
  CHECK(any_has(g.errors, "load.done_s"));
}

TEST_CASE("compare: a malformed load.done_s is one error naming the file and line", "[load_rows]") {
  TempDir d;
  LoadSpec a;
  write_load(d.file("a.jsonl"), a);
  std::string text = cuzk::test::slurp(d.file("a.jsonl"));
  const size_t at = text.find("\"done_s\":");
  REQUIRE(at != std::string::npos);
  text.replace(at, 9, "\"done_s\":\"soon\",\"x\":");
  cuzk::test::spit(d.file("bad.jsonl"), text);
  try {
    (void)cuzk::compare_files(d.file("a.jsonl"), d.file("bad.jsonl"), {});
    FAIL("no error");
  } catch (const cuzk::CompareError& e) {
    CHECK(has(e.what(), "bad.jsonl:2"));
    CHECK(has(e.what(), "done_s"));
  }
}

TEST_CASE("compare: files of other suites get no load rows", "[load_rows]") {
  TempDir d;
  cuzk::test::SynthSpec a, b;
  a.seed = 1;
  b.seed = 2;
  a.phases = b.phases = {{"request", 4e9}, {"proof", 3e9}};
  cuzk::test::write_synth(d.file("a.jsonl"), a);
  cuzk::test::write_synth(d.file("b.jsonl"), b);
  const cuzk::Comparison c = cuzk::compare_files(d.file("a.jsonl"), d.file("b.jsonl"), {});
  REQUIRE_FALSE(c.rows.empty());
  for (const auto& r : c.rows) CHECK(r.kind == "phase");
  CHECK_FALSE(has(cuzk::format_table(c), "throughput"));
}

TEST_CASE("gate: throughput 20% slower fails max_drop 0.10 and passes max_drop 0.30", "[load_rows][gate]") {
  const LoadPair f = throughput_pair();
  const auto fail = f.gate(std::string(kDefault) + "[throughput]\nmax_drop = 0.10\n");
  INFO(lines(fail.errors) << lines(fail.regressions) << lines(fail.warnings));
  CHECK(fail.exit_code == 1);
  REQUIRE(fail.regressions.size() == 1);
  const std::string& line = fail.regressions[0];
  CHECK(has(line, "load/open-0.5 throughput: 0.5"));
  CHECK(has(line, "proofs/s"));
  CHECK(has(line, "time between completions B/A 1.2"));
  CHECK(has(line, "exceeds max drop 10%"));
  REQUIRE(fail.alarms.size() == 1);
  CHECK(fail.alarms[0].metric == "throughput");
  // In the family with the phases: Holm's, and the JSON says which gated rows are load rows.
  CHECK(has(fail.family_summary, "1 of them tail or throughput rows"));
  const json j = cuzk::to_json(fail);
  CHECK(j["thresholds"]["throughput"]["max_drop"] == 0.10);
  CHECK(j["thresholds"]["throughput"]["min_rounds"] == 3);
  bool gated = false;
  for (const auto& x : j["multiple_testing"]["gated"]) gated = gated || x["kind"] == "throughput";
  CHECK(gated);

  const auto pass = f.gate(std::string(kDefault) + "[throughput]\nmax_drop = 0.30\n");
  INFO(lines(pass.errors) << lines(pass.regressions));
  CHECK(pass.exit_code == 0);
  // Without [throughput] the row is shown, not gated.
  const auto ungated = f.gate(kDefault);
  CHECK(ungated.exit_code == 0);
  for (const auto& p : ungated.gated) CHECK(p.kind == "phase");
}

TEST_CASE("gate: throughput of too few rounds is an error naming load --rounds", "[load_rows][gate]") {
  {
    const auto g = throughput_pair({0}, {0}).gate(std::string(kDefault) + "[throughput]\nmax_drop = 0.1\n");
    CHECK(g.exit_code == 2);
    CHECK(any_has(g.errors, "load --rounds"));
  }
  {  // 4 rounds against min_rounds 5; the min_samples of phases does not apply to rounds
    const auto g = throughput_pair().gate(std::string(kDefault) + "min_samples = 10\n[throughput]\nmax_drop = 0.1\nmin_rounds = 5\n");
    CHECK(g.exit_code == 2);
    CHECK(any_has(g.errors, "at least 5 rounds per side"));
    CHECK_FALSE(any_has(g.errors, "too few samples"));
  }
}

TEST_CASE("gate: a tail named in [tails] fails; compare's other quantiles are shown, not gated", "[load_rows][gate]") {
  const LoadPair f(drawn(1), drawn(2, 1.5));
  for (const char* multiple : {"holm", "hierarchy"}) {
    const auto g = f.gate(fmt::format("[default]\nmax_slowdown = 0.05\nmultiple = \"{}\"\n[tails.\"request\"]\np90 = 0.25\n"
                                    "p75 = 0.5\n",
                                    multiple));
    INFO(multiple << "\n" << lines(g.errors) << lines(g.regressions) << lines(g.warnings));
    CHECK(g.exit_code == 1);
    REQUIRE(g.regressions.size() == 1);
    const std::string& line = g.regressions[0];
    CHECK(has(line, "load/open-0.5 request p90: "));
    CHECK(has(line, " s -> "));
    CHECK(has(line, "exceeds max growth 25%"));
    // p90 and p75 gated ([tails]), p99 only shown; in the hierarchy, tails are roots.
    std::vector<std::string> tails;
    for (const auto& p : g.gated)
      if (p.kind == "tail") {
        tails.push_back(p.metric);
        if (std::string(multiple) == "hierarchy") CHECK(p.family == "roots");
      }
    CHECK(tails == std::vector<std::string>{"p90", "p75"});
    CHECK(g.comparison->rows.size() > 0);
    CHECK(cuzk::find_row(*g.comparison, "request", "p99"));
    CHECK(cuzk::find_row(*g.comparison, "request", "p75")->threshold == 0.5);
  }
  // A phase of [tails] that a load case lacks, and [tails] against files without load cases.
  const auto missing = f.gate(std::string(kDefault) + "[tails.\"proof/synth\"]\np99 = 0.2\n");
  CHECK(missing.exit_code == 2);
  CHECK(any_has(missing.errors, "phase proof/synth (named in [tails]) is missing in load case load/open-0.5 of the baseline"));
  cuzk::test::SynthSpec s;
  cuzk::test::write_synth(f.d.file("s.jsonl"), s);
  for (const char* table : {"[tails.\"request\"]\np99 = 0.2\n", "[throughput]\nmax_drop = 0.1\n"}) {
    const auto g = gate(f.d.file("s.jsonl"), f.d.file("s.jsonl"), std::string(kDefault) + table);
    CHECK(g.exit_code == 2);
    CHECK(any_has(g.errors, "no load case"));
  }
}

TEST_CASE("gate: a tail alarm is confirmed on fresh files that repeat it, not on an A/A", "[load_rows][gate]") {
  const LoadPair first_pair(drawn(1), drawn(2, 1.5)), repeated(drawn(3), drawn(4, 1.5)), same(drawn(3), drawn(5));
  const char* toml = "[default]\nmax_slowdown = 0.05\n[tails.\"request\"]\np90 = 0.25\n";
  const cuzk::GateThresholds t = cuzk::parse_thresholds(toml, "t.toml");
  const cuzk::GateOptions o;
  const cuzk::CompareOptions co = cuzk::gate_compare_options(t, o);
  const cuzk::GateResult first = cuzk::gate_comparison(cuzk::compare_files(first_pair.a(), first_pair.b(), co), t, o);
  REQUIRE(first.exit_code == 1);
  cuzk::GateResult confirmed = first;
  cuzk::confirm_alarms(confirmed, cuzk::compare_files(repeated.a(), repeated.b(), co), t, o);
  INFO(lines(confirmed.errors) << lines(confirmed.regressions) << lines(confirmed.warnings));
  CHECK(confirmed.exit_code == 1);
  CHECK(any_has(confirmed.regressions, "request p90"));
  CHECK(any_has(confirmed.regressions, ": confirmed"));
  cuzk::GateResult refuted = first;
  cuzk::confirm_alarms(refuted, cuzk::compare_files(same.a(), same.b(), co), t, o);
  CHECK(refuted.exit_code == 0);
  CHECK(any_has(refuted.warnings, "not confirmed"));
}

TEST_CASE("pr comment: a tail alarm marks its own row, not the phase's median row", "[load_rows][gate]") {
  const auto g = LoadPair(drawn(1), drawn(2, 1.5)).gate(std::string(kDefault) + "[tails.\"request\"]\np90 = 0.25\n");
  REQUIRE(g.exit_code == 1);
  const std::string md = cuzk::format_pr_comment(g, {});
  CHECK(has(md, "`request` p90"));
  CHECK(has(md, "fails the gate"));
  for (const auto& l : cuzk::test::lines_of(md))
    if (has(l, "| `request` |")) CHECK_FALSE(has(l, "fails the gate"));
  // The history is asked for phases' times only.
  for (const auto& p : cuzk::changed_phases(g)) CHECK(p.metric != "p90");
}

TEST_CASE("thresholds: [tails] and [throughput] are parsed and checked strictly", "[load_rows][gate]") {
  const std::string base = kDefault;
  const cuzk::GateThresholds ok = cuzk::parse_thresholds(
      base + "[tails.\"request\"]\np99 = 0.25\n\"p99.9\" = 1.0\n[tails.\"proof/queue\"]\np90 = 0.5\n[throughput]\nmax_drop = 0.1\n",
      "t.toml");
  CHECK(ok.tails.at("request").at("p99") == 0.25);
  CHECK(ok.tails.at("request").at("p99.9") == 1.0);
  CHECK(ok.tails.at("proof/queue").at("p90") == 0.5);
  REQUIRE(ok.throughput);
  CHECK(ok.throughput->min_rounds == 3);
  CHECK(ok.throughput->threshold() == Approx(1 / 0.9 - 1));
  const cuzk::CompareOptions co = cuzk::gate_compare_options(ok, {});
  CHECK(co.tail_phases == std::vector<std::string>{"request", "proof/queue"});
  CHECK(co.tail_quantiles.size() == 3);  // 0.9 and 0.99 (compare's) and 0.999
  CHECK(co.throughput_threshold.value() == Approx(1 / 0.9 - 1));

  // A text starting with "top:" goes before [default], at the top level.
  auto error_of = [&](const std::string& text) {
    const bool top = text.rfind("top:", 0) == 0;
    try {
      (void)cuzk::parse_thresholds(top ? text.substr(4) + base : base + text, "t.toml");
    } catch (const cuzk::GateError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  struct Bad {
    const char* toml;
    const char* says;
  };
  for (const Bad& b : {Bad{"[tails.\"request\"]\nmax = 0.2\n", "unknown key 'max' in [tails.\"request\"]"},
                       Bad{"[tails.\"request\"]\np0 = 0.2\n", "unknown key 'p0'"},
                       Bad{"[tails.\"request\"]\np100 = 0.2\n", "unknown key 'p100'"},
                       Bad{"[tails.\"request\"]\npxx = 0.2\n", "strictly between 0 and 100"},
                       Bad{"[tails.\"request\"]\np99 = -0.2\n", "[tails.\"request\"] p99 must be a number between 0 and 10"},
                       Bad{"[tails.\"request\"]\np99 = 0.2\n\"p99.0\" = 0.3\n", "names the p99 twice"},
                       Bad{"[tails]\np99 = 0.2\n", "[tails] holds one table per phase"},
                       Bad{"[tails.\"request\"]\n", "[tails.\"request\"] is empty"},
                       Bad{"top:tails = 3\n", "[tails] must hold one table per phase"},
                       Bad{"[throughput]\nmax_drop = -0.1\n", "[throughput] max_drop must be a fraction in [0, 1)"},
                       Bad{"[throughput]\nmax_drop = 1.0\n", "[throughput] max_drop must be a fraction in [0, 1)"},
                       Bad{"[throughput]\nmax_drop = 0.1\nmin_rounds = 1\n", "[throughput] min_rounds must be an integer >= 2"},
                       Bad{"[throughput]\nmax_drop = 0.1\nmin_rounds = 2.5\n", "min_rounds must be an integer >= 2, not a float"},
                       Bad{"[throughput]\nmin_rounds = 3\n", "[throughput] needs max_drop"},
                       Bad{"[throughput]\nmax_drop = 0.1\nrounds = 3\n", "unknown key 'rounds' in [throughput]"},
                       Bad{"top:throughput = 0.1\n", "[throughput] must be a table"},
                       Bad{"[tail]\n", "known: default, phases, required, ignore, policy, new_phases, counters, tails, throughput"}}) {
    const std::string e = error_of(b.toml);
    INFO(b.toml << " -> " << e);
    CHECK(has(e, "t.toml: "));
    CHECK(has(e, b.says));
  }
  // The existing min_samples rule reads as before.
  CHECK(has(error_of("min_samples = 1\n"), "[default] min_samples must be an integer >= 2"));
}
