#include "daemon/server/job_manager.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness/measure/clock.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/session.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/interop/snarkjs_json.hpp"

namespace cuzk::daemon {
namespace fs = std::filesystem;
using Code = ServiceError::Code;

const char* priority_name(Priority p) {
  switch (p) {
    case Priority::low: return "LOW";
    case Priority::normal: return "NORMAL";
    case Priority::high: return "HIGH";
    case Priority::critical: return "CRITICAL";
  }
  return "NORMAL";
}

const char* state_name(State s) {
  switch (s) {
    case State::queued: return "QUEUED";
    case State::running: return "RUNNING";
    case State::done: return "DONE";
    case State::failed: return "FAILED";
    case State::cancelled: return "CANCELLED";
  }
  return "QUEUED";
}

namespace {

State state_from(const std::string& name) {
  for (State s : {State::queued, State::running, State::done, State::failed, State::cancelled})
    if (name == state_name(s)) return s;
  return State::failed;
}

bool terminal(State s) { return s == State::done || s == State::failed || s == State::cancelled; }

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct JobManager::Job {
  JournalEntry j;
  JobInput input;
  State state = State::queued;
  Priority priority = Priority::normal;
  uint64_t accepted_ns = 0, dispatched_ns = 0, witness_ns = 0;
  std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false);
  bool verified = false;
  uint32_t batch_size = 0;
  std::vector<std::pair<std::string, uint64_t>> phases;

  // The record journaled with a finished job, and read back after a restart.
  std::string record_json() const {
    nlohmann::json ph = nlohmann::json::object();
    for (const auto& [p, ns] : phases) ph[p] = ns;
    return nlohmann::json{{"verified", verified}, {"batch_size", batch_size}, {"phases", ph}}.dump();
  }
  void load_record() {
    const auto r = nlohmann::json::parse(j.record, nullptr, false);
    if (!r.is_object()) return;
    verified = r.value("verified", false);
    batch_size = r.value("batch_size", 0u);
    if (r.contains("phases") && r["phases"].is_object())
      for (const auto& [p, ns] : r["phases"].items())
        if (ns.is_number_unsigned()) phases.emplace_back(p, ns.get<uint64_t>());
  }
};

JobManager::JobManager(DaemonConfig cfg)
    : cfg_(std::move(cfg)), journal_((fs::create_directories(cfg_.state_dir), cfg_.state_dir + "/journal.sqlite")) {
  fs::create_directories(cfg_.state_dir + "/proofs");
  engine_ = std::make_unique<engine::Engine>(cfg_.engine, cfg_.backend);
  SessionOptions so;
  so.suite = "daemon";
  so.out = fmt::format("{}/results-{}-{}.jsonl", cfg_.state_dir, unix_ms(), ::getpid());
  so.default_counters = {};
  so.spans = false;
  session_ = std::make_unique<Session>(so);
  recover();
}

JobManager::~JobManager() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (dispatcher_.joinable()) dispatcher_.join();
  if (finisher_.joinable()) finisher_.join();
  engine_->shutdown();
}

const std::string& JobManager::results_path() const { return session_->path(); }

void JobManager::recover() {
  for (JournalEntry& e : journal_.load()) {
    auto j = std::make_shared<Job>();
    j->j = e;
    j->priority = Priority(std::clamp(e.priority, 1, 4));
    j->state = state_from(e.state);
    next_seq_ = std::max(next_seq_, e.seq + 1);
    if (terminal(j->state)) {
      j->load_record();
    } else {
      j->j.restarts += 1;
      try {
        j->input = parse_job_input(e.input, cfg_.limits);
        if (!cfg_.resume_on_restart) throw InputError(InputError::Code::invalid, "");
        j->state = State::queued;
        j->j.state = state_name(State::queued);
        j->accepted_ns = now_ns();
        journal_.update(j->j);
        enqueue(j);
      } catch (const InputError& err) {
        j->state = State::failed;
        j->j.state = state_name(State::failed);
        j->j.reason = cfg_.resume_on_restart
                          ? fmt::format("the daemon restarted and could not read the job's input: {}", err.what())
                          : "the daemon restarted before the job finished (started with --on-restart fail)";
        journal_.update(j->j);
        ++failed_;
      }
    }
    jobs_[e.id] = j;
    if (!e.request_id.empty()) by_request_[e.request_id] = j;
  }
}

