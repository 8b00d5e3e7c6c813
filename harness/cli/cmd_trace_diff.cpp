// `cuzk-bench trace-diff`: two sets of Nsight Systems SQLite exports compared phase by phase and,
// inside each phase, kernel by kernel (harness/trace/, docs/trace-diff.md).
#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/trace/diff.hpp"
#include "harness/trace/diff_format.hpp"
#include "harness/trace/nsys_export.hpp"

namespace cuzk::cli {
namespace {

struct TraceDiffOptions {
  std::string dir_a, dir_b;
  bool markdown = false, json = false, no_normalize = false;
  trace::DiffOptions diff;
};

Registrar reg_trace_diff("trace-diff", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand(
      "trace-diff",
      "compare two sets of nsys SQLite exports kernel by kernel inside each phase: A.sqlite... -- B.sqlite..., or "
      "--a DIR --b DIR (docs/trace-diff.md)");
  // The trace files come last and are split at "--" here: CLI11 drops a "--" between positionals.
  sub->prefix_command();
  auto o = std::make_shared<TraceDiffOptions>();
  sub->add_option("--a", o->dir_a, "folder of A's traces (every *.sqlite in it)");
  sub->add_option("--b", o->dir_b, "folder of B's traces (every *.sqlite in it)");
  sub->add_option("--phase", o->diff.phase, "only this phase and the phases under it");
  sub->add_flag("--no-normalize", o->no_normalize, "keep kernel names whole (template arguments and parameters)");
  sub->add_option("--alpha", o->diff.alpha, "significance level of the U test")->capture_default_str();
  sub->add_option("--threshold", o->diff.threshold, "relative change below which a difference is \"unchanged\"")
      ->capture_default_str();
  sub->add_flag("--markdown", o->markdown, "print markdown instead of the terminal tables");
  sub->add_flag("--json", o->json, "print JSON (schema cuzk.trace-diff) instead of the terminal tables");
  return [=] {
    if (o->markdown && o->json) throw Error("--markdown and --json: give one (the terminal tables are the default)");
    if (!(o->diff.alpha > 0 && o->diff.alpha < 1)) throw Error(fmt::format("--alpha {}: must be in (0, 1)", o->diff.alpha));
    if (!(std::isfinite(o->diff.threshold) && o->diff.threshold >= 0))
      throw Error(fmt::format("--threshold {}: must be a finite number >= 0", o->diff.threshold));
    std::vector<std::string> a, b;
    const std::vector<std::string> rest = sub->remaining();
    bool after = false;
    for (const auto& r : rest) {
      if (r == "--" && !after) {
        after = true;
        continue;
      }
      if (r.rfind("--", 0) == 0)
        throw Error(fmt::format("{}: options go before the trace files (trace-diff [OPTIONS] A.sqlite... -- B.sqlite...)", r));
      (after ? b : a).push_back(r);
    }
    const bool dirs = !o->dir_a.empty() || !o->dir_b.empty();
    if (dirs && !rest.empty()) throw Error("give the traces as files (A... -- B...) or as --a DIR --b DIR, not both");
    if (dirs) {
      if (o->dir_a.empty() || o->dir_b.empty()) throw Error("--a and --b: give both folders");
      try {
        a = trace::sqlite_files_in(o->dir_a, "--a");
        b = trace::sqlite_files_in(o->dir_b, "--b");
      } catch (const trace::TraceError& e) {
        throw Error(e.what());
      }
    } else if (!after || a.empty() || b.empty()) {
      throw Error("give A's traces, then --, then B's: trace-diff A.sqlite... -- B.sqlite... (or --a DIR --b DIR)");
    }
    if (!trace::sqlite_available())
      throw Error("this cuzk-bench was built without SQLite (libsqlite3-dev), which reading nsys exports needs");
    trace::Diff d;
    try {
      trace::ModelOptions mo;
      mo.normalize = !o->no_normalize;
      d = trace::diff_traces(trace::load_models(a, mo), trace::load_models(b, mo), o->diff);
    } catch (const trace::TraceError& e) {
      throw Error(e.what());
    }
    fmt::print("{}", o->json ? trace::to_json(d).dump(2) + "\n" : o->markdown ? trace::format_markdown(d)
                                                                             : trace::format_text(d));
    return kExitOk;
  };
});

}  // namespace
}  // namespace cuzk::cli
