// `cuzk-bench report DIR [--out DIR]`: report.md + report.html of an A/B folder or a matrix folder
// (harness/analysis/report.hpp, report_matrix.hpp, docs/reports.md). Prints the report's path at the end.
#include <fmt/core.h>

#include <memory>
#include <string>

#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/analysis/report.hpp"
#include "harness/measure/output_file.hpp"

namespace cuzk::cli {
namespace {

Registrar reg_report("report", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("report", "write report.md and report.html (with plots) for an A/B or matrix folder");
  auto o = std::make_shared<report::Options>();
  sub->add_option("dir", o->dir, "A/B folder holding a.jsonl and b.jsonl, or matrix folder holding manifest.json")->required();
  sub->add_option("--out", o->out, "output folder (default: DIR)");
  sub->add_option("--a", o->a, "A results file (default DIR/a.jsonl)");
  sub->add_option("--b", o->b, "B results file (default DIR/b.jsonl)");
  sub->add_option("--python", o->python, "Python with matplotlib for scripts/plot.py ('none' skips plots)")
      ->capture_default_str();
  sub->add_option("--plot-script", o->plot_script, "scripts/plot.py to use (default: found next to the sources)");
  sub->add_flag("--allow-machine-mismatch", o->compare.allow_machine_mismatch,
                "compare results from different machines anyway");
  add_allow_injected_flag(sub, o->compare.allow_injected);
  return [=] {
    // report.md and report.html must not replace an input (--a/--b may point anywhere).
    const std::string out = o->out.empty() ? o->dir : o->out;
    if (!o->out.empty()) ensure_output_dir(o->out, "--out");
    for (const char* name : {"report.md", "report.html"}) {
      const std::string target = out + "/" + name;
      check_distinct({{"--a", o->a}, {"--b", o->b}}, {{"--out", target}});
    }
    if (!o->a.empty()) check_input_file(o->a, "--a");
    if (!o->b.empty()) check_input_file(o->b, "--b");
    report::Result r;
    try {
      r = report::write_report(*o);
    } catch (const CompareError& e) {
      throw Error(e.what());
    } catch (const nlohmann::json::exception& e) {  // a field of the wrong type a reader let through
      throw Error(fmt::format("{}: malformed results or manifest: {}", o->dir, e.what()));
    } catch (const std::runtime_error& e) {
      throw Error(e.what());
    }
    if (!r.matrix) fmt::print("{}", format_table(r.comparison));
    for (const auto& p : r.plots) fmt::print("plot: {}\n", p);
    if (!r.plots_note.empty()) fmt::print("note: {}\n", r.plots_note);
    fmt::print("report: {}\nreport: {}\n", r.md_path, r.html_path);
    return kExitOk;
  };
});

}  // namespace
}  // namespace cuzk::cli
