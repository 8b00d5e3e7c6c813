// `compare`, loading: a results file (cuzk JSON Lines) or Google Benchmark JSON into a SideData.
#include <fmt/core.h>

#include <cmath>

#include "harness/analysis/compare_detail.hpp"
#include "harness/measure/clock.hpp"
#include "harness/analysis/gbench.hpp"
#include "harness/analysis/load_rows.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/measure/machine.hpp"
#include "harness/measure/results.hpp"
#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"

namespace cuzk::compare_detail {

using json = nlohmann::json;

std::string key_of(const std::string& s, const std::string& c, const std::string& p) {
  return s + '\x1f' + c + '\x1f' + p;
}

namespace {

// A case's identity: its recorded parameters without those that do not change the work. The
// r/s seed of a proof ("rs_seed": a number, or "secure") only picks the blinding values, so a
// run with --seed and one without measure the same case and must be compared.
std::string case_params(const json& sample_or_line) {
  json p = sample_or_line.value("parameters", json::object());
  if (p.is_object()) p.erase("rs_seed");
  return p.dump();
}

// True when the file's first line is a results line (or one the results reader must refuse
// itself): such a file is read line by line, anything else as one JSON document.
bool starts_as_results(InputFile& in) {
  std::string line;
  const InputFile::Line got = in.next_line(line, kMaxResultsLineBytes);
  in.rewind();
  if (got == InputFile::Line::kTooLong) return true;
  if (got != InputFile::Line::kLine) return false;
  if (limits::json_nesting_depth(line) > limits::kMaxJsonDepth) return true;
  json v;
  try {
    v = json::parse(line);
  } catch (const json::exception&) {
    return false;  // the first line of a document spread over lines (Google Benchmark's own output)
  }
  return v.is_object() && (v.contains("schema") || !v.contains("benchmarks"));
}

// Counts a measured sample's environment judgement into `env`; false when the sample is to be
// left out (drop_disturbed and the sample was throttled or loaded).
bool note_environment(EnvSummary& env, const json& sample, const std::string& process, const CompareOptions& o) {
  ++env.samples;
  if (!sample.contains("env")) {
    ++env.without_env;
    return true;
  }
  const EnvJudgement j = judge_env(sample["env"], o.analysis.env_thresholds);
  if (!j.throttled && !j.loaded) return true;
  env.throttled += j.throttled;
  env.loaded += j.loaded;
  constexpr size_t kExamples = 3;
  if (env.examples.size() < kExamples)
    env.examples.push_back(fmt::format("repetition {}{}: {}", sample.value("repetition", -1),
                                       process.empty() ? "" : " of process " + process.substr(0, 8), j.why));
  if (!o.analysis.drop_disturbed) return true;
  ++env.dropped;
  return false;
}

// os::cpu_per_wall: (user + system CPU time) / wall time of the phase, from the OS counters: how
// many cores the phase kept busy on average (1 = one thread all along). Its value keeps the
// sample's process and round, so it can judge the phase like any counter of the samples.
void add_derived_counters(PhaseData& pd, const json& rec, const std::string& process, int64_t round) {
  if (!rec.contains("counters") || !rec["counters"].is_object()) return;
  const json& c = rec["counters"];
  auto num = [&](const char* k) { return c.contains(k) && c[k].is_number(); };
  if (!c.contains("os::utime_ns") && !c.contains("os::stime_ns")) return;
  auto& v = pd.counters["os::cpu_per_wall"];
  const double wall = rec["wall_ns"].get<double>();
  if (num("os::utime_ns") && num("os::stime_ns") && wall > 0)
    v.add((c["os::utime_ns"].get<double>() + c["os::stime_ns"].get<double>()) / wall, process, round);
  else
    pd.counter_null_reason["os::cpu_per_wall"] = "os::utime_ns or os::stime_ns not read";
}

// The "gpu_counters" lines (an untimed counters pass per case): each metric becomes the
// counter gpu::<metric> of its phase, one value per pass set, beside the phase's samples: with
// no process or round, and untimed, so it never judges the phase.
void add_gpu_counters(SideData& s, const ResultsFile& rf) {
  for (const auto& line : rf.gpu_counters) {
    const json& g = line.value;
    auto it = s.cases.find(key_of(g["suite"].get<std::string>(), g["case"].get<std::string>(), case_params(g)));
    if (it == s.cases.end()) continue;
    for (auto& [phase, values] : g["phases"].items()) {
      auto pd = it->second.phases.find(phase);
      if (pd == it->second.phases.end()) continue;
      for (auto& [metric, v] : values.items()) {
        const std::string name = "gpu::" + metric;
        auto& vec = pd->second.counters[name];
        pd->second.untimed_counters.insert(name);
        if (v.is_number()) {
          vec.add(v.get<double>(), "", kNoRound);
        } else {
          const json& st = g["metrics"].contains(metric) ? g["metrics"][metric] : json::object();
          const std::string why = st.is_object() && st.contains("reason") && st["reason"].is_string() ? st["reason"].get<std::string>() : "";
          pd->second.counter_null_reason[name] = why.empty() ? "not collected" : why;
        }
      }
    }
  }
}

// gbench_field (gbench.hpp) with the file's name in the error.
json gbench_field(const std::string& path, const json& obj, const char* key, json::value_t want, json fallback) {
  try {
    return cuzk::gbench_field(obj, key, want, std::move(fallback));
  } catch (const GbenchError& e) {
    throw CompareError(path + ": " + e.what());
  }
}

// A load sample's completion (docs/results-format.md, "Load samples") into `lc`: its
// load.round and load.done_s, checked here because the results reader leaves the load object
// to its readers. A sample without load.done_s (written before load recorded it) is counted.
void note_completion(LoadCase& lc, const json& v, const std::string& path, size_t line) {
  ++lc.samples;
  const json* load = v.contains("load") ? &v["load"] : nullptr;
  if (load && !load->is_object())
    throw CompareError(fmt::format("{}:{}: field 'load' must be an object, not {}", path, line, load->type_name()));
  if (!load || !load->contains("done_s")) {
    ++lc.without_done;
    return;
  }
  const json& done = (*load)["done_s"];
  if (!done.is_number() || !std::isfinite(done.get<double>()) || done.get<double>() < 0)
    throw CompareError(fmt::format("{}:{}: load: field 'done_s' must be a number of seconds >= 0, not {}", path, line,
                                   done.dump()));
  const json round = load->value("round", json());
  if (!round.is_number_integer() || round.get<int64_t>() < 0)
    throw CompareError(fmt::format("{}:{}: load: field 'round' must be an integer >= 0 beside done_s, not {}", path,
                                   line, round.dump()));
  lc.done.push_back({round.get<int64_t>(), done.get<double>()});
}

SideData load_gbench(const std::string& path, const json& doc) {
  SideData s;
  s.path = path;
  s.format = "gbench";
  using vt = json::value_t;
  const json ctx = gbench_field(path, doc, "context", vt::object, json::object());
  s.machine = {{"host_name", gbench_field(path, ctx, "host_name", vt::string, "")},
               {"num_cpus", gbench_field(path, ctx, "num_cpus", vt::number_float, 0)},
               {"mhz_per_cpu", gbench_field(path, ctx, "mhz_per_cpu", vt::number_float, 0)}};
  s.provenance = {{"executable", gbench_field(path, ctx, "executable", vt::string, "")},
                  {"library_build_type", gbench_field(path, ctx, "library_build_type", vt::string, "")}};
  s.identity = fmt::format("host {}, {} CPUs, {} MHz", s.machine["host_name"].get<std::string>(),
                           s.machine["num_cpus"].dump(), s.machine["mhz_per_cpu"].dump());
  if (!doc["benchmarks"].is_array()) throw CompareError(path + ": 'benchmarks' is not an array");
  // The case is the benchmark executable's name, so two builds of bench_ff match.
  std::string exe = s.provenance["executable"].get<std::string>();
  if (auto slash = exe.find_last_of('/'); slash != std::string::npos) exe = exe.substr(slash + 1);
  if (exe.empty()) exe = "benchmarks";
  CaseData& c = s.cases[key_of("gbench", exe, "{}")];
  c.suite = "gbench";
  c.case_name = exe;
  c.params = "{}";
  for (const auto& b : doc["benchmarks"]) {
    if (!b.is_object()) continue;
    if (gbench_field(path, b, "run_type", vt::string, "iteration") != "iteration") continue;
    if (b.contains("error_occurred") && b["error_occurred"].is_boolean() && b["error_occurred"].get<bool>())
      continue;
    if (std::string problem = gbench_entry_problem(b); !problem.empty()) throw CompareError(path + ": " + problem);
    const std::string name = gbench_field(path, b, "run_name", vt::string, gbench_field(path, b, "name", vt::string, ""));
    const std::string unit = gbench_field(path, b, "time_unit", vt::string, "ns");
    try {
      c.phases[name].wall.add(gbench_time_ns(b["real_time"].get<double>(), unit), "", kNoRound);
    } catch (const GbenchError& e) {
      throw CompareError(path + ": " + e.what());
    }
    ++c.samples;
  }
  return s;
}

SideData load_cuzk(const std::string& path, const ResultsFile& rf, const CompareOptions& o) {
  SideData s;
  s.path = path;
  s.format = "cuzk";
  // A file whose writer is not the process it measured (a load run: the client writes, the
  // daemon is measured) names the measured build in "measured_provenance" (docs/results-format.md).
  const json measured = rf.header.value.value("measured_provenance", json());
  s.provenance = measured.is_object() ? measured : rf.header.value.value("provenance", json::object());
  s.machine = rf.header.value.value("machine", json::object());
  s.identity = machine_identity(s.machine);
  s.injected = rf.header.value.value("injected", json());  // parse_results checked its shape
  for (const auto& line : rf.samples) {
    const json& v = line.value;
    if (v.value("suite", "") == "load")
      note_completion(s.load[key_of("load", v.value("case", ""), case_params(v))], v, path, line.line);
    if (v.value("warmup", false) && !o.include_warmup) {
      ++s.warmups_skipped;
      continue;
    }
    std::string suite = v.value("suite", ""), cname = v.value("case", "");
    std::string params = case_params(v);
    const std::string process = v.contains("process_id") && v["process_id"].is_string() ? v["process_id"].get<std::string>() : "";
    // parse_results has checked both: round_id an integer >= 0, primary_metric a non-empty string.
    const int64_t round = v.contains("round_id") ? v["round_id"].get<int64_t>() : kNoRound;
    const std::string primary = v.contains("primary_metric") ? v["primary_metric"].get<std::string>() : "";
    if (!note_environment(s.env, v, process, o)) continue;
    CaseData& c = s.cases[key_of(suite, cname, params)];
    c.suite = suite;
    c.case_name = cname;
    c.params = params;
    if (c.samples == 0)
      c.primary_metric = primary;
    else if (primary != c.primary_metric)
      c.primary_metric_mixed = true;
    ++c.samples;
    ++c.per_process[process];
    ++c.per_round[round];
    SampleRecord& sr = c.records.emplace_back();
    sr.process = process;
    sr.round = round;
    if (v.contains("spans") && v["spans"].is_array()) {
      // parse_results has checked each span's fields and types.
      const json& dropped = v.contains("spans_dropped") ? v["spans_dropped"] : json(0);
      sr.spans_complete = dropped.is_number() && dropped.get<double>() == 0;
      for (const auto& sp : v["spans"]) {
        const double start = sp["start_ns"].get<double>();
        sr.spans.push_back({sp["path"].get<std::string>(), start, start + sp["dur_ns"].get<double>(),
                            sp["tid"].get<int64_t>()});
      }
    }
    for (auto& [phase, rec] : v["phases"].items()) {
      PhaseData& pd = c.phases[phase];
      sr.wall[phase] = rec["wall_ns"].get<double>();
      pd.wall.add(rec["wall_ns"].get<double>(), process, round);
      // An optional GPU time of the record into its values, or one more sample without it. (The
      // record is a parameter: clang 14 cannot capture a structured binding.)
      auto take = [&](const nlohmann::json& r, const char* field, MetricValues& values, size_t& missing) {
        if (r.contains(field) && r[field].is_number())
          values.add(r[field].get<double>(), process, round);
        else
          ++missing;
      };
      take(rec, "gpu_ns", pd.gpu, pd.gpu_null);
      take(rec, "gpu_kernel_ns", pd.gpu_kernel, pd.gpu_kernel_missing);
      if (rec.contains("gpu_copy_ns") && rec["gpu_copy_ns"].is_number())
        pd.gpu_copy_total += rec["gpu_copy_ns"].get<double>();
      add_derived_counters(pd, rec, process, round);
      if (rec.contains("counters") && rec["counters"].is_object()) {
        for (auto& [cn, cv] : rec["counters"].items()) {
          auto& vec = pd.counters[cn];  // creates the entry even when null
          if (cv.is_number()) {
            vec.add(cv.get<double>(), process, round);
          } else {
            ++pd.counter_null[cn];
            std::string why = "null";
            if (rec.contains("counter_errors") && rec["counter_errors"].contains(cn) &&
                rec["counter_errors"][cn].is_string())
              why = rec["counter_errors"][cn].get<std::string>();
            pd.counter_null_reason[cn] = why;
          }
        }
      }
    }
  }
  add_gpu_counters(s, rf);
  return s;
}

}  // namespace

SideData load_side(const std::string& path, const CompareOptions& o) {
  InputFile in(path, throw_as<CompareError>);
  if (!starts_as_results(in))
    return load_side_text(path, in.read_all(limits::kMaxJsonDocumentBytes, "a Google Benchmark JSON document"), o);
  ResultsFile rf;
  try {
    rf = read_results(in);
  } catch (const ResultsError& e) {
    throw CompareError(e.what());
  }
  return load_cuzk(path, rf, o);
}

SideData load_side_text(const std::string& path, const std::string& text, const CompareOptions& o) {
  // Google Benchmark output is one JSON document (with NaN where a statistic is undefined);
  // a cuzk results file is JSON Lines, which does not parse as one document.
  json doc;
  try {
    doc = parse_gbench_json(text);
  } catch (const std::exception&) {
    // Not one JSON document (json::exception), or nested too deep (GbenchError): read as a
    // results file, whose reader names the line at fault and the limit.
  }
  if (doc.is_object() && doc.contains("benchmarks")) return load_gbench(path, doc);
  ResultsFile rf;
  try {
    rf = parse_results(text, path);
  } catch (const std::exception& e) {
    throw CompareError(e.what());
  }
  return load_cuzk(path, rf, o);
}

std::string signed_ns(double ns) {
  // One decimal is enough for a change (its CI is rarely narrower); fmt_ns keeps three for medians.
  const double a = std::fabs(ns);
  const char* sign = ns >= 0 ? "+" : "-";
  if (a >= 1e9) return fmt::format("{}{:.3f} s", sign, a / 1e9);
  if (a >= 1e6) return fmt::format("{}{:.1f} ms", sign, a / 1e6);
  if (a >= 1e3) return fmt::format("{}{:.1f} us", sign, a / 1e3);
  return fmt::format("{}{:.0f} ns", sign, a);
}

bool is_time_metric(const std::string& metric) {
  return metric == "wall_ns" || metric == "gpu_ns" || metric == "gpu_kernel_ns" || metric_quantile(metric).has_value();
}

std::string value_text(const std::string& metric, double v) {
  if (metric == kThroughputMetric) return output::sig3(v) + "/s";
  return is_time_metric(metric) ? fmt_ns(v) : fmt::format("{:.0f}", v);
}

std::string signed_value_text(const std::string& metric, double v) {
  if (metric == kThroughputMetric) return (v >= 0 ? "+" : "") + output::sig3(v) + "/s";
  return is_time_metric(metric) ? signed_ns(v) : fmt::format("{:+.0f}", v);
}


}  // namespace cuzk::compare_detail
