// `cuzk-bench ab --a PRESET --b PRESET --suite NAME [--rounds N] [--warmup N] [--out-dir DIR]
//                 [--no-build] [--bin-a PATH --bin-b PATH] [--source-dir DIR] [--quick] [--case NAME] [--backend cpu|cuda]
//                 [--nsys N]`
// `cuzk-bench ab --a PRESET --b PRESET --load [--rounds N] [--warmup JOBS] [--out-dir DIR] [--no-build] LOAD-OPTIONS`
//
// With --load the A/B is of the two presets' daemons under one load schedule: this binary's
// `load --preset A,B` (daemon/cli/cmd_load.cpp, docs/daemon.md) with the A/B's rounds and folder.
//
// Builds two variants (each in build/<preset>, target cuzk-bench), refuses any binary whose
// embedded provenance does not match the request (preset, flags) or the current sources
// (stale), runs the suite interleaved A, B, A, B, ... as separate processes, merges the rounds
// into a.jsonl and b.jsonl, and prints the comparison; with --nsys N, then N untimed traces per
// side and their trace A/B (ab_traces.hpp). docs/ab.md. Failed and timed-out runs
// (--run-timeout, --on-failure) and SIGINT/SIGTERM: docs/reliability.md.
#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <set>

#include "harness/cli/ab_traces.hpp"
#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/duet_rounds.hpp"
#include "harness/cli/run_failures.hpp"
#include "harness/cli/suite_runs.hpp"
#include "harness/cli/variant_builds.hpp"
#include "harness/cli/variant_provenance.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/output_lock.hpp"
#include "harness/measure/process.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/measure/provenance.hpp"
#include "harness/measure/results.hpp"
#include "harness/suite/suite.hpp"
#include "harness/trace/nsys_export.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct AbOptions {
  std::string a, b, suite;
  std::string a_name, b_name;  // labels (default: the preset names, or "a" / "b")
  int rounds = 5, warmup_rounds = 1;
  FormatOptions format;  // --wide
  int reps = 1;         // measured repetitions in each round's process (> 1: the block design)
  bool stable = false;  // each run with --stable (docs/ab.md)
  bool duet = false;    // A and B at the same time on halves of the CPUs (duet_rounds.hpp)
  AnalysisChoices analysis;
  std::string out_dir;
  bool no_build = false;
  std::vector<std::string> cmake_args;  // --cmake-arg: extra configure -D of both builds
  std::string bin_a, bin_b;
  std::string source_dir;
  std::string source_dir_b;  // B checked against another tree (gate-merge.sh: two revisions)
  bool quick = false;
  std::vector<std::string> cases;
  std::string backend = "cpu";
  bool allow_machine_mismatch = false;
  bool allow_injected = false;  // the runs inherit $CUZK_INJECT_SLOWDOWN: both sides injected alike
  double run_timeout = 0;       // --run-timeout: seconds per round's process (0: none)
  std::string on_failure = "stop";
  std::string counters;    // --counters: passed to each run (e.g. sim: runs under callgrind)
  bool cache_sim = false;  // --cache-sim: passed to each run
  int nsys = 0;            // --nsys N: N untimed traces per side after the rounds (ab_traces.hpp)
  bool load = false;       // --load: the presets' daemons under load instead of a suite
};

// ab's options that mean the same under --load; any other one given with it is refused.
const std::set<std::string> kLoadOptions = {"--a", "--b", "--rounds", "--warmup", "--out-dir", "--no-build", "--load"};

