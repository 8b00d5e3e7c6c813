// `cuzk-bench load`: a load generator for cuzkd (docs/daemon.md#load).
//
//   cuzk-bench load (--socket PATH | --preset NAME [--daemon-arg=ARG ...])
//                   [--mode open --rates R1,R2,... | --mode closed --clients N]
//                   [--jobs N] [--warmup N] [--partitions N] [--priority P] [--seed S] [--out FILE]
//
// Open loop: jobs arrive as a Poisson process at each offered rate (proofs per second), each
// one a Prove call on its own thread, whatever the daemon's backlog: latency then includes the
// queueing that offered load causes. Closed loop: N clients, each submitting its next job when
// its last one returned. Per job it records the client's latency (phase "request") and the
// daemon's phase timings (proof, proof/queue, ...) as one sample of a results file that
// compare and gate read; per step it reports throughput, latency percentiles with
// distribution-free 95% CIs, queueing time, and whether the step saturated the daemon
// (throughput below 90% of the offered rate). With --preset it starts that variant's cuzkd on a
// private socket, waits for its health service to say SERVING, and drains it at the end.
#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "daemon/client/client.hpp"
#include "harness/analysis/stats.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/variant_builds.hpp"
#include "harness/measure/clock.hpp"
#include "harness/measure/interrupt.hpp"
#include "harness/measure/provenance.hpp"
#include "harness/measure/session.hpp"

