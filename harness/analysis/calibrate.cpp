#include "harness/analysis/calibrate.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/process.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <deque>
#include <filesystem>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include "harness/measure/clock.hpp"
#include "harness/measure/duet.hpp"
#include "harness/measure/inject.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/results.hpp"
#include "harness/analysis/gate.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/analysis/output/printers.hpp"
#include "harness/analysis/power.hpp"
#include "harness/analysis/stats.hpp"
#include "prover/util/cpu_placement.hpp"

namespace cuzk::calibrate {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string shq(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}



struct PoolRun {
  json header;
  std::vector<json> samples;  // measured (non-warm-up) sample lines
};

// The shell command of one workload process (its output to `log`).
std::string workload_command(const Options& o, const std::string& bench, const std::string& out, const std::string& spec,
                             const std::string& log) {
  std::string cmd;
  if (!spec.empty())
    cmd = "env " + std::string(inject::kEnvVar) + "=" + shq(spec) + " ";
  else
    cmd = "env -u " + std::string(inject::kEnvVar) + " ";
  cmd += shq(bench) + " " + o.workload + fmt::format(" --reps {}", o.reps) + " --out " + shq(out);
  if (o.stable) cmd += " --stable";
  for (const auto& a : o.workload_args) cmd += " " + shq(a);
  cmd += " >" + shq(log) + " 2>&1";
  return cmd;
}

// A finished workload process's results; throws naming its log when it failed.
PoolRun load_run(const std::string& out, const std::string& log, const std::string& cmd, int code) {
  if (code != 0)
    throw std::runtime_error(fmt::format("calibrate: workload run failed with exit status {} (log: {}; command: {})",
                                         code, log, cmd));
  ResultsFile f = read_results(out);
  PoolRun r;
  r.header = f.header.value;
  for (auto& s : f.samples)
    if (!s.value.value("warmup", false)) r.samples.push_back(s.value);
  if (r.samples.empty()) throw std::runtime_error(fmt::format("calibrate: {} holds no measured sample", out));
  return r;
}

// One workload process; returns its parsed results. It runs in its own process group under
// interrupt::install() (run_child), so a signal ends it: interrupt::Interrupted.
PoolRun one_run(const Options& o, const std::string& bench, const std::string& out, const std::string& spec,
                const std::string& log) {
  const std::string cmd = workload_command(o, bench, out, spec, log);
  const ChildResult c = run_child(cmd);
  if (c.interrupted) throw interrupt::Interrupted(c.interrupted);
  return load_run(out, log, cmd, c.code);
}

// Writes header + the chosen runs' samples (repetitions renumbered) as one results file.
// rounds: each run's pool round, written as every sample's round_id (paired draws: compare
// pairs the sides by it); empty: no round_id at all, so that unpaired draws are analysed
// unpaired. counter: each of `phases` gets the counter's value as its wall time and no GPU
// time, so that compare judges the counter.
void write_side(const std::string& path, const std::vector<const PoolRun*>& runs, const std::vector<int>& rounds,
                const std::string& counter, const std::vector<std::string>& phases) {
  std::ostringstream f;
  f << runs.front()->header.dump() << '\n';
  int rep = 0;
  for (size_t i = 0; i < runs.size(); ++i)
    for (json s : runs[i]->samples) {
      s["repetition"] = rep++;
      if (rounds.empty())
        s.erase("round_id");
      else
        s["round_id"] = rounds[i];
      if (!counter.empty())
        for (const auto& ph : phases) {
          json& rec = s["phases"][ph];
          rec["wall_ns"] = rec["counters"][counter];
          rec["gpu_ns"] = nullptr;
        }
      f << s.dump() << '\n';
    }
  write_output_file(path, f.str());
}

// Per calibrated phase (in Options::phases order): its primary row's verdict ("missing" when
// absent) and ratio.
struct TrialOutcome {
  std::vector<std::string> verdict;
  std::vector<double> ratio;
  bool any_alarm = false;
};

TrialOutcome compare_sides(const Options& o, const std::string& a, const std::string& b) {
  // Calibration compares plain runs with injected ones by design (that is what it measures), so
  // the refusal that protects compare and gate from mistaking a planted slowdown for a real one
  // does not apply here.
  CompareOptions co = o.compare;
  co.allow_injected = true;
  Comparison c = compare_files(a, b, co);
  TrialOutcome t;
  for (const auto& row : c.rows)
    if (row.primary && (row.verdict == "slower" || row.verdict == "faster")) t.any_alarm = true;
  for (const auto& ph : o.phases) {
    const PhaseComparison* row = primary_row(c, ph);
    t.verdict.push_back(row ? row->verdict : "missing");
    t.ratio.push_back(row ? row->ratio : 1.0);
  }
  return t;
}

// A metric that is a counter's name, not a time.
bool is_counter(const std::string& metric) { return metric != "wall_ns" && !is_gpu_metric(metric); }

// One trial gated as a merge would be (the thresholds' alpha, thresholds and multiple-testing
// rule; calibrate's analysis choices): gate's exit code, 1 being a failure of that merge.
int gate_trial(const GateThresholds& t, const Options& o, const std::string& a, const std::string& b) {
  GateOptions go;
  go.allow_injected = true;
  go.analysis = o.compare.analysis;
  const Comparison c = compare_files(a, b, gate_compare_options(t, go));
  return gate_comparison(c, t, go).exit_code;
}

// The injection of one slowdown level: every calibrated phase at pct%, by its metric.
std::string level_spec(const std::vector<PhaseResult>& phases, double pct) {
  std::vector<inject::Slowdown> s;
  for (const auto& p : phases) s.push_back({p.phase, pct, is_gpu_metric(p.metric), is_counter(p.metric)});
  return inject::format_spec(s);
}

// The metric compare will judge `phase` by, from a plain run's samples.
std::string metric_of(const PoolRun& run, const std::string& phase, const CompareOptions& co, const std::string& counter) {
  if (!counter.empty()) {
    for (const auto& s : run.samples) {
      const json& c = s["phases"][phase].value("counters", json::object());
      if (!c.contains(counter) || !c[counter].is_number())
        throw std::invalid_argument(fmt::format(
            "--counter {}: phase {} of the first run has no value for it; have the workload record it (e.g. "
            "--workload-arg=--counters --workload-arg={})",
            counter, phase, counter));
    }
    return counter;
  }
  return judged_metric(run.samples, phase, co);
}

// Wall-time injections nest: slowing a phase by a host wait also lengthens its ancestors. Two
// calibrated phases judged by wall time, one inside the other, cannot share a pool.
void check_not_nested(const std::vector<PhaseResult>& phases) {
  for (const auto& p : phases)
    for (const auto& q : phases)
      if (!is_gpu_metric(p.metric) && !is_gpu_metric(q.metric) && q.phase.size() > p.phase.size() &&
          q.phase.compare(0, p.phase.size() + 1, p.phase + "/") == 0)
        throw std::invalid_argument(fmt::format(
            "--phase {} and {} are both judged by wall time (or a counter) and the second is inside the first: its injected "
            "slowdown would also slow the first; calibrate them in separate runs",
            p.phase, q.phase));
}

// One value per observation of `phase` over the pool: each process's median when reps > 1.
std::vector<double> observations(const std::vector<const PoolRun*>& pool, const std::string& phase,
                                 const std::string& metric, int reps) {
  std::vector<double> out;
  for (const PoolRun* pp : pool) {
    const PoolRun& p = *pp;
    std::vector<double> v;
    for (const auto& s : p.samples) {
      if (!s["phases"].contains(phase)) continue;
      const json& rec = s["phases"][phase];
      const json& x = is_counter(metric) ? rec.value("counters", json::object()).value(metric, json()) : rec.value(metric, json());
      if (x.is_number()) v.push_back(x.get<double>());
    }
    if (v.empty()) continue;
    if (reps > 1)
      out.push_back(median(v));
    else
      out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}


}  // namespace

namespace {
// The pool's runs by round. Plain runs: `a` (and `a2`, the second plain run A' of paired draws
// and duets); `level[k]`: the run at slowdown level k; `partner[k]` (duets): the plain run that
// ran beside it. nullptr where a round has no such run (unpaired pools: rounds beyond --pool-a or
// --pool-b).
struct PoolRound {
  const PoolRun* a = nullptr;
  const PoolRun* a2 = nullptr;
  std::vector<const PoolRun*> level, partner;
};
}  // namespace

Result run(const Options& in) {
  Options o = in;
  auto log = [&](const std::string& s) {
    if (o.log) o.log(s);
  };
  if (o.workload != "selfmeasure" && o.workload != "prove")
    throw std::invalid_argument(fmt::format("--workload must be selfmeasure or prove (got \"{}\")", o.workload));
  if (o.trials < 1) throw std::invalid_argument(fmt::format("--trials must be at least 1 (got {})", o.trials));
  if (o.runs < 2) throw std::invalid_argument(fmt::format("--runs must be at least 2 (got {})", o.runs));
  if (o.reps < 1) throw std::invalid_argument(fmt::format("--reps must be at least 1 (got {})", o.reps));
  if (o.stable && o.workload != "prove")
    throw std::invalid_argument("--stable applies to --workload prove (selfmeasure has no GPU thread to place)");
  if (o.draw.empty()) o.draw = o.duet ? "paired" : "unpaired";
  if (o.draw != "unpaired" && o.draw != "paired" && o.draw != "both")
    throw std::invalid_argument(fmt::format("--draw must be unpaired, paired or both (got \"{}\")", o.draw));
  if (o.draw != "paired" && o.compare.analysis.design == DesignChoice::kPaired)
    throw std::invalid_argument(fmt::format(
        "--design paired needs rounds on both sides: unpaired draws have none (use --draw paired, or --design auto)"));
  if (o.duet && o.stable)
    throw std::invalid_argument("--duet and --stable go separately: --stable places the GPU-driving thread and the pool "
                                "over every CPU, --duet gives each side half of them");
  std::optional<duet::Halves> halves;
  if (o.duet) halves = duet::split_halves(placement::allowed_cpus());  // invalid_argument: fewer than 2 CPUs
  if (o.phases.empty()) throw std::invalid_argument("--phase must name a phase");
  // The thresholds are read before any run, so that a bad file costs nothing.
  std::optional<GateThresholds> gate;
  if (!o.gate_thresholds.empty()) {
    try {
      gate = load_thresholds(o.gate_thresholds);
    } catch (const GateError& e) {
      throw std::invalid_argument(fmt::format("--gate: {}", e.what()));
    }
  }
  for (const auto& ph : o.phases) {
    if (ph.empty()) throw std::invalid_argument("--phase: empty phase name");
    if (std::count(o.phases.begin(), o.phases.end(), ph) > 1)
      throw std::invalid_argument(fmt::format("--phase {} is named twice", ph));
  }
  for (double s : o.slowdowns)
    if (!(s > 0) || s > 1000) throw std::invalid_argument(fmt::format("--slowdowns: {} is not in (0, 1000]", s));
  if (!(o.power > 0 && o.power < 1)) throw std::invalid_argument(fmt::format("--power must be a percentage in (0, 100) (got {})", o.power * 100));
  if (!(o.target_effect > 0)) throw std::invalid_argument("--target-effect must be positive");
  std::sort(o.slowdowns.begin(), o.slowdowns.end());
  o.slowdowns.erase(std::unique(o.slowdowns.begin(), o.slowdowns.end()), o.slowdowns.end());
  if (o.pool_a <= 0) o.pool_a = 4 * o.runs;
  if (o.pool_b <= 0) o.pool_b = 2 * o.runs;
  if (o.pool_a < 2 * o.runs)
    throw std::invalid_argument(fmt::format("--pool-a must be at least 2 x --runs = {} (got {})", 2 * o.runs, o.pool_a));
  if (o.pool_b < o.runs)
    throw std::invalid_argument(fmt::format("--pool-b must be at least --runs = {} (got {})", o.runs, o.pool_b));
  // A counter is judged as compare judges wall time: its value takes the wall time's place.
  if (!o.counter.empty()) o.compare.analysis.metric_choice = MetricChoice::kWall;
  const std::string bench = o.bench.empty() ? own_executable().value_or("cuzk-bench") : o.bench;
  // Paired draws and duets need every round whole: two plain runs and one run per level.
  const bool whole_rounds = o.draw != "unpaired" || o.duet;
  const size_t K = o.slowdowns.size();

  Result r;
  r.unit = o.reps > 1 ? "processes" : "samples";
  r.out_dir = o.out_dir.empty() ? "results/local/calibrate-" + utc_stamp() : o.out_dir;
  fs::create_directories(r.out_dir + "/pool");
  fs::create_directories(r.out_dir + "/trials");
  std::vector<PhaseResult> phases;
  for (const auto& ph : o.phases) {
    PhaseResult p;
    p.phase = ph;
    phases.push_back(p);
  }
  if (halves) r.duet = duet::describe(*halves);

  // ---- 1. the pool, interleaved ----
  std::mt19937_64 rng(o.seed);
  std::deque<PoolRun> store;  // stable addresses for the rounds' pointers
  const int rounds = whole_rounds ? std::max((o.pool_a + 1) / 2, o.pool_b) : std::max(o.pool_a, o.pool_b);
  std::vector<PoolRound> pool(rounds);
  for (auto& pr : pool) pr.level.assign(K, nullptr), pr.partner.assign(K, nullptr);
  std::vector<std::string> specs(K);
  json index_plain = json::array();
  std::vector<json> index_level(K, json::array());
  const uint64_t t0 = now_ns();
  const int total = whole_rounds ? rounds * int(2 + (o.duet ? 2 : 1) * K)
                                 : o.pool_a + o.pool_b * static_cast<int>(K);
  int done = 0;
  log(fmt::format("calibrate: pool of {} {} runs in {} rounds ({}) of {} measured repetition(s), interleaved{}", total,
                  o.workload, rounds,
                  whole_rounds ? fmt::format("each round: A, A'{} and one run per slowdown level", o.duet ? " and a plain partner" : "")
                               : fmt::format("{} plain, {} per slowdown level", o.pool_a, o.pool_b),
                  o.reps, o.duet ? "; pairs run at the same time on halves of the CPUs (duet)" : ""));
  // After the first run: each phase's metric, and so the injections.
  auto first_run = [&](const PoolRun& pr, const std::string& out) {
    for (auto& ph : phases) {
      if (!pr.samples.front()["phases"].contains(ph.phase))
        throw std::invalid_argument(fmt::format("--phase {}: not in the {} workload's records ({})", ph.phase,
                                                o.workload, out));
      ph.metric = metric_of(pr, ph.phase, o.compare, o.counter);
    }
    check_not_nested(phases);
    for (size_t j = 0; j < K; ++j) specs[j] = level_spec(phases, o.slowdowns[j]);
  };
  // -1: A, -2: A', k >= 0: level k; with `partner`, the plain run beside level k (duets).
  auto stem_of = [&](int k, int round, bool partner) {
    if (k == -1) return fmt::format("a-{:03}", round);
    if (k == -2) return fmt::format("a2-{:03}", round);
    return fmt::format("{}s{:g}-{:03}", partner ? "a-beside-" : "", o.slowdowns[k], round);
  };
  auto place = [&](PoolRun&& run, int k, int round, bool partner, const std::string& stem) {
    store.push_back(std::move(run));
    const PoolRun* p = &store.back();
    PoolRound& pr = pool[round];
    (k == -1 ? pr.a : k == -2 ? pr.a2 : partner ? pr.partner[k] : pr.level[k]) = p;
    const json entry = {{"file", stem + ".jsonl"}, {"round", round},
                        {"injection", k >= 0 && !partner ? json(specs[k]) : json(nullptr)}};
    (k >= 0 && !partner ? index_level[k] : index_plain).push_back(entry);
    ++done;
  };
  // Which pool file ran under which injection, in which round (the results files themselves do
  // not say): plain runs first, then each level's. Also written when a signal stops the pool,
  // listing the runs that finished.
  auto write_index = [&](const json& interrupted) {
    json index = {{"workload", o.workload}, {"phases", o.phases}, {"env", inject::kEnvVar}, {"runs", index_plain},
                  {"duet", r.duet}, {"status", interrupted.is_null() ? "complete" : "interrupted"}};
    if (!interrupted.is_null()) index["interrupted"] = interrupted;
    for (auto& l : index_level)
      for (auto& e : l) index["runs"].push_back(e);
    write_output_file(r.out_dir + "/pool/index.json", index.dump(1) + "\n");
  };
  try {
    for (int round = 0; round < rounds; ++round) {
      std::vector<int> order;  // runs (or, in duets, pairs: -1 the A/A pair, k: A beside level k)
      const bool levels_here = whole_rounds || round < o.pool_b;
      if (levels_here)
        for (size_t k = 0; k < K; ++k) order.push_back(static_cast<int>(k));
      if (whole_rounds && !o.duet) order.push_back(-2);
      std::shuffle(order.begin(), order.end(), rng);
      // The very first run is plain: it decides each phase's metric, and so the injections.
      if (whole_rounds || round < o.pool_a)
        order.insert(round == 0 ? order.begin() : order.begin() + (rng() % (order.size() + 1)), -1);
      for (int k : order) {
        if (!o.duet) {
          const std::string stem = stem_of(k, round, false);
          const std::string out = r.out_dir + "/pool/" + stem + ".jsonl", lg = r.out_dir + "/pool/" + stem + ".log";
          fs::remove(out);
          PoolRun pr = one_run(o, bench, out, k >= 0 ? specs[k] : "", lg);
          fs::remove(lg);
          if (done == 0) first_run(pr, out);
          place(std::move(pr), k, round, false, stem);
          continue;
        }
        // A duet pair: side 0 plain (A, or the partner of level k), side 1 A' or level k.
        const std::string stems[2] = {stem_of(k == -1 ? -1 : k, round, k >= 0), stem_of(k == -1 ? -2 : k, round, false)};
        std::array<duet::PairSide, 2> sides;
        std::string outs[2], logs[2];
        for (int v = 0; v < 2; ++v) {
          outs[v] = r.out_dir + "/pool/" + stems[v] + ".jsonl";
          logs[v] = r.out_dir + "/pool/" + stems[v] + ".log";
          fs::remove(outs[v]);
          sides[v] = {workload_command(o, bench, outs[v], v == 1 && k >= 0 ? specs[k] : "", logs[v]),
                      duet::side_cpus(*halves, round, v)};
        }
        const duet::PairResult p = duet::run_pair(r.out_dir + "/pool/barrier", sides, round, 0);
        for (int v = 0; v < 2; ++v)
          if (p.child[v].interrupted) throw interrupt::Interrupted(p.child[v].interrupted);
        for (int v = 0; v < 2; ++v) {
          PoolRun run = load_run(outs[v], logs[v], sides[v].command, p.child[v].code);
          fs::remove(logs[v]);
          if (done == 0) first_run(run, outs[v]);
          place(std::move(run), v == 0 ? (k == -1 ? -1 : k) : (k == -1 ? -2 : k), round, v == 0 && k >= 0, stems[v]);
        }
      }
      if ((round + 1) % 5 == 0 || round + 1 == rounds)
        log(fmt::format("calibrate: {}/{} runs, {:.0f} s", done, total, (now_ns() - t0) / 1e9));
    }
  } catch (const interrupt::Interrupted& e) {
    write_index({{"signal", interrupt::signal_name(e.sig)}, {"exit_code", interrupt::exit_code(e.sig)},
                 {"runs_done", done}, {"of", total}});
    throw;
  }
  r.pool_seconds = (now_ns() - t0) / 1e9;
  r.pool_rounds = rounds;
  write_index(nullptr);
  std::vector<const PoolRun*> plain;  // every plain run that stands for A in unpaired draws
  for (const auto& pr : pool)
    for (const PoolRun* p : {pr.a, pr.a2})
      if (p) plain.push_back(p);
  r.machine = plain.front()->header.value("machine", json::object());

  // Spread of each phase's observations over the plain runs.
  for (auto& ph : phases) {
    std::vector<double> v = observations(plain, ph.phase, ph.metric, o.reps);
    if (v.empty())
      throw std::runtime_error(fmt::format("calibrate: phase \"{}\" has no {} in the {} workload's records", ph.phase,
                                           ph.metric, o.workload));
    ph.median_ns = median(v);
    ph.mad_ns = mad(v);
    ph.cv = ph.median_ns > 0 ? 1.4826 * ph.mad_ns / ph.median_ns : 0;
  }

  // ---- 2. trials ----
  const std::string ta = r.out_dir + "/trials/a.jsonl", tb = r.out_dir + "/trials/b.jsonl";
  auto pick = [&](size_t from, size_t count) {
    std::vector<size_t> idx(from);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(count);
    return idx;
  };
  auto tally = [](LevelResult& L, const std::string& verdict) {
    L.trials++;
    if (verdict == "slower") L.slower++;
    else if (verdict == "faster") L.faster++;
    else if (verdict == "unchanged") L.unchanged++;
    else if (verdict == "too noisy") L.too_noisy++;
    else L.missing++;
  };
  // The plain runs an A/B trial at level k draws its A side from: in duets the runs that ran
  // beside that level's, so that both sides shared the machine alike.
  auto a_side_of = [&](const PoolRound& pr, size_t k) { return o.duet ? pr.partner[k] : pr.a; };
  auto run_draw = [&](const std::string& draw) {
    DrawResult d;
    d.draw = draw;
    d.phases = phases;
    const bool paired = draw == "paired";
    // The trials of one level (k < 0: A/A); appends a LevelResult per phase.
    auto level = [&](double pct, int k) {
      DrawResult::GateLevel gl;
      gl.slowdown_pct = pct;
      std::vector<LevelResult> L(phases.size());
      std::vector<std::vector<double>> ratios(phases.size());
      for (int t = 0; t < o.trials; ++t) {
        interrupt::check();  // in-process work, no child to carry the signal: looked at per trial
        std::vector<const PoolRun*> a, b;
        std::vector<int> ra, rb;
        if (paired) {
          std::vector<int> eligible;
          for (int i = 0; i < rounds; ++i) {
            const PoolRound& pr = pool[i];
            if (k < 0 ? pr.a && pr.a2 : a_side_of(pr, k) && pr.level[k]) eligible.push_back(i);
          }
          for (size_t j : pick(eligible.size(), o.runs)) {
            const PoolRound& pr = pool[eligible[j]];
            a.push_back(k < 0 ? pr.a : a_side_of(pr, k));
            b.push_back(k < 0 ? pr.a2 : pr.level[k]);
            ra.push_back(eligible[j]);
          }
          rb = ra;
        } else if (k < 0) {
          const auto ia = pick(plain.size(), 2 * o.runs);
          for (int i = 0; i < o.runs; ++i) a.push_back(plain[ia[i]]);
          for (int i = o.runs; i < 2 * o.runs; ++i) b.push_back(plain[ia[i]]);
        } else {
          std::vector<const PoolRun*> as, bs;
          for (const auto& pr : pool) {
            if (o.duet && pr.partner[k]) as.push_back(pr.partner[k]);
            if (pr.level[k]) bs.push_back(pr.level[k]);
          }
          if (!o.duet) as = plain;
          for (size_t i : pick(as.size(), o.runs)) a.push_back(as[i]);
          for (size_t i : pick(bs.size(), o.runs)) b.push_back(bs[i]);
        }
        write_side(ta, a, ra, o.counter, o.phases);
        write_side(tb, b, rb, o.counter, o.phases);
        TrialOutcome out = compare_sides(o, ta, tb);
        for (size_t p = 0; p < phases.size(); ++p) {
          tally(L[p], out.verdict[p]);
          ratios[p].push_back(out.ratio[p]);
        }
        if (k < 0 && out.any_alarm) d.aa_any_phase_alarms++;
        if (gate) {
          const int code = gate_trial(*gate, o, ta, tb);
          gl.trials++;
          gl.failed += code == 1;
          gl.errors += code == 2;
        }
      }
      if (gate) d.gate.push_back(gl);
      for (size_t p = 0; p < phases.size(); ++p) {
        L[p].slowdown_pct = pct;
        L[p].median_ratio = ratios[p].empty() ? 0 : median(ratios[p]);
        d.phases[p].levels.push_back(L[p]);
        const std::string tag = o.draw == "both" ? " (" + draw + ")" : "";
        log(pct == 0 ? fmt::format("calibrate: A/A{}: {} of {} trials flagged {}", tag, L[p].slower + L[p].faster,
                                   L[p].trials, phases[p].phase)
                     : fmt::format("calibrate: +{:g}%{}: {} of {} trials detected {}", pct, tag, L[p].slower, L[p].trials,
                                   phases[p].phase));
      }
    };
    level(0, -1);
    for (size_t k = 0; k < K; ++k) level(o.slowdowns[k], static_cast<int>(k));
    // ---- 3. summary ----
    for (auto& ph : d.phases) {
      for (size_t k = ph.levels.size(); k-- > 1;) {
        if (ph.levels[k].rate() >= o.power)
          ph.min_detectable_pct = ph.levels[k].slowdown_pct;
        else
          break;
      }
      const double thr = o.compare.threshold_for(ph.phase);
      ph.runs_needed_target = power::runs_needed(o.target_effect / 100, ph.cv, o.compare.alpha, o.power, thr);
      if (o.target_effect / 100 <= thr)
        ph.note = fmt::format(
            "the target effect {:g}% is not above the comparison's noise threshold {:g}% for {}: no number of runs "
            "makes compare call it \"slower\" (lower the threshold, --noise-threshold)",
            o.target_effect, thr * 100, ph.phase);
    }
    return d;
  };
  try {
    if (o.draw != "paired") r.draws.push_back(run_draw("unpaired"));
    if (o.draw != "unpaired") r.draws.push_back(run_draw("paired"));
  } catch (const interrupt::Interrupted&) {
    fs::remove_all(r.out_dir + "/trials");  // scratch files of a trial; the pool stays whole
    throw;
  }
  fs::remove_all(r.out_dir + "/trials");
  r.phases = r.draws.front().phases;
  r.aa_any_phase_alarms = r.draws.front().aa_any_phase_alarms;
  r.options = o;

  OutputFiles out;  // both or neither, each complete
  out.add(r.out_dir + "/calibration.json", to_json(r).dump(2) + '\n');
  out.add(r.out_dir + "/calibration.md", format_markdown(r));
  out.commit();
  return r;
}

namespace {
std::string level_name(const LevelResult& L) {
  return L.slowdown_pct == 0 ? std::string("0 (A/A)") : fmt::format("+{:g}%", L.slowdown_pct);
}
std::string share(int k, int n) { return output::pct(n ? double(k) / n : 0); }
std::string mdetect(const Options& o, const PhaseResult& p) {
  return p.min_detectable_pct < 0
             ? fmt::format("none up to {:g}%", o.slowdowns.empty() ? 0.0 : o.slowdowns.back())
             : fmt::format("{:g}%", p.min_detectable_pct);
}
std::string needed(const PhaseResult& p) {
  return p.runs_needed_target < 0 ? std::string("never (target not above the noise threshold)")
                                  : fmt::format("{}", p.runs_needed_target);
}
std::string metric_name(const std::string& m) {
  return m == "gpu_kernel_ns" ? "GPU kernel time"
         : m == "gpu_ns"      ? "GPU time"
         : m == "wall_ns"     ? "wall time"
                              : "counter " + m;
}
std::string unit_text(const Result& r) {
  return r.unit == "processes"
             ? fmt::format("{} processes per side, {} repetitions each (each process's median is one observation)",
                           r.options.runs, r.options.reps)
             : fmt::format("{} runs per side, one measured repetition each", r.options.runs);
}
}  // namespace

namespace {
std::string judged_by(const std::string& m) {
  return m == "gpu_kernel_ns" ? "kernel" : m == "gpu_ns" ? "gpu" : m == "wall_ns" ? "wall" : m;
}
// What the trials drew and how the pool ran, in one line.
std::string design_text(const Result& r) {
  const auto& o = r.options;
  std::string s = o.draw == "both"     ? "unpaired and paired draws from one pool"
                  : o.draw == "paired" ? "paired draws (both sides from the same rounds)"
                                       : "unpaired draws";
  if (o.duet) s += "; duet pool (each pair at the same time, each on half of the CPUs, swapped per round)";
  if (!o.counter.empty()) s += fmt::format("; judged by the counter {} (injections plant work)", o.counter);
  return s;
}
}  // namespace

// The gate's outcome per level, one line per draw: "gate (t.toml, unpaired draws): failed 1 of 40
// A/A merges (2.5%); +1%: 12/40, +2%: 38/40".
static std::string gate_text(const Result& r, const std::string& bullet) {
  std::string s;
  for (const auto& d : r.draws) {
    if (d.gate.empty()) continue;
    const auto& aa = d.gate.front();
    s += fmt::format("{}gate ({}{}): failed {} of {} A/A merges ({:.1f}%: false failures per merge)", bullet,
                     r.options.gate_thresholds, r.draws.size() > 1 ? ", " + d.draw + " draws" : "", aa.failed, aa.trials,
                     aa.trials ? 100.0 * aa.failed / aa.trials : 0.0);
    for (size_t i = 1; i < d.gate.size(); ++i)
      s += fmt::format("{} +{:g}%: {}/{}", i == 1 ? ";" : ",", d.gate[i].slowdown_pct, d.gate[i].failed, d.gate[i].trials);
    size_t errors = 0;
    for (const auto& L : d.gate) errors += L.errors;
    if (errors) s += fmt::format(" ({} trials could not be gated)", errors);
    s += "\n";
  }
  return s;
}

namespace {
// A table of verdicts per injected slowdown: the level's name, then counts and ratios.
output::Table levels_table(const std::vector<std::string>& titles) {
  output::Table t;
  for (size_t i = 0; i < titles.size(); ++i) t.columns.push_back({titles[i], i ? output::Align::right : output::Align::left});
  return t;
}
}  // namespace

std::string format_table(const Result& r) {
  const auto& o = r.options;
  const bool several = r.draws.size() > 1;
  std::string s = fmt::format("calibration: {} workload{}, {}, {} trials per row\n", o.workload,
                              o.stable ? " (--stable)" : "", unit_text(r), o.trials);
  s += fmt::format("trials: {}\n", design_text(r));
  if (o.duet) s += r.duet.value("note", std::string()) + "\n";
  std::vector<std::string> titles{"phase"};
  if (several) titles.push_back("draw");
  for (const char* t : {"judged by", "median", "cv", "A/A alarms", "min. detected (power)", "runs/side"}) titles.push_back(t);
  output::Table summary = output::Table::with_titles(titles);
  for (const auto& d : r.draws)
    for (const auto& p : d.phases) {
      const auto& aa = p.levels.front();
      std::vector<output::Cell> row{p.phase};
      if (several) row.push_back(d.draw);
      row.insert(row.end(),
                 {judged_by(p.metric),
                  is_counter(p.metric) ? fmt::format("{:.4g}", p.median_ns) : fmt::format("{:.3f} ms", p.median_ns / 1e6),
                  fmt::format("{:.2f}%", 100 * p.cv), share(aa.slower + aa.faster, aa.trials), mdetect(o, p),
                  p.runs_needed_target < 0 ? std::string("never") : fmt::format("{}", p.runs_needed_target)});
      summary.add_row(std::move(row));
    }
  s += "\n" + output::text(summary);
  s += fmt::format("\nmin. detected: smallest injected slowdown called \"slower\" in >= {:.0f}% of trials at {} {} per side; "
                   "runs/side: the normal-theory estimate for a {:g}% slowdown (alpha {:g})\n",
                   100 * o.power, o.runs, r.unit, o.target_effect, o.compare.alpha);
  for (size_t i = 0; i < r.phases.size(); ++i) {
    const PhaseResult& p = r.phases[i];
    s += fmt::format("\n{} ({}; cv of its observations {:.2f}%, threshold {:g}%)\n", p.phase, metric_name(p.metric),
                     100 * p.cv, 100 * o.compare.threshold_for(p.phase));
    for (const auto& d : r.draws) {
      if (several) s += fmt::format("{} draws:\n", d.draw);
      output::Table t = levels_table({"slowdown", "trials", "slower", "faster", "unchanged", "noisy", "med. ratio"});
      t.rule = output::Rule::none;
      for (const auto& L : d.phases[i].levels)
        t.add_row({level_name(L), std::to_string(L.trials), share(L.slower, L.trials), share(L.faster, L.trials),
                   share(L.unchanged, L.trials), share(L.too_noisy, L.trials), fmt::format("{:.4f}", L.median_ratio)});
      s += output::text(t);
    }
    if (!p.note.empty()) s += "note: " + p.note + "\n";
  }
  for (const auto& d : r.draws)
    if (!d.phases.empty())
      s += fmt::format("\nfalse alarms on any phase{} (A/A trials where some phase's verdict was slower or faster): {}/{}",
                       several ? " (" + d.draw + " draws)" : "", d.aa_any_phase_alarms, d.phases.front().levels.front().trials);
  if (!r.draws.empty()) s += "\n";
  s += gate_text(r, "");
  return s;
}


std::string format_markdown(const Result& r) {
  const auto& o = r.options;
  const bool several = r.draws.size() > 1;
  std::string s = "# Calibration\n\n";
  s += fmt::format("- workload: `{}`{}; {}\n", o.workload, o.stable ? " with `--stable`" : "", unit_text(r));
  s += fmt::format("- trials: {}\n", design_text(r));
  if (o.duet) s += "- " + r.duet.value("note", std::string()) + "\n";
  s += fmt::format("- {} trials per row, seed {}; pool: {} rounds, {}; {:.0f} s\n", o.trials, o.seed, r.pool_rounds,
                   o.draw == "unpaired" && !o.duet
                       ? fmt::format("{} plain runs + {} runs per slowdown level, interleaved", o.pool_a, o.pool_b)
                       : std::string("each with two plain runs and one run per slowdown level, interleaved"),
                   r.pool_seconds);
  s += fmt::format("- comparison: alpha {:g}, noise threshold {:g}%, {} bootstrap resamples, metric {}, design {}\n",
                   o.compare.alpha, 100 * o.compare.noise_threshold, o.compare.bootstrap_resamples,
                   choice_name(o.compare.analysis.metric_choice), choice_name(o.compare.analysis.design));
  s += fmt::format("- machine: {} ({} logical CPUs)\n\n", r.machine.value("cpu_model", std::string("?")),
                   r.machine.value("logical_cpus", 0));
  output::Table t;
  t.columns.push_back({"phase"});
  if (several) t.columns.push_back({"draw"});
  t.columns.insert(t.columns.end(),
                   {{"judged by"},
                    {"median", output::Align::right},
                    {"robust cv", output::Align::right},
                    {"A/A false alarms", output::Align::right},
                    {fmt::format("smallest slowdown detected ({:.0f}% power)", 100 * o.power), output::Align::right},
                    {fmt::format("runs per side for {:g}%", o.target_effect), output::Align::right}});
  for (const auto& d : r.draws)
    for (const auto& p : d.phases) {
      const auto& aa = p.levels.front();
      std::vector<output::Cell> row{fmt::format("`{}`", p.phase)};
      if (several) row.push_back(d.draw);
      row.insert(row.end(),
                 {metric_name(p.metric),
                  is_counter(p.metric) ? fmt::format("{:.4g}", p.median_ns) : fmt::format("{:.3f} ms", p.median_ns / 1e6),
                  fmt::format("{:.2f}%", 100 * p.cv),
                  fmt::format("{}/{} = {}", aa.slower + aa.faster, aa.trials, share(aa.slower + aa.faster, aa.trials)),
                  fmt::format("**{}**", mdetect(o, p)), needed(p)});
      t.add_row(std::move(row));
    }
  s += output::markdown(t);
  for (size_t i = 0; i < r.phases.size(); ++i) {
    const PhaseResult& p = r.phases[i];
    s += fmt::format("\n## `{}` ({})\n\n", p.phase, metric_name(p.metric));
    if (several) {
      // Side by side: each draw's verdicts on the same pool, level by level.
      output::Table t = levels_table({"injected slowdown", "trials", "detected, unpaired", "detected, paired",
                                      "faster, unpaired", "faster, paired", "median ratio, unpaired",
                                      "median ratio, paired"});
      const auto& U = r.draws[0].phases[i].levels;
      const auto& P = r.draws[1].phases[i].levels;
      for (size_t k = 0; k < U.size() && k < P.size(); ++k)
        t.add_row({level_name(U[k]), fmt::format("{}", U[k].trials), share(U[k].slower, U[k].trials),
                   share(P[k].slower, P[k].trials), share(U[k].faster, U[k].trials), share(P[k].faster, P[k].trials),
                   fmt::format("{:.4f}", U[k].median_ratio), fmt::format("{:.4f}", P[k].median_ratio)});
      s += output::markdown(t);
    } else {
      output::Table t = levels_table({"injected slowdown", "trials", "detected (slower)", "faster", "unchanged",
                                      "too noisy", "median ratio B/A"});
      for (const auto& L : p.levels)
        t.add_row({level_name(L), fmt::format("{}", L.trials), share(L.slower, L.trials), share(L.faster, L.trials),
                   share(L.unchanged, L.trials), share(L.too_noisy, L.trials), fmt::format("{:.4f}", L.median_ratio)});
      s += output::markdown(t);
    }
    if (!p.note.empty()) s += "\n- note: " + p.note + "\n";
  }
  s += "\n";
  for (const auto& d : r.draws)
    if (!d.phases.empty())
      s += fmt::format("A/A trials{} in which any phase's verdict was slower or faster: {}/{}\n",
                       several ? " (" + d.draw + " draws)" : "", d.aa_any_phase_alarms, d.phases.front().levels.front().trials);
  s += gate_text(r, "- ");
  return s;
}

json to_json(const Result& r) {
  const auto& o = r.options;
  json j;
  j["schema"] = "cuzk.calibration";
  j["version"] = 3;
  j["options"] = {{"workload", o.workload},
                  {"workload_args", o.workload_args},
                  {"trials", o.trials},
                  {"runs", o.runs},
                  {"reps", o.reps},
                  {"stable", o.stable},
                  {"phases", o.phases},
                  {"slowdowns_pct", o.slowdowns},
                  {"target_effect_pct", o.target_effect},
                  {"power", o.power},
                  {"pool_a", o.pool_a},
                  {"pool_b", o.pool_b},
                  {"seed", o.seed},
                  {"alpha", o.compare.alpha},
                  {"noise_threshold", o.compare.noise_threshold},
                  {"metric", choice_name(o.compare.analysis.metric_choice)},
                  {"bootstrap_resamples", o.compare.bootstrap_resamples},
                  {"design", choice_name(o.compare.analysis.design)},
                  {"draw", o.draw},
                  {"duet", o.duet},
                  {"counter", o.counter.empty() ? json(nullptr) : json(o.counter)}};
  j["pool_rounds"] = r.pool_rounds;
  j["duet"] = r.duet;
  j["unit"] = r.unit;
  j["injection"] = {{"env", inject::kEnvVar}, {"spec_per_level", json::array()}};
  for (double s : o.slowdowns) j["injection"]["spec_per_level"].push_back(level_spec(r.phases, s));
  // "phases" and "aa_any_phase_alarms": the first draw's (what version 2 readers expect);
  // "draws": every draw's, side by side.
  auto phases_json = [&](const std::vector<PhaseResult>& phases) {
  json out = json::array();
  for (const auto& p : phases) {
    json levels = json::array();
    for (const auto& L : p.levels)
      levels.push_back({{"slowdown_pct", L.slowdown_pct},
                        {"trials", L.trials},
                        {"slower", L.slower},
                        {"faster", L.faster},
                        {"unchanged", L.unchanged},
                        {"too_noisy", L.too_noisy},
                        {"missing", L.missing},
                        {"detection_rate", L.rate()},
                        {"median_ratio", L.median_ratio}});
    out.push_back({{"phase", p.phase},
                           {"metric", p.metric},
                           {"threshold", o.compare.threshold_for(p.phase)},
                           {"levels", levels},
                           {"false_alarm_rate", p.levels.empty() ? json(nullptr) : json(p.levels[0].false_alarm_rate())},
                           {"min_detectable_pct", p.min_detectable_pct < 0 ? json(nullptr) : json(p.min_detectable_pct)},
                           {"median_ns", p.median_ns},
                           {"mad_ns", p.mad_ns},
                           {"cv", p.cv},
                           {"runs_needed_for_target", p.runs_needed_target < 0 ? json(nullptr) : json(p.runs_needed_target)},
                           {"note", p.note}});
  }
  return out;
  };
  j["phases"] = phases_json(r.phases);
  j["aa_any_phase_alarms"] = r.aa_any_phase_alarms;
  j["draws"] = json::array();
  for (const auto& d : r.draws) {
    json g = nullptr;
    if (!d.gate.empty()) {
      g = {{"thresholds", o.gate_thresholds}, {"levels", json::array()}};
      for (const auto& L : d.gate)
        g["levels"].push_back({{"slowdown_pct", L.slowdown_pct}, {"trials", L.trials}, {"failed", L.failed}, {"errors", L.errors}});
    }
    j["draws"].push_back({{"draw", d.draw}, {"phases", phases_json(d.phases)}, {"aa_any_phase_alarms", d.aa_any_phase_alarms}, {"gate", g}});
  }
  j["pool_seconds"] = r.pool_seconds;
  j["machine"] = r.machine;
  return j;
}

bool is_gpu_metric(const std::string& metric) { return metric == "gpu_ns" || metric == "gpu_kernel_ns"; }

std::string judged_metric(const std::vector<json>& samples, const std::string& phase, const CompareOptions& co) {
  std::vector<const json*> records;
  for (const auto& s : samples) {
    const json& phases = s.at("phases");
    auto it = phases.find(phase);
    records.push_back(it == phases.end() ? nullptr : &*it);
  }
  return judged_time_metric(records, co.analysis.metric_choice);
}

}  // namespace cuzk::calibrate
