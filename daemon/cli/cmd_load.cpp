// `cuzk-bench load`: a load generator for cuzkd (docs/daemon.md#load).
//
//   cuzk-bench load (--socket PATH | --preset NAME [--daemon-arg=ARG ...])
//                   [--mode open --rates R1,R2,... | --mode closed --clients N]
//                   [--jobs N] [--warmup N] [--partitions N] [--priority P] [--seed S] [--out FILE]
//   cuzk-bench load (--socket A,B | --preset A,B) --out-dir DIR [--rounds N] ...
//
// With two daemons (two variants' presets, or two sockets) the same schedule runs against each,
// interleaved by round in ABBA order, into DIR/A.jsonl and DIR/B.jsonl (named for the presets),
// and `compare`'s table of B against A follows.
// Open loop: jobs arrive as a Poisson process at each offered rate (proofs per second), each
// one a Prove call on its own thread, whatever the daemon's backlog: latency then includes the
// queueing that offered load causes. Closed loop: N clients, each submitting its next job when
// its last one returned. Per job it records the client's latency (phase "request") and the
// daemon's phase timings (proof, proof/queue, ...) as one sample of a results file that
// compare and gate read; per step it reports throughput, latency percentiles with
// distribution-free 95% CIs, queueing time, and whether the step saturated the daemon
// (throughput below 90% of the offered rate). With --preset it starts that variant's cuzkd on a
// private socket, waits for its health service to say SERVING, and drains it at the end.
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "daemon/client/client.hpp"
#include "harness/analysis/compare.hpp"
#include "harness/analysis/stats.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/variant_builds.hpp"
#include "harness/measure/clock.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/provenance.hpp"
#include "harness/measure/session.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;
namespace v1 = cuzk::daemon::v1;

struct LoadOptions {
  std::string socket, preset, mode = "open", rates = "1", priority = "NORMAL", out, out_dir;
  std::vector<std::string> daemon_args;
  int64_t clients = 1, jobs = 20, warmup = 2, partitions = 1, rounds = 2;
  uint64_t seed = 1;
  double ready_timeout = 600;
  bool force = false, build = false;
};

// One job's outcome as the client saw it.
struct JobOutcome {
  double arrival_s = 0;   // planned arrival after the step's start (open loop)
  uint64_t latency_ns = 0;
  uint64_t done_ns = 0;  // when the reply came (steady clock)
  bool ok = false;
  std::string error;
  v1::JobStatus job;
};

struct StepReport {
  std::string label;  // the case, and " rN" for round N of an A/B
  uint32_t round = 0;
  double offered = 0;  // proofs/s (open loop), 0 for closed
  uint32_t clients = 0, measured = 0, failed = 0;
  double throughput = 0, seconds = 0;
  double p50_s = 0, p90_s = 0, p99_s = 0;
  QuantileCI p50, p90, p99;
  double max_s = 0, queue_p50_s = 0, queue_p99_s = 0;
  bool saturated = false;
};

std::vector<double> parse_rates(const std::string& s) {
  std::vector<double> out = parse_number_list("--rates", s, "0.5,1,2,4");
  for (double r : out)
    if (!(r > 0)) throw Error(fmt::format("--rates {}: {} is not a positive number of proofs per second", s, r));
  return out;
}

// A cuzkd this command started: its own process group (signals are forwarded to it), drained
// with SIGTERM at the end.
class StartedDaemon {
 public:
  StartedDaemon(const std::string& binary, const std::vector<std::string>& args, const std::string& dir) {
    std::vector<std::string> argv{binary};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = start_child(argv, dir + "/cuzkd.log");
    if (pid_ < 0) throw Error(fmt::format("cannot start {}: fork failed", binary), kExitFailure);
  }
  bool alive() { return pid_ > 0 && waitpid(pid_, &status_, WNOHANG) == 0; }
  // SIGTERM, then up to `seconds` for the drain, then SIGKILL. The exit status.
  int stop(int seconds) {
    if (pid_ <= 0) return status_;
    if (alive()) {
      kill(pid_, SIGTERM);
      for (int i = 0; i < seconds * 10 && alive(); ++i) usleep(100000);
      if (alive()) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status_, 0);
      }
    }
    interrupt::remove_child_group(pid_);
    pid_ = -1;
    return status_;
  }
  ~StartedDaemon() { stop(10); }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
};

