// `cuzk-bench bisect --good REV --bad REV --suite S --case C --phase P [--threshold PCT] [--rounds N]
//                     [--max-remeasure N] [--repo DIR] [--preset NAME] [--build-cmd CMD [--bin-path REL]]
//                     [--out-dir DIR] [--backend B] [--quick] [--allow-injected] [--keep-worktrees]`
//
// Finds the first commit at which phase P of one case became slower by more than the threshold.
// Every revision it probes is checked out in its own git worktree, built (the preset, or
// --build-cmd), provenance-checked against that worktree, and measured interleaved against the
// good revision as `ab` measures (separate processes, one warm-up round, merge, compare). The
// classification and the search are harness/analysis/bisect.hpp; the procedure, the rule and the
// log are docs/bisect.md. SIGINT/SIGTERM: docs/reliability.md.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "harness/analysis/bisect.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/cli/analysis_options.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/suite_runs.hpp"
#include "harness/cli/variant_builds.hpp"
#include "harness/cli/variant_provenance.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/output_lock.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/provenance.hpp"
#include "harness/suite/suite.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;
using bisect::Verdict;

struct BisectOptions {
  std::string good, bad, suite, case_name, phase;
  double threshold = 5;  // percent
  int rounds = 5;
  int max_remeasure = 2;
  std::string repo, preset = "baseline", build_cmd, bin_path, out_dir;
  std::string backend = "cpu";
  bool quick = false, allow_injected = false, keep_worktrees = false;
  std::vector<std::string> cmake_args;
  AnalysisChoices analysis;  // --design and the rest (each probe: paired by round unless asked otherwise)  // --cmake-arg: extra configure -D of every preset build
};

struct Revision {
  std::string sha, subject;
  std::string short_sha() const { return sha.substr(0, 12); }
};

// A revision checked out and built: its binary, or why it did not build.
struct Built {
  std::string worktree, tree;  // tree: the source tree inside the worktree (--repo may be a subfolder)
  std::optional<std::string> bin;
  std::string why;
};

// One measurement of a revision against the good one.
struct Measurement {
  int rounds = 0;
  double ratio = 1, ci_low = 1, ci_high = 1;
  Verdict verdict = Verdict::kInconclusive;
  std::string design;  // the comparison's design and why ("paired by round (5 rounds on both sides; ...)")
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    v.push_back(text.substr(p, e - p));
    p = e + 1;
  }
  return v;
}

// `git -C <dir> <args>`, quiet; the output trimmed. A git that a signal stopped is no answer:
// interrupt::Interrupted.
CommandOutput git(const std::string& dir, const std::string& args) {
  ChildOptions co;
  co.capture = co.quiet = true;
  ChildResult c = run_child("git -C " + shell_quote(dir) + " " + args, co);
  if (c.interrupted) throw interrupt::Interrupted(c.interrupted);
  return {c.code, trim(c.out)};
}

// The same for cleaning up, also after a signal: it runs to its end (ChildOptions::cleanup).
int git_cleanup(const std::string& dir, const std::string& args) {
  ChildOptions co;
  co.capture = co.quiet = co.cleanup = true;
  return run_child("git -C " + shell_quote(dir) + " " + args, co).code;
}

std::string ratio_text(const std::string& phase, const Measurement& m) {
  return fmt::format("{} x{:.2f} [{:.2f}, {:.2f}]", phase, m.ratio, m.ci_low, m.ci_high);
}

