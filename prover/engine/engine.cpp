#include "prover/engine/engine.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

#include "prover/engine/fault.hpp"
#include "prover/engine/params_cache.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/instr/phase.hpp"
#include "prover/synth/synth.hpp"

namespace cuzk::engine {
namespace {

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

double mib(uint64_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

using Assignment = r1cs::ProvingAssignment<r1cs::DefaultPolicy>;

}  // namespace

Job make_porep_job(std::string id, const circuits::PorepParams& circuit, uint32_t partitions, uint64_t circuit_seed,
                   std::optional<uint64_t> rs_seed, std::string params_path) {
  auto parts = std::make_shared<std::vector<circuits::PorepCircuit>>();
  parts->reserve(partitions);
  for (uint32_t i = 0; i < partitions; ++i) parts->push_back(circuits::PorepCircuit::generate(circuit, circuit_seed + i));
  return Job{std::move(id), circuit, std::move(parts), rs_seed, std::move(params_path), nullptr};
}

uint64_t estimate_job_bytes(const circuits::PorepParams& circuit, uint32_t partitions) {
  const auto s = circuits::PorepCircuit::shape(circuit);
  return uint64_t(partitions) * (3 * s.constraints + s.inputs + s.aux) * sizeof(fr_t);
}

double proofs_per_minute(uint64_t proofs, uint64_t wall_ns) {
  return wall_ns == 0 ? 0.0 : double(proofs) * 60e9 / double(wall_ns);
}

// ------------------------------------------------------------------------------------------

// A job inside the engine, from submit to its future's value.
struct Pending {
  Job job;
  std::promise<JobResult> promise;
  JobRecord rec;
  std::shared_ptr<const groth16::ProvingKey> pk;
  std::vector<Assignment> assignments;
};
using PendingPtr = std::unique_ptr<Pending>;

struct Engine::Impl {
  Config cfg;
  std::unique_ptr<groth16::Backend> backend;
  ParamsCache cache;

  // Everything below mu: the queues, the budget in use, the stage states. One condition
  // variable: every change notifies all waiters, which re-check their own predicate.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<PendingPtr> input;  // submitted, not yet synthesized
  std::deque<PendingPtr> ready;  // synthesized, waiting for the prover
  uint64_t used = 0;             // estimated bytes of jobs between synthesis start and proof done
  bool synth_busy = false;       // the synthesis stage holds a job
  bool stop = false;
  std::vector<std::thread> threads;

  mutable std::mutex preload_mu;
  std::vector<std::shared_future<void>> preloads;

  Impl(Config c, std::unique_ptr<groth16::Backend> b) : cfg(c), backend(std::move(b)) {
    if (!backend) throw std::invalid_argument("engine: no backend");
    if (cfg.max_batch_size < 1 || cfg.max_batch_size > Config::kMaxBatch)
      throw std::invalid_argument(
          fmt::format("engine: max batch size {} is out of range [1, {}]", cfg.max_batch_size, Config::kMaxBatch));
    if (cfg.lookahead < 1) throw std::invalid_argument("engine: lookahead must be at least 1");
    if (cfg.overlap) {
      threads.emplace_back([this] { synth_loop(); });
      threads.emplace_back([this] { prove_loop(); });
    } else {
      threads.emplace_back([this] { serial_loop(); });
    }
  }

  // ---- predicates (under mu)

  bool fits(uint64_t bytes) const { return cfg.memory_budget == 0 || used == 0 || used + bytes <= cfg.memory_budget; }

  bool can_start_synth() const {
    return !input.empty() && ready.size() < size_t(cfg.lookahead) * cfg.max_batch_size &&
           fits(input.front()->rec.estimated_bytes);
  }

  // Length of the front run of `q` that shares the front's parameters, capped at the batch size.
  size_t batch_prefix(const std::deque<PendingPtr>& q) const {
    size_t n = 0;
    while (n < q.size() && n < cfg.max_batch_size && q[n]->job.params_path == q.front()->job.params_path) ++n;
    return n;
  }

  // The prover takes a batch when it is full, when the next ready job cannot join it (other
  // parameters), or when no further job can become ready without it (synthesis idle and
  // unable to start: nothing queued, look-ahead full or budget used), so it never waits for
  // a batch that cannot form.
  bool batch_ready() const {
    if (ready.empty()) return false;
    const size_t n = batch_prefix(ready);
    return n == cfg.max_batch_size || n < ready.size() || !(synth_busy || can_start_synth());
  }

  // ---- stages (outside mu)

  // Parameters (srs_load) and synthesis of one job; the exception when it failed.
  std::exception_ptr prepare(Pending& p) {
    try {
      check_cancelled(p);
      instr::Phase proof("/proof");
      const auto shape = circuits::PorepCircuit::shape(p.job.circuit);
      p.rec.srs_begin = now_ns();
      {
        instr::Phase srs("srs_load");
        p.pk = cache.get(p.job.params_path, &p.rec.srs_waited);
        groth16::check_params_shape(*p.pk, shape.inputs, shape.aux, shape.constraints,
                                    "the circuit " + p.job.circuit.to_string() + " of job " + p.job.id);
        p.rec.synth_begin = now_ns();
      }
      fault::fail_point("proof/synth");  // test-only $CUZK_INJECT_FAULT fail_at (fault.hpp)
      p.assignments = synth::synthesize_partitions(*p.job.partitions);
      p.rec.synth_end = now_ns();
      return nullptr;
    } catch (...) {
      return std::current_exception();
    }
  }

