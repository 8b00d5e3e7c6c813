// The daemon's jobs from acceptance to proof (docs/daemon.md): the journal, the priority
// queue, batching, the pending limit, cancellation, and the engine underneath. Independent of
// gRPC: service.cpp maps its calls and ServiceError codes to the wire.
//
//   submit -> journal (fsync) -> queue (priority, then acceptance order)
//          -> dispatcher: a batch of up to max_batch jobs, once full or max_wait after the
//             oldest; at most max_inflight batches in the engine, so a CRITICAL job overtakes
//             every queued one and waits only for work already in the engine (never pre-empted)
//          -> engine (synthesis, prove_batch) -> finisher: verify, write the proof atomically,
//             journal, results file, metrics, wake the waiters
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/server/job_input.hpp"
#include "daemon/server/journal.hpp"
#include "daemon/server/metrics.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/engine/engine.hpp"

namespace cuzk {
class Session;
}

namespace cuzk::daemon {

enum class Priority { low = 1, normal = 2, high = 3, critical = 4 };
enum class State { queued = 1, running = 2, done = 3, failed = 4, cancelled = 5 };
const char* priority_name(Priority p);
const char* state_name(State s);

// A refused request; service.cpp maps the code to a gRPC status.
class ServiceError : public std::runtime_error {
 public:
  enum class Code { invalid, not_found, permission_denied, resource_exhausted, already_exists, unavailable };
  ServiceError(Code c, const std::string& what) : std::runtime_error(what), code(c) {}
  Code code;
};

struct DaemonConfig {
  std::string state_dir;  // journal.sqlite, proofs/, results-*.jsonl
  std::string input_dir;  // where input_path files may be; "" refuses them
  std::string params;     // the parameters file of kind "porep"
  circuits::PorepParams circuit;
  std::string backend = "cpu";
  engine::Config engine;  // max_batch_size is the daemon's batch size
  double max_wait_s = 0;  // how long a partial batch waits for more jobs
  uint32_t max_inflight = 2;  // batches in the engine at once (one synthesizing, one proving)
  uint32_t pending_limit = 64;  // queued jobs; more are refused with resource_exhausted
  InputLimits limits;
  bool resume_on_restart = true;  // false: jobs found unfinished at start are failed
};

struct JobView {
  std::string id, request_id;
  State state = State::queued;
  Priority priority = Priority::normal;
  std::string reason, proof_path;
  bool verified = false;
  uint32_t batch_size = 0, restarts = 0;
  std::vector<std::pair<std::string, uint64_t>> phases;  // path, wall ns
};

struct StatusView {
  std::map<std::string, uint32_t> queued;  // priority name -> jobs
  std::vector<std::string> running, resident_params;
  bool draining = false;
  uint32_t pending_limit = 0;
  uint64_t completed = 0, failed = 0;
  std::string backend;
};

class JobManager {
 public:
  // Opens the journal and the engine and takes back the jobs the journal holds unfinished
  // (resumed or failed, per resume_on_restart). Throws ServiceError/JournalError on bad config.
  explicit JobManager(DaemonConfig cfg);
  ~JobManager();

  // Loads the parameters, then starts dispatching; `on_ready(true)` once they are resident.
  void start(std::function<void(bool serving)> on_readiness);
  void wait_ready();  // rethrows a load failure

  struct Submitted {
    std::string id;
    uint32_t position = 0;
    bool duplicate = false;
  };
  // `input` is inline JSON, or (from_file) a path under the input folder.
  Submitted submit(const std::string& request_id, const std::string& kind, Priority priority, const std::string& input,
                   bool from_file);
  // Waits for the job to end, at most timeout_s (0: no limit) and while !abandoned().
  JobView await(const std::string& id, double timeout_s, const std::function<bool()>& abandoned, bool& timed_out);
  State cancel(const std::string& id);
  StatusView status() const;
  std::string metrics() const;
  std::vector<std::string> preload_params(const std::string& path);
  std::vector<std::string> evict_params(const std::string& path);

  // SIGTERM: refuses new jobs, dispatches no more, waits up to grace_s for the jobs in the
  // engine. True when they all ended; false when some were still running (they are journaled
  // as QUEUED again, to resume at the next start). Queued jobs stay QUEUED in the journal.
  bool drain(double grace_s);
  const std::string& results_path() const;

 private:
  struct Job;
  using JobPtr = std::shared_ptr<Job>;
  struct Batch {
    std::vector<JobPtr> jobs;
    std::vector<engine::Job> engine_jobs;
    std::vector<std::future<engine::JobResult>> futures;
  };

  void recover();
  void enqueue(const JobPtr& j);  // under mu_
  uint32_t position_of(const Job& j) const;  // under mu_
  void dispatch_loop();
  void finish_loop();
  void finish_job(const JobPtr& j, engine::Job& ej, std::future<engine::JobResult>& f);
  void end_job(const JobPtr& j, State s, const std::string& reason);  // under mu_; journals
  JobView view(const Job& j) const;

  DaemonConfig cfg_;
  Journal journal_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<Session> session_;
  Metrics metrics_;
  std::function<void(bool)> on_readiness_;
  std::shared_future<void> preload_;

  mutable std::mutex mu_;
  std::condition_variable changed_;  // any job's state, the queue, inflight, draining
  std::map<std::string, JobPtr> jobs_;
  std::map<std::string, JobPtr> by_request_;
  std::vector<JobPtr> queue_;  // priority descending, then seq ascending
  std::deque<std::unique_ptr<Batch>> inflight_;
  uint64_t completed_ = 0, failed_ = 0;
  int64_t next_seq_ = 1;
  bool ready_ = false, draining_ = false, stop_ = false;
  std::mutex session_mu_;
  std::thread dispatcher_, finisher_;
};

}  // namespace cuzk::daemon