// `ab --load`: runs this binary's `load --preset A,B` (which builds, interleaves, records and
// compares) with the A/B's rounds, warm-up and folder, and load's own options after them.
int run_ab_load(const AbOptions& o, const CLI::App& ab, const CLI::App& app, const std::vector<std::string>& load_args) {
  try {
    (void)app.get_subcommand("load");
  } catch (const CLI::OptionNotFound&) {
    throw Error("ab --load needs the daemon and its load generator, which this cuzk-bench was built without "
                "(gRPC, protobuf and SQLite: scripts/setup.sh, then reconfigure)");
  }
  for (const CLI::Option* opt : ab.get_options())
    if (opt->count() > 0 && !kLoadOptions.count(opt->get_name()) && opt->get_name() != "--help")
      throw Error(fmt::format("ab --load: {} is for a suite's A/B and has no meaning under load (the load options "
                              "are load's: cuzk-bench load --help)",
                              opt->get_name()));
  if (o.a.empty() || o.b.empty()) throw Error("ab --load: give the two presets with --a and --b");
  const std::string dir =
      o.out_dir.empty() ? fmt::format("results/local/{}-{}-vs-{}-load", utc_stamp(), o.a, o.b) : o.out_dir;
  std::vector<std::string> argv{"/proc/self/exe", "load", "--preset", o.a + "," + o.b, "--rounds",
                                std::to_string(o.rounds), "--out-dir", dir};
  if (!o.no_build) argv.push_back("--build");
  if (ab.get_option("--warmup")->count() > 0) {
    argv.push_back("--warmup");
    argv.push_back(std::to_string(o.warmup_rounds));
  }
  argv.insert(argv.end(), load_args.begin(), load_args.end());
  std::string line = "cuzk-bench";
  for (size_t i = 1; i < argv.size(); ++i) line += " " + argv[i];
  fmt::print(stderr, "ab --load: {}\n", line);
  std::fflush(nullptr);
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  execv(cargv[0], cargv.data());
  throw Error(fmt::format("ab --load: cannot run {}: {}", argv[0], std::strerror(errno)), kExitFailure);
}


