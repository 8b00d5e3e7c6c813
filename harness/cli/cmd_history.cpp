// `cuzk-bench history ingest|show`: the results history (docs/history.md). ingest stores
// results files and the folders of ab, matrix, bisect and calibrate; show prints a phase's
// per-commit series. The store is results/history.sqlite unless --db names another SQLite file
// or a postgresql:// URL.
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/analysis/output/printers.hpp"
#include "harness/cli/commands.hpp"
#include "harness/history/store.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/results.hpp"

namespace cuzk::cli {
namespace {

constexpr const char* kDefaultDb = "results/history.sqlite";

struct HistoryOptions {
  std::string db = kDefaultDb;
  // ingest
  std::vector<std::string> paths;
  history::IngestOptions ingest{.branch = "", .repo = "."};
  // show
  history::SeriesFilter filter;
  bool json = false, csv = false;
};

std::unique_ptr<history::Db> open_history(const HistoryOptions& o) {
  try {
    return history::open_db(o.db);
  } catch (const history::DbError& e) {
    throw Error(e.what());
  }
}

int run_ingest(const HistoryOptions& o) {
  for (const auto& p : o.paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) check_input_file(p);
  }
  auto db = open_history(o);
  size_t added = 0, samples = 0;
  try {
    for (const auto& f : history::ingest(*db, o.paths, o.ingest)) {
      if (f.added) {
        ++added;
        samples += f.samples;
        fmt::print("ingested {} ({}): {} samples, {} measurements\n", f.path, f.kind, f.samples, f.measurements);
      } else {
        fmt::print("skipped {}: {}\n", f.path, f.why);
      }
    }
  } catch (const ResultsError& e) {
    throw Error(fmt::format("{} (nothing of that file was stored; the files before it were)", e.what()));
  } catch (const history::DbError& e) {
    throw Error(fmt::format("history {}: {}", db->describe(), e.what()));
  }
  fmt::print("{} file(s) added, {} samples, into {}\n", added, samples, db->describe());
  return kExitOk;
}

std::string history_value(const std::string& metric, double v) {
  if (std::isnan(v)) return "-";
  return metric.size() > 3 && metric.compare(metric.size() - 3, 3, "_ns") == 0 ? fmt::format("{:.3f} ms", v / 1e6)
                                                                            : fmt::format("{:.6g}", v);
}

int run_show(const HistoryOptions& o) {
  auto db = open_history(o);
  std::vector<history::Series> series;
  try {
    series = history::read_series(*db, o.filter);
  } catch (const history::DbError& e) {
    throw Error(fmt::format("history {}: {}", db->describe(), e.what()));
  }
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& s : series) {
      nlohmann::json pts = nlohmann::json::array();
      for (const auto& p : s.points)
        pts.push_back({{"commit", p.commit}, {"dirty", p.dirty}, {"commit_date", p.commit_date},
                       {"runs", p.runs}, {"samples", p.samples}, {"median", p.median},
                       {"ci_low", std::isnan(p.ci_low) ? nlohmann::json() : nlohmann::json(p.ci_low)},
                       {"ci_high", std::isnan(p.ci_high) ? nlohmann::json() : nlohmann::json(p.ci_high)},
                       {"command", p.command}});
      out.push_back({{"machine", s.machine}, {"machine_label", s.machine_label}, {"suite", s.suite},
                     {"case", s.case_name}, {"parameters", nlohmann::json::parse(s.parameters, nullptr, false)},
                     {"backend", s.backend}, {"preset", s.preset}, {"phase", s.phase}, {"metric", s.metric},
                     {"points", pts}});
    }
    std::cout << out.dump(2) << '\n';
    return kExitOk;
  }
  if (o.csv) {
    std::cout << "machine,suite,case,backend,preset,phase,metric,commit,dirty,commit_date,runs,samples,median,ci_low,ci_high\n";
    for (const auto& s : series)
      for (const auto& p : s.points)
        std::cout << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", s.machine, s.suite, s.case_name,
                                 s.backend, s.preset, s.phase, s.metric, p.commit, p.dirty ? 1 : 0, p.commit_date,
                                 p.runs, p.samples, p.median, std::isnan(p.ci_low) ? "" : fmt::format("{}", p.ci_low),
                                 std::isnan(p.ci_high) ? "" : fmt::format("{}", p.ci_high));
    return kExitOk;
  }
  if (series.empty()) {
    fmt::print("no series in {} matches (metric {}{}{})\n", db->describe(), o.filter.metric,
               o.filter.case_name.empty() ? "" : ", case " + o.filter.case_name,
               o.filter.phase.empty() ? "" : ", phase " + o.filter.phase);
    return kExitOk;
  }
  for (const auto& s : series) {
    fmt::print("{}/{} {} {} [{}{}] on {} ({})\n", s.suite, s.case_name, s.phase, s.metric,
               s.preset.empty() ? "custom" : s.preset, s.backend.empty() ? "" : ", " + s.backend, s.machine,
               s.machine_label);
    auto t = output::Table::with_titles({"commit", "date", "runs", "samples", "median", "95% CI of the median"});
    for (const auto& p : s.points)
      t.add_row({p.commit.substr(0, 12) + (p.dirty ? "+" : ""), p.commit_date.empty() ? "?" : p.commit_date,
                 std::to_string(p.runs), std::to_string(p.samples), history_value(s.metric, p.median),
                 std::isnan(p.ci_low) ? std::string("- (under 6 samples)")
                                      : fmt::format("[{}, {}]", history_value(s.metric, p.ci_low),
                                                    history_value(s.metric, p.ci_high))});
    std::cout << output::text(t) << '\n';
  }
  return kExitOk;
}