void JobManager::start(std::function<void(bool)> on_readiness) {
  on_readiness_ = std::move(on_readiness);
  if (on_readiness_) on_readiness_(false);
  preload_ = engine_->preload(cfg_.params);
  dispatcher_ = std::thread([this] { dispatch_loop(); });
  finisher_ = std::thread([this] { finish_loop(); });
}

void JobManager::wait_ready() {
  preload_.get();
  {
    std::lock_guard lk(mu_);
    ready_ = true;
  }
  changed_.notify_all();
  if (on_readiness_) on_readiness_(true);
}

void JobManager::enqueue(const JobPtr& j) {
  auto before = [](const JobPtr& a, const JobPtr& b) {
    return a->priority != b->priority ? a->priority > b->priority : a->j.seq < b->j.seq;
  };
  queue_.insert(std::upper_bound(queue_.begin(), queue_.end(), j, before), j);
}

uint32_t JobManager::position_of(const Job& j) const {
  for (size_t i = 0; i < queue_.size(); ++i)
    if (queue_[i].get() == &j) return uint32_t(i + 1);
  return 0;
}

JobManager::Submitted JobManager::submit(const std::string& request_id, const std::string& kind, Priority priority,
                                         const std::string& input, bool from_file) {
  auto refuse = [&](Code c, const std::string& why) {
    metrics_.count("rejected");
    return ServiceError(c, why);
  };
  if (kind != "porep") throw refuse(Code::invalid, fmt::format("unknown kind '{}' (this daemon proves: porep)", kind));
  if (request_id.size() > 256) throw refuse(Code::invalid, "request_id: longer than 256 bytes");
  JobInput in;
  try {
    in = parse_job_input(from_file ? read_input_file(input, cfg_.input_dir, cfg_.limits) : input, cfg_.limits);
  } catch (const InputError& e) {
    const Code c = e.code == InputError::Code::not_found           ? Code::not_found
                   : e.code == InputError::Code::permission_denied ? Code::permission_denied
                   : e.code == InputError::Code::too_large         ? Code::resource_exhausted
                                                                   : Code::invalid;
    throw refuse(c, e.what());
  }
  const std::string canonical = canonical_json(in);

  std::unique_lock lk(mu_);
  if (!request_id.empty()) {
    auto it = by_request_.find(request_id);
    if (it != by_request_.end()) {
      const Job& old = *it->second;
      if (old.j.input != canonical || old.j.kind != kind)
        throw refuse(Code::already_exists,
                     fmt::format("request_id '{}' was used for job {} with other input ({}); this one is {}", request_id,
                                 old.j.id, old.j.input, canonical));
      return {old.j.id, position_of(old), true};
    }
  }
  if (draining_) throw refuse(Code::unavailable, "the daemon is shutting down (SIGTERM): it takes no new jobs");
  if (queue_.size() >= cfg_.pending_limit)
    throw refuse(Code::resource_exhausted, fmt::format("{} jobs are pending, the daemon's limit (--pending-limit); "
                                                       "retry when GetStatus shows fewer",
                                                       queue_.size()));
  auto j = std::make_shared<Job>();
  j->input = in;
  j->priority = priority;
  j->j.id = fmt::format("job-{}", next_seq_);
  j->j.request_id = request_id;
  j->j.kind = kind;
  j->j.priority = int(priority);
  j->j.input = canonical;
  j->j.accepted_unix_ms = unix_ms();
  j->accepted_ns = now_ns();
  try {
    journal_.insert(j->j);  // durable before the reply
  } catch (const JournalError& e) {
    throw refuse(Code::unavailable, fmt::format("cannot journal the job: {}", e.what()));
  }
  next_seq_ = j->j.seq + 1;
  jobs_[j->j.id] = j;
  if (!request_id.empty()) by_request_[request_id] = j;
  enqueue(j);
  const uint32_t pos = position_of(*j);
  lk.unlock();
  changed_.notify_all();
  return {j->j.id, pos, false};
}