  void release(uint64_t bytes) {
    {
      std::lock_guard lk(mu);
      used -= bytes;
    }
    cv.notify_all();
  }

  void fail(Pending& p, std::exception_ptr e) {
    p.assignments.clear();
    release(p.rec.estimated_bytes);
    p.promise.set_exception(e);
  }

  static void check_cancelled(const Pending& p) {
    if (p.job.cancelled && p.job.cancelled->load())
      throw JobCancelled(fmt::format("job {}: cancelled", p.job.id));
  }

  // One prove_batch call for jobs that share their parameters; jobs cancelled while they
  // waited for the prover leave the batch first.
  void prove(std::vector<PendingPtr>& all) {
    std::vector<PendingPtr> batch;
    for (auto& p : all) {
      try {
        check_cancelled(*p);
        batch.push_back(std::move(p));
      } catch (...) {
        fail(*p, std::current_exception());
      }
    }
    if (batch.empty()) return;
    std::vector<groth16::Witness> ws;
    std::vector<groth16::Randomness> rs;
    for (auto& p : batch)
      for (size_t i = 0; i < p->assignments.size(); ++i) {
        const Assignment& pa = p->assignments[i];
        ws.push_back(groth16::witness_of(pa));
        rs.push_back(p->job.rs_seed ? groth16::Randomness::from_seed(*p->job.rs_seed + i) : groth16::Randomness::secure());
      }
    std::vector<groth16::Proof> proofs;
    const uint64_t t0 = now_ns();
    try {
      instr::Phase proof("/proof");
      instr::Phase stage("prove");
      fault::fail_point("proof/prove");  // test-only $CUZK_INJECT_FAULT fail_at (fault.hpp)
      proofs = backend->prove_batch(*batch.front()->pk, ws, rs);
      if (proofs.size() != ws.size())
        throw EngineError(fmt::format("backend '{}' returned {} proofs for {} circuits", backend->name(), proofs.size(),
                                      ws.size()));
    } catch (...) {
      auto e = std::current_exception();
      for (auto& p : batch) fail(*p, e);
      return;
    }
    const uint64_t t1 = now_ns();
    size_t k = 0;
    for (auto& p : batch) {
      JobResult r;
      r.proofs.assign(proofs.begin() + k, proofs.begin() + k + p->assignments.size());
      k += p->assignments.size();
      p->rec.prove_begin = t0;
      p->rec.prove_end = t1;
      p->rec.batch_size = uint32_t(batch.size());
      r.record = p->rec;
      r.pk = p->pk;
      p->assignments.clear();  // the witnesses are what the budget accounts for
      release(p->rec.estimated_bytes);
      p->promise.set_value(std::move(r));
    }
  }

  // ---- threads

  void synth_loop() {
    for (;;) {
      PendingPtr p;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return stop || can_start_synth(); });
        if (stop) return;
        p = std::move(input.front());
        input.pop_front();
        used += p->rec.estimated_bytes;
        synth_busy = true;
      }
      std::exception_ptr e = prepare(*p);
      {
        std::lock_guard lk(mu);
        synth_busy = false;
        if (!e) ready.push_back(std::move(p));
      }
      cv.notify_all();
      if (e) fail(*p, e);
    }
  }

  void prove_loop() {
    for (;;) {
      std::vector<PendingPtr> batch;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return stop || batch_ready(); });
        if (stop) return;
        const size_t n = batch_prefix(ready);
        for (size_t i = 0; i < n; ++i) {
          batch.push_back(std::move(ready.front()));
          ready.pop_front();
        }
      }
      cv.notify_all();  // a look-ahead slot is free
      prove(batch);
    }
  }

  // Overlap off: take a batch from the input queue, synthesize each job, prove, repeat.
  void serial_loop() {
    for (;;) {
      std::vector<PendingPtr> batch;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return stop || !input.empty(); });
        if (stop) return;
        const size_t n = batch_prefix(input);
        // The first job always fits (nothing else is in flight); the rest while the budget allows.
        while (batch.size() < n && fits(input.front()->rec.estimated_bytes)) {
          used += input.front()->rec.estimated_bytes;
          batch.push_back(std::move(input.front()));
          input.pop_front();
        }
      }
      std::vector<PendingPtr> ok;
      for (auto& p : batch) {
        if (std::exception_ptr e = prepare(*p)) {
          fail(*p, e);
        } else {
          ok.push_back(std::move(p));
        }
      }
      if (!ok.empty()) prove(ok);
    }
  }

  void shutdown() {
    {
      std::lock_guard lk(mu);
      if (stop && threads.empty()) return;
      stop = true;
    }
    cv.notify_all();
    for (auto& t : threads) t.join();
    threads.clear();
    std::deque<PendingPtr> dropped;
    {
      std::lock_guard lk(mu);
      for (auto* q : {&ready, &input})
        while (!q->empty()) {
          dropped.push_back(std::move(q->front()));
          q->pop_front();
        }
    }
    for (auto& p : dropped) {
      p->assignments.clear();
      p->promise.set_exception(std::make_exception_ptr(
          EngineError(fmt::format("job {}: the engine shut down before the job was proved", p->job.id))));
    }
    std::lock_guard lk(preload_mu);
    for (auto& f : preloads) f.wait();  // a load cannot be interrupted; it is bounded
  }
};

