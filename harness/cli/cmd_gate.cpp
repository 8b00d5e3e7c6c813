// `cuzk-bench gate --baseline A --candidate B --thresholds FILE [--json-out F] [--markdown-out F]`:
// exit 0 pass, 1 regression, 2 error (fails closed). docs/gating.md.
#include <fmt/core.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/analysis/gate.hpp"

namespace cuzk::cli {
namespace {

struct GateArgs {
  std::string baseline, candidate, thresholds, json_out, markdown_out;
  GateOptions o;
};

bool write_text(const std::string& path, const std::string& text, bool append = false) {
  std::ofstream f(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  if (!f) return false;
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

int run_gate_cmd(const GateArgs& args) {
  check_analysis_options(args.o.analysis);
  GateResult g = run_gate(args.baseline, args.candidate, args.thresholds, args.o);
  std::string md = format_markdown(g);
  bool io_error = false;
  if (!args.json_out.empty() && !write_text(args.json_out, to_json(g).dump(2) + "\n")) {
    fmt::print(stderr, "cuzk-bench: error: cannot write {}\n", args.json_out);
    io_error = true;
  }
  if (!args.markdown_out.empty() && !write_text(args.markdown_out, md)) {
    fmt::print(stderr, "cuzk-bench: error: cannot write {}\n", args.markdown_out);
    io_error = true;
  }
  if (const char* s = std::getenv("GITHUB_STEP_SUMMARY"); s && *s) {
    if (!write_text(s, md + "\n", /*append=*/true)) fmt::print(stderr, "cuzk-bench: warning: cannot append to $GITHUB_STEP_SUMMARY ({})\n", s);
  }
  std::cout << md << std::flush;
  for (const auto& e : g.errors) fmt::print(stderr, "cuzk-bench: gate error: {}\n", e);
  for (const auto& r : g.regressions) fmt::print(stderr, "cuzk-bench: regression: {}\n", r);
  fmt::print(stderr, "cuzk-bench: gate result: {} (exit {})\n", g.result, io_error ? kExitUsage : g.exit_code);
  return io_error ? kExitUsage : g.exit_code;
}

Registrar reg_gate("gate", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("gate", "pass/fail a candidate against a baseline: exit 0 pass, 1 regression, 2 error (docs/gating.md)");
  auto args = std::make_shared<GateArgs>();
  sub->add_option("--baseline", args->baseline, "baseline results file")->required();
  sub->add_option("--candidate", args->candidate, "candidate results file")->required();
  sub->add_option("--thresholds", args->thresholds, "thresholds TOML file (docs/gating.md)")->required();
  sub->add_option("--json-out", args->json_out, "write the JSON verdict here");
  sub->add_option("--markdown-out", args->markdown_out, "write the markdown summary here");
  sub->add_flag("--allow-machine-mismatch", args->o.allow_machine_mismatch, "gate results from different machines");
  sub->add_flag("--allow-variant-mismatch", args->o.allow_variant_mismatch,
                "gate results built with different variant flags");
  add_allow_injected_flag(sub, args->o.allow_injected);
  sub->add_option("--resamples", args->o.bootstrap_resamples, "bootstrap resamples (default 2000)");
  sub->add_option("--seed", args->o.bootstrap_seed, "bootstrap seed (default 1)");
  add_analysis_options(sub, args->o.analysis);
  return [=] { return run_gate_cmd(*args); };
});

}  // namespace
}  // namespace cuzk::cli
