// `cuzk-bench noise`: run a workload as P separate processes of R repetitions each, then say
// where the noise of each phase comes from (harness/analysis/noise.hpp, docs/noise.md); or, with --from,
// analyse results files that already exist. SIGINT/SIGTERM: docs/reliability.md.
#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/output_lock.hpp"
#include "harness/measure/clock.hpp"
#include "harness/analysis/noise.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/process.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;

struct NoiseCliOptions {
  int64_t processes = 10, reps = 10;
  std::string warmup;  // "N" or "auto"; "" -> 0, or the workload's own default under --stable
  std::string workload = "prove";
  std::vector<std::string> workload_args;
  bool stable = false;
  std::string bench;    // "" -> this executable
  std::string out_dir;  // "" -> results/local/noise-<UTC time>
  std::vector<std::string> from;
  bool markdown = false, json = false;
  noise::Options analysis;
};

// Flags that only make sense when the command runs the workload (refused with --from).
constexpr const char* kRunFlags[] = {"--processes",    "--reps",   "--warmup", "--workload",
                                     "--workload-arg", "--stable", "--bench",  "--out-dir"};

// What run_processes ran: the results files of the processes that finished, and the signal that
// stopped it (0: none).
struct Processes {
  std::vector<std::string> files;
  int interrupted = 0;
  uint32_t of = 0;  // processes asked for
};

