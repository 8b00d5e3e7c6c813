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
#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/analysis/report_page.hpp"
#include "harness/history/changes.hpp"
#include "harness/history/dashboard.hpp"
#include "harness/history/store.hpp"
#include "harness/measure/machine.hpp"
#include "harness/measure/process.hpp"
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
  // changes
  history::ChangePointOptions detect;
  std::string ack, resolve, note;
  // dashboard
  std::string out_dir;
  history::DashboardOptions dashboard;
  // commits, record-failure
  history::CommitFailure failure;
};

// "--machine this": the fingerprint of the machine running this command, as its results files
// would be stored.
void resolve_machine(std::string& machine) {
  if (machine == "this") machine = history::machine_fingerprint(machine_json().dump());
}

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

std::string pct(double ratio) { return fmt::format("{:+.2f}%", 100 * (ratio - 1)); }

std::vector<history::SeriesChanges> analyse(history::Db& db, const HistoryOptions& o, bool record) {
  try {
    return history::analyse_history(db, o.filter, o.detect, record);
  } catch (const history::DbError& e) {
    throw Error(fmt::format("history {}: {}", db.describe(), e.what()));
  }
}

// Whether point `after_id` of series `s` comes after commit `since` (a sha prefix) in its order.
bool after_since(const history::Series& s, const std::string& after_id, const std::string& since) {
  if (since.empty()) return true;
  size_t since_at = s.points.size(), at = s.points.size();
  for (size_t i = 0; i < s.points.size(); ++i) {
    if (since_at == s.points.size() && s.points[i].commit.rfind(since, 0) == 0) since_at = i;
    if (s.points[i].commit + (s.points[i].dirty ? "-dirty" : "") == after_id) at = i;
  }
  return since_at == s.points.size() || at > since_at;
}

int run_changes(const HistoryOptions& o) {
  auto db = open_history(o);
  if (!o.ack.empty() || !o.resolve.empty()) {
    try {
      history::migrate(*db);
      history::set_change_status(*db, o.ack.empty() ? o.resolve : o.ack, o.ack.empty() ? "resolved" : "acknowledged",
                                 o.note);
    } catch (const history::DbError& e) {
      throw Error(e.what());
    }
    fmt::print("{} is now {}\n", o.ack.empty() ? o.resolve : o.ack, o.ack.empty() ? "resolved" : "acknowledged");
    return kExitOk;
  }
  const auto all = analyse(*db, o, true);
  size_t shown = 0, new_regressions = 0;
  nlohmann::json js = nlohmann::json::array();
  for (const auto& sc : all) {
    const auto& s = sc.series;
    for (const auto& st : sc.changes) {
      const auto& c = st.change;
      if (!after_since(s, c.after_id, o.filter.since)) continue;
      ++shown;
      const bool regression = c.direction == history::Direction::kRegression;
      if (regression && st.status == "new") ++new_regressions;
      if (o.json) {
        js.push_back({{"id", c.id}, {"status", st.status}, {"first_seen_utc", st.first_seen_utc},
                      {"machine", s.machine}, {"suite", s.suite}, {"case", s.case_name}, {"phase", s.phase},
                      {"metric", s.metric}, {"backend", s.backend}, {"preset", s.preset},
                      {"direction", history::direction_name(c.direction)}, {"before", c.before_id},
                      {"after", c.after_id}, {"median_before", c.median_before}, {"median_after", c.median_after},
                      {"ratio", c.ratio}, {"ratio_low", c.ratio_low}, {"ratio_high", c.ratio_high},
                      {"p_value", c.p_value}});
        continue;
      }
      fmt::print("{} [{}] {} {}/{} {} {}: {} ({} .. {}): {} -> {}, {} [{}, {}], p {:.2g}\n", c.id, st.status,
                 history::direction_name(c.direction), s.suite, s.case_name, s.phase, s.metric, s.machine,
                 c.before_id.substr(0, 12), c.after_id.substr(0, 12), c.median_before, c.median_after, pct(c.ratio),
                 pct(c.ratio_low), pct(c.ratio_high), c.p_value);
    }
    if (!o.json && sc.pending && sc.pending->status == history::PendingStatus::kNeedsPoints &&
        sc.pending->points_needed > 0 && std::fabs(sc.pending->ratio - 1) >= o.detect.min_magnitude)
      fmt::print("  pending: {}/{} {} {} on {}: a {} shift at {} needs about {} more point(s) at its level\n", s.suite,
                 s.case_name, s.phase, s.metric, s.machine, pct(sc.pending->ratio),
                 s.points.at(sc.pending->index).commit.substr(0, 12), sc.pending->points_needed);
  }
  if (o.json) std::cout << js.dump(2) << '\n';
  else if (shown == 0) fmt::print("no change point in {} series{}\n", all.size(), o.filter.since.empty() ? "" : " after " + o.filter.since);
  if (new_regressions) {
    if (!o.json)
      fmt::print(stderr, "cuzk-bench: {} new regression(s){}; acknowledge with history changes --ack ID\n",
                 new_regressions, o.filter.since.empty() ? "" : " after " + o.filter.since);
    return kExitFailure;
  }
  return kExitOk;
}