namespace cuzk::cli {
namespace {

namespace fs = std::filesystem;
namespace v1 = cuzk::daemon::v1;

struct LoadOptions {
  std::string socket, preset, mode = "open", rates = "1", priority = "NORMAL", out;
  std::vector<std::string> daemon_args;
  int64_t clients = 1, jobs = 20, warmup = 2, partitions = 1;
  uint64_t seed = 1;
  double ready_timeout = 600;
  bool force = false;
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
  std::string label;
  double offered = 0;  // proofs/s (open loop), 0 for closed
  uint32_t clients = 0, measured = 0, failed = 0;
  double throughput = 0, seconds = 0;
  double p50_s = 0, p90_s = 0, p99_s = 0;
  QuantileCI p50, p90, p99;
  double max_s = 0, queue_p50_s = 0, queue_p99_s = 0;
  bool saturated = false;
};

std::vector<double> parse_rates(const std::string& s) {
  std::vector<double> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const std::string item = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    double r = 0;
    size_t used = 0;
    try {
      r = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || !(r > 0) || !std::isfinite(r))
      throw Error(fmt::format("--rates {}: '{}' is not a positive number of proofs per second", s, item));
    out.push_back(r);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// A cuzkd this command started: its own process group (signals are forwarded to it), drained
// with SIGTERM at the end.
class StartedDaemon {
 public:
  StartedDaemon(const std::string& binary, const std::vector<std::string>& args, const std::string& dir) {
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      const int fd = open((dir + "/cuzkd.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv{const_cast<char*>(binary.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    if (pid_ < 0) throw Error(fmt::format("cannot start {}: fork failed", binary), kExitFailure);
    setpgid(pid_, pid_);
    interrupt::add_child_group(pid_);
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

int run_load(const LoadOptions& o) {
  if (o.socket.empty() == o.preset.empty()) throw Error("give one of --socket (a running daemon) and --preset (start one)");
  if (o.mode != "open" && o.mode != "closed") throw Error(fmt::format("--mode {}: expected open or closed", o.mode));
  const uint32_t jobs = checked_u32("--jobs", o.jobs, 1);
  const uint32_t warmup = checked_u32("--warmup", o.warmup, 0);
  if (warmup >= jobs) throw Error(fmt::format("--warmup {} leaves no measured job of --jobs {}", warmup, jobs));
  const uint32_t partitions = checked_u32("--partitions", o.partitions, 1);
  const uint32_t clients = checked_u32("--clients", o.clients, 1);
  v1::Priority priority;
  if (!v1::Priority_Parse(o.priority, &priority) || priority == v1::PRIORITY_UNSPECIFIED)
    throw Error(fmt::format("--priority {}: expected LOW, NORMAL, HIGH or CRITICAL", o.priority));
  const std::vector<double> rates = o.mode == "open" ? parse_rates(o.rates) : std::vector<double>{0};

  interrupt::install();
  std::unique_ptr<StartedDaemon> started;
  std::string target = o.socket, run_dir;
  if (!o.preset.empty()) {
    const PresetInfo p = read_preset(build_provenance().source_dir, o.preset);
    const std::string binary = p.binary_dir + "/daemon/cuzkd";
    if (!fs::exists(binary))
      throw Error(fmt::format("--preset {}: no {} (build it: cmake --build --preset {} --target cuzkd)", o.preset, binary,
                              o.preset));
    char tmpl[] = "/tmp/cuzk-load-XXXXXX";
    if (!mkdtemp(tmpl)) throw Error("cannot create a folder for the daemon under /tmp", kExitFailure);
    run_dir = tmpl;
    target = run_dir + "/cuzkd.sock";
    std::vector<std::string> args{"--state-dir", run_dir + "/state", "--socket", target, "--grace-s", "2"};
    args.insert(args.end(), o.daemon_args.begin(), o.daemon_args.end());
    started = std::make_unique<StartedDaemon>(binary, args, run_dir);
    fmt::print(stderr, "load: started {} (log {}/cuzkd.log)\n", binary, run_dir);
  }
  auto ch = daemon::connect(target);
  std::string last;
  if (!daemon::wait_serving(ch, started ? o.ready_timeout : 10, last))
    throw Error(fmt::format("the daemon at {} is not SERVING ({}){}", target, last,
                            started ? fmt::format("; its log: {}/cuzkd.log", run_dir) : ""),
                kExitFailure);
  auto stub = v1::ProvingEngine::NewStub(ch);

  SessionOptions so;
  so.suite = "load";
  so.out = o.out;
  so.overwrite = o.force;
  so.default_counters = {};
  so.spans = false;
  std::unique_ptr<Session> session;
  try {
    session = std::make_unique<Session>(so);
  } catch (const std::exception& e) {
    throw Error(e.what());
  }

  std::vector<StepReport> reports;
  std::mutex ctx_mu;
  std::vector<grpc::ClientContext*> live;  // cancelled on SIGINT/SIGTERM
  const uint64_t base = o.seed * 1000003;
  for (size_t step = 0; step < rates.size() && !interrupt::requested(); ++step) {
    const double rate = rates[step];
    const std::string label = o.mode == "open" ? fmt::format("open-{}", rate) : fmt::format("closed-{}", clients);
    std::vector<JobOutcome> out(jobs);
    std::mt19937_64 rng(o.seed + step);
    std::exponential_distribution<double> gap(o.mode == "open" ? rate : 1.0);
    double t = 0;
    for (auto& j : out) {
      j.arrival_s = t;
      t += gap(rng);
    }
    auto one = [&](uint32_t k) {
      v1::SubmitRequest req;
      req.set_request_id(fmt::format("load-{}-{}-{}", getpid(), step, k));
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
      const grpc::Status s = stub->Prove(&ctx, req, &rep);
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
    fmt::print(stderr, "load: step {} of {}: {} job(s), {}\n", step + 1, rates.size(), jobs,
               o.mode == "open" ? fmt::format("Poisson arrivals at {} proofs/s", rate) : fmt::format("{} client(s)", clients));
    const uint64_t start = now_ns();
    std::vector<std::thread> threads;
    std::atomic<uint32_t> next{0};
    std::atomic<bool> stop_watch{false};
    // Ctrl-C: the calls in flight are cancelled, the daemon (if started here) gets the signal.
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
    if (interrupt::requested()) break;
    for (uint32_t k = 0; k < jobs; ++k) {
      if (!out[k].ok) {
        fmt::print(stderr, "load: job {} of step {} failed: {}\n", k, label, out[k].error);
        continue;
      }
      Sample s;
      s.phases["request"].wall_ns = out[k].latency_ns;
      s.phases["request"].count = 1;
      for (const auto& p : out[k].job.phases()) {
        s.phases[p.path()].wall_ns = p.wall_ns();
        s.phases[p.path()].count = 1;
      }
      s.wall_ns = out[k].latency_ns;
      session->record({.suite = "load",
                       .case_name = label,
                       .parameters = {{"mode", o.mode}, {"offered_per_s", rate}, {"clients", o.mode == "open" ? 0u : clients},
                                      {"partitions", partitions}, {"jobs", jobs}},
                       .repetition = int(k),
                       .warm = k < warmup},
                      s,
                      {{"load", {{"job_id", out[k].job.job_id()}, {"arrival_s", out[k].arrival_s},
                                 {"batch_size", out[k].job.batch_size()}}}});
    }
    reports.push_back(summarize(label, rate, o.mode == "open" ? 0 : clients, out, warmup, seconds));
  }
  if (int sig = interrupt::signal_received()) {
    session->finish_interrupted(sig, "discarded");
    if (started) started->stop(5);
    throw Error(fmt::format("interrupted by {}: the step in flight was discarded; results: {}", interrupt::signal_name(sig),
                            session->path()),
                interrupt::exit_code(sig));
  }

  fmt::print("{:<14} {:>9} {:>9} {:>6} {:>6} {:>10} {:>22} {:>10} {:>22} {:>9} {:>10}\n", "step", "offered/s", "done/s",
             "jobs", "failed", "p50 s", "p50 95% CI", "p99 s", "p99 95% CI", "max s", "queue p50");
  nlohmann::json steps = nlohmann::json::array();
  uint32_t failed = 0;
  std::string sustained, saturated;
  for (const auto& r : reports) {
    failed += r.failed;
    fmt::print("{:<14} {:>9} {:>9.3f} {:>6} {:>6} {:>10.3f} {:>22} {:>10.3f} {:>22} {:>9.3f} {:>10.3f}{}\n", r.label,
               r.offered > 0 ? fmt::format("{:.3g}", r.offered) : "-", r.throughput, r.measured, r.failed,
               r.p50_s, ci_text(r.p50), r.p99_s, ci_text(r.p99),
               r.max_s, r.queue_p50_s, r.saturated ? "  SATURATED" : "");
    nlohmann::json j = step_json(r);
    steps.push_back(j);
    if (r.offered > 0) {
      if (!r.saturated) sustained = fmt::format("{:.3g}", r.offered);
      else if (saturated.empty()) saturated = fmt::format("{:.3g}", r.offered);
    }
  }
  if (o.mode == "open" && rates.size() > 1)
    fmt::print("saturation: {}\n", saturated.empty() ? fmt::format("not reached (every offered rate up to {} was served)", sustained)
                                   : sustained.empty() ? fmt::format("already at the lowest rate, {} proofs/s", saturated)
                                                       : fmt::format("between {} (served) and {} proofs/s (throughput below 90% of offered)",
                                                                     sustained, saturated));
  session->finish({{"load", {{"mode", o.mode}, {"steps", steps}}}});
  fmt::print("results: {}\n", session->path());
  if (started) {
    const int st = started->stop(30);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
      fmt::print(stderr, "load: the daemon did not drain cleanly (status {}); its log: {}/cuzkd.log\n", st, run_dir);
  }
  if (failed > 0) fmt::print("{} JOB(S) FAILED (see stderr)\n", failed);
  return failed > 0 ? kExitFailure : kExitOk;
}

Registrar reg_load("load", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("load", "load-test cuzkd: open loop (Poisson arrivals, a rate sweep) or closed loop (N clients)");
  auto o = std::make_shared<LoadOptions>();
  sub->add_option("--socket", o->socket, "a running daemon's unix socket (or HOST:PORT)");
  sub->add_option("--preset", o->preset, "start this preset's cuzkd (build/<preset>/daemon/cuzkd) and drain it at the end");
  sub->add_option("--daemon-arg", o->daemon_args, "an argument for the daemon --preset starts (repeatable)")->allow_extra_args(false);
  sub->add_option("--mode", o->mode, "open (arrivals at --rates) or closed (--clients)")->capture_default_str();
  sub->add_option("--rates", o->rates, "open loop: offered rates in proofs per second, comma-separated (a sweep)")
      ->capture_default_str();
  sub->add_option("--clients", o->clients, "closed loop: concurrent clients")->capture_default_str();
  sub->add_option("--jobs", o->jobs, "jobs per step")->capture_default_str();
  sub->add_option("--warmup", o->warmup, "first jobs of each step recorded as warm-up")->capture_default_str();
  sub->add_option("--partitions", o->partitions, "partitions per job")->capture_default_str();
  sub->add_option("--priority", o->priority, "the jobs' priority")->capture_default_str();
  sub->add_option("--seed", o->seed, "arrival times and job inputs")->capture_default_str();
  sub->add_option("--ready-timeout", o->ready_timeout, "--preset: seconds to wait for SERVING")->capture_default_str();
  sub->add_option("--out", o->out, "results file (default results/local/load-<UTC time>-<pid>.jsonl)");
  sub->add_flag("--force", o->force, "overwrite --out if it exists");
  return [=] { return run_load(*o); };
});

}  // namespace
}  // namespace cuzk::cli