// The last non-empty line of a (small) log file, or a note that there is none.
std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last.empty() ? "(its log is empty)" : last;
}

StepReport summarize(const std::string& label, double offered, uint32_t clients, const std::vector<JobOutcome>& jobs,
                     size_t warmup, double seconds) {
  StepReport r;
  r.label = label;
  r.offered = offered;
  r.clients = clients;
  r.seconds = seconds;
  std::vector<double> lat, queue;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].ok) {
      ++r.failed;
      continue;
    }
    if (i < warmup) continue;
    lat.push_back(double(jobs[i].latency_ns) / 1e9);
    for (const auto& p : jobs[i].job.phases())
      if (p.path() == "proof/queue") queue.push_back(double(p.wall_ns()) / 1e9);
  }
  r.measured = uint32_t(lat.size());
  // Throughput from the spacing of completions, (n - 1) / (last - first): it follows the
  // arrival rate while the daemon keeps up and the service rate once it does not, without
  // the first job's latency and the last one's tail in the denominator.
  uint64_t first = UINT64_MAX, last = 0;
  uint32_t done = 0;
  for (const auto& j : jobs)
    if (j.ok) {
      ++done;
      first = std::min(first, j.done_ns);
      last = std::max(last, j.done_ns);
    }
  r.throughput = done > 1 && last > first ? double(done - 1) / (double(last - first) / 1e9) : 0;
  if (!lat.empty()) {
    r.p50_s = quantile(lat, 0.5);
    r.p90_s = quantile(lat, 0.9);
    r.p99_s = quantile(lat, 0.99);
    r.p50 = quantile_ci(lat, 0.5);
    r.p90 = quantile_ci(lat, 0.9);
    r.p99 = quantile_ci(lat, 0.99);
    r.max_s = *std::max_element(lat.begin(), lat.end());
  }
  if (!queue.empty()) {
    r.queue_p50_s = quantile(queue, 0.5);
    r.queue_p99_s = quantile(queue, 0.99);
  }
  r.saturated = offered > 0 && r.throughput < 0.9 * offered;
  return r;
}

std::string ci_text(const QuantileCI& c) {
  auto end = [](double v, bool open) { return open ? std::string("inf") : fmt::format("{:.3f}", v); };
  return fmt::format("[{}, {}]", c.lo_open ? "-inf" : end(c.lo, false), end(c.hi, c.hi_open));
}

nlohmann::json step_json(const StepReport& r) {
  auto q = [](double v, const QuantileCI& c) {
    return nlohmann::json{{"s", v},
                          {"ci95_lo_s", c.lo_open ? nlohmann::json() : nlohmann::json(c.lo)},
                          {"ci95_hi_s", c.hi_open ? nlohmann::json() : nlohmann::json(c.hi)}};
  };
  return {{"step", r.label},
          {"round", r.round},
          {"offered_per_s", r.offered},
          {"clients", r.clients},
          {"measured", r.measured},
          {"failed", r.failed},
          {"seconds", r.seconds},
          {"throughput_per_s", r.throughput},
          {"latency", {{"p50", q(r.p50_s, r.p50)}, {"p90", q(r.p90_s, r.p90)}, {"p99", q(r.p99_s, r.p99)}, {"max_s", r.max_s}}},
          {"queue_s", {{"p50", r.queue_p50_s}, {"p99", r.queue_p99_s}}},
          {"saturated", r.saturated}};
}