int run_dashboard(HistoryOptions o) {
  auto db = open_history(o);
  std::vector<history::DashboardSeries> page;
  for (auto& sc : analyse(*db, o, false)) {
    history::DashboardSeries d;
    for (const auto& st : sc.changes)
      d.changes.push_back({.index = st.change.index, .id = st.change.id, .status = st.status, .ratio = st.change.ratio,
                           .low = st.change.ratio_low, .high = st.change.ratio_high, .p_value = st.change.p_value,
                           .regression = st.change.direction == history::Direction::kRegression});
    d.series = std::move(sc.series);
    page.push_back(std::move(d));
  }
  o.dashboard.generated_utc = utc_stamp();
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw Error(fmt::format("-o {}: cannot create the folder: {}", o.out_dir, ec.message()));
  const std::string path = o.out_dir + "/index.html";
  report::write_text(path, history::dashboard_html(page, o.dashboard));
  size_t changes = 0;
  for (const auto& d : page) changes += d.changes.size();
  fmt::print("wrote {} ({} series, {} change points)\n", path, page.size(), changes);
  return kExitOk;
}

int run_commits(const HistoryOptions& o) {
  auto db = open_history(o);
  std::vector<history::StoredCommit> commits;
  try {
    commits = history::stored_commits(*db, o.filter.suite, o.filter.case_name, o.filter.machine);
  } catch (const history::DbError& e) {
    throw Error(fmt::format("history {}: {}", db->describe(), e.what()));
  }
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : commits)
      out.push_back({{"commit", c.commit}, {"status", c.status}, {"runs", c.runs}, {"message", c.message}});
    std::cout << out.dump(2) << '\n';
    return kExitOk;
  }
  // One line a commit, "SHA STATUS": what a script reads (history-backfill.sh skips these).
  for (const auto& c : commits)
    fmt::print("{} {}{}\n", c.commit, c.status,
               c.status == "measured" ? fmt::format(" ({} run{})", c.runs, c.runs == 1 ? "" : "s") : ": " + c.message);
  return kExitOk;
}

