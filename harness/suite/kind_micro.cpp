// The "micro" suite kind: runs a group of Google Benchmark binaries (suites/micro/bench_*) and
// records each benchmark repetition as the phase "micro/<benchmark name>" of a sample, so that
// microbenchmarks land in the same results files, compare and gate as the proofs do
// (docs/suites.md).
//
// One binary run per case and binary, with --benchmark_repetitions = warm-up + measured
// repetitions: repetition i of every benchmark of the group forms sample i, the first `warmup`
// of them flagged as warm-up. A phase's wall_ns is Google Benchmark's real_time (time per
// iteration) in whole nanoseconds; the sample's wall_ns is their sum. Counters are null: the
// work ran in another process. Written through Session::record, one line per repetition.
#include <fmt/core.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <utility>

#include "harness/analysis/gbench.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/session.hpp"
#include "harness/suite/suite.hpp"

namespace cuzk::suite {
namespace {

using nlohmann::json;

// Group name -> the binaries it runs. Groups follow the prover's layers, so that one case
// answers one question ("did field arithmetic get slower?").
const std::vector<std::pair<std::string, std::vector<std::string>>>& groups() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> g = {
      {"arithmetic", {"bench_ff", "bench_ec"}},
      {"msm", {"bench_msm"}},
      {"ntt", {"bench_ntt"}},
      {"synthesis", {"bench_synthesis"}},
  };
  return g;
}

std::vector<std::string> group_names() {
  std::vector<std::string> n;
  for (auto& [name, _] : groups()) n.push_back(name);
  return n;
}

// $CUZK_MICRO_DIR, else <build>/suites next to <build>/harness/cuzk-bench: the binaries that
// belong to this very build, never a stale copy found on a PATH.
std::string micro_dir() {
  if (const char* e = std::getenv("CUZK_MICRO_DIR"); e && *e) return e;
  auto exe = own_executable();
  if (!exe) return "suites";
  return (std::filesystem::path(*exe).parent_path().parent_path() / "suites").lexically_normal().string();
}

// Google Benchmark 1.8 takes --benchmark_min_time as "<float>s" (or "<n>x") and warns about a
// bare number; 1.7 takes a bare number of seconds and rejects the suffix. Its --help says which.
std::string min_time_flag(const std::string& bin, int64_t ms) {
  CommandOutput help = run_capture(shell_quote(bin) + " --help 2>&1", true);
  const bool suffixed = help.out.find("<float>s") != std::string::npos;
  return fmt::format("--benchmark_min_time={:.3f}{}", double(ms) / 1000.0, suffixed ? "s" : "");
}

// Every requested counter is null in a micro sample: the work ran in another process, which
// this process's counters do not see (never a silent 0).
PhaseRecord external_record(uint64_t wall_ns, const std::vector<CounterStatus>& counters) {
  PhaseRecord r;
  r.wall_ns = wall_ns;
  r.count = 1;
  for (auto& c : counters) {
    r.counters[c.name] = std::nullopt;
    r.counter_errors[c.name] = "measured by a Google Benchmark binary in a separate process";
  }
  return r;
}

// One repetition of every benchmark of a group: the phase records, and Google Benchmark's own
// numbers (real_time and cpu_time in their unit, iterations), kept in the sample line's
// "gbench" field because wall_ns is whole nanoseconds and a field addition takes a few.
struct Repetition {
  Sample sample;
  json rows = json::object();
};

// Runs one binary and adds its iteration rows to reps[repetition_index].
void run_binary(const RunContext& ctx, const std::string& bin, int total_reps, std::map<int, Repetition>& reps) {
  namespace fs = std::filesystem;
  if (!fs::exists(bin))
    throw std::runtime_error(fmt::format("no benchmark binary at {} (build it with `ninja -C <build> {}`, or point "
                                         "CUZK_MICRO_DIR at the folder that has it)",
                                         bin, fs::path(bin).filename().string()));
  std::string cmd = shell_quote(bin) + " --benchmark_format=json" +
                    fmt::format(" --benchmark_repetitions={}", total_reps);
  const std::string filter = ctx.params.value("filter", "");
  if (!filter.empty()) cmd += " " + shell_quote("--benchmark_filter=" + filter);
  if (int64_t ms = ctx.params.value("min_time_ms", int64_t(0)); ms > 0) cmd += " " + min_time_flag(bin, ms);
  fmt::print(stderr, "[{}] case {}: {}\n", ctx.suite, ctx.case_name, cmd);
  ChildOptions co;
  co.capture = true;
  co.timeout_s = ctx.run_timeout_s;
  ChildResult r = run_child(cmd, co);
  if (r.code != 0) throw std::runtime_error(fmt::format("{} failed: {}", bin, r.failure()));
  // A filter that matches none of this binary's benchmarks: Google Benchmark says so on stderr,
  // exits 0 and prints no JSON. Fine within a group, as long as the group ran something.
  if (r.out.find_first_not_of(" \t\r\n") == std::string::npos) return;
  json doc;
  try {
    doc = parse_gbench_json(r.out);
  } catch (const std::exception& e) {  // json::exception, or GbenchError (nested too deep)
    throw std::runtime_error(fmt::format("{}: its --benchmark_format=json output does not parse: {}", bin, e.what()));
  }
  const auto& counters = ctx.session->counter_status();
  // Every field read typed (gbench_field): a benchmark binary's output that does not have
  // Google Benchmark's shape is that binary's error, named, never a type_error.
  try {
    using vt = json::value_t;
    const json benchmarks = gbench_field(doc, "benchmarks", vt::array, json::array());
    for (const json& b : benchmarks) {
      if (gbench_field(b, "run_type", vt::string, "iteration") != "iteration") continue;  // mean/median/stddev rows
      const std::string name = gbench_field(b, "name", vt::string, "").get<std::string>();
      // SkipWithError (e.g. "CPU lacks bmi2/adx") and, in 1.8, SkipWithMessage: no time to
      // record; said on stderr and left out, as compare does.
      auto flag = [&](const char* key) {
        auto it = b.find(key);
        return it != b.end() && ((it->is_boolean() && it->get<bool>()) || (it->is_number() && it->get<double>() != 0));
      };
      if (flag("error_occurred") || flag("skipped")) {
        fmt::print(stderr, "[{}] case {}: {} skipped itself: {}\n", ctx.suite, ctx.case_name, name,
                   gbench_field(b, "error_message", vt::string, gbench_field(b, "skip_message", vt::string, ""))
                       .get<std::string>());
        continue;
      }
      if (std::string problem = gbench_entry_problem(b); !problem.empty()) throw GbenchError(problem);
      const json index = gbench_field(b, "repetition_index", vt::number_float, 0);
      if (!index.is_number_integer() || index.get<int64_t>() < 0)
        throw GbenchError(fmt::format("benchmark '{}': repetition_index is {}, expected an integer >= 0", name, index.dump()));
      Repetition& rep = reps[index.get<int>()];
      const std::string unit = gbench_field(b, "time_unit", vt::string, "ns");
      const uint64_t ns = uint64_t(gbench_time_ns(b["real_time"].get<double>(), unit) + 0.5);
      rep.sample.phases["micro/" + name] = external_record(ns, counters);
      rep.sample.wall_ns += ns;
      rep.rows["micro/" + name] = {{"real_time", b["real_time"]},
                                   {"cpu_time", gbench_field(b, "cpu_time", vt::number_float, 0.0)},
                                   {"time_unit", unit},
                                   {"iterations", gbench_field(b, "iterations", vt::number_float, int64_t(0))}};
    }
  } catch (const GbenchError& e) {
    throw std::runtime_error(fmt::format("{}: its --benchmark_format=json output: {}", bin, e.what()));
  }
}

bool run_micro(RunContext& ctx) {
  const std::string group = ctx.params.at("group").get<std::string>();
  const std::string dir = micro_dir();
  const int total = ctx.warmup_plan.count + ctx.reps;
  std::map<int, Repetition> samples;
  for (auto& [name, bins] : groups())
    if (name == group)
      for (auto& b : bins) run_binary(ctx, dir + "/" + b, total, samples);
  if (samples.empty())
    throw std::runtime_error(
        fmt::format("group '{}': no benchmark matches filter \"{}\"", group, ctx.params.value("filter", "")));
  for (int i = 0; i < total; ++i) {
    const bool warm = i < ctx.warmup_plan.count;
    if (ctx.on_rep) ctx.on_rep(i, warm);
    auto it = samples.find(i);
    if (it == samples.end())
      throw std::runtime_error(fmt::format("the benchmarks reported no repetition {} of {}", i + 1, total));
    SampleInfo info{.suite = ctx.suite,
                    .case_name = ctx.case_name,
                    .parameters = ctx.params,
                    .repetition = warm ? i : i - ctx.warmup_plan.count,
                    .warm = warm};
    ctx.session->record(info, it->second.sample, {{"gbench", it->second.rows}});
  }
  if (ctx.on_rep) ctx.on_rep(total, false);
  return true;
}

std::string validate_micro(const json& p) {
  const std::string filter = p.value("filter", "");
  try {
    // Google Benchmark matches with POSIX extended regular expressions (or std::regex).
    std::regex re(filter, std::regex::extended);
  } catch (const std::regex_error& e) {
    return fmt::format("'filter' = \"{}\" is not a valid regular expression: {}", filter, e.what());
  }
  return "";
}

}  // namespace

KindSpec micro_kind() {
  return KindSpec{
      "micro",
      "a group of Google Benchmark microbenchmarks (suites/micro/bench_*), each repetition recorded as micro/<name>",
      {string_param("group", "arithmetic", group_names(),
                    "which binaries: arithmetic (bench_ff, bench_ec), msm, ntt, synthesis"),
       string_param("filter", "", {}, "--benchmark_filter regex (\"\": every benchmark of the group)"),
       {"min_time_ms", 0, 60000, 0, "--benchmark_min_time in milliseconds (0: Google Benchmark's default)"}},
      validate_micro,
      run_micro};
}

}  // namespace cuzk::suite