Registrar reg_history("history", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("history", "the results history: ingest results, show per-commit series (docs/history.md)");
  sub->require_subcommand(1);
  auto o = std::make_shared<HistoryOptions>();
  auto db_option = [o](CLI::App* s) {
    s->add_option("--db", o->db, "the store: a SQLite file, or a postgresql:// URL")->capture_default_str();
  };
  auto* ing = sub->add_subcommand("ingest", "store results files and ab/matrix/bisect/calibrate folders (idempotent)");
  ing->add_option("PATH", o->paths, "results files (.jsonl) or folders")->required();
  db_option(ing);
  ing->add_option("--branch", o->ingest.branch, "the branch the commits were built from (recorded with each run)");
  ing->add_option("--repo", o->ingest.repo, "a git checkout that knows the commits, for their dates")->capture_default_str();
  auto* show = sub->add_subcommand("show", "a phase's per-commit series: median, its 95% CI, runs");
  db_option(show);
  show->add_option("--suite", o->filter.suite, "only this suite");
  show->add_option("--case", o->filter.case_name, "only this case");
  show->add_option("--phase", o->filter.phase, "only this phase (e.g. proof, proof/prove/msm_h)");
  show->add_option("--metric", o->filter.metric, "wall_ns, gpu_ns or a counter's name")->capture_default_str();
  show->add_option("--machine", o->filter.machine, "only this machine (its fingerprint or a prefix)");
  show->add_option("--branch", o->filter.branch, "only runs ingested with this --branch");
  show->add_option("--backend", o->filter.backend, "only this backend (cpu, cuda)");
  show->add_option("--preset", o->filter.preset, "only this build preset");
  show->add_option("--since", o->filter.since, "start at this commit (a prefix of its sha)");
  show->add_flag("--include-warmup", o->filter.include_warmup, "also count warm-up samples");
  auto* js = show->add_flag("--json", o->json, "print JSON");
  show->add_flag("--csv", o->csv, "print CSV")->excludes(js);
  return [o, ing, show] {
    if (ing->parsed()) return run_ingest(*o);
    if (show->parsed()) return run_show(*o);
    throw Error("history: name a subcommand: ingest or show");
  };
});

}  // namespace
}  // namespace cuzk::cli
