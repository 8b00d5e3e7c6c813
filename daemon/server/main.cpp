// cuzkd: the proving daemon (docs/daemon.md). A long-running process that keeps the
// parameters resident and proves the jobs clients submit over gRPC (cuzk.daemon.v1), on a unix
// socket (mode 0600) and, when asked, on TCP.
//
//   cuzkd --state-dir DIR [--socket PATH] [--listen ADDR:PORT | --tcp-port N]
//         [--params FILE | --challenges N --layers N --parents N --depth N] [--backend cpu|cuda]
//         [--max-batch N] [--max-wait-ms N] [--pending-limit N] [--input-dir DIR] [--grace-s S]
//         [--on-restart resume|fail] [--ready-file FILE] [--info]
//
// Readiness: the standard gRPC health service says SERVING once the parameters are resident;
// the engine's ready line goes to stdout and --ready-file is created then. SIGTERM or SIGINT
// drains: no new jobs, the jobs in the engine finish within --grace-s, queued jobs stay in the
// journal (DIR/journal.sqlite) and resume at the next start. Exit 0 after a drain, 2 for bad
// input (a flag, the socket, the parameters), 1 when the server cannot run.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "daemon/server/job_manager.hpp"
#include "daemon/server/service.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/porep_flags.hpp"
#include "harness/measure/machine.hpp"
#include "harness/measure/provenance.hpp"
#include "harness/suite/porep_job.hpp"

namespace fs = std::filesystem;
using cuzk::cli::Error;

namespace {

struct Options {
  std::string state_dir, socket, listen, params, input_dir, ready_file, backend = "cpu", on_restart = "resume";
  int64_t tcp_port = 0, max_batch = 1, max_wait_ms = 0, pending_limit = 64, max_partitions = 16, lookahead = 1,
          budget_mib = 0, max_input_bytes = 64 * 1024, max_message_bytes = 4 * 1024 * 1024;
  uint64_t params_seed = 1, circuit_seed = 42;
  double grace_s = 30;
  bool allow_cpu_fallback = false, info = false;
  cuzk::cli::PorepFlags porep;
};

// A unix socket path that is free to bind: absent, or a stale socket nobody listens on (then
// removed). A live daemon's socket or any other file is refused.
void claim_socket(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path))
    throw Error(fmt::format("--socket {}: longer than the {} bytes a unix socket path may have", path,
                            sizeof(addr.sun_path) - 1));
  std::error_code ec;
  const auto st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st)) {
    const auto dir = fs::path(path).parent_path();
    if (!dir.empty() && !fs::is_directory(dir)) throw Error(fmt::format("--socket {}: no folder {}", path, dir.string()));
    return;
  }
  if (!fs::is_socket(st)) throw Error(fmt::format("--socket {}: exists and is not a socket; not replacing it", path));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  const bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  if (live) throw Error(fmt::format("--socket {}: another daemon is listening on it", path));
  fs::remove(path, ec);
}

std::string gpu_name(const std::string& backend) {
  if (backend != "cuda") return "none";
  const auto m = cuzk::collect_machine();
  return m.gpus.empty() ? "none" : m.gpus.front().name;
}

