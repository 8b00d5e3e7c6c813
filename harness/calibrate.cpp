#include "harness/calibrate.hpp"
#include "harness/process.hpp"

#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "harness/clock.hpp"
#include "harness/inject.hpp"
#include "harness/results.hpp"
#include "harness/stats.hpp"

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

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("cuzk-bench") : p.string();
}


struct PoolRun {
  json header;
  std::vector<json> samples;  // measured (non-warm-up) sample lines
};

// One workload process; returns its parsed results.
PoolRun one_run(const Options& o, const std::string& bench, const std::string& out, double pct, const std::string& log) {
  std::string cmd;
  if (pct > 0)
    cmd = "env " + std::string(inject::kEnvVar) + "=" + shq(fmt::format("{}={:g}%", o.phase, pct)) + " ";
  else
    cmd = "env -u " + std::string(inject::kEnvVar) + " ";
  cmd += shq(bench) + " " + o.workload + " --reps 1 --out " + shq(out);
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
  std::ofstream f(path, std::ios::trunc);
  if (!f) throw std::runtime_error("calibrate: cannot write " + path);
  f << runs.front()->header.dump() << '\n';
  int rep = 0;
  for (const PoolRun* r : runs)
    for (json s : r->samples) {
      s["repetition"] = rep++;
      f << s.dump() << '\n';
    }
}

struct TrialOutcome {
  std::string verdict;  // of the calibrated phase ("missing" when absent)
  double ratio = 1;
  bool any_alarm = false;
};