// Git worktrees made by this run, removed (with `git worktree prune`) when it ends, however it
// ends, unless --keep-worktrees: also from the interrupt watchdog's thread (remove_all), so every
// change of the list is under one lock.
class Worktrees {
 public:
  Worktrees(std::string repo, std::string dir, bool keep) : repo_(std::move(repo)), dir_(std::move(dir)), keep_(keep) {}
  Worktrees(const Worktrees&) = delete;
  Worktrees& operator=(const Worktrees&) = delete;
  ~Worktrees() { remove_all(); }
  // Checks `sha` out (detached) in <dir>/<sha12>; returns the folder. The lock is held while git
  // runs, so that a removal from the watchdog waits for a checkout to end (or die) first.
  std::string add(const Revision& r) {
    std::lock_guard lk(mu_);
    const std::string path = dir_ + "/" + r.short_sha();
    live_.push_back(path);  // before git: a checkout stopped half-way is removed too
    auto out = git(repo_, "worktree add --detach " + shell_quote(path) + " " + r.sha);
    if (out.code != 0) {
      drop(path);
      throw Error(fmt::format("git worktree add {} {} failed (exit {}) in {}", path, r.short_sha(), out.code, repo_));
    }
    return path;
  }
  void remove(const std::string& path) {
    std::lock_guard lk(mu_);
    drop(path);
  }
  // Every worktree of this run, then `git worktree prune` (nothing left registered in the repository).
  void remove_all() {
    std::lock_guard lk(mu_);
    if (keep_) return;
    while (!live_.empty()) drop(live_.back());
    git_cleanup(repo_, "worktree prune");
    std::error_code ec;
    fs::remove(dir_, ec);  // only when empty
  }

 private:
  // Removes one, also after a signal: forced twice, as a checkout stopped half-way is still locked
  // by git; a folder git did not take is deleted.
  void drop(const std::string& path) {
    if (!keep_) {
      git_cleanup(repo_, "worktree remove --force --force " + shell_quote(path));
      std::error_code ec;
      if (fs::exists(path, ec)) fs::remove_all(path, ec);
    }
    live_.erase(std::remove(live_.begin(), live_.end(), path), live_.end());
  }

  std::string repo_, dir_;
  bool keep_;
  std::mutex mu_;
  std::vector<std::string> live_;
};

class Bisector {
 public:
  Bisector(const BisectOptions& o, std::string repo, std::string prefix, std::string suite_path, std::string suite_name,
           std::string dir, std::string good_label, std::string bad_label)
      : o_(o),
        t_(o.threshold / 100),
        repo_(std::move(repo)),
        prefix_(std::move(prefix)),
        suite_path_(std::move(suite_path)),
        suite_name_(std::move(suite_name)),
        dir_(std::move(dir)),
        good_label_(std::move(good_label)),
        bad_label_(std::move(bad_label)),
        worktrees_(repo_, fs::absolute(dir_ + "/worktrees").lexically_normal().string(), o.keep_worktrees) {
    // A process that does not stop within the bound, or gets a second signal, still leaves the
    // repository as it was and the folder saying what happened.
    interrupt::set_last_words([this](int sig) { stop(sig); });
  }
  Bisector(const Bisector&) = delete;
  Bisector& operator=(const Bisector&) = delete;
  ~Bisector() { interrupt::set_last_words({}); }

  // Builds the good revision, measures the bad one, searches; returns the exit code. Writes
  // bisect.md and removes the worktrees however it ends (a signal: exit 128 + signal).
  int run(const Revision& good, const std::vector<Revision>& candidates);

 private:
  int bisect_range(const Revision& good, const std::vector<Revision>& candidates);
  // Checks `r` out and builds it (a provenance mismatch throws: it is no build failure).
  Built build(const Revision& r, const std::string& role);
  // Builds and measures a candidate; nullopt when it does not build (logged as skipped).
  std::optional<Measurement> probe(const Revision& r, const std::string& role, std::string& why);
  Measurement measure(const Revision& r, const std::string& bin, const std::string& role);
  void log(const Revision& r, const std::string& role, const std::optional<Measurement>& m, int remeasure,
           const std::string& error);
  std::string folder(const Revision& r) const { return dir_ + "/probes/" + r.short_sha(); }
  // bisect.md's text (mu_ held).
  std::string markdown(const std::string& outcome) const;
  void write_markdown(const std::string& outcome);
  // What is running now, for the log of an interrupted bisect.
  void doing(const std::string& what) {
    std::lock_guard lk(mu_);
    doing_ = what;
  }
  // After SIGINT/SIGTERM, from this thread or the watchdog's, once: removes the worktrees, then
  // logs the interruption (bisect.jsonl, bisect.md); returns the error line.
  std::string stop(int sig, const std::string& cause = "");