Engine::Engine(Config config, std::unique_ptr<groth16::Backend> backend)
    : impl_(std::make_unique<Impl>(config, std::move(backend))) {}

Engine::Engine(Config config, const std::string& backend_name) : Engine(config, groth16::make_backend(backend_name)) {}

Engine::~Engine() { shutdown(); }

void Engine::shutdown() { impl_->shutdown(); }

const Config& Engine::config() const { return impl_->cfg; }
groth16::Backend& Engine::backend() { return *impl_->backend; }

std::shared_future<void> Engine::preload(const std::string& path) {
  std::shared_future<void> f = std::async(std::launch::async, [this, path] { impl_->cache.get(path); }).share();
  std::lock_guard lk(impl_->preload_mu);
  impl_->preloads.push_back(f);
  return f;
}

bool Engine::is_ready() const {
  std::lock_guard lk(impl_->preload_mu);
  for (auto& f : impl_->preloads) {
    if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    try {
      f.get();
    } catch (...) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> Engine::resident_params() const { return impl_->cache.paths(); }

bool Engine::evict_params(const std::string& path) { return impl_->cache.evict(path); }

void Engine::wait_ready() {
  std::vector<std::shared_future<void>> fs;
  {
    std::lock_guard lk(impl_->preload_mu);
    fs = impl_->preloads;
  }
  for (auto& f : fs) f.get();
}

std::future<JobResult> Engine::submit(Job job) {
  std::vector<Job> one;
  one.push_back(std::move(job));
  return std::move(submit_all(std::move(one)).front());
}

std::vector<std::future<JobResult>> Engine::submit_all(std::vector<Job> jobs) {
  std::vector<std::future<JobResult>> futures;
  std::vector<PendingPtr> accepted;
  const uint64_t budget = impl_->cfg.memory_budget;
  for (Job& job : jobs) {
    auto p = std::make_unique<Pending>();
    futures.push_back(p->promise.get_future());
    p->rec.id = job.id;
    try {
      if (!job.partitions || job.partitions->empty())
        throw EngineError(fmt::format("job {}: no partition circuits", job.id));
      for (const auto& c : *job.partitions)
        if (!(c.params() == job.circuit))
          throw EngineError(fmt::format("job {}: a partition circuit is {}, the job says {}", job.id,
                                        c.params().to_string(), job.circuit.to_string()));
      if (job.params_path.empty()) throw EngineError(fmt::format("job {}: no parameters file", job.id));
      p->rec.partitions = uint32_t(job.partitions->size());
      p->rec.estimated_bytes = estimate_job_bytes(job.circuit, p->rec.partitions);
      if (budget != 0 && p->rec.estimated_bytes > budget)
        throw EngineError(fmt::format(
            "job {} needs about {:.1f} MiB ({} partition(s) of {}: a, b, c and the assignment) but the memory budget "
            "is {:.1f} MiB: it cannot run even alone",
            job.id, mib(p->rec.estimated_bytes), p->rec.partitions, job.circuit.to_string(), mib(budget)));
      p->job = std::move(job);
      accepted.push_back(std::move(p));
    } catch (...) {
      p->promise.set_exception(std::current_exception());
    }
  }
  bool stopped;
  {
    std::lock_guard lk(impl_->mu);
    stopped = impl_->stop;
    // The queue time starts here: validation (a first shape pass can take a while) is the caller's.
    const uint64_t t = now_ns();
    if (!stopped)
      for (auto& p : accepted) {
        p->rec.submitted_at = t;
        impl_->input.push_back(std::move(p));
      }
  }
  if (stopped) {
    for (auto& p : accepted)
      p->promise.set_exception(
          std::make_exception_ptr(EngineError(fmt::format("job {}: the engine is shut down", p->job.id))));
  }
  impl_->cv.notify_all();
  return futures;
}

// ------------------------------------------------------------------------------------------

std::string ready_line(const std::string& params_path) { return "cuzk-engine: ready params=" + params_path; }

void write_ready_file(const std::string& path, const std::string& text) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::runtime_error(fmt::format("cannot create the ready file {}: {}", tmp, std::strerror(errno)));
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
                    ::fsync(::fileno(f)) == 0;
    std::fclose(f);
    if (!ok) {
      std::remove(tmp.c_str());
      throw std::runtime_error(fmt::format("cannot write the ready file {}", tmp));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("cannot create the ready file {}: {}", path, ec.message()));
  }
}

}  // namespace cuzk::engine