void JobManager::dispatch_loop() {
  for (;;) {
    auto b = std::make_unique<Batch>();
    {
      std::unique_lock lk(mu_);
      for (;;) {
        if (stop_ || draining_) return;
        if (ready_ && !queue_.empty() && inflight_.size() < cfg_.max_inflight) {
          // A partial batch waits up to max_wait after its oldest job was accepted.
          const size_t want = cfg_.engine.max_batch_size;
          if (queue_.size() >= want || cfg_.max_wait_s <= 0) break;
          uint64_t oldest = UINT64_MAX;
          for (const auto& j : queue_) oldest = std::min(oldest, j->accepted_ns);
          const uint64_t due = oldest + uint64_t(cfg_.max_wait_s * 1e9);
          const uint64_t now = now_ns();
          if (now >= due) break;
          changed_.wait_for(lk, std::chrono::nanoseconds(due - now));
          continue;
        }
        changed_.wait(lk);
      }
      const size_t n = std::min<size_t>(queue_.size(), cfg_.engine.max_batch_size);
      b->jobs.assign(queue_.begin(), queue_.begin() + long(n));
      queue_.erase(queue_.begin(), queue_.begin() + long(n));
      for (auto& j : b->jobs) {
        j->state = State::running;
        j->j.state = state_name(State::running);
        j->dispatched_ns = now_ns();
        journal_.update(j->j);
      }
    }
    // Witness generation is input preparation (as in `cuzk-bench prove`): outside the lock. A
    // job whose witnesses cannot be made (out of memory) fails alone; the batch goes on.
    std::vector<JobPtr> ok;
    for (auto& j : b->jobs) {
      const uint64_t t0 = now_ns();
      try {
        engine::Job ej = engine::make_porep_job(j->j.id, cfg_.circuit, j->input.partitions, j->input.circuit_seed,
                                                j->input.rs_seed, cfg_.params);
        ej.cancelled = j->cancel;
        b->engine_jobs.push_back(std::move(ej));
        ok.push_back(j);
      } catch (const std::exception& e) {
        std::lock_guard lk(mu_);
        end_job(j, State::failed, fmt::format("cannot generate the job's witnesses: {}", e.what()));
      }
      j->witness_ns = now_ns() - t0;
    }
    b->jobs = std::move(ok);
    if (b->jobs.empty()) continue;
    b->futures = engine_->submit_all(b->engine_jobs);
    {
      std::lock_guard lk(mu_);
      inflight_.push_back(std::move(b));
    }
    changed_.notify_all();
  }
}

void JobManager::finish_loop() {
  for (;;) {
    Batch* b = nullptr;
    {
      std::unique_lock lk(mu_);
      changed_.wait(lk, [&] { return stop_ || !inflight_.empty(); });
      if (inflight_.empty()) return;
      b = inflight_.front().get();
    }
    for (size_t i = 0; i < b->jobs.size(); ++i) finish_job(b->jobs[i], b->engine_jobs[i], b->futures[i]);
    {
      std::lock_guard lk(mu_);
      inflight_.pop_front();
    }
    changed_.notify_all();
  }
}