TrialOutcome compare_sides(const Options& o, const std::string& a, const std::string& b) {
  Comparison c = compare_files(a, b, o.compare);
  TrialOutcome t;
  t.verdict = "missing";
  for (const auto& row : c.rows) {
    if (row.metric != "wall_ns") continue;
    if (row.verdict == "slower" || row.verdict == "faster") t.any_alarm = true;
    if (row.phase == o.phase) {
      t.verdict = row.verdict;
      t.ratio = row.ratio;
    }
  }
  return t;
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

Result run(const Options& in) {
  Options o = in;
  auto log = [&](const std::string& s) {
    if (o.log) o.log(s);
  };
  if (o.workload != "selfmeasure" && o.workload != "prove")
    throw std::invalid_argument(fmt::format("--workload must be selfmeasure or prove (got \"{}\")", o.workload));
  if (o.trials < 1) throw std::invalid_argument(fmt::format("--trials must be at least 1 (got {})", o.trials));
  if (o.runs < 2) throw std::invalid_argument(fmt::format("--runs must be at least 2 (got {})", o.runs));
  if (o.phase.empty()) throw std::invalid_argument("--phase must name a phase");
  for (double s : o.slowdowns)
    if (!(s > 0) || s > 1000) throw std::invalid_argument(fmt::format("--slowdowns: {} is not in (0, 1000]", s));
  if (!(o.power > 0 && o.power < 1)) throw std::invalid_argument("--power must be in (0, 1)");
  if (!(o.target_effect > 0)) throw std::invalid_argument("--target-effect must be positive");
  std::sort(o.slowdowns.begin(), o.slowdowns.end());
  o.slowdowns.erase(std::unique(o.slowdowns.begin(), o.slowdowns.end()), o.slowdowns.end());
  if (o.pool_a <= 0) o.pool_a = 4 * o.runs;
  if (o.pool_b <= 0) o.pool_b = 2 * o.runs;
  if (o.pool_a < 2 * o.runs)
    throw std::invalid_argument(fmt::format("--pool-a must be at least 2 x --runs = {} (got {})", 2 * o.runs, o.pool_a));
  if (o.pool_b < o.runs)
    throw std::invalid_argument(fmt::format("--pool-b must be at least --runs = {} (got {})", o.runs, o.pool_b));
  const std::string bench = o.bench.empty() ? self_exe() : o.bench;

  Result r;
  r.out_dir = o.out_dir.empty() ? "results/local/calibrate-" + utc_stamp() : o.out_dir;
  fs::create_directories(r.out_dir + "/pool");
  fs::create_directories(r.out_dir + "/trials");

  // ---- 1. the pool, interleaved ----
  std::mt19937_64 rng(o.seed);
  std::vector<PoolRun> pool_a;
  std::vector<std::vector<PoolRun>> pool_b(o.slowdowns.size());
  const uint64_t t0 = now_ns();
  const int rounds = std::max(o.pool_a, o.pool_b);
  const int total = o.pool_a + o.pool_b * static_cast<int>(o.slowdowns.size());
  int done = 0;
  log(fmt::format("calibrate: pool of {} {} runs ({} plain, {} per slowdown level), interleaved", total, o.workload,
                  o.pool_a, o.pool_b));
  for (int round = 0; round < rounds; ++round) {
    std::vector<int> order;  // -1 = A, k = level k
    if (round < o.pool_a) order.push_back(-1);
    if (round < o.pool_b)
      for (size_t k = 0; k < o.slowdowns.size(); ++k) order.push_back(static_cast<int>(k));
    std::shuffle(order.begin(), order.end(), rng);
    for (int k : order) {
      const double pct = k < 0 ? 0 : o.slowdowns[k];
      const std::string stem =
          k < 0 ? fmt::format("a-{:03}", round) : fmt::format("s{:g}-{:03}", pct, round);
      const std::string out = r.out_dir + "/pool/" + stem + ".jsonl";
      const std::string lg = r.out_dir + "/pool/" + stem + ".log";
      fs::remove(out);
      PoolRun pr = one_run(o, bench, out, pct, lg);
      fs::remove(lg);
      // Fail on the first run, not after the whole pool, when the phase is not recorded.
      if (!pr.samples.front()["phases"].contains(o.phase))
        throw std::invalid_argument(fmt::format("--phase {}: not in the {} workload's records ({})", o.phase,
                                                o.workload, out));
      (k < 0 ? pool_a : pool_b[k]).push_back(std::move(pr));
      ++done;
    }
    if ((round + 1) % 5 == 0 || round + 1 == rounds)
      log(fmt::format("calibrate: {}/{} runs, {:.0f} s", done, total, (now_ns() - t0) / 1e9));
  }
  r.pool_seconds = (now_ns() - t0) / 1e9;
  // Which pool file ran under which injection (the results files themselves do not say).
  {
    json index = {{"workload", o.workload}, {"phase", o.phase}, {"env", inject::kEnvVar}, {"runs", json::array()}};
    for (int i = 0; i < o.pool_a; ++i)
      index["runs"].push_back({{"file", fmt::format("a-{:03}.jsonl", i)}, {"injection", nullptr}});
    for (size_t k = 0; k < o.slowdowns.size(); ++k)
      for (int i = 0; i < o.pool_b; ++i)
        index["runs"].push_back({{"file", fmt::format("s{:g}-{:03}.jsonl", o.slowdowns[k], i)},
                                 {"injection", fmt::format("{}={:g}%", o.phase, o.slowdowns[k])}});
    std::ofstream(r.out_dir + "/pool/index.json") << index.dump(1) << '\n';
  }
  r.machine = pool_a.front().header.value("machine", json::object());

  // Spread of the phase over the A pool.
  {
    std::vector<double> v;
    for (const auto& p : pool_a)
      for (const auto& s : p.samples)
        if (s["phases"].contains(o.phase)) v.push_back(s["phases"][o.phase]["wall_ns"].get<double>());
    if (v.empty())
      throw std::runtime_error(fmt::format("calibrate: phase \"{}\" is not in the {} workload's records", o.phase,
                                           o.workload));
    r.median_ns = median(v);
    r.mad_ns = mad(v);
    r.cv = r.median_ns > 0 ? 1.4826 * r.mad_ns / r.median_ns : 0;
  }

  // ---- 2. trials ----
  const std::string ta = r.out_dir + "/trials/a.jsonl", tb = r.out_dir + "/trials/b.jsonl";
  auto pick = [&](const std::vector<PoolRun>& pool, size_t count, std::vector<size_t>& idx) {
    idx.resize(pool.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(count);
  };
  auto tally = [](LevelResult& L, const TrialOutcome& t) {
    L.trials++;
    if (t.verdict == "slower") L.slower++;
    else if (t.verdict == "faster") L.faster++;
    else if (t.verdict == "unchanged") L.unchanged++;
    else if (t.verdict == "too noisy") L.too_noisy++;
    else L.missing++;
  };
  {
    LevelResult L;
    std::vector<double> ratios;
    for (int t = 0; t < o.trials; ++t) {
      std::vector<size_t> idx;
      pick(pool_a, 2 * o.runs, idx);
      std::vector<const PoolRun*> a, b;
      for (int i = 0; i < o.runs; ++i) a.push_back(&pool_a[idx[i]]);
      for (int i = o.runs; i < 2 * o.runs; ++i) b.push_back(&pool_a[idx[i]]);
      write_side(ta, a);
      write_side(tb, b);
      TrialOutcome out = compare_sides(o, ta, tb);
      tally(L, out);
      ratios.push_back(out.ratio);
      if (out.any_alarm) r.aa_any_phase_alarms++;
    }
    L.median_ratio = median_of(ratios);
    r.levels.push_back(L);
    log(fmt::format("calibrate: A/A: {} of {} trials flagged {}", L.slower + L.faster, L.trials, o.phase));
  }
  for (size_t k = 0; k < o.slowdowns.size(); ++k) {
    LevelResult L;
    L.slowdown_pct = o.slowdowns[k];
    std::vector<double> ratios;
    for (int t = 0; t < o.trials; ++t) {
      std::vector<size_t> ia, ib;
      pick(pool_a, o.runs, ia);
      pick(pool_b[k], o.runs, ib);
      std::vector<const PoolRun*> a, b;
      for (size_t i : ia) a.push_back(&pool_a[i]);
      for (size_t i : ib) b.push_back(&pool_b[k][i]);
      write_side(ta, a);
      write_side(tb, b);
      TrialOutcome out = compare_sides(o, ta, tb);
      tally(L, out);
      ratios.push_back(out.ratio);
    }
    L.median_ratio = median_of(ratios);
    r.levels.push_back(L);
    log(fmt::format("calibrate: +{:g}%: {} of {} trials detected", L.slowdown_pct, L.slower, L.trials));
  }
  fs::remove_all(r.out_dir + "/trials");

  // ---- 3. summary ----
  for (size_t k = r.levels.size(); k-- > 1;) {
    if (r.levels[k].rate() >= o.power)
      r.min_detectable_pct = r.levels[k].slowdown_pct;
    else
      break;
  }
  const double thr = o.compare.threshold_for(o.phase);
  r.runs_needed_target = runs_needed(o.target_effect / 100, r.cv, o.compare.alpha, o.power, thr);
  if (o.target_effect / 100 <= thr)
    r.note = fmt::format(
        "the target effect {:g}% is not above the comparison's noise threshold {:g}% for {}: no number of runs "
        "makes compare call it \"slower\" (lower the threshold, --noise-threshold)",
        o.target_effect, thr * 100, o.phase);
  r.options = o;

  std::ofstream(r.out_dir + "/calibration.json") << to_json(r).dump(2) << '\n';
  std::ofstream(r.out_dir + "/calibration.md") << format_markdown(r);
  return r;
}

namespace {
std::string level_name(const LevelResult& L) {
  return L.slowdown_pct == 0 ? std::string("0 (A/A)") : fmt::format("+{:g}%", L.slowdown_pct);
}
std::string pct(double x) { return fmt::format("{:.1f}%", 100 * x); }
std::string mdetect(const Result& r) {
  return r.min_detectable_pct < 0
             ? fmt::format("none of the tested slowdowns (up to {:g}%) reaches {:.0f}% power",
                           r.options.slowdowns.empty() ? 0.0 : r.options.slowdowns.back(), 100 * r.options.power)
             : fmt::format("{:g}%", r.min_detectable_pct);
}
std::string needed(const Result& r) {
  return r.runs_needed_target < 0 ? std::string("never (target not above the noise threshold)")
                                  : fmt::format("{}", r.runs_needed_target);
}
}  // namespace

std::string format_table(const Result& r) {
  const auto& o = r.options;
  std::string s = fmt::format("calibration of phase {} ({} workload, {} runs per side, {} trials per row)\n", o.phase,
                              o.workload, o.runs, o.trials);
  s += fmt::format("{:<12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>11}\n", "slowdown", "trials", "slower", "faster",
                   "unchanged", "noisy", "med. ratio");
  for (const auto& L : r.levels)
    s += fmt::format("{:<12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>11.4f}\n", level_name(L), L.trials, pct(L.rate()),
                     pct(L.trials ? double(L.faster) / L.trials : 0), pct(L.trials ? double(L.unchanged) / L.trials : 0),
                     pct(L.trials ? double(L.too_noisy) / L.trials : 0), L.median_ratio);
  if (!r.levels.empty()) {
    const auto& aa = r.levels[0];
    s += fmt::format("false alarms (A/A, {}): {}/{} = {}; any phase flagged: {}/{}\n", o.phase, aa.slower + aa.faster,
                     aa.trials, pct(aa.false_alarm_rate()), r.aa_any_phase_alarms, aa.trials);
  }
  s += fmt::format("smallest slowdown detected with >= {:.0f}% power at {} runs per side: {}\n", 100 * o.power, o.runs,
                   mdetect(r));
  s += fmt::format("noise of {}: median {:.3f} ms, robust cv {:.2f}% (1.4826 MAD / median over {} runs)\n", o.phase,
                   r.median_ns / 1e6, 100 * r.cv, o.pool_a);
  s += fmt::format("runs per side needed for a {:g}% slowdown (alpha {:g}, power {:.0f}%, threshold {:g}%): {}\n",
                   o.target_effect, o.compare.alpha, 100 * o.power, 100 * o.compare.threshold_for(o.phase), needed(r));
  if (!r.note.empty()) s += "note: " + r.note + "\n";
  return s;
}

std::string format_markdown(const Result& r) {
  const auto& o = r.options;
  std::string s = "# Calibration\n\n";
  s += fmt::format("- workload: `{}` (one measured repetition per process)\n", o.workload);
  s += fmt::format("- phase: `{}`, {} runs per side, {} trials per row, seed {}\n", o.phase, o.runs, o.trials, o.seed);
  s += fmt::format("- pool: {} plain runs + {} runs per slowdown level, interleaved; {:.0f} s\n", o.pool_a, o.pool_b,
                   r.pool_seconds);
  s += fmt::format("- comparison: alpha {:g}, noise threshold {:g}%, {} bootstrap resamples\n", o.compare.alpha,
                   100 * o.compare.threshold_for(o.phase), o.compare.bootstrap_resamples);
  s += fmt::format("- machine: {} ({} logical CPUs)\n\n", r.machine.value("cpu_model", std::string("?")),
                   r.machine.value("logical_cpus", 0));
  s += "| injected slowdown | trials | detected (slower) | faster | unchanged | too noisy | median ratio B/A |\n";
  s += "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& L : r.levels)
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {:.4f} |\n", level_name(L), L.trials, pct(L.rate()),
                     pct(L.trials ? double(L.faster) / L.trials : 0), pct(L.trials ? double(L.unchanged) / L.trials : 0),
                     pct(L.trials ? double(L.too_noisy) / L.trials : 0), L.median_ratio);
  if (!r.levels.empty()) {
    const auto& aa = r.levels[0];
    s += fmt::format("\n- false-alarm rate (A/A, `{}` called slower or faster): **{}/{} = {}**; trials with any phase "
                     "flagged: {}/{}\n",
                     o.phase, aa.slower + aa.faster, aa.trials, pct(aa.false_alarm_rate()), r.aa_any_phase_alarms,
                     aa.trials);
  }
  s += fmt::format("- smallest slowdown detected with >= {:.0f}% power at {} runs per side: **{}**\n", 100 * o.power,
                   o.runs, mdetect(r));
  s += fmt::format("- noise of `{}`: median {:.3f} ms, robust cv {:.2f}%\n", o.phase, r.median_ns / 1e6, 100 * r.cv);
  s += fmt::format("- runs per side for a {:g}% slowdown (normal approximation, docs/calibration.md): {}\n",
                   o.target_effect, needed(r));
  if (!r.note.empty()) s += "- note: " + r.note + "\n";
  return s;
}

json to_json(const Result& r) {
  const auto& o = r.options;
  json j;
  j["schema"] = "cuzk.calibration";
  j["version"] = 1;
  j["options"] = {{"workload", o.workload},
                  {"workload_args", o.workload_args},
                  {"trials", o.trials},
                  {"runs", o.runs},
                  {"phase", o.phase},
                  {"slowdowns_pct", o.slowdowns},
                  {"target_effect_pct", o.target_effect},
                  {"power", o.power},
                  {"pool_a", o.pool_a},
                  {"pool_b", o.pool_b},
                  {"seed", o.seed},
                  {"alpha", o.compare.alpha},
                  {"noise_threshold", o.compare.threshold_for(o.phase)},
                  {"bootstrap_resamples", o.compare.bootstrap_resamples}};
  j["injection"] = {{"env", inject::kEnvVar}, {"spec_per_level", json::array()}};
  for (double s : o.slowdowns) j["injection"]["spec_per_level"].push_back(fmt::format("{}={:g}%", o.phase, s));
  j["levels"] = json::array();
  for (const auto& L : r.levels)
    j["levels"].push_back({{"slowdown_pct", L.slowdown_pct},
                           {"trials", L.trials},
                           {"slower", L.slower},
                           {"faster", L.faster},
                           {"unchanged", L.unchanged},
                           {"too_noisy", L.too_noisy},
                           {"missing", L.missing},
                           {"detection_rate", L.rate()},
                           {"median_ratio", L.median_ratio}});
  if (!r.levels.empty()) j["false_alarm_rate"] = r.levels[0].false_alarm_rate();
  j["aa_any_phase_alarms"] = r.aa_any_phase_alarms;
  j["min_detectable_pct"] = r.min_detectable_pct < 0 ? json(nullptr) : json(r.min_detectable_pct);
  j["phase_median_ns"] = r.median_ns;
  j["phase_mad_ns"] = r.mad_ns;
  j["phase_cv"] = r.cv;
  j["runs_needed_for_target"] = r.runs_needed_target < 0 ? json(nullptr) : json(r.runs_needed_target);
  j["pool_seconds"] = r.pool_seconds;
  j["machine"] = r.machine;
  j["note"] = r.note;
  return j;
}

}  // namespace cuzk::calibrate
