// `ab --duet`'s rounds (duet_rounds.hpp).
#include "harness/cli/duet_rounds.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "harness/cli/suite_runs.hpp"
#include "harness/measure/interrupt.hpp"
#include "prover/util/cpu_placement.hpp"

namespace cuzk::cli {

namespace fs = std::filesystem;
using nlohmann::json;

duet::Halves check_duet_request(bool stable) {
  if (stable)
    throw Error("--duet and --stable go separately: --stable places the GPU-driving thread and the pool over every CPU, "
                "--duet gives each side half of them");
  try {
    return duet::split_halves(placement::allowed_cpus());
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
}

DuetAbRounds run_duet_rounds(const DuetAbRequest& q, json& meta, const std::function<void(const std::string&)>& write_meta,
                             const std::function<Error(int, int, const std::string&)>& stop_interrupted) {
  DuetAbRounds out;
  const std::string names[2] = {q.name_a, q.name_b};
  const std::string bins[2] = {q.bin_a, q.bin_b};
  const int total = q.warmup_rounds + q.rounds;
  meta["duet"]["rounds"] = json::array();
  fmt::print(stderr, "[ab] {}\n", duet::relative_note(q.halves));
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < total; ++r) {
    std::array<duet::PairSide, 2> sides;
    std::string outs[2];
    for (int v = 0; v < 2; ++v) {
      outs[v] = fmt::format("{}/rounds/{}-{}.jsonl", q.dir, v == 0 ? "a" : "b", r);
      sides[v] = {suite_run_command(bins[v], q.suite_path, q.reps, outs[v], q.extra), duet::side_cpus(q.halves, r, v)};
    }
    const double e = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print(stderr, "[ab] round {}/{}{} duet: A ({}) on CPUs {}, B ({}) on CPUs {}, elapsed {:.1f}s\n", r + 1, total,
               r < q.warmup_rounds ? " (warm-up)" : "", q.name_a, placement::cpu_list(sides[0].cpus), q.name_b,
               placement::cpu_list(sides[1].cpus), e);
    meta["duet"]["rounds"].push_back(
        {{"round", r}, {"warmup", r < q.warmup_rounds}, {"a_cpus", sides[0].cpus}, {"b_cpus", sides[1].cpus}});
    write_meta("running");
    const duet::PairResult p = duet::run_pair(q.dir + "/rounds/barrier", sides, r, q.run_timeout);
    for (int v = 0; v < 2; ++v)
      if (p.child[v].interrupted) throw stop_interrupted(p.child[v].interrupted, r, names[v]);
    if (const int sig = interrupt::signal_received()) throw stop_interrupted(sig, r, "both");
    meta["duet"]["rounds"].back()["barriers"] = p.released;
    bool failed = false;
    for (int v = 0; v < 2; ++v) {
      const ChildResult& c = p.child[v];
      if (c.code == 0) continue;
      failed = true;
      // The side told to stop because its partner ended failed for that reason alone.
      std::string why = c.failure();
      if (c.code != 0 && p.child[1 - v].code != 0 && !p.abort_reason.empty())
        why += "; the duet stops both sides when one ends";
      meta["failed_runs"].push_back(failed_run_json(r, r < q.warmup_rounds, names[v], c.code, c.timed_out, why,
                                                    fs::relative(outs[v], q.dir).string()));
    }
    if (failed) {
      write_meta(q.on_failure == OnFailure::kStop ? "failed" : "running");
      if (q.on_failure == OnFailure::kStop)
        throw Error(fmt::format("duet round {} failed (A: {}; B: {}); stopped (--on-failure stop); the folder says so: {}",
                                r, p.child[0].code == 0 ? "ok" : p.child[0].failure(),
                                p.child[1].code == 0 ? "ok" : p.child[1].failure(), q.dir),
                    kExitFailure);
      // A round is kept only whole: a paired round needs both sides.
      fmt::print(stderr, "[ab] duet round {} failed; going on (--on-failure continue): both sides are left out\n", r);
      continue;
    }
    out.files_a.push_back(outs[0]);
    out.files_b.push_back(outs[1]);
    if (r < q.warmup_rounds) ++out.warm_a, ++out.warm_b;
  }
  return out;
}

}  // namespace cuzk::cli