// The sweep's saturation point: the lowest offered rate that saturated, and the highest rate
// below it that was served. A served rate above a saturated one (a short step's Poisson
// spread) is named, not hidden.
std::string saturation_text(const std::vector<StepReport>& steps) {
  const StepReport* first_sat = nullptr;
  for (const auto& r : steps)
    if (r.offered > 0 && r.saturated && (!first_sat || r.offered < first_sat->offered)) first_sat = &r;
  const StepReport* served = nullptr;
  std::string above;
  for (const auto& r : steps) {
    if (r.offered <= 0 || r.saturated) continue;
    if (!first_sat || r.offered < first_sat->offered) {
      if (!served || r.offered > served->offered) served = &r;
    } else {
      above += (above.empty() ? "" : ", ") + fmt::format("{:.3g}", r.offered);
    }
  }
  if (!first_sat) return "not reached: every offered rate was served";
  std::string text = served ? fmt::format("between {:.3g} (served) and {:.3g} proofs/s (throughput below 90% of offered)",
                                          served->offered, first_sat->offered)
                            : fmt::format("at or below the lowest rate, {:.3g} proofs/s", first_sat->offered);
  if (!above.empty())
    text += fmt::format("; but {} proofs/s, above it, was served: the steps are too short to place it (more --jobs)", above);
  return text;
}

// One daemon under load: started here (--preset) or already running (--socket), with its
// results file and its steps' reports.
struct Target {
  std::string name;  // the preset, or the socket
  std::unique_ptr<StartedDaemon> started;
  std::string run_dir;
  std::unique_ptr<v1::ProvingEngine::Stub> stub;
  std::string variant;  // the daemon's build (GetStatus.preset)
  nlohmann::json provenance;  // the daemon's build provenance: what the results measure
  std::unique_ptr<Session> session;
  std::vector<StepReport> reports;
};

void connect_target(Target& t, const std::string& socket, const std::vector<std::string>& daemon_args, double ready_timeout,
                    bool build) {
  std::string target = socket;
  if (socket.empty()) {
    const std::string source_dir = build_provenance().source_dir;
    const PresetInfo p = read_preset(source_dir, t.name);
    if (build) stop_on_signal("load", [&] { build_variant(source_dir, p, "", {}, "cuzkd"); });
    const std::string binary = p.binary_dir + "/daemon/cuzkd";
    if (!fs::exists(binary))
      throw Error(fmt::format("--preset {}: no {} (build it: cmake --build --preset {} --target cuzkd)", t.name, binary,
                              t.name));
    char tmpl[] = "/tmp/cuzk-load-XXXXXX";
    if (!mkdtemp(tmpl)) throw Error("cannot create a folder for the daemon under /tmp", kExitFailure);
    t.run_dir = tmpl;
    target = t.run_dir + "/cuzkd.sock";
    std::vector<std::string> args{"--state-dir", t.run_dir + "/state", "--socket", target, "--grace-s", "2"};
    args.insert(args.end(), daemon_args.begin(), daemon_args.end());
    t.started = std::make_unique<StartedDaemon>(binary, args, t.run_dir);
    fmt::print(stderr, "load: started {} (log {}/cuzkd.log)\n", binary, t.run_dir);
  }
  auto ch = daemon::connect(target);
  std::string last;
  // A daemon started here that exits (a bad --daemon-arg, a backend it cannot use) will never
  // serve: stop waiting at once and say why, from its log.
  if (!daemon::wait_serving(ch, t.started ? ready_timeout : 10, last, [&] { return !t.started || t.started->alive(); })) {
    const std::string log = t.run_dir + "/cuzkd.log";
    if (t.started && !t.started->alive())
      throw Error(fmt::format("the daemon {} started exited before it was SERVING: {} (its log: {})", t.name,
                              last_line_of(log), log),
                  kExitFailure);
    throw Error(fmt::format("the daemon at {} is not SERVING ({}){}", target, last,
                            t.started ? fmt::format("; its log: {}", log) : ""),
                kExitFailure);
  }
  t.stub = v1::ProvingEngine::NewStub(ch);
  grpc::ClientContext ctx;
  v1::StatusReply st;
  if (t.stub->GetStatus(&ctx, {}, &st).ok()) {
    t.variant = st.preset().empty() ? "custom" : st.preset();
    t.provenance = nlohmann::json::parse(st.provenance_json(), nullptr, false);
  }
  // A daemon started for a preset must be that preset's build (a stale or hand-configured
  // build folder would measure something else).
  if (t.started && t.variant != t.name)
    throw Error(fmt::format("--preset {}: its cuzkd reports the build '{}' (reconfigure it: cmake --preset {}, or --build)",
                            t.name, t.variant, t.name));
}

