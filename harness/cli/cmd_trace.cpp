// `cuzk-bench trace FILE [-o OUT]`: Chrome trace-event JSON of a results file, for Perfetto
// (ui.perfetto.dev) or chrome://tracing. The output appears complete or not at all.
#include <fmt/core.h>

#include <memory>
#include <string>

#include "harness/cli/commands.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/results.hpp"
#include "harness/measure/trace.hpp"

namespace cuzk::cli {
namespace {

std::string default_output(const std::string& in) {
  std::string base = in;
  for (const char* ext : {".jsonl", ".json"}) {
    std::string e = ext;
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0) {
      base.resize(base.size() - e.size());
      break;
    }
  }
  return base + ".trace.json";
}

int run_trace(const std::string& in, std::string out) {
  if (out.empty()) out = default_output(in);
  check_input_file(in);
  check_distinct({{"FILE", in}}, {{"-o", out}});
  check_output_file(out, "-o", /*force=*/true);  // a trace is derived: replacing an old one is the point
  try {
    ResultsFile results = read_results(in);
    TraceStats st;
    nlohmann::json doc = make_trace(results, &st);
    write_output_file(out, doc.dump());
    fmt::print("wrote {}: {} phase events{} from {} sample(s){}; open it in https://ui.perfetto.dev\n", out, st.events,
               st.counter_events ? fmt::format(" and {} counter-track segments", st.counter_events) : std::string(),
               st.samples_with_spans,
               st.samples_without_spans ? fmt::format(" ({} sample(s) without spans skipped)", st.samples_without_spans)
                                        : std::string());
  } catch (const ResultsError& e) {
    throw Error(e.what());
  }
  return kExitOk;
}

Registrar reg_trace("trace", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("trace", "convert a results file to Chrome trace-event JSON (Perfetto)");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  sub->add_option("FILE", *in, "results file (JSON Lines, docs/results-format.md)")->required();
  sub->add_option("-o,--output", *out, "trace file to write (default: FILE with .trace.json)");
  return [=] { return run_trace(*in, *out); };
});

}  // namespace
}  // namespace cuzk::cli