  const BisectOptions& o_;
  const double t_;
  std::string repo_, prefix_, suite_path_, suite_name_, dir_, good_label_, bad_label_;
  Worktrees worktrees_;
  std::string good_bin_;
  // Guards what the watchdog's last words read and write: the log, the rows, what is running.
  std::mutex mu_;
  bool stopped_ = false;
  std::string doing_ = "starting";
  std::string stop_line_;
  std::vector<std::string> md_rows_;
};

Built Bisector::build(const Revision& r, const std::string& role) {
  Built b;
  doing(fmt::format("checking out the {} revision {}", role, r.short_sha()));
  b.worktree = worktrees_.add(r);
  b.tree = prefix_.empty() ? b.worktree : b.worktree + "/" + prefix_;
  doing(fmt::format("building the {} revision {}", role, r.short_sha()));
  fmt::print(stderr, "[bisect] building {} {} ({}) in {}\n", role, r.short_sha(), r.subject, b.worktree);
  std::string bin;
  std::optional<PresetInfo> preset;
  try {
    if (o_.build_cmd.empty()) {
      preset = read_preset(b.tree, o_.preset);
      bin = build_variant(b.tree, *preset, "", o_.cmake_args);
    } else {
      const std::string cmd = "cd " + shell_quote(b.tree) + " && CUZK_BISECT_REVISION=" + r.sha + " sh -c " +
                              shell_quote(o_.build_cmd) + " >&2";
      // Its own process group (run_child): a signal ends the whole build, not only the shell.
      const ChildResult c = run_child(cmd);
      if (c.interrupted) throw interrupt::Interrupted(c.interrupted);
      if (c.code != 0) throw Error(fmt::format("--build-cmd exited {}", c.code), kExitFailure);
      bin = b.tree + "/" + o_.bin_path;
      if (!fs::exists(bin)) throw Error(fmt::format("--build-cmd left no binary at {}", bin), kExitFailure);
    }
  } catch (const Error& e) {
    interrupt::check();  // a build the signal stopped is no revision that does not build
    b.why = e.what();
    return b;
  }
  // A binary that is not what this worktree builds stops the bisection: every verdict would be wrong.
  check_binary(role + " " + r.short_sha(), bin, preset, tree_hash(b.tree), !o_.build_cmd.empty());
  b.bin = bin;
  return b;
}

std::optional<Measurement> Bisector::probe(const Revision& r, const std::string& role, std::string& why) {
  Built b = build(r, role);
  std::optional<Measurement> m;
  if (b.bin) {
    m = measure(r, *b.bin, role);
  } else {
    why = b.why;
    fmt::print(stderr, "[bisect] {} {} ({}) does not build: skipped ({})\n", role, r.short_sha(), r.subject, why);
    log(r, role, std::nullopt, 0, why);
  }
  worktrees_.remove(b.worktree);
  return m;
}