int run_record_failure(HistoryOptions o) {
  resolve_machine(o.failure.machine);
  if (o.failure.machine.empty()) o.failure.machine = history::machine_fingerprint(machine_json().dump());
  auto db = open_history(o);
  try {
    history::record_failure(*db, o.failure);
  } catch (const history::DbError& e) {
    throw Error(fmt::format("history {}: {}", db->describe(), e.what()));
  }
  fmt::print("recorded: {} {} failed for {}/{} on {}\n", o.failure.commit, o.failure.stage, o.failure.suite,
             o.failure.case_name, o.failure.machine);
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
  // The series filter of show, changes and dashboard.
  auto filter_options = [o](CLI::App* s) {
    s->add_option("--suite", o->filter.suite, "only this suite");
    s->add_option("--case", o->filter.case_name, "only this case");
    s->add_option("--phase", o->filter.phase, "only this phase");
    s->add_option("--metric", o->filter.metric,
                  "wall_ns, gpu_ns, gpu_kernel_ns, gpu_copy_ns, gpu_idle_ns or a counter's name")
        ->capture_default_str();
    s->add_option("--machine", o->filter.machine, "only this machine (its fingerprint, a prefix, or 'this')");
    s->add_option("--branch", o->filter.branch, "only runs ingested with this --branch");
    s->add_option("--backend", o->filter.backend, "only this backend");
    s->add_option("--preset", o->filter.preset, "only this build preset");
  };
  auto* show = sub->add_subcommand("show", "a phase's per-commit series: median, its 95% CI, runs");
  db_option(show);
  filter_options(show);
  show->add_option("--since", o->filter.since, "start at this commit (a prefix of its sha)");
  show->add_flag("--include-warmup", o->filter.include_warmup, "also count warm-up samples");
  auto* js = show->add_flag("--json", o->json, "print JSON");
  show->add_flag("--csv", o->csv, "print CSV")->excludes(js);
  auto detect_options = [o](CLI::App* s) {
    s->add_option("--alpha", o->detect.alpha, "significance of the t-test that accepts a change")
        ->capture_default_str()
        ->check(finite_in(0, 0.5, true, false));
    s->add_option("--min-magnitude", o->detect.min_magnitude, "smallest relative change reported (0.02: 2%)")
        ->capture_default_str()
        ->check(finite_in(0, 10));
  };
  auto* changes = sub->add_subcommand("changes", "change points of every series (exit 1: a new regression)");
  db_option(changes);
  filter_options(changes);
  detect_options(changes);
  changes->add_option("--since", o->filter.since, "only changes after this commit (a prefix of its sha)");
  changes->add_flag("--json", o->json, "print JSON");
  auto* ack = changes->add_option("--ack", o->ack, "mark this change point acknowledged (its alert ends)");
  changes->add_option("--resolve", o->resolve, "mark this change point resolved")->excludes(ack);
  changes->add_option("--note", o->note, "a note stored with --ack or --resolve");
  auto* dash = sub->add_subcommand("dashboard", "a static HTML page: trends with CI bands and change points");
  db_option(dash);
  filter_options(dash);
  detect_options(dash);
  dash->add_option("-o,--out-dir", o->out_dir, "the folder of index.html")->required();
  dash->add_option("--commit-url", o->dashboard.commit_url, "a commit's link, {sha} replaced (e.g. https://github.com/org/repo/commit/{sha})");
  dash->add_option("--title", o->dashboard.title, "the page's title")->capture_default_str();
  auto* commits = sub->add_subcommand("commits", "the commits stored for a suite and case: measured, or failed to build or run");
  db_option(commits);
  commits->add_option("--suite", o->filter.suite, "only this suite");
  commits->add_option("--case", o->filter.case_name, "only this case");
  commits->add_option("--machine", o->filter.machine, "only this machine (its fingerprint, a prefix, or 'this')");
  commits->add_flag("--json", o->json, "print JSON");
  auto* fail = sub->add_subcommand("record-failure", "record that a commit could not be measured (it did not build, or its run failed)");
  db_option(fail);
  fail->add_option("--commit", o->failure.commit, "the commit's full sha")->required();
  fail->add_option("--stage", o->failure.stage, "build or run")->required()->check(CLI::IsMember({"build", "run"}));
  fail->add_option("--suite", o->failure.suite, "the suite it was to run")->required();
  fail->add_option("--case", o->failure.case_name, "the case it was to run")->required();
  fail->add_option("--message", o->failure.message, "what failed (the error's first line)")->required();
  fail->add_option("--machine", o->failure.machine, "the machine's fingerprint (default: this machine)");
  return [o, ing, show, changes, dash, commits, fail] {
    resolve_machine(o->filter.machine);
    if (commits->parsed()) return run_commits(*o);
    if (fail->parsed()) return run_record_failure(*o);
    if (ing->parsed()) return run_ingest(*o);
    if (show->parsed()) return run_show(*o);
    if (changes->parsed()) return run_changes(*o);
    if (dash->parsed()) return run_dashboard(*o);
    throw Error("history: name a subcommand: ingest, show, changes, dashboard, commits or record-failure");
  };
});

}  // namespace
}  // namespace cuzk::cli
