#include "harness/cli/ab_traces.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <glob.h>
#include <string>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/cli/suite_runs.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/process.hpp"
#include "harness/trace/diff.hpp"
#include "harness/trace/diff_format.hpp"
#include "harness/trace/nsys_export.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;

bool executable_file(const std::string& p) {
  std::error_code ec;
  return !p.empty() && fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// The last lines of a capture's log, for an error message.
std::string log_tail(const std::string& path, size_t lines = 6) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) out += "\n  " + all[i];
  return out;
}

// One capture: nsys profile around the rounds' run command, then the SQLite export.
void capture_one(const AbTraceRequest& r, const std::string& bin, const std::string& base, nlohmann::json& entry) {
  const std::string log = base + ".log";
  const std::string profile = shell_quote(r.nsys) + " profile --trace=cuda,nvtx --force-overwrite=true -o " +
                              shell_quote(base) + " " + suite_run_command(bin, r.suite_path, r.reps, base + ".jsonl", r.extra) +
                              " 2>" + shell_quote(log);
  ChildOptions co;
  co.timeout_s = r.run_timeout;
  const ChildResult p = run_child(profile, co);
  if (p.interrupted) {
    entry["status"] = "interrupted";
    throw Error(fmt::format("interrupted by {} while capturing {}: the A/B's comparison stands; the traces are "
                            "incomplete",
                            interrupt::signal_name(p.interrupted), base),
                interrupt::exit_code(p.interrupted));
  }
  if (!fs::exists(base + ".nsys-rep")) {
    entry["status"] = "failed";
    if (fs::exists(base + ".qdstrm"))
      throw Error(fmt::format("nsys wrote {}.qdstrm but no .nsys-rep: its importer failed (it needs libdw.so.1; "
                              "docs/nsys.md). Its log:{}",
                              base, log_tail(log)),
                  kExitFailure);
    throw Error(fmt::format("nsys profile {} and wrote no {}.nsys-rep. Its log ({}):{}", p.failure().empty() ? "ended" : p.failure(),
                            base, log, log_tail(log)),
                kExitFailure);
  }
  // A run that failed under nsys still leaves a trace; a trace A/B of it would mislead.
  if (p.code != 0) {
    entry["status"] = "failed";
    throw Error(fmt::format("the run under nsys failed ({}): {}. Its log ({}):{}", p.failure(), bin, log, log_tail(log)),
                kExitFailure);
  }
  const std::string exp = shell_quote(r.nsys) + " export --type sqlite --force-overwrite=true -o " +
                          shell_quote(base + ".sqlite") + " " + shell_quote(base + ".nsys-rep") + " >>" +
                          shell_quote(log) + " 2>&1";
  const ChildResult e = run_child(exp);
  if (e.interrupted) {
    entry["status"] = "interrupted";
    throw Error(fmt::format("interrupted by {} while exporting {}.nsys-rep", interrupt::signal_name(e.interrupted), base),
                interrupt::exit_code(e.interrupted));
  }
  if (e.code != 0 || !fs::exists(base + ".sqlite")) {
    entry["status"] = "failed";
    throw Error(fmt::format("nsys export --type sqlite of {}.nsys-rep failed ({}). Its log ({}):{}", base,
                            e.failure().empty() ? "no file written" : e.failure(), log, log_tail(log)),
                kExitFailure);
  }
}

}  // namespace

std::string find_nsys() {
  if (const char* env = std::getenv("NSYS"); env && *env) {
    if (executable_file(env)) return env;
    throw Error(fmt::format("--nsys: nsys not found: NSYS={} is not an executable file (unset NSYS to search the "
                            "PATH and the usual folders)",
                            env));
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t s = 0; s <= dirs.size();) {
    size_t e = dirs.find(':', s);
    if (e == std::string::npos) e = dirs.size();
    const std::string d = dirs.substr(s, e - s);
    if (!d.empty() && executable_file(d + "/nsys")) return d + "/nsys";
    s = e + 1;
  }
  // The GPU machine has nsys only inside Nsight Compute (docs/gpu-machine.md).
  for (const char* pattern : {"/usr/local/cuda/bin/nsys", "/opt/nvidia/nsight-systems/*/bin/nsys",
                              "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys"}) {
    glob_t g{};
    if (::glob(pattern, 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        const std::string c = g.gl_pathv[i];
        if (executable_file(c)) {
          ::globfree(&g);
          return c;
        }
      }
    }
    ::globfree(&g);
  }
  throw Error(fmt::format("--nsys: nsys not found; looked in $NSYS (unset), the PATH ({}), /usr/local/cuda/bin, "
                          "/opt/nvidia/nsight-systems/*/bin, /opt/nvidia/nsight-compute/*/host/target-linux-x64. Install "
                          "Nsight Systems or set NSYS=/path/to/nsys (docs/nsys.md)",
                          dirs));
}

void capture_and_diff_traces(const AbTraceRequest& r, nlohmann::json& meta) {
  nlohmann::json& entry = meta["nsys"];
  entry = {{"traces_per_side", r.count}, {"nsys", r.nsys}, {"folder", "nsys"}, {"status", "capturing"}};
  std::vector<std::string> files[2];
  for (int i = 0; i < r.count; ++i) {
    for (int v = 0; v < 2; ++v) {
      const std::string side = v == 0 ? "a" : "b";
      const std::string folder = r.dir + "/nsys/" + side;
      fs::create_directories(folder);
      const std::string base = fmt::format("{}/trace-{}", folder, i + 1);
      fmt::print(stderr, "[ab] trace {}/{} of {} under nsys (untimed) -> {}.nsys-rep\n", i + 1, r.count,
                 v == 0 ? "A" : "B", base);
      capture_one(r, v == 0 ? r.bin_a : r.bin_b, base, entry);
      files[v].push_back(base + ".sqlite");
    }
  }
  trace::Diff d;
  try {
    d = trace::diff_traces(trace::load_models(files[0]), trace::load_models(files[1]), {});
  } catch (const trace::TraceError& e) {
    entry["status"] = "failed";
    throw Error(fmt::format("the trace A/B of {}/nsys failed: {}", r.dir, e.what()), kExitFailure);
  }
  write_output_file(r.dir + "/trace-diff.md", trace::format_markdown(d));
  write_output_file(r.dir + "/trace-diff.json", trace::to_json(d).dump(2) + "\n");
  entry["status"] = "complete";
  entry["phases_changed"] = 0;
  for (const auto& p : d.phases) entry["phases_changed"] = entry["phases_changed"].get<int>() + (p.changed() ? 1 : 0);
  fmt::print("\nTrace A/B ({} trace(s) per side under nsys, untimed; {}/trace-diff.md):\n{}", r.count, r.dir,
             trace::format_text(d));
}

}  // namespace cuzk::cli