Measurement Bisector::measure(const Revision& r, const std::string& bin, const std::string& role) {
  const std::string dir = folder(r);
  fs::create_directories(dir + "/rounds");
  const std::string extra = " --case " + shell_quote(o_.case_name) + " --warmup 0 --backend " + shell_quote(o_.backend) +
                            (o_.quick ? " --quick" : "");
  std::vector<std::string> files_a, files_b;
  CompareOptions co;
  co.allow_injected = o_.allow_injected;
  co.analysis = o_.analysis;
  int target = o_.rounds;
  for (int attempt = 0;; ++attempt) {
    fmt::print(stderr, "[bisect] measuring {} {} against the good revision: {} round(s){}\n", role, r.short_sha(),
               target, attempt == 0 ? " + 1 warm-up" : fmt::format(" (re-measure {} of {})", attempt, o_.max_remeasure));
    // Round 0 is the warm-up; a re-measurement adds rounds up to the doubled count.
    for (int round = int(files_a.size()); round <= target; ++round) {
      for (int v = 0; v < 2; ++v) {
        const std::string out = fmt::format("{}/rounds/{}-{}.jsonl", dir, v == 0 ? "a" : "b", round);
        const std::string cmd = suite_run_command(v == 0 ? good_bin_ : bin, suite_path_, 1, out, extra, round);
        doing(fmt::format("measuring the {} revision {} (round {}, {})", role, r.short_sha(), round,
                          v == 0 ? "the good revision's run" : "its run"));
        const ChildResult c = run_child(cmd);
        if (c.interrupted) throw interrupt::Interrupted(c.interrupted);
        if (c.code != 0)
          throw Error(fmt::format("round {} of {} {} failed (exit {}): {}", round, v == 0 ? "the good revision" : role,
                                  r.short_sha(), c.code, cmd),
                      kExitFailure);
        (v == 0 ? files_a : files_b).push_back(out);
      }
    }
    const std::string a = dir + "/a.jsonl", b = dir + "/b.jsonl";
    try {
      merge_rounds(files_a, 1, a);
      merge_rounds(files_b, 1, b);
    } catch (const std::exception& e) {
      throw Error(fmt::format("merging rounds of {}: {}", r.short_sha(), e.what()), kExitInternal);
    }
    Comparison cmp;
    try {
      cmp = compare_files(a, b, co);
    } catch (const CompareError& e) {
      throw Error(e.what());
    }
    write_output_file(dir + "/comparison.md", format_markdown(cmp));
    const PhaseComparison* row = primary_row(cmp, o_.phase);
    if (!row) {
      std::string have;
      for (auto& x : cmp.rows)
        if (x.primary && x.kind == "phase") (have += have.empty() ? "" : ", ") += x.phase;
      throw Error(fmt::format("phase {} is not in the results of case {} (its phases: {})", o_.phase, o_.case_name, have));
    }
    Measurement m{target, row->ratio, row->ci_low, row->ci_high, bisect::classify(row->ci_low, row->ci_high, t_),
                  cmp.summaries.empty() ? row->design : cmp.summaries.front().design_reason};
    log(r, role, m, attempt, "");
    fmt::print(stderr, "[bisect] {} {} ({}): {} -> {}; design: {}\n", role, r.short_sha(), r.subject,
               ratio_text(o_.phase, m), bisect::verdict_name(m.verdict), m.design);
    if (m.verdict != Verdict::kInconclusive) return m;
    if (attempt == o_.max_remeasure)
      throw Error(fmt::format(
          "{} {} ({}) is still inconclusive after {} re-measurement(s): {} contains the boundary {:.3f} (threshold {}); "
          "rerun with more --rounds, on a quieter machine, or with a larger --threshold",
          role, r.short_sha(), r.subject, o_.max_remeasure, ratio_text(o_.phase, m), bisect::boundary(t_),
          output::pct_short(t_)));
    target *= 2;
  }
}