int run_ab(const AbOptions& o) {
  // Before the first child (a build, a provenance check, a round): a signal at any point ends
  // every child and the A/B with exit 130/143 (docs/reliability.md).
  interrupt::install();
  if (o.rounds < 1) throw Error(fmt::format("--rounds must be at least 1 (got {})", o.rounds));
  if (o.warmup_rounds < 0) throw Error(fmt::format("--warmup must be 0 or more (got {})", o.warmup_rounds));
  if (o.reps < 1) throw Error(fmt::format("--reps must be at least 1 (got {})", o.reps));
  check_analysis_options(o.analysis);
  check_run_timeout(o.run_timeout);
  const OnFailure on_failure = parse_on_failure(o.on_failure);
  std::optional<duet::Halves> halves;
  if (o.duet) halves = check_duet_request(o.stable);
  if (o.bin_a.empty() != o.bin_b.empty()) throw Error("--bin-a and --bin-b go together");
  // Before any build or run: a trace A/B that cannot happen is refused up front.
  std::string nsys;
  if (o.nsys != 0) {
    if (o.nsys < 1 || o.nsys > 100) throw Error(fmt::format("--nsys {}: expected a count of traces per side, 1 to 100", o.nsys));
    if (o.counters == "sim") throw Error("--nsys with --counters sim: a run under Valgrind is no trace of the GPU; give one");
    if (!trace::sqlite_available())
      throw Error("--nsys: this cuzk-bench was built without SQLite (libsqlite3-dev), which reading nsys exports needs");
    nsys = find_nsys();
  }
  const bool given = !o.bin_a.empty();
  if (!given && (o.a.empty() || o.b.empty())) throw Error("name both variants: --a PRESET --b PRESET (or --bin-a/--bin-b)");
  const std::string src =
      fs::weakly_canonical(o.source_dir.empty() ? std::string(build_provenance().source_dir) : o.source_dir).string();
  const std::string name_a = !o.a_name.empty() ? o.a_name : o.a.empty() ? "a" : o.a;
  const std::string name_b = !o.b_name.empty() ? o.b_name : o.b.empty() ? "b" : o.b;

  // The suite is validated here, before any build or run.
  auto [suite_path, s] = load_suite_for_runs(o.suite);

  std::optional<PresetInfo> pa, pb;
  if (!o.a.empty()) pa = read_preset(src, o.a);
  if (!o.b.empty()) pb = read_preset(src, o.b);
  if (!o.cmake_args.empty()) {
    if (given || o.no_build) throw Error("--cmake-arg applies to builds: it goes without --no-build and --bin-a/--bin-b");
    check_cmake_args(o.cmake_args, {&*pa, &*pb});
  }
  // The folder is claimed before any build or run: a second A/B into it, or a folder holding a
  // previous one, is refused with nothing built and nothing replaced.
  const std::string dir =
      o.out_dir.empty() ? fmt::format("results/local/{}-{}-vs-{}", utc_stamp(), name_a, name_b) : o.out_dir;
  FolderClaim claim(dir, "--out-dir", /*require_empty=*/true);
  std::string bin_a = o.bin_a, bin_b = o.bin_b;
  std::string hash, hash_b;
  const std::string src_b = o.source_dir_b.empty() ? src : fs::weakly_canonical(o.source_dir_b).string();
  stop_on_signal("building or checking the variants", [&] {
    if (!given) {
      bin_a = bench_binary(*pa);
      bin_b = bench_binary(*pb);
      if (!o.no_build) {
        for (auto* pi : {&*pa, &*pb}) {
          fmt::print(stderr, "[ab] building {} in {}\n", pi->name, pi->binary_dir);
          build_variant(src, *pi, "", o.cmake_args);
        }
      }
    }
    hash = tree_hash(src);
    hash_b = src_b == src ? hash : tree_hash(src_b);
    check_binary(name_a, bin_a, pa, hash, given);
    check_binary(name_b, bin_b, pb, hash_b, given);
  });
  if (hash == hash_b)
    fmt::print(stderr, "[ab] provenance checked: both binaries built from sources {}\n", hash.substr(0, 16));
  else
    fmt::print(stderr, "[ab] provenance checked: A built from {} ({}), B from {} ({})\n", hash.substr(0, 16), src,
               hash_b.substr(0, 16), src_b);

  fs::create_directories(dir + "/rounds");
  std::string extra;
  if (o.quick) extra += " --quick";
  for (auto& c : o.cases) extra += " --case " + shell_quote(c);
  extra += " --backend " + shell_quote(o.backend) + (o.counters.empty() ? std::string() : " --counters " + shell_quote(o.counters)) + (o.cache_sim ? " --cache-sim" : "");
  // --stable warms each process up until its times settle; otherwise warm-ups are whole rounds.
  extra += o.stable ? std::string(" --stable") : std::string(" --warmup 0");
  // ab.json first (status "running"), updated when a run fails and at the end, so that a stopped
  // or interrupted A/B leaves a folder that says what happened (docs/reliability.md).
  json meta = {{"a", {{"name", name_a}, {"binary", bin_a}}}, {"b", {{"name", name_b}, {"binary", bin_b}}},
               {"suite", s.name}, {"suite_file", suite_path}, {"rounds", o.rounds}, {"warmup_rounds", o.warmup_rounds},
               {"quick", o.quick}, {"backend", o.backend}, {"reps_per_round", o.reps}, {"stable", o.stable},
               {"source_hash", hash}, {"source_dir", src}, {"source_hash_b", hash_b}, {"source_dir_b", src_b},
               {"run_timeout_s", o.run_timeout}, {"on_failure", o.on_failure}, {"status", "running"},
               {"failed_runs", json::array()}};
  if (halves) meta["duet"] = duet::describe(*halves);
  const std::vector<std::string> names = {name_a, name_b};
  auto write_meta = [&](const std::string& status) {
    meta["status"] = status;
    meta["runs_failed"] = failed_run_counts(meta["failed_runs"], names, o.rounds);
    write_output_file(dir + "/ab.json", meta.dump(2) + "\n");
  };
  write_meta("running");
  // SIGINT/SIGTERM reach the round's process (its own group) and stop the A/B: exit 130/143.
  auto stop_interrupted = [&](int sig, int r, const std::string& who) {
    meta["interrupted"] = {{"signal", interrupt::signal_name(sig)}, {"round", r}, {"variant", who}};
    write_meta("interrupted");
    return Error(fmt::format("interrupted by {} in round {} of {}: the round was discarded; the folder says so: {}",
                             interrupt::signal_name(sig), r, who, dir),
                 interrupt::exit_code(sig));
  };
  std::vector<std::string> files_a, files_b;
  int warm_a = 0, warm_b = 0;  // warm-up rounds that succeeded (merge_rounds marks them)
  const int total = o.warmup_rounds + o.rounds;
  const auto t0 = std::chrono::steady_clock::now();
  if (halves) {
    DuetAbRounds d = run_duet_rounds({bin_a, bin_b, name_a, name_b, suite_path, extra, dir, o.reps, o.warmup_rounds,
                                      o.rounds, o.run_timeout, on_failure, *halves},
                                     meta, write_meta, stop_interrupted);
    files_a = d.files_a, files_b = d.files_b, warm_a = d.warm_a, warm_b = d.warm_b;
  }
  for (int r = 0; r < (halves ? 0 : total); ++r) {
    for (int v = 0; v < 2; ++v) {
      const std::string& bin = v == 0 ? bin_a : bin_b;
      const std::string& who = v == 0 ? name_a : name_b;
      const std::string out = fmt::format("{}/rounds/{}-{}.jsonl", dir, v == 0 ? "a" : "b", r);
      const double e = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      fmt::print(stderr, "[ab] round {}/{}{} variant {} ({}) elapsed {:.1f}s\n", r + 1, total,
                 r < o.warmup_rounds ? " (warm-up)" : "", v == 0 ? "A" : "B", who, e);
      const std::string cmd = suite_run_command(bin, suite_path, o.reps, out, extra, r);
      ChildOptions co;
      co.timeout_s = o.run_timeout;
      const ChildResult c = run_child(cmd, co);
      if (c.interrupted) throw stop_interrupted(c.interrupted, r, who);
      if (c.code != 0) {
        const std::string why = c.failure();
        meta["failed_runs"].push_back(failed_run_json(r, r < o.warmup_rounds, who, c.code, c.timed_out, why,
                                                      fs::relative(out, dir).string()));
        write_meta(on_failure == OnFailure::kStop ? "failed" : "running");
        if (on_failure == OnFailure::kStop)
          throw Error(fmt::format("round {} of {} failed ({}): {}; stopped (--on-failure stop); the folder says so: {}", r,
                                  who, why, cmd, dir),
                      kExitFailure);
        fmt::print(stderr, "[ab] round {} of {} failed ({}); going on (--on-failure continue): it is left out and counted\n",
                   r, who, why);
        continue;
      }
      (v == 0 ? files_a : files_b).push_back(out);
      if (r < o.warmup_rounds) ++(v == 0 ? warm_a : warm_b);
      if (const int sig = interrupt::signal_received()) throw stop_interrupted(sig, r, who);
    }
  }
  for (int v = 0; v < 2; ++v)
    if ((v == 0 ? files_a.size() : files_b.size()) == size_t(v == 0 ? warm_a : warm_b)) {
      write_meta("failed");
      throw Error(fmt::format("every measured round of {} failed: nothing to compare (see {}/ab.json)", names[v], dir),
                  kExitFailure);
    }
  const std::string a_path = dir + "/a.jsonl", b_path = dir + "/b.jsonl";
  try {
    merge_rounds(files_a, warm_a, a_path);
    merge_rounds(files_b, warm_b, b_path);
  } catch (const std::exception& e) {
    throw Error(fmt::format("merging rounds: {}", e.what()), kExitInternal);
  }
  write_meta("complete");

  CompareOptions co;
  co.allow_machine_mismatch = o.allow_machine_mismatch;
  co.allow_injected = o.allow_injected;
  co.analysis = o.analysis;
  Comparison cmp;
  try {
    cmp = compare_files(a_path, b_path, co);
  } catch (const CompareError& e) {
    throw Error(e.what());
  }
  // Failed runs are stated with the comparison, never silently dropped.
  const std::string failed_md = failed_runs_markdown(meta["failed_runs"], names, o.rounds);
  const std::string duet_md = halves ? duet::relative_note(*halves) + "\n\n" : "";
  write_output_file(dir + "/comparison.md", duet_md + failed_md + format_markdown(cmp, o.format));
  json cj = to_json(cmp);
  cj["failed_runs"] = meta["failed_runs"];
  cj["runs_failed"] = meta["runs_failed"];
  if (halves) cj["duet"] = meta["duet"];
  write_output_file(dir + "/comparison.json", cj.dump(2) + "\n");
  fmt::print("A = {} ({}), B = {} ({}), suite {}, {} round(s) of {} repetition(s) + {} warm-up round(s){}\n", name_a,
             bin_a, name_b, bin_b, s.name, o.rounds, o.reps, o.warmup_rounds, o.stable ? ", --stable" : "");
  if (!failed_md.empty()) fmt::print("{}", failed_md);
  if (halves) fmt::print("{}\n", duet::relative_note(*halves));
  fmt::print("{}", format_table(cmp, o.format));
  fmt::print("results: {}\n", dir);
  if (o.nsys > 0) {
    AbTraceRequest tr{nsys, o.nsys, bin_a, bin_b, suite_path, o.reps, extra, dir, o.run_timeout};
    try {
      capture_and_diff_traces(tr, meta);
    } catch (const Error&) {
      write_meta("complete");  // the A/B stands; ab.json's "nsys" says how the traces ended
      throw;
    }
    write_meta("complete");
  }
  return kExitOk;
}

