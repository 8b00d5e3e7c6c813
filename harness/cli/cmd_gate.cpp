// `cuzk-bench gate --baseline A --candidate B --thresholds FILE [--json-out F] [--markdown-out F]
//                  [--confirm-with A2 B2] [--cases-out F] [--comment-out F [--history DB]
//                  [--reproduce CMD] [--base-label L] [--head-label L]] [--traces-a DIR --traces-b DIR]`:
// exit 0 pass, 1 regression, 2 error (fails closed). docs/gating.md.
#include <fmt/core.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/analysis/gate.hpp"
#include "harness/analysis/pr_comment.hpp"
#include "harness/history/changes.hpp"
#include "harness/history/store.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/trace/gate_kernels.hpp"

namespace cuzk::cli {
namespace {

struct GateArgs {
  std::string baseline, candidate, thresholds, json_out, markdown_out, cases_out;
  std::string comment_out, history, history_branch, reproduce, base_label, head_label;
  std::vector<std::string> confirm_with;
  std::string traces_a, traces_b;  // nsys exports for [kernels] (harness/trace/gate_kernels.hpp)
  GateOptions o;
};

// Appends to $GITHUB_STEP_SUMMARY (a file the CI runner owns: appended in place, never replaced).
bool append_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::app);
  if (!f) return false;
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

// The change points, in the history, of every phase the comment calls changed, on the
// candidate's machine. A history that cannot be read is said in the comment, never fatal: the
// verdict does not depend on it.
void read_history(const GateResult& g, const std::string& where, const std::string& branch, PrCommentInput& in) {
  in.history_read = true;
  in.history_where = where;
  if (!g.comparison) return;
  struct Dated {
    std::string when;
    PrHistoryChange change;
  };
  std::vector<Dated> found;
  try {
    auto db = history::open_db(where);
    const std::string machine = history::machine_fingerprint(g.comparison->machine_b.dump());
    for (const auto& p : changed_phases(g)) {
      history::SeriesFilter f;
      f.suite = p.suite;
      f.case_name = p.case_name;
      f.phase = p.phase;
      f.metric = p.metric;
      f.machine = machine;
      f.branch = branch;
      for (const auto& sc : history::analyse_history(*db, f, history::ChangePointOptions{}, false)) {
        ++in.history_series;
        for (const auto& st : sc.changes) {
          const auto& c = st.change;
          const auto& after = sc.series.points.at(c.index);
          found.push_back({after.commit_date.empty() ? after.first_ingested : after.commit_date,
                           PrHistoryChange{.id = c.id, .status = st.status,
                                           .direction = history::direction_name(c.direction),
                                           .case_name = sc.series.suite + "/" + sc.series.case_name,
                                           .phase = sc.series.phase, .metric = sc.series.metric,
                                           .before = c.before_id, .after = c.after_id, .ratio = c.ratio,
                                           .low = c.ratio_low, .high = c.ratio_high, .p_value = c.p_value}});
        }
      }
    }
  } catch (const std::exception& e) {
    in.history_errors.push_back(e.what());
  }
  std::stable_sort(found.begin(), found.end(), [](const Dated& a, const Dated& b) { return a.when > b.when; });
  for (auto& d : found) in.history.push_back(std::move(d.change));
}

int run_gate_cmd(const GateArgs& args) {
  check_analysis_options(args.o.analysis);
  // Paths first: an output that cannot be written is known before any verdict is printed, so
  // the verdict on the screen and the exit code always agree.
  std::vector<NamedPath> inputs = {
      {"--baseline", args.baseline}, {"--candidate", args.candidate}, {"--thresholds", args.thresholds}};
  GateOptions o = args.o;
  if (!args.confirm_with.empty()) {
    // CLI11 enforces the count; a missing file is the gate's error below, like the others.
    o.confirm_baseline = args.confirm_with.at(0);
    o.confirm_candidate = args.confirm_with.at(1);
    inputs.push_back({"--confirm-with (baseline)", o.confirm_baseline});
    inputs.push_back({"--confirm-with (candidate)", o.confirm_candidate});
  }
  // An unreadable input is the gate's own verdict "error" (fails closed, and --json-out still
  // says so to the CI job), not an exit before the verdict.
  std::vector<std::string> unreadable;
  for (const auto& in : inputs) try {
      check_input_file(in.path, in.flag.c_str());
    } catch (const FileError& e) {
      unreadable.push_back(e.what());
    }
  check_distinct(inputs, {{"--json-out", args.json_out}, {"--markdown-out", args.markdown_out}, {"--cases-out", args.cases_out},
                          {"--comment-out", args.comment_out}});
  if (args.comment_out.empty() && (!args.history.empty() || !args.reproduce.empty() || !args.history_branch.empty()))
    throw Error("--history and --reproduce shape the comment: give --comment-out FILE too");
  // Verdicts are rewritten on every run (a CI job's artifact): replacing one is not a loss.
  if (!args.json_out.empty()) check_output_file(args.json_out, "--json-out", /*force=*/true);
  if (!args.markdown_out.empty()) check_output_file(args.markdown_out, "--markdown-out", /*force=*/true);
  if (!args.cases_out.empty()) check_output_file(args.cases_out, "--cases-out", /*force=*/true);
  if (!args.comment_out.empty()) check_output_file(args.comment_out, "--comment-out", /*force=*/true);
  GateResult g;
  try {
    if (unreadable.empty()) {
      g = run_gate(args.baseline, args.candidate, args.thresholds, o);
      trace::gate_traces(g, args.traces_a, args.traces_b);
    } else {
      g.errors = unreadable;
      g.baseline = args.baseline;
      g.candidate = args.candidate;
      g.thresholds_path = args.thresholds;
    }
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong type a reader let through
    throw Error(fmt::format("{} / {}: malformed results: {}", args.baseline, args.candidate, e.what()));
  }
  std::string md = format_markdown(g);
  // Written before anything is printed; a failure here is exit 2 with no verdict shown.
  OutputFiles out;
  if (!args.json_out.empty()) out.add(args.json_out, to_json(g).dump(2) + "\n");
  if (!args.markdown_out.empty()) out.add(args.markdown_out, md);
  if (!args.cases_out.empty()) {
    std::string names;
    for (const auto& c : alarmed_cases(g)) names += c + "\n";
    out.add(args.cases_out, names);
  }
  if (!args.comment_out.empty()) {
    PrCommentInput in;
    in.base = args.base_label;
    in.head = args.head_label;
    in.reproduce = args.reproduce;
    if (!args.history.empty()) read_history(g, args.history, args.history_branch, in);
    out.add(args.comment_out, format_pr_comment(g, in));
  }
  out.commit();
  if (const char* s = std::getenv("GITHUB_STEP_SUMMARY"); s && *s) {
    if (!append_text(s, md + "\n")) fmt::print(stderr, "cuzk-bench: warning: cannot append to $GITHUB_STEP_SUMMARY ({})\n", s);
  }
  std::cout << md << std::flush;
  for (const auto& e : g.errors) fmt::print(stderr, "cuzk-bench: gate error: {}\n", e);
  if (!g.family_summary.empty()) fmt::print(stderr, "cuzk-bench: gate: {}\n", g.family_summary);
  if (!g.cannot_fail.empty()) fmt::print(stderr, "cuzk-bench: warning: {}\n", g.cannot_fail);
  for (const auto& r : g.regressions) fmt::print(stderr, "cuzk-bench: regression: {}\n", r);
  for (const auto& a : g.alarms)
    if (a.confirmed && !*a.confirmed) fmt::print(stderr, "cuzk-bench: {}\n", a.confirmation);
  // Too few samples is the first error of the documented flow: say what to record.
  for (const auto& e : g.errors)
    if (e.find("too few samples") != std::string::npos && g.thresholds) {
      fmt::print(stderr,
                 "cuzk-bench: hint: record at least {0} measured repetitions per side, e.g. `cuzk-bench prove --reps "
                 "{0} --out FILE` or `cuzk-bench run --suite S --reps {0}` (min_samples in {1})\n",
                 g.thresholds->min_samples, args.thresholds);
      break;
    }
  fmt::print(stderr, "cuzk-bench: gate result: {} (exit {})\n", g.result, g.exit_code);
  return g.exit_code;
}

Registrar reg_gate("gate", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("gate", "pass/fail a candidate against a baseline: exit 0 pass, 1 regression, 2 error (docs/gating.md)");
  auto args = std::make_shared<GateArgs>();
  sub->add_option("--baseline", args->baseline, "baseline results file")->required();
  sub->add_option("--candidate", args->candidate, "candidate results file")->required();
  sub->add_option("--thresholds", args->thresholds, "thresholds TOML file (docs/gating.md)")->required();
  sub->add_option("--json-out", args->json_out, "write the JSON verdict here");
  sub->add_option("--markdown-out", args->markdown_out, "write the markdown summary here");
  sub->add_option("--confirm-with", args->confirm_with,
                  "a fresh baseline and candidate file (A2 B2): an alarm fails the gate only when these confirm it")
      ->expected(2);
  sub->add_option("--cases-out", args->cases_out,
                  "write the names of the cases with an alarm here, one a line (for `ab --case`)");
  sub->add_option("--comment-out", args->comment_out,
                  "write a pull-request comment body here: the verdict as a story (docs/ci-perf.md)");
  sub->add_option("--history", args->history,
                  "with --comment-out: the results history (SQLite file or postgresql:// URL) whose change points of the changed phases the comment shows");
  sub->add_option("--history-branch", args->history_branch,
                  "with --history: only the runs ingested with this --branch (the base branch's history)");
  sub->add_option("--reproduce", args->reproduce, "with --comment-out: the command the comment gives to reproduce the run");
  sub->add_option("--base-label", args->base_label, "with --comment-out: how the comment names the baseline (e.g. its commit)");
  sub->add_option("--head-label", args->head_label, "with --comment-out: how the comment names the candidate");
  sub->add_option("--traces-a", args->traces_a,
                  "folder of the baseline's nsys SQLite exports (every *.sqlite), for [kernels] limits");
  sub->add_option("--traces-b", args->traces_b,
                  "folder of the candidate's nsys SQLite exports (every *.sqlite), for [kernels] limits");
  sub->add_flag("--allow-machine-mismatch", args->o.allow_machine_mismatch, "gate results from different machines");
  sub->add_flag("--allow-variant-mismatch", args->o.allow_variant_mismatch,
                "gate results built with different variant flags");
  add_allow_injected_flag(sub, args->o.allow_injected);
  add_bootstrap_options(sub, args->o.bootstrap_resamples, args->o.bootstrap_seed);
  add_analysis_options(sub, args->o.analysis);
  return [=] { return run_gate_cmd(*args); };
});

}  // namespace
}  // namespace cuzk::cli