void Bisector::log(const Revision& r, const std::string& role, const std::optional<Measurement>& m, int remeasure,
                   const std::string& error) {
  nlohmann::ordered_json j = {{"revision", r.sha}, {"subject", r.subject}, {"role", role}, {"status", m ? "built" : "skipped"}};
  if (m) {
    j.update({{"rounds", m->rounds}, {"remeasure", remeasure}, {"ratio", m->ratio}, {"ci_low", m->ci_low},
              {"ci_high", m->ci_high}, {"verdict", bisect::verdict_name(m->verdict)}, {"design", m->design},
              {"folder", folder(r)}});
  } else {
    j.update({{"verdict", "skipped"}, {"error", error}});
  }
  std::lock_guard lk(mu_);
  if (stopped_) return;  // the log ends with the interruption
  append_output_line(dir_ + "/bisect.jsonl", j.dump());
  md_rows_.push_back(
      m ? fmt::format("| {} | {} | {} | {} | {:.3f} [{:.3f}, {:.3f}] | {} | {} |", r.short_sha(), r.subject, role,
                      m->rounds, m->ratio, m->ci_low, m->ci_high, bisect::verdict_name(m->verdict), folder(r))
        : fmt::format("| {} | {} | {} | - | did not build: {} | skipped | - |", r.short_sha(), r.subject, role, error));
}

std::string Bisector::markdown(const std::string& outcome) const {
  std::ostringstream f;
  f << fmt::format("# bisect: {} of {}/{}\n\n", o_.phase, suite_name_, o_.case_name);
  f << fmt::format("Repository {}, good {}, bad {}; threshold {} (a probe is bad when its CI lies above x{:.3f}, good "
                   "when below); {} round(s) + 1 warm-up per probe, doubled up to {} time(s) while inconclusive{}{}.\n\n",
                   repo_, good_label_, bad_label_, output::pct_short(t_), bisect::boundary(t_), o_.rounds, o_.max_remeasure,
                   o_.quick ? ", --quick" : "", o_.backend == "cpu" ? "" : ", backend " + o_.backend);
  if (md_rows_.empty()) {
    f << "No revision was measured.\n";
  } else {
    f << "| revision | subject | role | rounds | ratio [95% CI] | verdict | A/B folder |\n";
    f << "| --- | --- | --- | --- | --- | --- | --- |\n";
    for (auto& row : md_rows_) f << row << "\n";
  }
  f << "\n" << outcome << "\n";
  return f.str();
}

void Bisector::write_markdown(const std::string& outcome) {
  std::lock_guard lk(mu_);
  if (!stopped_) write_output_file(dir_ + "/bisect.md", markdown(outcome));
}

std::string Bisector::stop(int sig, const std::string& cause) {
  std::lock_guard lk(mu_);  // held throughout: the watchdog's call waits for this thread's to end
  if (stopped_) return stop_line_;
  stopped_ = true;
  // The user's repository first: nothing of this run stays registered there.
  worktrees_.remove_all();
  const std::string kept = o_.keep_worktrees ? "kept (--keep-worktrees)" : "removed";
  stop_line_ = fmt::format("interrupted by {} while {}{}; the worktrees were {}; the log says so: {}/bisect.md",
                           interrupt::signal_name(sig), doing_, cause.empty() ? "" : " (" + cause + ")", kept, dir_);
  nlohmann::ordered_json j = {{"status", "interrupted"}, {"signal", interrupt::signal_name(sig)},
                              {"exit_code", interrupt::exit_code(sig)}, {"while", doing_}};
  try {
    append_output_line(dir_ + "/bisect.jsonl", j.dump());
    write_output_file(dir_ + "/bisect.md",
                      markdown(fmt::format("Interrupted by {} (exit {}) while {}; the worktrees were {}.",
                                           interrupt::signal_name(sig), interrupt::exit_code(sig), doing_, kept)));
  } catch (const std::exception& e) {
    stop_line_ += fmt::format(" (but writing the log failed: {})", e.what());
  }
  return stop_line_;
}

int Bisector::run(const Revision& good, const std::vector<Revision>& candidates) {
  try {
    const int rc = bisect_range(good, candidates);
    worktrees_.remove_all();  // here, while the watchdog's last words would still finish it
    return rc;
  } catch (const interrupt::Interrupted& e) {
    throw Error(stop(e.sig), interrupt::exit_code(e.sig));
  } catch (const Error& e) {
    // A step whose child the signal stopped fails: the signal, not the step, is the reason.
    if (const int sig = interrupt::signal_received()) throw Error(stop(sig, e.what()), interrupt::exit_code(sig));
    write_markdown(fmt::format("Stopped: {}.", e.what()));
    worktrees_.remove_all();
    throw;
  }
}