void JobManager::finish_job(const JobPtr& j, engine::Job& ej, std::future<engine::JobResult>& f) {
  engine::JobResult r;
  std::string error;
  bool cancelled = false;
  try {
    r = f.get();
  } catch (const engine::JobCancelled&) {
    cancelled = true;
  } catch (const std::exception& e) {
    error = e.what();
  }
  const uint64_t done_ns = now_ns();
  if (error.empty() && !cancelled && j->cancel->load()) cancelled = true;  // its prove call had begun
  if (cancelled) {
    std::lock_guard lk(mu_);
    end_job(j, State::cancelled,
            r.pk ? "cancelled while it was being proved: the proof was discarded" : "cancelled while running");
    return;
  }
  if (!error.empty()) {
    std::lock_guard lk(mu_);
    end_job(j, State::failed, error);
    return;
  }
  // Verification and the proof file are the daemon's own work, after the record's phases.
  bool verified = true;
  nlohmann::json proofs = nlohmann::json::array();
  for (size_t i = 0; i < r.proofs.size(); ++i) {
    const auto pub = (*ej.partitions)[i].public_inputs();
    verified = verified && groth16::verify(r.pk->vk, r.proofs[i], pub);
    proofs.push_back({{"proof", nlohmann::json::parse(interop::proof_to_json(r.proofs[i]))},
                      {"public", nlohmann::json::parse(interop::public_to_json(pub))}});
  }
  const std::string path = fmt::format("{}/proofs/{}.json", fs::absolute(cfg_.state_dir).string(), j->j.id);
  std::string write_error;
  try {
    write_output_file(path, nlohmann::json{{"job_id", j->j.id}, {"partitions", proofs}, {"verified", verified}}.dump(1));
  } catch (const std::exception& e) {
    write_error = e.what();
  }
  const engine::JobRecord& rec = r.record;
  // Phases in the names of `cuzk-bench engine`'s records; the daemon's queue before the engine
  // counts as queue time, witness generation as its own phase.
  const uint64_t total = done_ns - j->accepted_ns;
  const uint64_t daemon_wait = j->dispatched_ns - j->accepted_ns;
  j->phases = {{"proof", total},
               {"proof/queue", daemon_wait + rec.queue_ns()},
               {"proof/witness", j->witness_ns},
               {"proof/srs_load", rec.srs_load_ns()},
               {"proof/synth", rec.synth_ns()},
               {"proof/prove", rec.prove_ns()}};
  j->batch_size = rec.batch_size;
  j->verified = verified;
  for (const auto& [p, ns] : j->phases) metrics_.observe(p, double(ns) / 1e9);
  {
    std::lock_guard lk(session_mu_);
    Sample s;
    for (const auto& [p, ns] : j->phases) {
      s.phases[p].wall_ns = ns;
      s.phases[p].count = 1;
    }
    s.wall_ns = total;
    try {
      session_->record({.suite = "daemon",
                        .case_name = j->j.kind,
                        .parameters = nlohmann::json::parse(j->j.input),
                        .repetition = int(j->j.seq)},
                       s,
                       {{"job", {{"id", j->j.id}, {"priority", priority_name(j->priority)}, {"batch_size", rec.batch_size},
                                 {"verified", verified}, {"restarts", j->j.restarts}}}});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cuzkd: cannot record job %s in %s: %s\n", j->j.id.c_str(), session_->path().c_str(), e.what());
    }
  }
  std::lock_guard lk(mu_);
  if (!write_error.empty()) {
    end_job(j, State::failed, "cannot write the proof: " + write_error);
  } else if (!verified) {
    j->j.proof_path = path;
    end_job(j, State::failed, "the proof did not verify (kept in proof_path)");
  } else {
    j->j.proof_path = path;
    end_job(j, State::done, "");
  }
}

void JobManager::end_job(const JobPtr& j, State s, const std::string& reason) {
  j->state = s;
  j->j.state = state_name(s);
  j->j.reason = reason;
  j->j.record = j->record_json();
  try {
    journal_.update(j->j);
  } catch (const JournalError& e) {
    std::fprintf(stderr, "cuzkd: %s\n", e.what());
  }
  if (s == State::done) ++completed_;
  if (s == State::failed) ++failed_;
  metrics_.count(s == State::done ? "done" : s == State::failed ? "failed" : "cancelled");
  changed_.notify_all();
}

JobView JobManager::view(const Job& j) const {
  JobView v;
  v.id = j.j.id;
  v.request_id = j.j.request_id;
  v.state = j.state;
  v.priority = j.priority;
  v.reason = j.j.reason;
  v.proof_path = j.j.proof_path;
  v.verified = j.verified;
  v.batch_size = j.batch_size;
  v.restarts = uint32_t(j.j.restarts);
  v.phases = j.phases;
  return v;
}

