// `cuzk-bench compare A B [--markdown|--json] [--wide] [--alpha X] [--threshold X]
// [--allow-machine-mismatch] [--allow-injected]`: phase-by-phase comparison of two results files
// (docs/compare.md).
#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/analysis_options.hpp"
#include "harness/analysis/compare.hpp"

namespace cuzk::cli {
namespace {

struct CompareArgs {
  std::string a, b;
  bool markdown = false, json = false;
  CompareOptions o;
  FormatOptions f;
};

int run_compare(const CompareArgs& args) {
  if (args.o.alpha <= 0 || args.o.alpha >= 1) throw Error("--alpha must be in (0, 1)");
  if (args.o.noise_threshold < 0) throw Error("--threshold must be >= 0");
  if (args.o.bootstrap_resamples < 100) throw Error("--resamples must be >= 100");
  check_analysis_options(args.o.analysis);
  Comparison c;
  try {
    c = compare_files(args.a, args.b, args.o);
  } catch (const CompareError& e) {
    throw Error(e.what());
  }
  if (args.json)
    std::cout << to_json(c).dump(2) << std::endl;
  else if (args.markdown)
    std::cout << format_markdown(c, args.f);
  else
    std::cout << format_table(c, args.f);
  return kExitOk;
}

Registrar reg_compare("compare", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("compare", "compare two results files phase by phase (docs/compare.md)");
  auto args = std::make_shared<CompareArgs>();
  sub->add_option("A", args->a, "baseline: cuzk results (.jsonl) or Google Benchmark JSON")->required();
  sub->add_option("B", args->b, "candidate, same format as A")->required();
  auto* md = sub->add_flag("--markdown", args->markdown, "print a markdown table");
  auto* js = sub->add_flag("--json", args->json, "print JSON")->excludes(md);
  sub->add_flag("--wide", args->f.wide, "every column: each side's MAD/IQR and the U test's p-value")->excludes(js);
  sub->add_option("--alpha", args->o.alpha, "significance level of the Mann-Whitney U test (default 0.05)");
  sub->add_option("--threshold", args->o.noise_threshold,
                  "relative noise threshold: smaller changes are 'unchanged' (default 0.03 = 3%)");
  sub->add_option("--resamples", args->o.bootstrap_resamples, "bootstrap resamples (default 2000)");
  sub->add_option("--seed", args->o.bootstrap_seed, "bootstrap seed (default 1)");
  sub->add_option("--min-samples", args->o.min_samples, "warn below this many samples per side (default 5)");
  sub->add_flag("--include-warmup", args->o.include_warmup, "also use warm-up samples");
  add_analysis_options(sub, args->o.analysis);
  sub->add_flag("--allow-machine-mismatch", args->o.allow_machine_mismatch,
                "compare results recorded on different machines or GPUs");
  add_allow_injected_flag(sub, args->o.allow_injected);
  return [=] { return run_compare(*args); };
});

}  // namespace
}  // namespace cuzk::cli