Registrar reg_ab("ab", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("ab", "build two presets, check provenance, run a suite interleaved, compare");
  auto o = std::make_shared<AbOptions>();
  sub->add_option("--a", o->a, "preset of variant A (CMakePresets.json)");
  sub->add_option("--b", o->b, "preset of variant B");
  sub->add_option("--suite", o->suite, "suite name or file (or --load)");
  sub->add_flag("--load", o->load,
                "instead of a suite: the two presets' cuzkd under one load schedule, interleaved (load --preset A,B; "
                "load's options follow, e.g. --rates 0.5 --jobs 30 --daemon-arg=--depth=10; --warmup: warm-up jobs "
                "per step)");
  sub->allow_extras();  // load's options, under --load; refused otherwise
  sub->add_option("--a-name", o->a_name, "label of A (default: its preset, or \"a\")");
  sub->add_option("--b-name", o->b_name, "label of B (default: its preset, or \"b\")");
  sub->add_option("--rounds", o->rounds, "measured rounds (each: one run of A, then one of B)")->capture_default_str();
  sub->add_option("--warmup", o->warmup_rounds, "warm-up rounds (recorded with warmup=true)")->capture_default_str();
  sub->add_option("--reps", o->reps, "measured repetitions in each round's process (> 1: each process's median is one observation)")
      ->capture_default_str();
  sub->add_flag("--wide", o->format.wide, "every column in the comparison: each side's MAD/IQR and the U test's p-value");
  sub->add_flag("--stable", o->stable, "run every process in the stable mode (placement, eager loading, warm-up until settled)");
  sub->add_flag("--duet", o->duet,
                "run A and B at the same time, each on half of the CPUs (swapped every round), every repetition started "
                "together: a relative comparison at half the cores per side (docs/ab.md, \"Duet\")");
  add_analysis_options(sub, o->analysis);
  sub->add_option("--out-dir", o->out_dir, "folder (default results/local/<UTC time>-<a>-vs-<b>); must be new or empty");
  add_cmake_arg_option(sub, o->cmake_args);
  sub->add_option("--nsys", o->nsys,
                  "after the rounds, N untimed Nsight Systems traces per side and their trace A/B (trace-diff.md; "
                  "docs/trace-diff.md); one case per run reads best (--case)");
  sub->add_flag("--no-build", o->no_build, "use build/<preset>/harness/cuzk-bench as built (still provenance-checked)");
  sub->add_option("--bin-a", o->bin_a, "prebuilt binary of A (instead of building; still provenance-checked)");
  sub->add_option("--bin-b", o->bin_b, "prebuilt binary of B");
  sub->add_option("--source-dir", o->source_dir, "source tree to build and check against (default: this binary's)");
  sub->add_option("--source-dir-b", o->source_dir_b, "check B against this tree instead (two revisions; see gate-merge.sh)");
  sub->add_flag("--quick", o->quick, "pass --quick to each run");
  sub->add_option("--case", o->cases, "run only this case (repeatable)");
  sub->add_option("--backend", o->backend, "backend of every run: cpu or cuda")->capture_default_str();
  sub->add_option("--counters", o->counters, "counters of every run (run --counters; 'sim': each run under Valgrind's callgrind, docs/counters.md)");
  sub->add_flag("--cache-sim", o->cache_sim, "with --counters sim: each run simulates caches and branches too");
  sub->add_flag("--allow-machine-mismatch", o->allow_machine_mismatch, "compare even if machines differ");
  add_allow_injected_flag(sub, o->allow_injected);
  add_run_failure_options(sub, o->run_timeout, o->on_failure, "the A/B");
  return [=, &app] {
    if (o->load) return run_ab_load(*o, *sub, app, sub->remaining());
    if (!sub->remaining().empty()) {
      std::string extra;
      for (const auto& r : sub->remaining()) extra += (extra.empty() ? "" : " ") + r;
      throw Error(fmt::format("ab: unexpected argument(s): {} (load's options go with --load)", extra));
    }
    if (o->suite.empty()) throw Error("ab: --suite is required (or --load: the presets' daemons under load)");
    return run_ab(*o);
  };
});

}  // namespace
}  // namespace cuzk::cli
