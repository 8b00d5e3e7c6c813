// `cuzk-bench compare A B [--markdown|--json] [--wide] [--alpha X] [--threshold X]
// [--allow-machine-mismatch] [--allow-injected]`: phase-by-phase comparison of two results files
// (docs/compare.md).
#include <fmt/core.h>

#include <iostream>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/analysis_options.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/measure/output_file.hpp"

namespace cuzk::cli {
namespace {

struct CompareArgs {
  std::string a, b;
  bool markdown = false, json = false;
  CompareOptions o;
  FormatOptions f;
};

// A comparison with no case (suite, case, parameters) in both files compared nothing: exit 0
// would read as "no change". Say which cases each side has instead.
void check_something_compared(const Comparison& c) {
  for (const auto& r : c.rows)
    if (!r.only_in) return;
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 3; ++i) s += (i ? "; " : "") + v[i];
    if (v.size() > 3) s += fmt::format("; and {} more", v.size() - 3);
    return s.empty() ? std::string("none") : s;
  };
  if (c.cases_only_a.empty() && c.cases_only_b.empty())
    throw Error(fmt::format("{} and {}: no phase in common to compare (no measured samples?)", c.path_a, c.path_b));
  throw Error(fmt::format("{} and {} have no case in common (suite, case and parameters must match): A has {}; B has {}",
                          c.path_a, c.path_b, list(c.cases_only_a), list(c.cases_only_b)));
}

int run_compare(const CompareArgs& args) {
  check_analysis_options(args.o.analysis);
  check_input_file(args.a, "A");
  check_input_file(args.b, "B");
  Comparison c;
  try {
    c = compare_files(args.a, args.b, args.o);
  } catch (const CompareError& e) {
    throw Error(e.what());
  } catch (const nlohmann::json::exception& e) {  // a field of the wrong type the reader let through
    throw Error(fmt::format("{} / {}: malformed results: {}", args.a, args.b, e.what()));
  }
  check_something_compared(c);
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
  sub->add_option("--alpha", args->o.alpha, "significance level of the Mann-Whitney U test")
      ->capture_default_str()
      ->check(finite_in(0, 1, true, true));
  sub->add_option("--threshold", args->o.noise_threshold,
                  "relative noise threshold: smaller changes are 'unchanged' (0.03 = 3%)")
      ->capture_default_str()
      ->check(finite_in(0, 100));
  add_bootstrap_options(sub, args->o.bootstrap_resamples, args->o.bootstrap_seed);
  sub->add_option("--min-samples", args->o.min_samples, "warn below this many samples per side")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--include-warmup", args->o.include_warmup, "also use warm-up samples");
  add_analysis_options(sub, args->o.analysis);
  sub->add_flag("--allow-machine-mismatch", args->o.allow_machine_mismatch,
                "compare results recorded on different machines or GPUs");
  add_allow_injected_flag(sub, args->o.allow_injected);
  return [=] { return run_compare(*args); };
});

}  // namespace
}  // namespace cuzk::cli