JobView JobManager::await(const std::string& id, double timeout_s, const std::function<bool()>& abandoned,
                          bool& timed_out) {
  std::unique_lock lk(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) throw ServiceError(Code::not_found, fmt::format("no job '{}'", id));
  JobPtr j = it->second;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  timed_out = false;
  while (!terminal(j->state)) {
    if (stop_ || (draining_ && j->state == State::queued))
      throw ServiceError(Code::unavailable,
                         fmt::format("the daemon is shutting down; job {} stays in its journal and resumes at restart", id));
    if (abandoned && abandoned()) throw ServiceError(Code::unavailable, "the client went away");
    if (timeout_s > 0 && std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    // Short waits: a client that disconnects is noticed within 100 ms.
    changed_.wait_for(lk, std::chrono::milliseconds(100));
  }
  return view(*j);
}

State JobManager::cancel(const std::string& id) {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) throw ServiceError(Code::not_found, fmt::format("no job '{}'", id));
  const JobPtr& j = it->second;
  if (j->state == State::queued) {
    queue_.erase(std::remove(queue_.begin(), queue_.end(), j), queue_.end());
    end_job(j, State::cancelled, "cancelled while queued");
  } else if (j->state == State::running) {
    j->cancel->store(true);  // the engine drops it before its next stage; its await says CANCELLED
  }
  return j->state;
}

StatusView JobManager::status() const {
  StatusView s;
  std::lock_guard lk(mu_);
  for (Priority p : {Priority::critical, Priority::high, Priority::normal, Priority::low}) s.queued[priority_name(p)] = 0;
  for (const auto& j : queue_) ++s.queued[priority_name(j->priority)];
  for (const auto& b : inflight_)
    for (const auto& j : b->jobs) s.running.push_back(j->j.id);
  s.resident_params = engine_->resident_params();
  s.draining = draining_;
  s.pending_limit = cfg_.pending_limit;
  s.completed = completed_;
  s.failed = failed_;
  s.backend = engine_->backend().name();
  return s;
}

std::string JobManager::metrics() const {
  const StatusView s = status();
  return metrics_.render(s.queued, uint32_t(s.running.size()));
}

std::vector<std::string> JobManager::preload_params(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw ServiceError(Code::not_found, fmt::format("params {}: no such file", path));
  try {
    engine_->preload(path).get();
  } catch (const std::exception& e) {
    engine_->evict_params(path);
    throw ServiceError(Code::invalid, fmt::format("params {}: {}", path, e.what()));
  }
  if (path == cfg_.params && on_readiness_) on_readiness_(true);
  return engine_->resident_params();
}

std::vector<std::string> JobManager::evict_params(const std::string& path) {
  if (!engine_->evict_params(path))
    throw ServiceError(Code::not_found, fmt::format("params {}: not resident", path));
  // The served parameters gone: not ready until preloaded again (jobs would load them).
  if (path == cfg_.params && on_readiness_) on_readiness_(false);
  return engine_->resident_params();
}

bool JobManager::drain(double grace_s) {
  std::unique_lock lk(mu_);
  draining_ = true;
  changed_.notify_all();
  const bool ended = changed_.wait_for(lk, std::chrono::duration<double>(grace_s), [&] { return inflight_.empty(); });
  if (!ended) {
    // Still in the engine after the grace time: back to QUEUED in the journal, to resume.
    for (const auto& b : inflight_)
      for (const auto& j : b->jobs)
        if (!terminal(j->state)) {
          j->j.state = state_name(State::queued);
          try {
            journal_.update(j->j);
          } catch (const JournalError& e) {
            std::fprintf(stderr, "cuzkd: %s\n", e.what());
          }
        }
  }
  const nlohmann::json counts = {{"completed", completed_}, {"failed", failed_}, {"queued", queue_.size()}};
  lk.unlock();
  std::lock_guard slk(session_mu_);
  session_->finish({{"daemon", counts}});
  return ended;
}

}  // namespace cuzk::daemon