int Bisector::bisect_range(const Revision& good, const std::vector<Revision>& candidates) {
  Built g = build(good, "good");
  if (!g.bin) throw Error(fmt::format("the good revision {} does not build: {}", good.short_sha(), g.why), kExitFailure);
  good_bin_ = *g.bin;

  // The bad revision first: without a regression there is nothing to find.
  const Revision& bad = candidates.back();
  std::string why;
  auto mb = probe(bad, "bad", why);
  if (!mb)
    throw Error(fmt::format("the bad revision {} does not build ({}); choose a --bad that builds", bad.short_sha(), why),
                kExitFailure);
  if (mb->verdict == Verdict::kGood)
    throw Error(fmt::format("no regression of {} between {} and {}: ratio {:.2f} [{:.2f}, {:.2f}] at {} (threshold {})",
                            o_.phase, good_label_, bad_label_, mb->ratio, mb->ci_low, mb->ci_high, bad_label_, output::pct_short(t_)));

  bisect::Search search(candidates.size());
  std::map<size_t, Measurement> measured;
  measured[candidates.size() - 1] = *mb;
  while (auto i = search.next()) {
    auto m = probe(candidates[*i], "probe", why);
    if (!m) {
      search.mark(*i, bisect::Search::Mark::kSkipped);
    } else {
      measured[*i] = *m;
      search.mark(*i, m->verdict == Verdict::kBad ? bisect::Search::Mark::kBad : bisect::Search::Mark::kGood);
    }
  }

  const std::vector<size_t> answer = search.answer();
  const Revision& first = candidates[answer.back()];
  const std::string found = fmt::format("{} {}: {} (threshold {}); A/B folder: {}", first.sha, first.subject,
                                        ratio_text(o_.phase, measured.at(answer.back())), output::pct_short(t_), folder(first));
  for (size_t i = 0; i < candidates.size(); ++i)
    if (search.at(i) == bisect::Search::Mark::kSkipped)
      fmt::print("skipped (did not build): {} {}\n", candidates[i].sha, candidates[i].subject);
  if (answer.size() == 1) {
    write_markdown("First slower commit: " + found + ".");
    fmt::print("first slower commit: {}\n", found);
    return kExitOk;
  }
  // Skipped revisions right before the first bad one: any of them may be the first slower commit.
  std::string list;
  for (size_t k = 0; k + 1 < answer.size(); ++k)
    list += fmt::format("  {} {} (did not build)\n", candidates[answer[k]].sha, candidates[answer[k]].subject);
  list += "  " + found + "\n";
  const std::string head =
      fmt::format("first slower commit: ambiguous, one of {} commits ({} .. {}) because {} of them did not build:\n",
                  answer.size(), candidates[answer.front()].short_sha(), first.short_sha(), answer.size() - 1);
  write_markdown(head + "\n" + list);
  fmt::print("{}{}", head, list);
  return kExitFailure;
}

// "REV" when it names the commit by a prefix of its hash, else "REV (sha12)".
std::string describe(const std::string& rev, const std::string& sha) {
  return sha.rfind(rev, 0) == 0 ? sha.substr(0, 12) : fmt::format("{} ({})", rev, sha.substr(0, 12));
}

