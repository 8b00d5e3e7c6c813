#include "harness/analysis/calibrate.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/process.hpp"

#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <random>
#include <sstream>
#include <stdexcept>

#include "harness/measure/clock.hpp"
#include "harness/measure/inject.hpp"
#include "harness/measure/results.hpp"
#include "harness/analysis/stats.hpp"

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

// One workload process; returns its parsed results.
PoolRun one_run(const Options& o, const std::string& bench, const std::string& out, const std::string& spec,
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
  const int st = std::system(cmd.c_str());
  const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
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

// Writes header + the chosen runs' samples (repetitions renumbered) as one results file.
void write_side(const std::string& path, const std::vector<const PoolRun*>& runs) {
  std::ostringstream f;
  f << runs.front()->header.dump() << '\n';
  int rep = 0;
  for (const PoolRun* r : runs)
    for (json s : r->samples) {
      s["repetition"] = rep++;
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

// The injection of one slowdown level: every calibrated phase at pct%, by its metric.
std::string level_spec(const std::vector<PhaseResult>& phases, double pct) {
  std::vector<inject::Slowdown> s;
  for (const auto& p : phases) s.push_back({p.phase, pct, p.metric == "gpu_ns"});
  return inject::format_spec(s);
}

// The metric compare will judge `phase` by, from a plain run's samples (compare.hpp's rule).
std::string metric_of(const PoolRun& run, const std::string& phase, const CompareOptions& co) {
  if (co.analysis.metric == "wall") return "wall_ns";
  for (const auto& s : run.samples) {
    const auto& rec = s["phases"][phase];
    if (!rec.contains("gpu_ns") || !rec["gpu_ns"].is_number()) return "wall_ns";
  }
  return "gpu_ns";
}

// Wall-time injections nest: slowing a phase by a host wait also lengthens its ancestors. Two
// calibrated phases judged by wall time, one inside the other, cannot share a pool.
void check_not_nested(const std::vector<PhaseResult>& phases) {
  for (const auto& p : phases)
    for (const auto& q : phases)
      if (p.metric == "wall_ns" && q.metric == "wall_ns" && q.phase.size() > p.phase.size() &&
          q.phase.compare(0, p.phase.size() + 1, p.phase + "/") == 0)
        throw std::invalid_argument(fmt::format(
            "--phase {} and {} are both judged by wall time and the second is inside the first: its injected "
            "slowdown would also slow the first; calibrate them in separate runs",
            p.phase, q.phase));
}

// One value per observation of `phase` over the pool: each process's median when reps > 1.
std::vector<double> observations(const std::vector<PoolRun>& pool, const std::string& phase, const std::string& metric,
                                 int reps) {
  std::vector<double> out;
  for (const auto& p : pool) {
    std::vector<double> v;
    for (const auto& s : p.samples)
      if (s["phases"].contains(phase) && s["phases"][phase][metric].is_number())
        v.push_back(s["phases"][phase][metric].get<double>());
    if (v.empty()) continue;
    if (reps > 1)
      out.push_back(median(v));
    else
      out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p must be in (0, 1)");
  // Bisection on the CDF Phi(x) = erfc(-x / sqrt 2) / 2: slow but exact to double precision.
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

int runs_needed(double effect, double cv, double alpha, double power, double threshold) {
  if (!(effect > threshold)) return -1;
  const double za = normal_quantile(1 - alpha / 2), zb = normal_quantile(power);
  const double pi = 3.14159265358979323846;
  const double n1 = (pi / 3) * 2 * (za + zb) * (za + zb) * cv * cv / (effect * effect);
  const double d = effect - threshold;
  const double n2 = (pi / 2) * 2 * zb * zb * cv * cv / (d * d);
  return std::max(2, static_cast<int>(std::ceil(std::max(n1, n2))));
}

int runs_to_rule_out(double effect, double cv, double alpha, double power, double threshold) {
  effect = std::fabs(effect);
  if (!(effect < threshold)) return -1;
  const double z = normal_quantile(1 - alpha / 2) + normal_quantile(power);
  const double pi = 3.14159265358979323846;
  const double d = threshold - effect;
  return std::max(2, static_cast<int>(std::ceil((pi / 2) * 2 * z * z * cv * cv / (d * d))));
}

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
  if (o.phases.empty()) throw std::invalid_argument("--phase must name a phase");
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
  const std::string bench = o.bench.empty() ? own_executable().value_or("cuzk-bench") : o.bench;

  Result r;
  r.unit = o.reps > 1 ? "processes" : "samples";
  r.out_dir = o.out_dir.empty() ? "results/local/calibrate-" + utc_stamp() : o.out_dir;
  fs::create_directories(r.out_dir + "/pool");
  fs::create_directories(r.out_dir + "/trials");
  for (const auto& ph : o.phases) {
    PhaseResult p;
    p.phase = ph;
    r.phases.push_back(p);
  }

  // ---- 1. the pool, interleaved ----
  std::mt19937_64 rng(o.seed);
  std::vector<PoolRun> pool_a;
  std::vector<std::vector<PoolRun>> pool_b(o.slowdowns.size());
  std::vector<std::string> specs(o.slowdowns.size());
  const uint64_t t0 = now_ns();
  const int rounds = std::max(o.pool_a, o.pool_b);
  const int total = o.pool_a + o.pool_b * static_cast<int>(o.slowdowns.size());
  int done = 0;
  log(fmt::format("calibrate: pool of {} {} runs ({} plain, {} per slowdown level) of {} measured repetition(s), "
                  "interleaved",
                  total, o.workload, o.pool_a, o.pool_b, o.reps));
  for (int round = 0; round < rounds; ++round) {
    std::vector<int> order;  // -1 = A, k = level k
    if (round < o.pool_b)
      for (size_t k = 0; k < o.slowdowns.size(); ++k) order.push_back(static_cast<int>(k));
    std::shuffle(order.begin(), order.end(), rng);
    // The very first run is plain: it decides each phase's metric, and so the injections.
    if (round < o.pool_a) order.insert(round == 0 ? order.begin() : order.begin() + (rng() % (order.size() + 1)), -1);
    for (int k : order) {
      const double pct = k < 0 ? 0 : o.slowdowns[k];
      const std::string stem =
          k < 0 ? fmt::format("a-{:03}", round) : fmt::format("s{:g}-{:03}", pct, round);
      const std::string out = r.out_dir + "/pool/" + stem + ".jsonl";
      const std::string lg = r.out_dir + "/pool/" + stem + ".log";
      fs::remove(out);
      PoolRun pr = one_run(o, bench, out, k < 0 ? "" : specs[k], lg);
      fs::remove(lg);
      if (done == 0) {
        // Fail on the first run, not after the whole pool, when a phase is not recorded.
        for (auto& ph : r.phases) {
          if (!pr.samples.front()["phases"].contains(ph.phase))
            throw std::invalid_argument(fmt::format("--phase {}: not in the {} workload's records ({})", ph.phase,
                                                    o.workload, out));
          ph.metric = metric_of(pr, ph.phase, o.compare);
        }
        check_not_nested(r.phases);
        for (size_t j = 0; j < o.slowdowns.size(); ++j) specs[j] = level_spec(r.phases, o.slowdowns[j]);
      }
      (k < 0 ? pool_a : pool_b[k]).push_back(std::move(pr));
      ++done;
    }
    if ((round + 1) % 5 == 0 || round + 1 == rounds)
      log(fmt::format("calibrate: {}/{} runs, {:.0f} s", done, total, (now_ns() - t0) / 1e9));
  }
  r.pool_seconds = (now_ns() - t0) / 1e9;
  // Which pool file ran under which injection (the results files themselves do not say).
  {
    json index = {{"workload", o.workload}, {"phases", o.phases}, {"env", inject::kEnvVar}, {"runs", json::array()}};
    for (int i = 0; i < o.pool_a; ++i)
      index["runs"].push_back({{"file", fmt::format("a-{:03}.jsonl", i)}, {"injection", nullptr}});
    for (size_t k = 0; k < o.slowdowns.size(); ++k)
      for (int i = 0; i < o.pool_b; ++i)
        index["runs"].push_back({{"file", fmt::format("s{:g}-{:03}.jsonl", o.slowdowns[k], i)}, {"injection", specs[k]}});
    write_output_file(r.out_dir + "/pool/index.json", index.dump(1) + "\n");
  }
  r.machine = pool_a.front().header.value("machine", json::object());

  // Spread of each phase's observations over the A pool.
  for (auto& ph : r.phases) {
    std::vector<double> v = observations(pool_a, ph.phase, ph.metric, o.reps);
    if (v.empty())
      throw std::runtime_error(fmt::format("calibrate: phase \"{}\" has no {} in the {} workload's records", ph.phase,
                                           ph.metric, o.workload));
    ph.median_ns = median(v);
    ph.mad_ns = mad(v);
    ph.cv = ph.median_ns > 0 ? 1.4826 * ph.mad_ns / ph.median_ns : 0;
  }

  // ---- 2. trials ----
  const std::string ta = r.out_dir + "/trials/a.jsonl", tb = r.out_dir + "/trials/b.jsonl";
  auto pick = [&](const std::vector<PoolRun>& pool, size_t count, std::vector<size_t>& idx) {
    idx.resize(pool.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(count);
  };
  auto tally = [](LevelResult& L, const std::string& verdict) {
    L.trials++;
    if (verdict == "slower") L.slower++;
    else if (verdict == "faster") L.faster++;
    else if (verdict == "unchanged") L.unchanged++;
    else if (verdict == "too noisy") L.too_noisy++;
    else L.missing++;
  };
  // Runs the trials of one level (pool_b == nullptr: A/A) and appends a LevelResult per phase.
  auto level = [&](double pct, const std::vector<PoolRun>* pool_b_level) {
    std::vector<LevelResult> L(r.phases.size());
    std::vector<std::vector<double>> ratios(r.phases.size());
    for (int t = 0; t < o.trials; ++t) {
      std::vector<const PoolRun*> a, b;
      std::vector<size_t> ia, ib;
      if (!pool_b_level) {
        pick(pool_a, 2 * o.runs, ia);
        for (int i = 0; i < o.runs; ++i) a.push_back(&pool_a[ia[i]]);
        for (int i = o.runs; i < 2 * o.runs; ++i) b.push_back(&pool_a[ia[i]]);
      } else {
        pick(pool_a, o.runs, ia);
        pick(*pool_b_level, o.runs, ib);
        for (size_t i : ia) a.push_back(&pool_a[i]);
        for (size_t i : ib) b.push_back(&(*pool_b_level)[i]);
      }
      write_side(ta, a);
      write_side(tb, b);
      TrialOutcome out = compare_sides(o, ta, tb);
      for (size_t p = 0; p < r.phases.size(); ++p) {
        tally(L[p], out.verdict[p]);
        ratios[p].push_back(out.ratio[p]);
      }
      if (!pool_b_level && out.any_alarm) r.aa_any_phase_alarms++;
    }
    for (size_t p = 0; p < r.phases.size(); ++p) {
      L[p].slowdown_pct = pct;
      L[p].median_ratio = median_of(ratios[p]);
      r.phases[p].levels.push_back(L[p]);
      log(pct == 0 ? fmt::format("calibrate: A/A: {} of {} trials flagged {}", L[p].slower + L[p].faster, L[p].trials,
                                 r.phases[p].phase)
                   : fmt::format("calibrate: +{:g}%: {} of {} trials detected {}", pct, L[p].slower, L[p].trials,
                                 r.phases[p].phase));
    }
  };
  level(0, nullptr);
  for (size_t k = 0; k < o.slowdowns.size(); ++k) level(o.slowdowns[k], &pool_b[k]);
  fs::remove_all(r.out_dir + "/trials");

  // ---- 3. summary ----
  for (auto& ph : r.phases) {
    for (size_t k = ph.levels.size(); k-- > 1;) {
      if (ph.levels[k].rate() >= o.power)
        ph.min_detectable_pct = ph.levels[k].slowdown_pct;
      else
        break;
    }
    const double thr = o.compare.threshold_for(ph.phase);
    ph.runs_needed_target = runs_needed(o.target_effect / 100, ph.cv, o.compare.alpha, o.power, thr);
    if (o.target_effect / 100 <= thr)
      ph.note = fmt::format(
          "the target effect {:g}% is not above the comparison's noise threshold {:g}% for {}: no number of runs "
          "makes compare call it \"slower\" (lower the threshold, --noise-threshold)",
          o.target_effect, thr * 100, ph.phase);
  }
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
std::string pct(double x) { return fmt::format("{:.1f}%", 100 * x); }
std::string share(int k, int n) { return pct(n ? double(k) / n : 0); }
std::string mdetect(const Options& o, const PhaseResult& p) {
  return p.min_detectable_pct < 0
             ? fmt::format("none up to {:g}%", o.slowdowns.empty() ? 0.0 : o.slowdowns.back())
             : fmt::format("{:g}%", p.min_detectable_pct);
}
std::string needed(const PhaseResult& p) {
  return p.runs_needed_target < 0 ? std::string("never (target not above the noise threshold)")
                                  : fmt::format("{}", p.runs_needed_target);
}
std::string metric_name(const std::string& m) { return m == "gpu_ns" ? "GPU time" : "wall time"; }
std::string unit_text(const Result& r) {
  return r.unit == "processes"
             ? fmt::format("{} processes per side, {} repetitions each (each process's median is one observation)",
                           r.options.runs, r.options.reps)
             : fmt::format("{} runs per side, one measured repetition each", r.options.runs);
}
}  // namespace

std::string format_table(const Result& r) {
  const auto& o = r.options;
  std::string s = fmt::format("calibration: {} workload{}, {}, {} trials per row\n", o.workload,
                              o.stable ? " (--stable)" : "", unit_text(r), o.trials);
  s += fmt::format("\n{:<28} {:<9} {:>10} {:>9} {:>11} {:>22} {:>10}\n", "phase", "judged by", "median", "cv",
                   "A/A alarms", "min. detected (power)", "runs/side");
  for (const auto& p : r.phases) {
    const auto& aa = p.levels.front();
    s += fmt::format("{:<28} {:<9} {:>10} {:>8.2f}% {:>11} {:>22} {:>10}\n", p.phase,
                     p.metric == "gpu_ns" ? "gpu" : "wall", fmt::format("{:.3f} ms", p.median_ns / 1e6), 100 * p.cv,
                     share(aa.slower + aa.faster, aa.trials), mdetect(o, p),
                     p.runs_needed_target < 0 ? std::string("never") : fmt::format("{}", p.runs_needed_target));
  }
  s += fmt::format("\nmin. detected: smallest injected slowdown called \"slower\" in >= {:.0f}% of trials at {} {} per side; "
                   "runs/side: the normal-theory estimate for a {:g}% slowdown (alpha {:g})\n",
                   100 * o.power, o.runs, r.unit, o.target_effect, o.compare.alpha);
  for (const auto& p : r.phases) {
    s += fmt::format("\n{} ({}; cv of its observations {:.2f}%, threshold {:g}%)\n", p.phase, metric_name(p.metric),
                     100 * p.cv, 100 * o.compare.threshold_for(p.phase));
    s += fmt::format("{:<12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>11}\n", "slowdown", "trials", "slower", "faster",
                     "unchanged", "noisy", "med. ratio");
    for (const auto& L : p.levels)
      s += fmt::format("{:<12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>11.4f}\n", level_name(L), L.trials,
                       share(L.slower, L.trials), share(L.faster, L.trials), share(L.unchanged, L.trials),
                       share(L.too_noisy, L.trials), L.median_ratio);
    if (!p.note.empty()) s += "note: " + p.note + "\n";
  }
  if (!r.phases.empty())
    s += fmt::format("\nfalse alarms on any phase (A/A trials where some phase's verdict was slower or faster): {}/{}\n",
                     r.aa_any_phase_alarms, r.phases.front().levels.front().trials);
  return s;
}

std::string format_markdown(const Result& r) {
  const auto& o = r.options;
  std::string s = "# Calibration\n\n";
  s += fmt::format("- workload: `{}`{}; {}\n", o.workload, o.stable ? " with `--stable`" : "", unit_text(r));
  s += fmt::format("- {} trials per row, seed {}; pool: {} plain runs + {} runs per slowdown level, interleaved; {:.0f} s\n",
                   o.trials, o.seed, o.pool_a, o.pool_b, r.pool_seconds);
  s += fmt::format("- comparison: alpha {:g}, noise threshold {:g}%, {} bootstrap resamples, metric {}\n", o.compare.alpha,
                   100 * o.compare.noise_threshold, o.compare.bootstrap_resamples, o.compare.analysis.metric);
  s += fmt::format("- machine: {} ({} logical CPUs)\n\n", r.machine.value("cpu_model", std::string("?")),
                   r.machine.value("logical_cpus", 0));
  s += fmt::format("| phase | judged by | median | robust cv | A/A false alarms | smallest slowdown detected ({:.0f}% power) "
                   "| runs per side for {:g}% |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
                   100 * o.power, o.target_effect);
  for (const auto& p : r.phases) {
    const auto& aa = p.levels.front();
    s += fmt::format("| `{}` | {} | {:.3f} ms | {:.2f}% | {}/{} = {} | **{}** | {} |\n", p.phase, metric_name(p.metric),
                     p.median_ns / 1e6, 100 * p.cv, aa.slower + aa.faster, aa.trials,
                     share(aa.slower + aa.faster, aa.trials), mdetect(o, p), needed(p));
  }
  for (const auto& p : r.phases) {
    s += fmt::format("\n## `{}` ({})\n\n", p.phase, metric_name(p.metric));
    s += "| injected slowdown | trials | detected (slower) | faster | unchanged | too noisy | median ratio B/A |\n";
    s += "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (const auto& L : p.levels)
      s += fmt::format("| {} | {} | {} | {} | {} | {} | {:.4f} |\n", level_name(L), L.trials, share(L.slower, L.trials),
                       share(L.faster, L.trials), share(L.unchanged, L.trials), share(L.too_noisy, L.trials),
                       L.median_ratio);
    if (!p.note.empty()) s += "\n- note: " + p.note + "\n";
  }
  if (!r.phases.empty())
    s += fmt::format("\nA/A trials in which any phase's verdict was slower or faster: {}/{}\n", r.aa_any_phase_alarms,
                     r.phases.front().levels.front().trials);
  return s;
}

json to_json(const Result& r) {
  const auto& o = r.options;
  json j;
  j["schema"] = "cuzk.calibration";
  j["version"] = 2;
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
                  {"metric", o.compare.analysis.metric},
                  {"bootstrap_resamples", o.compare.bootstrap_resamples}};
  j["unit"] = r.unit;
  j["injection"] = {{"env", inject::kEnvVar}, {"spec_per_level", json::array()}};
  for (double s : o.slowdowns) j["injection"]["spec_per_level"].push_back(level_spec(r.phases, s));
  j["phases"] = json::array();
  for (const auto& p : r.phases) {
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
    j["phases"].push_back({{"phase", p.phase},
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
  j["aa_any_phase_alarms"] = r.aa_any_phase_alarms;
  j["pool_seconds"] = r.pool_seconds;
  j["machine"] = r.machine;
  return j;
}

}  // namespace cuzk::calibrate
