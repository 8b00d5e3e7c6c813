// `cuzk-bench daemon ACTION --socket PATH`: a client of cuzkd (docs/daemon.md).
//
//   health [--wait S]                      SERVING or not (exit 0 / 1); --wait polls up to S s
//   status [--json]                        queue by priority, running jobs, parameters, counts
//   metrics                                the Prometheus text
//   submit --input JSON | --input-path P [--priority P] [--request-id ID] [--kind K]
//   await JOB [--timeout S] [--json]       the job's state, phases and proof file
//   prove ... (as submit) [--json]         submit and await
//   cancel JOB
//   preload PARAMS | evict PARAMS
//
// A refused request prints its gRPC status and message and exits 2 (bad input: INVALID_ARGUMENT,
// NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED) or 1 (the daemon unreachable, RESOURCE_EXHAUSTED,
// a job that failed).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "daemon/client/client.hpp"
#include "harness/cli/commands.hpp"

namespace cuzk::cli {
namespace {

namespace v1 = cuzk::daemon::v1;

struct DaemonClientOptions {
  std::string action, socket, input, input_path, priority = "NORMAL", request_id, kind = "porep", job, params;
  double timeout = 0, wait = 0;
  bool json = false;
};

int refused(const grpc::Status& s) {
  fmt::print(stderr, "daemon: {}\n", daemon::describe(s));
  switch (s.error_code()) {
    case grpc::INVALID_ARGUMENT:
    case grpc::NOT_FOUND:
    case grpc::ALREADY_EXISTS:
    case grpc::PERMISSION_DENIED: return kExitUsage;
    default: return kExitFailure;
  }
}

nlohmann::json job_json(const v1::JobStatus& j) {
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& p : j.phases()) phases[p.path()] = p.wall_ns();
  return {{"job_id", j.job_id()},       {"request_id", j.request_id()}, {"state", v1::JobState_Name(j.state())},
          {"priority", v1::Priority_Name(j.priority())}, {"reason", j.reason()}, {"proof_path", j.proof_path()},
          {"verified", j.verified()},   {"batch_size", j.batch_size()}, {"restarts", j.restarts()},
          {"phases", phases}};
}

void print_job(const v1::JobStatus& j, bool timed_out) {
  fmt::print("job {}: {}{}{}\n", j.job_id(), v1::JobState_Name(j.state()), timed_out ? " (await timed out)" : "",
             j.reason().empty() ? "" : " - " + j.reason());
  if (!j.proof_path().empty()) fmt::print("  proof: {} ({})\n", j.proof_path(), j.verified() ? "verified" : "NOT VERIFIED");
  for (const auto& p : j.phases()) fmt::print("  {:<16} {:>12.3f} ms\n", p.path(), double(p.wall_ns()) / 1e6);
}

v1::SubmitRequest submit_request(const DaemonClientOptions& o) {
  v1::SubmitRequest r;
  r.set_request_id(o.request_id);
  r.set_kind(o.kind);
  v1::Priority p;
  if (!v1::Priority_Parse(o.priority, &p) || p == v1::PRIORITY_UNSPECIFIED)
    throw Error(fmt::format("--priority {}: expected LOW, NORMAL, HIGH or CRITICAL", o.priority));
  r.set_priority(p);
  if (o.input.empty() == o.input_path.empty()) throw Error("give one of --input JSON and --input-path FILE");
  if (!o.input.empty()) r.set_input_json(o.input);
  else r.set_input_path(o.input_path);
  return r;
}

int job_exit(const v1::JobStatus& j) { return j.state() == v1::DONE ? kExitOk : kExitFailure; }

int run_daemon_client(const DaemonClientOptions& o) {
  if (o.socket.empty()) throw Error("--socket is required (the daemon's unix socket, or HOST:PORT)");
  auto ch = daemon::connect(o.socket);
  auto stub = v1::ProvingEngine::NewStub(ch);
  grpc::ClientContext ctx;
  if (o.action == "health") {
    std::string last;
    const bool ok = daemon::wait_serving(ch, o.wait, last);
    fmt::print("{}\n", ok ? "SERVING" : last);
    return ok ? kExitOk : kExitFailure;
  }
  if (o.action == "status") {
    v1::StatusReply r;
    if (auto s = stub->GetStatus(&ctx, {}, &r); !s.ok()) return refused(s);
    nlohmann::json q = nlohmann::json::object();
    for (const auto& d : r.queued()) q[v1::Priority_Name(d.priority())] = d.jobs();
    nlohmann::json j = {{"queued", q},
                        {"running", std::vector<std::string>(r.running().begin(), r.running().end())},
                        {"resident_params", std::vector<std::string>(r.resident_params().begin(), r.resident_params().end())},
                        {"pinned_bytes", r.pinned_bytes()}, {"backend", r.backend()}, {"gpu", r.gpu()},
                        {"draining", r.draining()}, {"pending_limit", r.pending_limit()},
                        {"completed", r.completed()}, {"failed", r.failed()}, {"preset", r.preset()}};
    if (o.json) {
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("cuzkd ({} preset, {} backend, gpu {}){}\n", r.preset().empty() ? "custom" : r.preset(), r.backend(),
                 r.gpu(), r.draining() ? ": DRAINING" : "");
      std::string queued;  // highest priority first, as the daemon lists them
      for (const auto& d : r.queued()) queued += fmt::format("{}{} {}", queued.empty() ? "" : ", ", v1::Priority_Name(d.priority()), d.jobs());
      fmt::print("  queued: {} (limit {})\n", queued, r.pending_limit());
      fmt::print("  running: {}\n", j["running"].dump());
      fmt::print("  completed {}, failed {}\n", r.completed(), r.failed());
      for (const auto& p : r.resident_params()) fmt::print("  resident: {}\n", p);
    }
    return kExitOk;
  }
  if (o.action == "metrics") {
    v1::MetricsReply r;
    if (auto s = stub->GetMetrics(&ctx, {}, &r); !s.ok()) return refused(s);
    fmt::print("{}", r.prometheus_text());
    return kExitOk;
  }
  if (o.action == "submit") {
    v1::SubmitReply r;
    if (auto s = stub->SubmitProof(&ctx, submit_request(o), &r); !s.ok()) return refused(s);
    if (o.json) fmt::print("{}\n", nlohmann::json{{"job_id", r.job_id()}, {"queue_position", r.queue_position()},
                                                  {"duplicate", r.duplicate()}}.dump());
    else fmt::print("job {}: queued at position {}{}\n", r.job_id(), r.queue_position(), r.duplicate() ? " (already submitted)" : "");
    return kExitOk;
  }
  if (o.action == "await" || o.action == "prove") {
    v1::AwaitReply r;
    grpc::Status s;
    if (o.action == "await") {
      if (o.job.empty()) throw Error("await: name the job (cuzk-bench daemon await JOB)");
      v1::AwaitRequest req;
      req.set_job_id(o.job);
      req.set_timeout_seconds(o.timeout);
      s = stub->AwaitProof(&ctx, req, &r);
    } else {
      s = stub->Prove(&ctx, submit_request(o), &r);
    }
    if (!s.ok()) return refused(s);
    if (o.json) fmt::print("{}\n", job_json(r.job()).dump(2));
    else print_job(r.job(), r.timed_out());
    return r.timed_out() ? kExitFailure : job_exit(r.job());
  }
  if (o.action == "cancel") {
    if (o.job.empty()) throw Error("cancel: name the job (cuzk-bench daemon cancel JOB)");
    v1::CancelRequest req;
    req.set_job_id(o.job);
    v1::CancelReply r;
    if (auto s = stub->CancelProof(&ctx, req, &r); !s.ok()) return refused(s);
    fmt::print("job {}: {}\n", o.job, r.state() == v1::RUNNING ? "RUNNING, cancel requested (it ends as CANCELLED)"
                                                              : v1::JobState_Name(r.state()));
    return kExitOk;
  }
  if (o.action == "preload" || o.action == "evict") {
    if (o.params.empty()) throw Error(fmt::format("{}: name the parameters file", o.action));
    v1::ParamsRequest req;
    req.set_path(o.params);
    v1::ParamsReply r;
    auto s = o.action == "preload" ? stub->PreloadParams(&ctx, req, &r) : stub->EvictParams(&ctx, req, &r);
    if (!s.ok()) return refused(s);
    for (const auto& p : r.resident_params()) fmt::print("resident: {}\n", p);
    return kExitOk;
  }
  throw Error(fmt::format("daemon: unknown action '{}' (health, status, metrics, submit, await, prove, cancel, preload, evict)",
                          o.action));
}

Registrar reg_daemon("daemon", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("daemon", "talk to a running cuzkd: health, status, metrics, submit, await, prove, cancel");
  auto o = std::make_shared<DaemonClientOptions>();
  sub->add_option("action", o->action, "health, status, metrics, submit, await, prove, cancel, preload, evict")->required();
  sub->add_option("target", o->job, "the job (await, cancel) or parameters file (preload, evict)");
  sub->add_option("--socket", o->socket, "the daemon's unix socket, or HOST:PORT");
  sub->add_option("--input", o->input, "submit/prove: the job's input JSON, e.g. '{\"partitions\": 2}'");
  sub->add_option("--input-path", o->input_path, "submit/prove: an input file under the daemon's --input-dir");
  sub->add_option("--priority", o->priority, "LOW, NORMAL, HIGH or CRITICAL")->capture_default_str();
  sub->add_option("--request-id", o->request_id, "idempotency key: resubmitting it returns the same job");
  sub->add_option("--kind", o->kind, "the job's kind")->capture_default_str();
  sub->add_option("--timeout", o->timeout, "await: give up after S seconds (0: wait)")->capture_default_str();
  sub->add_option("--wait", o->wait, "health: poll up to S seconds for SERVING")->capture_default_str();
  sub->add_flag("--json", o->json, "status, submit, await, prove: JSON");
  return [=] {
    DaemonClientOptions opt = *o;
    if (opt.action == "preload" || opt.action == "evict") opt.params = opt.job;
    return run_daemon_client(opt);
  };
});

}  // namespace
}  // namespace cuzk::cli