int bisect_request(BisectOptions o) {
  // Everything is checked before anything is built or written.
  if (!std::isfinite(o.threshold) || o.threshold <= 0)
    throw Error(fmt::format("--threshold must be a percentage > 0 (got {})", o.threshold));
  if (o.rounds < 2) throw Error(fmt::format("--rounds must be at least 2 (got {})", o.rounds));
  if (o.max_remeasure < 0) throw Error(fmt::format("--max-remeasure must be 0 or more (got {})", o.max_remeasure));
  check_analysis_options(o.analysis);
  if (!bisect::well_formed_phase(o.phase))
    throw Error(fmt::format("--phase '{}' is not a phase path such as proof/synth", o.phase));
  if (!o.bin_path.empty() && o.build_cmd.empty()) throw Error("--bin-path goes with --build-cmd");
  if (o.bin_path.empty()) o.bin_path = "build/" + o.preset + "/harness/cuzk-bench";
  if (fs::path(o.bin_path).is_absolute())
    throw Error(fmt::format("--bin-path must be relative to the worktree (got {})", o.bin_path));
  resolve_backend(o.backend, false);

  const std::string repo_arg = o.repo.empty() ? std::string(build_provenance().source_dir) : o.repo;
  if (!fs::is_directory(repo_arg)) throw Error(fmt::format("--repo {}: no such folder", repo_arg));
  const std::string repo = fs::weakly_canonical(repo_arg).string();
  if (git(repo, "rev-parse --show-toplevel").code != 0)
    throw Error(fmt::format("--repo {} is not a git repository", repo));
  std::string prefix = trim(git(repo, "rev-parse --show-prefix").out);  // "sub/" when --repo is a subfolder
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (o.build_cmd.empty()) {
    const PresetInfo p = read_preset(repo, o.preset);  // an unknown preset is refused now
    check_cmake_args(o.cmake_args, {&p});
  } else if (!o.cmake_args.empty()) {
    throw Error("--cmake-arg goes with --preset builds, not --build-cmd (put the arguments in the command)");
  }

  auto resolve = [&](const char* flag, const std::string& rev) {
    auto r = git(repo, "rev-parse --verify --quiet " + shell_quote(rev + "^{commit}"));
    if (rev.empty() || r.code != 0 || r.out.size() != 40)
      throw Error(fmt::format("{} '{}' is not a commit of {}", flag, rev, repo));
    return r.out;
  };
  const std::string good_sha = resolve("--good", o.good), bad_sha = resolve("--bad", o.bad);
  if (good_sha == bad_sha)
    throw Error(fmt::format("--good and --bad are the same commit ({}): nothing to bisect", good_sha.substr(0, 12)));
  if (git(repo, "merge-base --is-ancestor " + good_sha + " " + bad_sha).code != 0)
    throw Error(fmt::format("--good {} is not an ancestor of --bad {}: bisect needs the good revision before the bad "
                            "one in its history",
                            describe(o.good, good_sha), describe(o.bad, bad_sha)));

  auto [suite_path, s] = load_suite_for_runs(o.suite);
  const suite::Case* c = nullptr;
  std::string names;
  for (auto& x : s.cases) {
    (names += names.empty() ? "" : ", ") += x.name;
    if (x.name == o.case_name) c = &x;
  }
  if (!c) throw Error(fmt::format("suite {} has no case '{}' (its cases: {})", s.name, o.case_name, names));
  if (o.quick && !c->in_quick) throw Error(fmt::format("case {} of suite {} does not run under --quick", c->name, s.name));
  if (!c->backends.empty() && std::find(c->backends.begin(), c->backends.end(), o.backend) == c->backends.end())
    throw Error(fmt::format("case {} of suite {} is not for backend {}", c->name, s.name, o.backend));

  // The candidates: every commit after good on the way to bad, bad last.
  auto rl = git(repo, "log --reverse --ancestry-path --format='%H %s' " + good_sha + ".." + bad_sha);
  if (rl.code != 0) throw Error(fmt::format("git log {}..{} failed in {}", good_sha, bad_sha, repo), kExitInternal);
  std::vector<Revision> candidates;
  for (const std::string& line : lines(rl.out))
    if (line.size() >= 40) candidates.push_back({line.substr(0, 40), line.size() > 41 ? line.substr(41) : ""});
  if (candidates.empty() || candidates.back().sha != bad_sha)
    throw Error(fmt::format("git log found no path from {} to {} in {}", good_sha, bad_sha, repo), kExitInternal);
  const Revision good{good_sha, git(repo, "log -1 --format=%s " + good_sha).out};

  const std::string dir = o.out_dir.empty() ? fmt::format("results/local/{}-bisect", utc_stamp()) : o.out_dir;
  // Claimed for the whole bisection (harness/measure/output_lock.hpp): one bisect per folder.
  FolderClaim claim(dir, "--out-dir", /*require_empty=*/true);

  fmt::print(stderr, "[bisect] {} of {}/{} between {} and {}: {} candidate(s), threshold {}\n", o.phase, s.name,
             c->name, describe(o.good, good_sha), describe(o.bad, bad_sha), candidates.size(), output::pct_short(o.threshold / 100));
  Bisector b(o, repo, prefix, suite_path, s.name, dir, describe(o.good, good_sha), describe(o.bad, bad_sha));
  return b.run(good, candidates);
}

