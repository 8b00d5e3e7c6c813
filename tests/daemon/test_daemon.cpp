// cuzkd end to end: a real daemon on a temporary unix socket in every test case, talked to
// through the gRPC API (docs/daemon.md). The circuit is the smallest PoRep shape (one
// challenge, depth 3: 3132 constraints), so one partition proves in well under a second.
#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "catch.hpp"
#include "child_process.hpp"
#include "daemon/client/client.hpp"
#include "test_util.hpp"

namespace t = cuzk::test;
namespace v1 = cuzk::daemon::v1;
using t::wait_for;

namespace {

std::string daemon_binary() {
  const char* b = std::getenv("CUZK_DAEMON");
  return b ? b : std::string(CUZK_BUILD_DIR) + "/daemon/cuzkd";
}

// One cuzkd in `dir`, its state in dir/<name>, its socket dir/<name>.sock.
class Daemon {
 public:
  Daemon(const t::TempDir& d, std::vector<std::string> extra = {}, const std::string& name = "st")
      : dir_(d.path()), state_(d.file(name)), sock_(d.file(name + ".sock")), log_(d.file(name + ".log")),
        ready_(d.file(name + ".ready")), extra_(std::move(extra)) {
    start();
  }
  ~Daemon() {
    if (alive()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  void start() {
    unlink(ready_.c_str());
    std::vector<std::string> args{daemon_binary(), "--state-dir", state_, "--socket", sock_, "--challenges", "1",
                                  "--depth", "3", "--ready-file", ready_};
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_ = fork();
    if (pid_ == 0) {
      if (chdir(dir_.c_str()) != 0) _exit(126);
      const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    INFO(t::slurp(log_));
    REQUIRE(wait_for([&] { return t::exists(ready_) || !alive(); }, 300 * t::kSlowdown));
    REQUIRE(alive());
  }
  bool alive() { return pid_ > 0 && waitpid(pid_, &status_, WNOHANG) == 0; }
  // SIGTERM; the exit status once it ended (-1 if it did not within `seconds`).
  int term(int seconds) {
    kill(pid_, SIGTERM);
    if (!wait_for([&] { return !alive(); }, seconds)) return -1;
    pid_ = -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  void kill9() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::unique_ptr<v1::ProvingEngine::Stub> stub() const { return v1::ProvingEngine::NewStub(channel()); }
  std::shared_ptr<grpc::Channel> channel() const { return cuzk::daemon::connect(sock_); }
  const std::string& socket() const { return sock_; }
  const std::string& state() const { return state_; }
  std::string log() const { return t::slurp(log_); }

 private:
  std::string dir_, state_, sock_, log_, ready_;
  std::vector<std::string> extra_;
  pid_t pid_ = -1;
  int status_ = 0;
};

v1::SubmitRequest request(const std::string& input, const std::string& id = "", v1::Priority p = v1::NORMAL) {
  v1::SubmitRequest r;
  r.set_kind("porep");
  r.set_request_id(id);
  r.set_priority(p);
  r.set_input_json(input);
  return r;
}

grpc::Status submit(v1::ProvingEngine::Stub& s, const v1::SubmitRequest& r, v1::SubmitReply* rep) {
  grpc::ClientContext ctx;
  return s.SubmitProof(&ctx, r, rep);
}

v1::JobStatus await(v1::ProvingEngine::Stub& s, const std::string& id, double timeout = 0) {
  grpc::ClientContext ctx;
  ctx.set_wait_for_ready(true);  // a connection still being made is waited for, not a failure
  v1::AwaitRequest req;
  req.set_job_id(id);
  req.set_timeout_seconds(timeout);
  v1::AwaitReply rep;
  const grpc::Status st = s.AwaitProof(&ctx, req, &rep);
  INFO(cuzk::daemon::describe(st));
  REQUIRE(st.ok());
  return rep.job();
}

v1::StatusReply status(v1::ProvingEngine::Stub& s) {
  grpc::ClientContext ctx;
  v1::StatusReply rep;
  REQUIRE(s.GetStatus(&ctx, {}, &rep).ok());
  return rep;
}

bool serving(const Daemon& d) {
  std::string last;
  return cuzk::daemon::wait_serving(d.channel(), 0, last);
}

std::string submit_ok(v1::ProvingEngine::Stub& s, const v1::SubmitRequest& r) {
  v1::SubmitReply rep;
  const grpc::Status st = submit(s, r, &rep);
  INFO(cuzk::daemon::describe(st));
  REQUIRE(st.ok());
  return rep.job_id();
}

// The daemon's results file: job ids in the order their samples were written (completion order).
std::vector<std::string> completion_order(const Daemon& d) {
  std::vector<std::string> ids;
  for (const auto& e : std::filesystem::directory_iterator(d.state()))
    if (e.path().filename().string().rfind("results-", 0) == 0)
      for (const auto& line : t::lines_of(t::slurp(e.path().string()))) {
        const auto j = nlohmann::json::parse(line);
        if (j.value("type", "") == "sample") ids.push_back(j["job"]["id"]);
      }
  return ids;
}

}  // namespace

TEST_CASE("daemon: SERVING with the parameters resident; submit, await, a verified proof written atomically", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon dm(d);
  CHECK(serving(dm));
  struct stat st {};
  REQUIRE(stat(dm.socket().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto s = dm.stub();
  const auto stat0 = status(*s);
  REQUIRE(stat0.resident_params_size() == 1);

  const std::string id = submit_ok(*s, request(R"({"partitions": 2, "circuit_seed": 7})"));
  const v1::JobStatus j = await(*s, id);
  INFO(j.reason());
  REQUIRE(j.state() == v1::DONE);
  CHECK(j.verified());
  const auto proof = nlohmann::json::parse(t::slurp(j.proof_path()));
  CHECK(proof["partitions"].size() == 2);
  CHECK(proof["verified"] == true);
  // The phases of the engine's records, and they add up to the whole.
  std::map<std::string, uint64_t> ph;
  for (const auto& p : j.phases()) ph[p.path()] = p.wall_ns();
  for (const char* p : {"proof", "proof/queue", "proof/witness", "proof/srs_load", "proof/synth", "proof/prove"})
    CHECK(ph.count(p) == 1);
  CHECK(ph["proof/synth"] > 0);
  CHECK(ph["proof/prove"] > 0);
  CHECK(ph["proof/queue"] + ph["proof/witness"] + ph["proof/srs_load"] + ph["proof/synth"] + ph["proof/prove"] <=
        ph["proof"]);
  // No temporary file is left beside the proof.
  for (const auto& e : std::filesystem::directory_iterator(dm.state() + "/proofs"))
    CHECK(e.path().extension() == ".json");

  // Health follows residency: evicting the served parameters says NOT_SERVING, preloading
  // them again SERVING.
  const std::string params = stat0.resident_params(0);
  {
    grpc::ClientContext ctx;
    v1::ParamsRequest req;
    req.set_path(params);
    v1::ParamsReply rep;
    REQUIRE(s->EvictParams(&ctx, req, &rep).ok());
    CHECK(rep.resident_params_size() == 0);
  }
  CHECK_FALSE(serving(dm));
  {
    grpc::ClientContext ctx;
    v1::ParamsRequest req;
    req.set_path(params);
    v1::ParamsReply rep;
    REQUIRE(s->PreloadParams(&ctx, req, &rep).ok());
  }
  CHECK(serving(dm));

  // Metrics: Prometheus text with the finished job.
  grpc::ClientContext ctx;
  v1::MetricsReply m;
  REQUIRE(s->GetMetrics(&ctx, {}, &m).ok());
  CHECK(m.prometheus_text().find("cuzk_jobs_total{outcome=\"done\"} 1") != std::string::npos);
  CHECK(m.prometheus_text().find("cuzk_job_phase_seconds_count{phase=\"proof/prove\"} 1") != std::string::npos);
  CHECK(dm.term(60) == 0);
}

TEST_CASE("daemon: a request id is an idempotency key; other input under it is refused", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon dm(d);
  auto s = dm.stub();
  v1::SubmitReply a, b, c;
  REQUIRE(submit(*s, request(R"({"partitions": 1})", "req-1"), &a).ok());
  REQUIRE(submit(*s, request(R"({"partitions": 1, "rs_seed": 1})", "req-1"), &b).ok());  // the same input, spelled out
  CHECK(b.job_id() == a.job_id());
  CHECK(b.duplicate());
  const grpc::Status st = submit(*s, request(R"({"partitions": 2})", "req-1"), &c);
  CHECK(st.error_code() == grpc::ALREADY_EXISTS);
  CHECK(st.error_message().find("req-1") != std::string::npos);
  CHECK(await(*s, a.job_id()).state() == v1::DONE);
}

TEST_CASE("daemon: a CRITICAL job overtakes queued NORMAL ones, not the ones in the engine", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon dm(d);
  auto s = dm.stub();
  std::vector<std::string> normal;
  for (int i = 0; i < 6; ++i) normal.push_back(submit_ok(*s, request(fmt::format(R"({{"partitions": 2, "circuit_seed": {}}})", i))));
  v1::SubmitReply crit;
  REQUIRE(submit(*s, request(R"({"partitions": 1})", "", v1::CRITICAL), &crit).ok());
  CHECK(crit.queue_position() == 1);  // ahead of every queued NORMAL job
  for (const auto& id : normal) CHECK(await(*s, id).state() == v1::DONE);
  REQUIRE(await(*s, crit.job_id()).state() == v1::DONE);
  const auto order = completion_order(dm);
  REQUIRE(order.size() == 7);
  const auto pos = std::find(order.begin(), order.end(), crit.job_id()) - order.begin();
  // At most two batches were in the engine when it arrived (DaemonConfig::max_inflight).
  INFO("completion order position " << pos);
  CHECK(pos <= 2);
  CHECK(pos < 6);
}

TEST_CASE("daemon: batches form by size within the wait, and a lone job goes after the wait", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon dm(d, {"--max-batch", "3", "--max-wait-ms", "3000"});
  auto s = dm.stub();
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(submit_ok(*s, request(fmt::format(R"({{"partitions": 1, "circuit_seed": {}}})", i))));
  for (const auto& id : ids) {
    const auto j = await(*s, id);
    CHECK(j.state() == v1::DONE);
    CHECK(j.batch_size() == 3);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string lone = submit_ok(*s, request(R"({"partitions": 1, "circuit_seed": 9})"));
  const auto j = await(*s, lone);
  CHECK(j.state() == v1::DONE);
  CHECK(j.batch_size() == 1);
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(3000));
}

TEST_CASE("daemon: cancelling a queued job and a running one", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon dm(d);
  auto s = dm.stub();
  // A long job (16 partitions) keeps the engine busy while the others wait.
  const std::string big = submit_ok(*s, request(R"({"partitions": 16})"));
  const std::string second = submit_ok(*s, request(R"({"partitions": 16, "circuit_seed": 1})"));
  const std::string queued = submit_ok(*s, request(R"({"partitions": 1, "circuit_seed": 2})"));
  REQUIRE(wait_for([&] {
    const auto st = status(*s);
    return std::find(st.running().begin(), st.running().end(), big) != st.running().end();
  }, 60));
  auto cancel = [&](const std::string& id) {
    grpc::ClientContext ctx;
    v1::CancelRequest req;
    req.set_job_id(id);
    v1::CancelReply rep;
    REQUIRE(s->CancelProof(&ctx, req, &rep).ok());
    return rep.state();
  };
  CHECK(cancel(queued) == v1::CANCELLED);
  CHECK(await(*s, queued).state() == v1::CANCELLED);
  CHECK(cancel(big) == v1::RUNNING);  // requested; it ends as CANCELLED
  const auto j = await(*s, big);
  CHECK(j.state() == v1::CANCELLED);
  CHECK_FALSE(j.reason().empty());
  CHECK(await(*s, second).state() == v1::DONE);  // the engine goes on
  grpc::ClientContext ctx;
  v1::CancelRequest req;
  req.set_job_id("job-999");
  v1::CancelReply rep;
  CHECK(s->CancelProof(&ctx, req, &rep).error_code() == grpc::NOT_FOUND);
}

TEST_CASE("daemon: past the pending limit a submission gets RESOURCE_EXHAUSTED and the daemon goes on", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon dm(d, {"--pending-limit", "2"});
  auto s = dm.stub();
  // Two long jobs take the engine's two slots, two more fill the queue.
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) ids.push_back(submit_ok(*s, request(fmt::format(R"({{"partitions": 12, "circuit_seed": {}}})", i))));
  REQUIRE(wait_for([&] { return status(*s).running_size() == 2; }, 60));
  for (int i = 2; i < 4; ++i) ids.push_back(submit_ok(*s, request(fmt::format(R"({{"partitions": 1, "circuit_seed": {}}})", i))));
  v1::SubmitReply rep;
  const grpc::Status st = submit(*s, request(R"({"partitions": 1, "circuit_seed": 99})"), &rep);
  CHECK(st.error_code() == grpc::RESOURCE_EXHAUSTED);
  CHECK(st.error_message().find("limit") != std::string::npos);
  for (const auto& id : ids) CHECK(await(*s, id).state() == v1::DONE);
  CHECK(submit(*s, request(R"({"partitions": 1, "circuit_seed": 99})"), &rep).ok());
}

TEST_CASE("daemon: SIGKILL with jobs queued; at restart every accepted job is finished or failed with a reason", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  std::vector<std::string> ids;
  {
    Daemon dm(d);
    auto s = dm.stub();
    ids.push_back(submit_ok(*s, request(R"({"partitions": 8})", "k-0")));
    for (int i = 1; i < 5; ++i)
      ids.push_back(submit_ok(*s, request(fmt::format(R"({{"partitions": 1, "circuit_seed": {}}})", i), fmt::format("k-{}", i))));
    dm.kill9();  // accepted means journaled: nothing may be lost from here
    Daemon again(d);
    auto s2 = again.stub();
    for (const auto& id : ids) {
      const auto j = await(*s2, id);
      INFO(id << ": " << j.reason());
      CHECK(j.state() == v1::DONE);
      CHECK(j.verified());
    }
    CHECK(await(*s2, ids[1]).restarts() >= 1);
    // The idempotency keys survive the restart too.
    v1::SubmitReply rep;
    REQUIRE(submit(*s2, request(R"({"partitions": 1, "circuit_seed": 1})", "k-1"), &rep).ok());
    CHECK(rep.job_id() == ids[1]);
    CHECK(again.term(60) == 0);
  }
  // --on-restart fail: unfinished jobs are failed with the reason, not lost.
  t::TempDir d2;
  REQUIRE(t::share_params_cache(d2));
  std::vector<std::string> ids2;
  {
    Daemon dm(d2);
    auto s = dm.stub();
    ids2.push_back(submit_ok(*s, request(R"({"partitions": 8})")));
    ids2.push_back(submit_ok(*s, request(R"({"partitions": 1, "circuit_seed": 3})")));
    dm.kill9();
  }
  Daemon failing(d2, {"--on-restart", "fail"});
  auto s = failing.stub();
  for (const auto& id : ids2) {
    const auto j = await(*s, id);
    if (j.state() != v1::DONE) {  // it may have finished before the kill
      CHECK(j.state() == v1::FAILED);
      CHECK(j.reason().find("restarted") != std::string::npos);
    }
  }
}

TEST_CASE("daemon: SIGTERM drains: no new jobs, the running one finishes, the queued ones stay journaled", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  std::vector<std::string> ids;
  {
    Daemon dm(d, {"--grace-s", "120"});
    auto s = dm.stub();
    ids.push_back(submit_ok(*s, request(R"({"partitions": 6})")));
    REQUIRE(wait_for([&] { return status(*s).running_size() == 1; }, 60));
    // The engine holds two batches at most: the third and fourth jobs stay queued.
    ids.push_back(submit_ok(*s, request(R"({"partitions": 6, "circuit_seed": 1})")));
    ids.push_back(submit_ok(*s, request(R"({"partitions": 1, "circuit_seed": 2})")));
    ids.push_back(submit_ok(*s, request(R"({"partitions": 1, "circuit_seed": 3})")));
    CHECK(dm.term(180) == 0);
    INFO(dm.log());
    CHECK(dm.log().find("drained") != std::string::npos);
  }
  // What the journal says now: the running ones done, the queued ones resumed by the next daemon.
  Daemon again(d);
  auto s = again.stub();
  CHECK(await(*s, ids[0]).restarts() == 0);
  CHECK(await(*s, ids[0]).state() == v1::DONE);
  for (size_t i = 1; i < ids.size(); ++i) CHECK(await(*s, ids[i]).state() == v1::DONE);
  // The last one was still queued when the signal came (two batches at most were in the engine).
  CHECK(await(*s, ids[3]).restarts() == 1);
}

TEST_CASE("daemon: hostile input gets one clear status each, and the daemon keeps serving", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  std::filesystem::create_directories(d.file("inputs"));
  t::spit(d.file("inputs/ok.json"), R"({"partitions": 1})");
  t::spit(d.file("outside.json"), R"({"partitions": 1})");
  std::filesystem::create_symlink(d.file("outside.json"), d.file("inputs/escape.json"));
  Daemon dm(d, {"--input-dir", d.file("inputs"), "--max-message-bytes", "65536", "--max-input-bytes", "1024"});
  auto s = dm.stub();
  auto code_of = [&](const v1::SubmitRequest& r) {
    v1::SubmitReply rep;
    const grpc::Status st = submit(*s, r, &rep);
    CHECK_FALSE((st.error_message().empty() && !st.ok()));
    return st.error_code();
  };
  CHECK(code_of(request(std::string(200000, ' ') + "{}")) == grpc::RESOURCE_EXHAUSTED);  // over the message limit
  CHECK(code_of(request(std::string(2000, ' ') + "{}")) == grpc::RESOURCE_EXHAUSTED);    // over the input limit
  v1::SubmitRequest kind = request(R"({"partitions": 1})");
  kind.set_kind("snark");
  CHECK(code_of(kind) == grpc::INVALID_ARGUMENT);
  CHECK(code_of(request(R"({"partitions": 1)")) == grpc::INVALID_ARGUMENT);
  CHECK(code_of(request(R"({"partitions": -1})")) == grpc::INVALID_ARGUMENT);
  CHECK(code_of(request(R"({"partitions": 1000})")) == grpc::INVALID_ARGUMENT);
  CHECK(code_of(request(R"([1, 2])")) == grpc::INVALID_ARGUMENT);
  v1::SubmitRequest none;
  none.set_kind("porep");
  CHECK(code_of(none) == grpc::INVALID_ARGUMENT);
  v1::SubmitRequest prio = request(R"({"partitions": 1})");
  prio.set_priority(v1::Priority(42));
  CHECK(code_of(prio) == grpc::INVALID_ARGUMENT);
  for (const char* path : {"../outside.json", "/etc/passwd", "escape.json"}) {
    v1::SubmitRequest r = request("");
    r.set_input_path(path);
    INFO(path);
    CHECK(code_of(r) == grpc::PERMISSION_DENIED);
  }
  v1::SubmitRequest missing = request("");
  missing.set_input_path("nope.json");
  CHECK(code_of(missing) == grpc::NOT_FOUND);
  v1::SubmitRequest from_file = request("");
  from_file.set_input_path("ok.json");
  v1::SubmitReply ok;
  REQUIRE(submit(*s, from_file, &ok).ok());

  // A client that goes away mid-await: its call ends, the job does not.
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
    v1::AwaitRequest req;
    req.set_job_id(ok.job_id());
    v1::AwaitReply rep;
    const grpc::Status st = s->AwaitProof(&ctx, req, &rep);
    CHECK((st.error_code() == grpc::DEADLINE_EXCEEDED || st.ok()));
  }
  CHECK(await(*s, ok.job_id()).state() == v1::DONE);
  // An await with a timeout that passes says so.
  const std::string slow = submit_ok(*s, request(R"({"partitions": 8})"));
  grpc::ClientContext ctx;
  v1::AwaitRequest req;
  req.set_job_id(slow);
  req.set_timeout_seconds(0.05);
  v1::AwaitReply rep;
  REQUIRE(s->AwaitProof(&ctx, req, &rep).ok());
  CHECK(rep.timed_out());
  CHECK(await(*s, slow).state() == v1::DONE);
  const auto st = status(*s);
  CHECK(st.completed() == 2);
  CHECK(dm.alive());
}

TEST_CASE("daemon: bad flags, a socket in use and a file in the socket's place are refused at start", "[daemon]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  auto run = [&](const std::string& args) {
    return std::system(("cd '" + d.path() + "' && '" + daemon_binary() + "' " + args + " >out 2>err").c_str());
  };
  auto exit_of = [](int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : -1; };
  CHECK(exit_of(run("")) == 2);
  CHECK(t::slurp(d.file("err")).find("--state-dir") != std::string::npos);
  CHECK(exit_of(run("--state-dir s --max-batch 9")) == 2);
  CHECK(exit_of(run("--state-dir s --on-restart maybe")) == 2);
  t::spit(d.file("file.sock"), "not a socket");
  CHECK(exit_of(run("--state-dir s --socket file.sock --challenges 1 --depth 3")) == 2);
  CHECK(t::slurp(d.file("err")).find("not a socket") != std::string::npos);
  CHECK(t::slurp(d.file("file.sock")) == "not a socket");
  Daemon dm(d);
  CHECK(exit_of(run("--state-dir other --socket '" + dm.socket() + "' --challenges 1 --depth 3")) == 2);
  CHECK(t::slurp(d.file("err")).find("another daemon") != std::string::npos);
  CHECK(serving(dm));
}

TEST_CASE("daemon: --backend cuda is built in wherever the build has CUDA", "[daemon]") {
  t::TempDir d;
  const std::string cmd = "cd '" + d.path() + "' && '" + daemon_binary() +
                          "' --state-dir s --challenges 1 --depth 3 --backend cuda >out 2>err";
  const int st = std::system(cmd.c_str());
  const std::string err = t::slurp(d.file("err"));
  INFO(err);
  // Without a GPU it stops with the reason; in a CUDA build that reason is never a missing backend.
#if CUZK_HAVE_CUDA
  CHECK(err.find("not built into this binary") == std::string::npos);
#else
  CHECK(err.find("not built into this binary") != std::string::npos);
#endif
  if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) CHECK(!err.empty());
}

TEST_CASE("load: a daemon it started that exits is reported at once, not waited for", "[daemon][load]") {
  // --preset NAME starts build/NAME/daemon/cuzkd: NAME is this build's folder under build/.
  const std::filesystem::path bin(daemon_binary());
  const std::string build = bin.parent_path().parent_path().filename().string();
  const std::string presets = t::slurp(std::string(CUZK_SOURCE_DIR) + "/CMakePresets.json");
  if (bin.parent_path().parent_path().parent_path().filename() != "build" ||
      presets.find("\"name\": \"" + build + "\"") == std::string::npos) {
    WARN("the daemon under test is not a preset's build (build/" << build << "): --preset cannot name it; skipped");
    return;
  }
  t::TempDir d;
  const auto r = t::run_bench("load --preset " + build + " --daemon-arg=--backend=nope --jobs 1 --warmup 0 "
                              "--ready-timeout 3000 --out load.jsonl",
                              d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("exited before it was SERVING") != std::string::npos);
  CHECK(r.err.find("nope") != std::string::npos);  // the daemon's own reason, from its log
}

TEST_CASE("ab --load runs load with both presets, the A/B's rounds and folder; suite options are refused", "[daemon][load]") {
  t::TempDir d;
  // Presets without builds: load names the missing daemon, which shows what ab handed it.
  const auto r = t::run_bench("ab --a nosuch-a --b nosuch-b --load --no-build --rounds 3 --out-dir ab --rates 1 --jobs 4", d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("load --preset nosuch-a,nosuch-b --rounds 3 --out-dir ab --rates 1 --jobs 4") != std::string::npos);
  CHECK(r.err.find("no configure preset named 'nosuch-a'") != std::string::npos);  // load's own check
  const auto suite = t::run_bench("ab --a x --b y --load --suite quick", d.path());
  CHECK(suite.code == 2);
  CHECK(suite.err.find("--suite is for a suite's A/B") != std::string::npos);
  const auto extra = t::run_bench("ab --a x --b y --suite quick --rates 1", d.path());
  CHECK(extra.code == 2);
  CHECK(extra.err.find("--rates") != std::string::npos);
  const auto none = t::run_bench("ab --a x --b y", d.path());
  CHECK(none.code == 2);
  CHECK(none.err.find("--suite is required") != std::string::npos);
}

TEST_CASE("load: a low rate against a daemon accounts for every job, with plausible percentiles", "[daemon][load]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon dm(d);
  const auto r = t::run_bench("load --socket '" + dm.socket() + "' --rates 1 --jobs 6 --warmup 1 --out load.jsonl", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("open-1") != std::string::npos);
  size_t samples = 0;
  std::vector<double> latency;
  nlohmann::json summary;
  for (const auto& line : t::lines_of(t::slurp(d.file("load.jsonl")))) {
    const auto j = nlohmann::json::parse(line);
    if (j["type"] == "sample") {
      ++samples;
      const double req = j["phases"]["request"]["wall_ns"].get<double>();
      const double proof = j["phases"]["proof"]["wall_ns"].get<double>();
      CHECK(req >= proof);  // the client's latency includes the daemon's time
      latency.push_back(req);
      // The reply came after the job was sent at its arrival, and after its latency.
      const double done = j["load"]["done_s"].get<double>();
      CHECK(done >= j["load"]["arrival_s"].get<double>());
      CHECK(done >= req / 1e9);
    }
    if (j["type"] == "summary") summary = j;
  }
  CHECK(samples == 6);
  REQUIRE(summary.contains("load"));
  const auto step = summary["load"]["steps"][0];
  CHECK(step["measured"] == 5);
  CHECK(step["failed"] == 0);
  const double p50 = step["latency"]["p50"]["s"];
  const double mx = step["latency"]["max_s"];
  CHECK(p50 > 0);
  CHECK(p50 <= mx);
  // compare reads the records like any other results file.
  const auto c = t::run_bench("compare load.jsonl load.jsonl", d.path());
  INFO(c.out << c.err);
  CHECK(c.code == 0);
  // Bad input to load: one line, exit 2.
  const auto bad = t::run_bench("load --socket '" + dm.socket() + "' --rates 1,x", d.path());
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--rates") != std::string::npos);
  const auto mixed = t::run_bench("load --socket '" + dm.socket() + "' --mode closed --rates 2", d.path());
  CHECK(mixed.code == 2);
  CHECK(mixed.err.find("--mode open") != std::string::npos);
}

TEST_CASE("load: two daemons under one interleaved schedule, each side's records, and compare's table", "[daemon][load]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon a(d, {}, "a");
  Daemon b(d, {}, "b");
  const auto r = t::run_bench("load --socket '" + a.socket() + "," + b.socket() +
                                  "' --rates 2 --jobs 3 --warmup 1 --rounds 2 --out-dir ab",
                              d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  // Rounds in ABBA order: A first, then B, B, A.
  std::vector<std::string> sides;
  for (const auto& line : t::lines_of(r.err))
    if (line.find("round") != std::string::npos) sides.push_back(line.find(a.socket()) != std::string::npos ? "A" : "B");
  CHECK(sides == std::vector<std::string>{"A", "B", "B", "A"});
  for (const char* f : {"ab/A.jsonl", "ab/B.jsonl"}) {
    size_t samples = 0;
    for (const auto& line : t::lines_of(t::slurp(d.file(f))))
      if (nlohmann::json::parse(line)["type"] == "sample") ++samples;
    CHECK(samples == 6);  // 3 jobs a round, 2 rounds
  }
  CHECK(r.out.find("against") != std::string::npos);
  CHECK(r.out.find("request") != std::string::npos);
  // The completion times give compare a throughput row of the 2 rounds, paired.
  bool throughput_row = false;
  for (const auto& line : t::lines_of(r.out))
    throughput_row = throughput_row || (line.find(" throughput ") != std::string::npos && line.find("2 rounds") != std::string::npos);
  CHECK(throughput_row);
  // Two sides need a folder for their two files.
  const auto bad = t::run_bench("load --socket '" + a.socket() + "," + b.socket() + "' --rates 2", d.path());
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--out-dir") != std::string::npos);
  const auto build = t::run_bench("load --socket '" + a.socket() + "' --build", d.path());
  CHECK(build.code == 2);
  CHECK(build.err.find("--build") != std::string::npos);
  const auto same = t::run_bench("load --preset baseline,baseline --out-dir x", d.path());
  CHECK(same.code == 2);
  CHECK(same.err.find("two different") != std::string::npos);
  CHECK_FALSE(t::exists(d.file("x")));
}

TEST_CASE("load stopped by SIGINT: exit 130, the calls in flight cancelled, the results file closed", "[daemon][load]") {
  t::TempDir d;
  REQUIRE(t::share_params_cache(d));
  Daemon dm(d);
  const pid_t pid = t::spawn_bench(d.path(), {"load", "--socket", dm.socket(), "--rates", "1", "--jobs", "30", "--out", "int.jsonl"},
                                   d.file("load.out"), d.file("load.err"));
  REQUIRE(wait_for([&] { return t::slurp(d.file("load.err")).find("step 1 of 1") != std::string::npos; }, 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a call or two in flight
  kill(pid, SIGINT);
  int st = 0;
  REQUIRE(wait_for([&] { return waitpid(pid, &st, WNOHANG) == pid; }, 20));
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 130);
  const auto lines = t::lines_of(t::slurp(d.file("int.jsonl")));
  REQUIRE_FALSE(lines.empty());
  const auto last = nlohmann::json::parse(lines.back());
  CHECK(last["type"] == "summary");
  CHECK(last["interrupted"]["signal"] == "SIGINT");
  CHECK(serving(dm));  // the daemon is not the client's to stop
}