int run(const Options& o) {
  if (o.info) {
    std::cout << nlohmann::json{{"provenance", cuzk::provenance_json()}}.dump(2) << "\n";
    return 0;
  }
  cuzk::daemon::DaemonConfig cfg;
  if (o.state_dir.empty()) throw Error("--state-dir is required (the journal, proofs and results go there)");
  cfg.state_dir = o.state_dir;
  cfg.circuit = cuzk::cli::porep_params(o.porep);
  cfg.backend = cuzk::cli::resolve_backend(o.backend, o.allow_cpu_fallback);
  cfg.engine.max_batch_size = cuzk::cli::checked_u32("--max-batch", o.max_batch, 1);
  if (cfg.engine.max_batch_size > cuzk::engine::Config::kMaxBatch)
    throw Error(fmt::format("--max-batch {} is out of range [1, {}]", o.max_batch, cuzk::engine::Config::kMaxBatch));
  cfg.engine.lookahead = cuzk::cli::checked_u32("--lookahead", o.lookahead, 1);
  if (o.budget_mib < 0) throw Error(fmt::format("--budget-mib {}: must be 0 (unlimited) or more", o.budget_mib));
  cfg.engine.memory_budget = uint64_t(o.budget_mib) << 20;
  if (o.max_wait_ms < 0) throw Error(fmt::format("--max-wait-ms {}: must be 0 or more", o.max_wait_ms));
  cfg.max_wait_s = double(o.max_wait_ms) / 1e3;
  cfg.pending_limit = cuzk::cli::checked_u32("--pending-limit", o.pending_limit, 1);
  cfg.limits.max_partitions = cuzk::cli::checked_u32("--max-partitions", o.max_partitions, 1);
  cfg.limits.max_input_bytes = cuzk::cli::checked_u32("--max-input-bytes", o.max_input_bytes, 2);
  const uint32_t max_message = cuzk::cli::checked_u32("--max-message-bytes", o.max_message_bytes, 1024);
  if (!(o.grace_s >= 0)) throw Error(fmt::format("--grace-s {}: must be 0 or more", o.grace_s));
  if (o.on_restart != "resume" && o.on_restart != "fail")
    throw Error(fmt::format("--on-restart {}: expected resume or fail", o.on_restart));
  cfg.resume_on_restart = o.on_restart == "resume";
  if (!o.input_dir.empty()) {
    if (!fs::is_directory(o.input_dir)) throw Error(fmt::format("--input-dir {}: no such folder", o.input_dir));
    cfg.input_dir = o.input_dir;
  }
  if (!o.ready_file.empty()) {
    const auto dir = fs::path(o.ready_file).parent_path();
    if (!dir.empty() && !fs::is_directory(dir))
      throw Error(fmt::format("--ready-file {}: the folder {} does not exist", o.ready_file, dir.string()));
  }
  if (!o.params.empty() && !fs::is_regular_file(o.params))
    throw Error(fmt::format("--params {}: no such file (omit it to generate parameters for the circuit)", o.params));
  if (o.tcp_port < 0 || o.tcp_port > 65535) throw Error(fmt::format("--tcp-port {}: out of range [1, 65535]", o.tcp_port));
  const std::string socket = o.socket.empty() ? o.state_dir + "/cuzkd.sock" : o.socket;
  std::error_code ec;
  fs::create_directories(o.state_dir, ec);
  if (ec) throw Error(fmt::format("--state-dir {}: {}", o.state_dir, ec.message()));
  claim_socket(socket);

  // Every thread inherits a blocked SIGINT/SIGTERM; main takes them with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  try {
    cfg.params = cuzk::ensure_porep_params(cfg.circuit, o.circuit_seed, o.params_seed, o.params, "daemon", "porep");
  } catch (const std::exception& e) {
    throw Error(e.what());
  }
  std::unique_ptr<cuzk::daemon::JobManager> jobs;
  try {
    jobs = std::make_unique<cuzk::daemon::JobManager>(cfg);
  } catch (const std::exception& e) {
    throw Error(fmt::format("--state-dir {}: {}", o.state_dir, e.what()));
  }
  cuzk::daemon::ProvingService service(*jobs, cuzk::build_provenance().preset, gpu_name(cfg.backend));

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  std::string tcp = o.listen;
  if (tcp.empty() && o.tcp_port > 0) tcp = fmt::format("127.0.0.1:{}", o.tcp_port);
  int bound_port = 0;
  if (!tcp.empty()) builder.AddListeningPort(tcp, grpc::InsecureServerCredentials(), &bound_port);
  builder.SetMaxReceiveMessageSize(int(max_message));
  builder.RegisterService(&service);
  const mode_t old_mask = ::umask(0077);  // the socket is created 0600: only this user may submit
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ::umask(old_mask);
  if (!server) throw Error(fmt::format("cannot listen on unix:{}{}", socket, tcp.empty() ? "" : " or " + tcp));
  if (!tcp.empty() && bound_port == 0) throw Error(fmt::format("--listen {}: cannot bind it", tcp));
  ::chmod(socket.c_str(), 0600);
  auto* health = server->GetHealthCheckService();
  std::mutex health_mu;
  auto set_serving = [&](bool serving) {
    std::lock_guard lk(health_mu);
    health->SetServingStatus(serving);
  };
  fmt::print(stderr, "cuzkd: listening on unix:{}{}; loading {}\n", socket, tcp.empty() ? "" : " and " + tcp, cfg.params);
  jobs->start(set_serving);
  try {
    jobs->wait_ready();
  } catch (const std::exception& e) {
    server->Shutdown();
    throw Error(fmt::format("cannot load the parameters {}: {}", cfg.params, e.what()));
  }
  const std::string line = cuzk::engine::ready_line(cfg.params);
  fmt::print("{}\n", line);
  std::fflush(stdout);
  if (!o.ready_file.empty()) cuzk::engine::write_ready_file(o.ready_file, line + "\n");

  int sig = 0;
  sigwait(&stop_signals, &sig);
  fmt::print(stderr, "cuzkd: {}: draining (no new jobs; up to {} s for the jobs in the engine)\n",
             sig == SIGTERM ? "SIGTERM" : "SIGINT", o.grace_s);
  set_serving(false);
  const bool drained = jobs->drain(o.grace_s);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  fmt::print(stderr, "cuzkd: {}; results: {}\n",
             drained ? "drained" : "grace time over: the jobs still running are journaled as queued",
             jobs->results_path());
  if (!drained) std::_Exit(0);  // the engine's running call cannot be interrupted; the journal has them
  jobs.reset();
  ::unlink(socket.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  cuzk::cli::register_builtin_backends();
  CLI::App app{"cuzkd: the cuzk proving daemon (gRPC job API; docs/daemon.md)"};
  Options o;
  app.add_option("--state-dir", o.state_dir, "folder of the journal, proofs and results (created)");
  app.add_option("--socket", o.socket, "unix socket to listen on (default: STATE_DIR/cuzkd.sock), mode 0600");
  app.add_option("--tcp-port", o.tcp_port, "also listen on 127.0.0.1:PORT");
  app.add_option("--listen", o.listen, "also listen on this ADDRESS:PORT (any interface you name)");
  app.add_option("--params", o.params, "parameters file (default: generated once for the circuit and cached)");
  cuzk::cli::add_porep_flags(&app, o.porep);
  app.add_option("--params-seed", o.params_seed, "toxic-waste seed of generated parameters")->capture_default_str();
  app.add_option("--circuit-seed", o.circuit_seed, "witness seed used to shape generated parameters")->capture_default_str();
  app.add_option("--backend", o.backend, "cpu or cuda")->capture_default_str();
  app.add_flag("--allow-cpu-fallback", o.allow_cpu_fallback, "use the cpu backend when --backend cannot run here");
  app.add_option("--max-batch", o.max_batch, "jobs per proving call (1..8)")->capture_default_str();
  app.add_option("--max-wait-ms", o.max_wait_ms, "how long a partial batch waits for more jobs")->capture_default_str();
  app.add_option("--lookahead", o.lookahead, "batches synthesized ahead of the prover")->capture_default_str();
  app.add_option("--budget-mib", o.budget_mib, "memory budget of synthesized jobs (0: unlimited)")->capture_default_str();
  app.add_option("--pending-limit", o.pending_limit, "queued jobs before submissions are refused")->capture_default_str();
  app.add_option("--max-partitions", o.max_partitions, "largest partitions count a job may ask for")->capture_default_str();
  app.add_option("--max-input-bytes", o.max_input_bytes, "largest job input (inline or file)")->capture_default_str();
  app.add_option("--max-message-bytes", o.max_message_bytes, "largest gRPC request")->capture_default_str();
  app.add_option("--input-dir", o.input_dir, "folder that input_path files must be in (default: none accepted)");
  app.add_option("--grace-s", o.grace_s, "on SIGTERM, how long running jobs may take to finish")->capture_default_str();
  app.add_option("--on-restart", o.on_restart, "unfinished jobs found in the journal: resume or fail")->capture_default_str();
  app.add_option("--ready-file", o.ready_file, "created (atomically) once the parameters are resident");
  app.add_flag("--info", o.info, "print the build's provenance (variant flags, commit) as JSON and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : cuzk::cli::kExitUsage;
  }
  try {
    return run(o);
  } catch (const Error& e) {
    fmt::print(stderr, "cuzkd: {}\n", e.what());
    return e.code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "cuzkd: {}\n", e.what());
    return cuzk::cli::kExitFailure;
  }
}