int run_bisect(const BisectOptions& o) {
  // Before the first child (git, a build) or worktree: a signal at any point ends every child,
  // removes the worktrees and exits 130/143 (docs/reliability.md).
  interrupt::install();
  try {
    return bisect_request(o);
  } catch (const interrupt::Interrupted& e) {  // while checking the request (Bisector::run handles its own)
    throw Error(fmt::format("{} while checking the request: nothing was built or written", e.what()),
                interrupt::exit_code(e.sig));
  }
}

Registrar reg_bisect("bisect", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("bisect", "find the first commit at which a phase became slower (docs/bisect.md)");
  auto o = std::make_shared<BisectOptions>();
  sub->add_option("--good", o->good, "a revision without the slowdown")->required();
  sub->add_option("--bad", o->bad, "a later revision with it")->required();
  sub->add_option("--suite", o->suite, "suite name or file")->required();
  sub->add_option("--case", o->case_name, "the one case to measure")->required();
  sub->add_option("--phase", o->phase, "the phase that became slower, e.g. proof/synth")->required();
  sub->add_option("--threshold", o->threshold, "slowdown hunted, in percent")
      ->capture_default_str()
      ->check(finite_in(0, 1e6, /*open_lo=*/true));
  sub->add_option("--rounds", o->rounds, "measured rounds per probe (each: the good revision, then the probe)")
      ->capture_default_str();
  sub->add_option("--max-remeasure", o->max_remeasure, "times an inconclusive probe is re-measured with doubled rounds")
      ->capture_default_str();
  sub->add_option("--repo", o->repo, "git repository (default: this binary's source tree)");
  sub->add_option("--preset", o->preset, "preset each revision is built with")->capture_default_str();
  add_cmake_arg_option(sub, o->cmake_args);
  sub->add_option("--build-cmd", o->build_cmd, "shell command that builds a revision, run in its worktree (instead of the preset)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            // An empty command would silently fall back to building the preset.
            return s.find_first_not_of(" \t\r\n") == std::string::npos
                       ? "must be a shell command that builds a revision (omit --build-cmd to build the preset)"
                       : "";
          },
          "COMMAND"));
  sub->add_option("--bin-path", o->bin_path, "where --build-cmd leaves cuzk-bench, relative to the worktree "
                                              "(default build/<preset>/harness/cuzk-bench)");
  sub->add_option("--out-dir", o->out_dir, "folder (default results/local/<UTC time>-bisect)");
  sub->add_option("--backend", o->backend, "backend of every run: cpu or cuda")->capture_default_str();
  sub->add_flag("--quick", o->quick, "pass --quick to each run");
  add_allow_injected_flag(sub, o->allow_injected);
  add_analysis_options(sub, o->analysis);
  sub->add_flag("--keep-worktrees", o->keep_worktrees, "leave each revision's worktree (and build) in <out-dir>/worktrees");
  return [=] { return run_bisect(*o); };
});

}  // namespace
}  // namespace cuzk::cli