int run_load(const LoadOptions& o) {
  auto split = [](const std::string& v) {
    std::vector<std::string> out;
    for (size_t pos = 0; !v.empty() && pos <= v.size();) {
      const size_t comma = v.find(',', pos);
      out.push_back(v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    return out;
  };
  const std::vector<std::string> presets = split(o.preset), sockets = split(o.socket);
  if (sockets.empty() == presets.empty()) throw Error("give one of --socket (a running daemon) and --preset (start one)");
  const auto& names = presets.empty() ? sockets : presets;
  const char* flag = presets.empty() ? "--socket" : "--preset";
  if (names.size() > 2 || (names.size() == 2 && (names[0].empty() || names[1].empty() || names[0] == names[1])))
    throw Error(fmt::format("{} {}: one, or two different ones (A,B) to compare", flag, presets.empty() ? o.socket : o.preset));
  const bool ab = names.size() == 2;
  if (ab && o.out_dir.empty()) throw Error(fmt::format("{} A,B writes one results file per side: give --out-dir", flag));
  if (!ab && !o.out_dir.empty()) throw Error("--out-dir is for two daemons (A,B); one daemon's results go to --out");
  if (o.build && presets.empty()) throw Error("--build builds the daemons of --preset; with --socket they are running already");
  if (o.mode != "open" && o.mode != "closed") throw Error(fmt::format("--mode {}: expected open or closed", o.mode));
  const uint32_t jobs = checked_u32("--jobs", o.jobs, 1);
  const uint32_t warmup = checked_u32("--warmup", o.warmup, 0);
  if (warmup >= jobs) throw Error(fmt::format("--warmup {} leaves no measured job of --jobs {}", warmup, jobs));
  const uint32_t partitions = checked_u32("--partitions", o.partitions, 1);
  const uint32_t clients = checked_u32("--clients", o.clients, 1);
  const uint32_t rounds = ab ? checked_u32("--rounds", o.rounds, 1) : 1;
  v1::Priority priority;
  if (!v1::Priority_Parse(o.priority, &priority) || priority == v1::PRIORITY_UNSPECIFIED)
    throw Error(fmt::format("--priority {}: expected LOW, NORMAL, HIGH or CRITICAL", o.priority));
  const std::vector<double> rates = o.mode == "open" ? parse_rates(o.rates) : std::vector<double>{0};
  if (ab) ensure_output_dir(o.out_dir, "--out-dir");

  interrupt::install();
  std::vector<Target> targets(ab ? 2 : 1);
  for (size_t i = 0; i < targets.size(); ++i) {
    targets[i].name = names[i];
    connect_target(targets[i], presets.empty() ? sockets[i] : "", o.daemon_args, o.ready_timeout, o.build);
    SessionOptions so;
    so.suite = "load";
    // Files named for the presets, or A and B for two sockets.
    so.out = !ab ? o.out : fmt::format("{}/{}.jsonl", o.out_dir, presets.empty() ? (i == 0 ? "A" : "B") : names[i]);
    so.overwrite = o.force;
    so.default_counters = {};
    so.spans = false;
    // The file's "provenance" is this client's; what it measures is the daemon's build.
    if (targets[i].provenance.is_object()) so.header_extra = {{"measured_provenance", targets[i].provenance}};
    try {
      targets[i].session = std::make_unique<Session>(so);
    } catch (const std::exception& e) {
      throw Error(e.what());
    }
  }

  std::mutex ctx_mu;
  std::vector<grpc::ClientContext*> live;  // cancelled on SIGINT/SIGTERM
  // One step of the schedule against one daemon; the same seed gives both sides of an A/B the
  // same arrival times and inputs.
  auto run_step = [&](Target& tg, uint32_t round, size_t step) {
    const double rate = rates[step];
    const uint64_t seed = o.seed + 1000 * uint64_t(round) + step;
    const uint64_t base = seed * 1000003;
    std::vector<JobOutcome> out(jobs);
    std::mt19937_64 rng(seed);
    std::exponential_distribution<double> gap(o.mode == "open" ? rate : 1.0);
    double t = 0;
    for (auto& j : out) {
      j.arrival_s = t;
      t += gap(rng);
    }
    auto one = [&](uint32_t k) {
      v1::SubmitRequest req;
      req.set_request_id(fmt::format("load-{}-{}-{}-{}", getpid(), round, step, k));
      req.set_kind("porep");
      req.set_priority(priority);
      req.set_input_json(nlohmann::json{{"partitions", partitions}, {"circuit_seed", base + uint64_t(k) * partitions},
                                        {"rs_seed", base + uint64_t(k) * partitions}}.dump());
      grpc::ClientContext ctx;
      {
        std::lock_guard lk(ctx_mu);
        live.push_back(&ctx);
      }
      v1::AwaitReply rep;
      const uint64_t t0 = now_ns();
      const grpc::Status s = tg.stub->Prove(&ctx, req, &rep);
      out[k].done_ns = now_ns();
      out[k].latency_ns = out[k].done_ns - t0;
      {
        std::lock_guard lk(ctx_mu);
        live.erase(std::find(live.begin(), live.end(), &ctx));
      }
      out[k].job = rep.job();
      out[k].ok = s.ok() && rep.job().state() == v1::DONE;
      out[k].error = !s.ok() ? daemon::describe(s) : out[k].ok ? "" : v1::JobState_Name(rep.job().state()) + ": " + rep.job().reason();
    };
    fmt::print(stderr, "load: {}{}step {} of {}: {} job(s), {}\n", ab ? tg.name + ", " : "",
               ab ? fmt::format("round {} of {}, ", round + 1, rounds) : "", step + 1, rates.size(), jobs,
               o.mode == "open" ? fmt::format("Poisson arrivals at {} proofs/s", rate) : fmt::format("{} client(s)", clients));
    const uint64_t start = now_ns();
    std::vector<std::thread> threads;
    std::atomic<uint32_t> next{0};
    std::atomic<bool> stop_watch{false};
    // Ctrl-C: the calls in flight are cancelled, the daemons started here get the signal.
    std::thread watch([&] {
      while (!stop_watch) {
        if (interrupt::requested()) {
          std::lock_guard lk(ctx_mu);
          for (auto* c : live) c->TryCancel();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    if (o.mode == "open") {
      for (uint32_t k = 0; k < jobs && !interrupt::requested(); ++k) {
        const uint64_t due = start + uint64_t(out[k].arrival_s * 1e9);
        while (now_ns() < due && !interrupt::requested())
          std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<uint64_t>(due - now_ns(), 50'000'000)));
        if (interrupt::requested()) break;
        threads.emplace_back(one, k);
      }
    } else {
      for (uint32_t c = 0; c < clients; ++c)
        threads.emplace_back([&] {
          for (uint32_t k; !interrupt::requested() && (k = next++) < jobs;) one(k);
        });
    }
    for (auto& th : threads) th.join();
    stop_watch = true;
    watch.join();
    const double seconds = double(now_ns() - start) / 1e9;
    if (interrupt::requested()) return;
    const std::string label = o.mode == "open" ? fmt::format("open-{}", rate) : fmt::format("closed-{}", clients);
    for (uint32_t k = 0; k < jobs; ++k) {
      if (!out[k].ok) {
        fmt::print(stderr, "load: {}: job {} of step {} failed: {}\n", tg.name, k, label, out[k].error);
        continue;
      }
      Sample smp;
      smp.phases["request"].wall_ns = out[k].latency_ns;
      smp.phases["request"].count = 1;
      for (const auto& p : out[k].job.phases()) {
        smp.phases[p.path()].wall_ns = p.wall_ns();
        smp.phases[p.path()].count = 1;
      }
      smp.wall_ns = out[k].latency_ns;
      tg.session->record({.suite = "load",
                          .case_name = label,
                          .parameters = {{"mode", o.mode}, {"offered_per_s", rate},
                                         {"clients", o.mode == "open" ? 0u : clients}, {"partitions", partitions},
                                         {"jobs", jobs}},
                          .variant = tg.variant,
                          .repetition = int(round * jobs + k),
                          .warm = k < warmup},
                         smp,
                         // round_id: both sides of round r ran one schedule, so compare can pair them.
                         {{"round_id", round},
                          {"load", {{"job_id", out[k].job.job_id()}, {"round", round}, {"arrival_s", out[k].arrival_s},
                                    {"done_s", double(out[k].done_ns - start) / 1e9}, {"batch_size", out[k].job.batch_size()}}}});
    }
    tg.reports.push_back(summarize(ab ? fmt::format("{} r{}", label, round + 1) : label, rate, o.mode == "open" ? 0 : clients,
                                   out, warmup, seconds));
    tg.reports.back().round = round;
  };

  // Interleaved: round r runs every step on A then B, the next round on B then A, so that a
  // drift of the machine falls on both sides alike.
  for (uint32_t r = 0; r < rounds && !interrupt::requested(); ++r)
    for (size_t i = 0; i < targets.size() && !interrupt::requested(); ++i) {
      Target& tg = targets[(r % 2 == 0) ? i : targets.size() - 1 - i];
      for (size_t step = 0; step < rates.size() && !interrupt::requested(); ++step) run_step(tg, r, step);
    }
  if (int sig = interrupt::signal_received()) {
    for (auto& tg : targets) {
      tg.session->finish_interrupted(sig, "discarded");
      if (tg.started) tg.started->stop(5);
    }
    throw Error(fmt::format("interrupted by {}: the step in flight was discarded; results: {}", interrupt::signal_name(sig),
                            targets[0].session->path()),
                interrupt::exit_code(sig));
  }

  uint32_t failed = 0;
  for (auto& tg : targets) {
    if (ab) fmt::print("== {} (the daemon of build {})\n", tg.name, tg.variant);
    fmt::print("{:<14} {:>9} {:>9} {:>6} {:>6} {:>10} {:>22} {:>10} {:>22} {:>9} {:>10}\n", "step", "offered/s",
               "done/s", "jobs", "failed", "p50 s", "p50 95% CI", "p99 s", "p99 95% CI", "max s", "queue p50");
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& r : tg.reports) {
      failed += r.failed;
      fmt::print("{:<14} {:>9} {:>9.3f} {:>6} {:>6} {:>10.3f} {:>22} {:>10.3f} {:>22} {:>9.3f} {:>10.3f}{}\n", r.label,
                 r.offered > 0 ? fmt::format("{:.3g}", r.offered) : "-", r.throughput, r.measured, r.failed, r.p50_s,
                 ci_text(r.p50), r.p99_s, ci_text(r.p99), r.max_s, r.queue_p50_s, r.saturated ? "  SATURATED" : "");
      steps.push_back(step_json(r));
    }
    if (o.mode == "open" && rates.size() > 1) fmt::print("saturation: {}\n", saturation_text(tg.reports));
    tg.session->finish({{"load", {{"mode", o.mode}, {"rounds", rounds}, {"steps", steps}}}});
    fmt::print("results: {}\n", tg.session->path());
  }
  for (auto& tg : targets)
    if (tg.started) {
      const int st = tg.started->stop(30);
      if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        fmt::print(stderr, "load: the daemon of {} did not drain cleanly (status {}); its log: {}/cuzkd.log\n", tg.name, st,
                   tg.run_dir);
      } else {
        std::error_code ec;  // its journal and proofs served this run only; the results file has the records
        fs::remove_all(tg.run_dir, ec);
      }
    }
  if (ab) {
    // The per-job records of both sides, phase by phase, as `compare` reads them.
    CompareOptions co;
    co.allow_machine_mismatch = false;
    try {
      const Comparison c = compare_files(targets[0].session->path(), targets[1].session->path(), co);
      fmt::print("\n== {} against {}: per-job phases (compare)\n{}", targets[1].name, targets[0].name, format_table(c, {}));
    } catch (const std::exception& e) {
      fmt::print(stderr, "load: cannot compare the two sides: {}\n", e.what());
    }
  }
  if (failed > 0) fmt::print("{} JOB(S) FAILED (see stderr)\n", failed);
  return failed > 0 ? kExitFailure : kExitOk;
}

Registrar reg_load("load", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("load", "load-test cuzkd: open loop (Poisson arrivals, a rate sweep) or closed loop (N clients)");
  auto o = std::make_shared<LoadOptions>();
  sub->add_option("--socket", o->socket, "a running daemon's unix socket (or HOST:PORT); A,B: two, compared");
  sub->add_option("--preset", o->preset,
                  "start this preset's cuzkd (build/<preset>/daemon/cuzkd) and drain it at the end; A,B: both, "
                  "the same schedule on each, interleaved, then compared");
  sub->add_flag("--build", o->build, "--preset: configure and build each preset's cuzkd first");
  sub->add_option("--rounds", o->rounds, "--preset A,B: rounds of the whole schedule per side (ABBA order)")
      ->capture_default_str();
  sub->add_option("--out-dir", o->out_dir, "--preset A,B: the folder of A.jsonl and B.jsonl");
  sub->add_option("--daemon-arg", o->daemon_args, "an argument for the daemon --preset starts (repeatable)")->allow_extra_args(false);
  sub->add_option("--mode", o->mode, "open (arrivals at --rates) or closed (--clients)")->capture_default_str();
  auto* rates = sub->add_option("--rates", o->rates, "open loop: offered rates in proofs per second, comma-separated (a sweep)")
                    ->capture_default_str();
  auto* clients = sub->add_option("--clients", o->clients, "closed loop: concurrent clients")->capture_default_str();
  sub->add_option("--jobs", o->jobs, "jobs per step")->capture_default_str();
  sub->add_option("--warmup", o->warmup, "first jobs of each step recorded as warm-up")->capture_default_str();
  sub->add_option("--partitions", o->partitions, "partitions per job")->capture_default_str();
  sub->add_option("--priority", o->priority, "the jobs' priority")->capture_default_str();
  sub->add_option("--seed", o->seed, "arrival times and job inputs")->capture_default_str();
  sub->add_option("--ready-timeout", o->ready_timeout, "--preset: seconds to wait for SERVING")->capture_default_str();
  sub->add_option("--out", o->out, "results file (default results/local/load-<UTC time>-<pid>.jsonl)");
  sub->add_flag("--force", o->force, "overwrite --out if it exists");
  return [=] {
    // An option of the other loop would be ignored without a word: refused instead.
    if (o->mode == "closed" && rates->count() > 0) throw Error("--rates is for --mode open; a closed loop takes --clients");
    if (o->mode == "open" && clients->count() > 0) throw Error("--clients is for --mode closed; an open loop takes --rates");
    return run_load(*o);
  };
});

}  // namespace
}  // namespace cuzk::cli