// Runs the workload P times, one process after the other, each in its own process group: a
// signal ends the one in flight (it gets the signal too) and the loop.
Processes run_processes(const NoiseCliOptions& o, const std::string& dir, FolderClaim& claim) {
  const uint32_t P = checked_u32("--processes", o.processes, 2);
  const uint32_t R = checked_u32("--reps", o.reps, 1);
  // Like ab: without an explicit --warmup, --stable keeps the workload's own default (warm up
  // until settled); otherwise no warm-up.
  std::string warmup_arg = o.warmup.empty() ? (o.stable ? "" : "0") : o.warmup;
  uint32_t W = 0;  // warm-ups known to be analysed with --include-warmup (none for auto)
  if (!warmup_arg.empty() && warmup_arg != "auto") {
    size_t used = 0;
    int64_t v = -1;
    try {
      v = std::stoll(warmup_arg, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != warmup_arg.size())
      throw Error(fmt::format("--warmup must be a number >= 0 or 'auto' (got \"{}\")", o.warmup));
    W = checked_u32("--warmup", v, 0);
  }
  if (o.workload != "prove" && o.workload != "run")
    throw Error(fmt::format("--workload {}: unknown workload (prove or run)", o.workload));
  // The first repetition of each process is set aside; the ANOVA needs 2 of the others.
  const uint32_t analysed = R + (o.analysis.include_warmup ? W : 0);
  if (analysed < 3)
    throw Error(fmt::format(
        "--reps {}: the first repetition of each process is analysed apart, which leaves {} per process; the "
        "ANOVA needs 2, so give --reps 3 or more (or --warmup N with --include-warmup)",
        R, analysed - 1));
  const std::string bench = o.bench.empty() ? own_executable().value_or("cuzk-bench") : o.bench;
  if (!o.bench.empty() && !fs::exists(o.bench)) throw Error(fmt::format("--bench {}: no such file", o.bench));
  // After the options are checked, before the first process runs; held until noise.* are written.
  claim = FolderClaim(dir, "--out-dir", /*require_empty=*/false);

  std::vector<std::string> files;
  for (uint32_t i = 1; i <= P; ++i) {
    const std::string out = fmt::format("{}/p-{}.jsonl", dir, i);
    if (fs::exists(out)) throw Error(fmt::format("--out-dir {}: already holds {}; choose a fresh folder", dir, out));
    files.push_back(out);
  }
  Processes done;
  done.of = P;
  for (uint32_t i = 1; i <= P; ++i) {
    const std::string& out = files[i - 1];
    const std::string log = fmt::format("{}/p-{}.log", dir, i);
    std::string cmd = fmt::format("{} {} --reps {}", shell_quote(bench), o.workload, R);
    if (!warmup_arg.empty()) cmd += " --warmup " + warmup_arg;
    cmd += " --out " + shell_quote(out);
    if (o.stable) cmd += " --stable";
    for (const auto& a : o.workload_args) cmd += fmt::format(" {}", shell_quote(a));
    std::fprintf(stderr, "noise: process %u/%u: %s\n", i, P, cmd.c_str());
    std::fflush(stderr);
    const uint64_t t0 = now_ns();
    const ChildResult c = run_child(cmd + " >" + shell_quote(log) + " 2>&1");
    if (c.code == 0) done.files.push_back(out);  // finished, even if the signal came as it ended
    if (c.interrupted || interrupt::requested()) {
      done.interrupted = interrupt::signal_received();
      std::fprintf(stderr, "noise: interrupted by %s during process %u/%u (its log: %s)\n",
                   interrupt::signal_name(done.interrupted).c_str(), i, P, log.c_str());
      return done;
    }
    if (c.code != 0)
      throw Error(fmt::format("process {} of {} failed with exit status {}: see its log {} (command: {})", i, P, c.code,
                              log, cmd),
                  kExitFailure);
    std::fprintf(stderr, "noise: process %u/%u done in %.1f s\n", i, P, double(now_ns() - t0) / 1e9);
  }
  return done;
}

Registrar reg_noise("noise", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand(
      "noise", "run a workload as several processes and say where each phase's noise comes from (docs/noise.md)");
  auto o = std::make_shared<NoiseCliOptions>();
  sub->add_option("--processes", o->processes, "separate processes to run (the ANOVA's groups)")->capture_default_str();
  sub->add_option("--reps", o->reps, "measured repetitions per process")->capture_default_str();
  sub->add_option("--warmup", o->warmup,
                  "warm-up repetitions per process, N or auto (default 0; with --stable the workload's own: auto); "
                  "skipped unless --include-warmup");
  sub->add_option("--workload", o->workload, "prove or run (a suite: pass --workload-arg=--suite --workload-arg=NAME)")
      ->capture_default_str();
  sub->add_option("--workload-arg", o->workload_args, "extra argument for the workload subcommand (repeatable)")
      ->allow_extra_args(false);
  sub->add_flag("--stable", o->stable, "pass --stable to the workload");
  sub->add_option("--bench", o->bench, "cuzk-bench binary to run (default: this one)");
  sub->add_option("--out-dir", o->out_dir, "output folder (default results/local/noise-<UTC time>)");
  sub->add_option("--from", o->from, "analyse these results files instead of running anything")->expected(1, -1);
  sub->add_option("--phase", o->analysis.phases, "show only this phase (repeatable; default: every phase)")
      ->allow_extra_args(false);
  sub->add_flag("--include-warmup", o->analysis.include_warmup,
                "count warm-up samples as the earliest repetitions of their process");
  sub->add_flag("--markdown", o->markdown, "print markdown instead of the terminal table");
  sub->add_flag("--json", o->json, "print JSON (schema cuzk.noise) instead of the terminal table");
  return [=] {
    if (o->markdown && o->json) throw Error("--markdown and --json: give one (the terminal table is the default)");
    const bool from = !o->from.empty();
    std::vector<std::string> files = o->from;
    std::string dir;
    Processes ran;
    FolderClaim claim;
    if (from) {
      for (const char* flag : kRunFlags)
        if (sub->count(flag))
          throw Error(fmt::format("{} runs the workload; --from analyses existing files: give one or the other", flag));
      for (const auto& f : files) check_input_file(f, "--from");
    } else {
      // Before the first process: a signal ends the one in flight, and the analysis covers those
      // that finished (docs/reliability.md).
      interrupt::install();
      dir = o->out_dir.empty() ? "results/local/noise-" + utc_stamp() : o->out_dir;
      ran = run_processes(*o, dir, claim);
      files = ran.files;
    }
    const int sig = ran.interrupted;
    auto interrupted_error = [&](const std::string& what) {
      return Error(fmt::format("interrupted by {} after {} of {} process(es): {}", interrupt::signal_name(sig),
                               files.size(), ran.of, what),
                   interrupt::exit_code(sig));
    };
    if (sig && files.size() < 2)
      throw interrupted_error(fmt::format("too few to analyse; the results and logs are in {}", dir));
    noise::Analysis a;
    try {
      a = noise::analyse_files(files, o->analysis);
    } catch (const noise::NoiseError& e) {
      if (sig) throw interrupted_error(fmt::format("{}; the results and logs are in {}", e.what(), dir));
      throw Error(e.what());
    }
    if (!from)
      a.run = {{"processes", o->processes},
               {"reps", o->reps},
               {"warmup", o->warmup.empty() ? (o->stable ? "workload default" : "0") : o->warmup},
               {"workload", o->workload},
               {"workload_args", o->workload_args},
               {"stable", o->stable},
               {"bench", o->bench.empty() ? own_executable().value_or("cuzk-bench") : o->bench},
               {"out_dir", dir},
               {"status", sig ? "interrupted" : "complete"}};
    if (sig)
      a.run["interrupted"] = {{"signal", interrupt::signal_name(sig)}, {"exit_code", interrupt::exit_code(sig)},
                              {"processes_done", files.size()}};
    // An interrupted run's analysis says, first thing, that it covers only the processes that finished.
    const std::string note =
        sig ? fmt::format("Interrupted by {}: this analysis covers the {} of {} process(es) that finished.\n\n",
                          interrupt::signal_name(sig), files.size(), ran.of)
            : "";
    const std::string table = note + noise::format_table(a), md_text = note + noise::format_markdown(a);
    const std::string json_text = noise::to_json(a).dump(2) + "\n";
    fmt::print("{}", o->json ? json_text : o->markdown ? md_text : table);
    if (!from) {
      OutputFiles out;  // the three or none
      out.add(dir + "/noise.txt", table);
      out.add(dir + "/noise.md", md_text);
      out.add(dir + "/noise.json", json_text);
      out.commit();
      std::fprintf(stderr, "written: %s/noise.txt, noise.md, noise.json (results and logs: %s/p-*.jsonl, p-*.log)\n",
                   dir.c_str(), dir.c_str());
    }
    if (sig) throw interrupted_error(fmt::format("the analysis of those is in {}/noise.*", dir));
    return kExitOk;
  };
});

}  // namespace
}  // namespace cuzk::cli
