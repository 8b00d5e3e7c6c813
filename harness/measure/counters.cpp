#include "harness/measure/counters.hpp"

#include <dirent.h>
#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "prover/util/thread_pool.hpp"

#if CUZK_HAVE_PAPI
#include <papi.h>
#endif

namespace cuzk {

const std::vector<std::string>& default_probe_counters() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"PAPI_TOT_CYC", "PAPI_TOT_INS",      "PAPI_L1_DCM",      "PAPI_L2_DCM",
                                  "PAPI_L3_TCM",  "PAPI_BR_MSP",       "perf::PAGE-FAULTS", "perf::TASK-CLOCK",
                                  "perf::CONTEXT-SWITCHES"};
    for (const auto& i : os_counters::all()) v.push_back(i.name);
    for (const auto& i : sim::all()) v.push_back(i.name);
    return v;
  }();
  return names;
}

std::vector<std::string> parse_counter_list(const std::string& csv) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    size_t comma = csv.find(',', pos);
    std::string item = csv.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto first = item.find_first_not_of(" \t");
    auto last = item.find_last_not_of(" \t");
    item = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    if (item.empty()) {
      throw CounterError(fmt::format("empty event name in counter list '{}' (expected comma-separated PAPI "
                                     "event names such as perf::PAGE-FAULTS,PAPI_TOT_INS)",
                                     csv));
    }
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::vector<std::string> with_os_defaults(std::vector<std::string> papi) {
  for (const auto& n : os_counters::defaults()) papi.push_back(n);
  return papi;
}

std::vector<std::string> counters_from(const std::optional<std::string>& flag,
                                       const std::vector<std::string>& fallback) {
  if (flag) return flag->empty() ? std::vector<std::string>{} : parse_counter_list(*flag);
  if (const char* env = std::getenv("CUZK_COUNTERS")) {
    std::string v = env;
    return v.empty() ? std::vector<std::string>{} : parse_counter_list(v);
  }
  return fallback;
}

int CounterSet::process_threads() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ++n;
    }
    closedir(d);
  }
  return n;
}

std::string CounterSet::scope_text(const Reading& r) {
  std::string s;
  if (r.threads > 0 || r.retired > 0) {
    s = fmt::format("{} of {} process threads", r.threads, process_threads());
    if (r.retired > 0) s += fmt::format(" (+{} exited)", r.retired);
  }
  if (r.os) s += (s.empty() ? "os::*: " : "; os::*: ") + std::string(os_counters::kScope);
  if (r.sim) s += (s.empty() ? "sim::*: " : "; sim::*: ") + std::string(sim::kScope);
  return s;
}

CounterSource counter_source(const std::string& name) {
  if (const auto* i = os_counters::find(name)) return {"os", os_counters::kScope, i->source, i->unit};
  if (const auto* i = sim::find(name))
    return {"sim", sim::kScope,
            fmt::format("Valgrind callgrind: events {} summed over the client-request dumps at the phase's open and close", i->events),
            i->unit};
  if (name.rfind("gpu::", 0) == 0)
    return {"cupti", "the GPU's work inside the phase's range, on the thread that drives the GPU",
            "CUPTI Range Profiler, an untimed counters pass (\"gpu_counters\" lines)", ""};
  return {"papi", "the enlisted threads of the process (the pool's workers and every thread that opens a phase) over the phase's interval",
          "PAPI eventsets, one per thread", ""};
}

namespace {

// Every name at `idx` must be known to its source (`find`), else one error listing the known ones.
template <class Info>
void require_known(const std::vector<std::string>& names, const std::vector<size_t>& idx,
                   const Info* (*find)(const std::string&), const std::vector<Info>& all, const char* what,
                   const char* also) {
  std::string unknown;
  for (size_t i : idx)
    if (!find(names[i])) unknown += (unknown.empty() ? "'" : ", '") + names[i] + "'";
  if (unknown.empty()) return;
  std::string known;
  for (const auto& k : all) known += (known.empty() ? "" : ", ") + std::string(k.name);
  throw CounterError(fmt::format("unknown {} counter {} (known: {}{})", what, unknown, known, also));
}

std::vector<std::string> names_at(const std::vector<std::string>& names, const std::vector<size_t>& idx) {
  std::vector<std::string> out;
  for (size_t i : idx) out.push_back(names[i]);
  return out;
}

}  // namespace

CounterSet::CounterSet(const std::vector<std::string>& names) {
  std::vector<size_t> papi, os, sims;
  for (size_t i = 0; i < names.size(); ++i) {
    const bool is_os = os_counters::is_os_name(names[i]);
    const bool is_sim = sim::is_sim_name(names[i]);
    status_.push_back({names[i], false, "", is_os ? "os" : is_sim ? "sim" : "papi"});
    (is_os ? os : is_sim ? sims : papi).push_back(i);
  }
  require_known(names, os, os_counters::find, os_counters::all(), "OS", "");
  require_known(names, sims, sim::find, sim::all(), "sim", ", or the keyword 'sim'");
  if (!papi.empty()) init_papi(papi);
  if (!os.empty()) {
    os_ = std::make_unique<os_counters::Reader>(names_at(names, os));
    add_source(*os_, os);
  }
  if (!sims.empty()) {
    sim_ = std::make_unique<sim::Reader>(names_at(names, sims));
    add_source(*sim_, sims);
  }
}

void CounterSet::add_source(CounterReader& source, const std::vector<size_t>& idx) {
  for (size_t k = 0; k < idx.size(); ++k) {
    status_[idx[k]].available = source.available(k);
    status_[idx[k]].reason = source.reason(k);
    if (source.available(k)) counted_.push_back(idx[k]);
  }
}

int CounterSet::value_index(const std::string& name) const {
  for (size_t k = 0; k < counted_.size(); ++k)
    if (status_[counted_[k]].name == name) return static_cast<int>(k);
  return -1;
}

nlohmann::json CounterSet::sim_header() const { return sim_ ? sim_->header() : nlohmann::json(nullptr); }

void CounterSet::read_source(CounterReader& source, Reading& r) {
  std::vector<int64_t> v;
  std::string err;
  if (!source.read(v, err)) {
    r.ok = false;
    r.error = err;
    v.assign(source.available_count(), 0);
  }
  r.values.insert(r.values.end(), v.begin(), v.end());
}

CounterSet::Reading CounterSet::read() const {
  Reading r = read_papi();
  if (os_) {
    read_source(*os_, r);
    r.os = true;
  }
  if (counts_sim()) {
    read_source(*sim_, r);
    r.sim = true;
  }
  return r;
}

#if CUZK_HAVE_PAPI

namespace {

int perf_event_paranoid() {
  std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
  int v = -100;
  if (!(f >> v)) return -100;
  return v;
}

std::string reason_for(int rc) {
  switch (rc) {
    case PAPI_ENOEVNT:
      return "event does not exist";
    case PAPI_EPERM: {
      int p = perf_event_paranoid();
      return p == -100 ? "permission denied"
                       : fmt::format("permission denied (kernel.perf_event_paranoid = {}; 2 or less lets a "
                                     "process count its own threads)",
                                     p);
    }
    case PAPI_ECNFLCT:
      return "conflicts with another event";
    case PAPI_ECOUNT:
      return "too many events (no free counter left)";
    case PAPI_ENOSUPP:
    case PAPI_ECMP:
    case PAPI_ENOCMP:
      return fmt::format("not supported here ({})", PAPI_strerror(rc));
    default:
      return fmt::format("PAPI error {}: {}", rc, PAPI_strerror(rc));
  }
}

unsigned long thread_id() { return static_cast<unsigned long>(pthread_self()); }

// PAPI_library_init + PAPI_thread_init, once. Returns "" or the reason PAPI is unusable.
const std::string& papi_init_error() {
  static const std::string err = [] {
    int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
      return v < 0 ? fmt::format("PAPI initialization failed: {}", PAPI_strerror(v))
                   : std::string("PAPI initialization failed: library version mismatch");
    }
    int t = PAPI_thread_init(thread_id);
    if (t != PAPI_OK) return fmt::format("PAPI thread initialization failed: {}", PAPI_strerror(t));
    return std::string();
  }();
  return err;
}

std::mutex& papi_mutex() {
  static auto* m = new std::mutex;  // leaked: thread-exit hooks may run after static destruction
  return *m;
}

// Tries one eventset with `codes` on this thread: adds each (recording failures in `rc_out`),
// then starts and stops it. Caller holds papi_mutex().
void try_eventset(const std::vector<int>& codes, std::vector<int>& rc_out) {
  rc_out.assign(codes.size(), PAPI_OK);
  int es = PAPI_NULL;
  int rc = PAPI_create_eventset(&es);
  if (rc != PAPI_OK) {
    std::fill(rc_out.begin(), rc_out.end(), rc);
    return;
  }
  std::vector<size_t> added;
  for (size_t i = 0; i < codes.size(); ++i) {
    rc_out[i] = PAPI_add_event(es, codes[i]);
    if (rc_out[i] == PAPI_OK) added.push_back(i);
  }
  if (!added.empty()) {
    rc = PAPI_start(es);
    if (rc == PAPI_OK) {
      std::vector<long long> v(added.size());
      PAPI_stop(es, v.data());
    } else {
      for (size_t i : added) rc_out[i] = rc;
    }
  }
  PAPI_cleanup_eventset(es);
  PAPI_destroy_eventset(&es);
}

// A qualified native name ("perf::PAGE-FAULTS") whose component is disabled on this machine
// (e.g. perf_event without permission or support) cannot be resolved, but it is not a typo:
// report it as unavailable with PAPI's reason instead of rejecting it as unknown.
std::optional<std::string> disabled_component_reason(const std::string& name) {
  const auto colon = name.find("::");
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  const std::string prefix = name.substr(0, colon);
  for (int c = 0; c < PAPI_num_components(); ++c) {
    const PAPI_component_info_t* info = PAPI_get_component_info(c);
    if (!info || !info->disabled) continue;
    // the component that owns the prefix: "perf::" belongs to "perf_event" (not "perf_event_uncore")
    const std::string comp = info->name;
    if (comp == prefix || comp == prefix + "_event")
      return fmt::format("the PAPI component '{}' is disabled here: {}", info->name, info->disabled_reason);
  }
  return std::nullopt;
}

}  // namespace

static std::vector<CounterStatus> probe_papi(const std::vector<std::string>& names) {
  std::vector<CounterStatus> out;
  const std::string& init = papi_init_error();
  std::lock_guard<std::mutex> lk(papi_mutex());
  for (const auto& name : names) {
    CounterStatus s{name, false, "", "papi"};
    if (!init.empty()) {
      s.reason = init;
    } else {
      int code = 0;
      if (PAPI_event_name_to_code(const_cast<char*>(name.c_str()), &code) != PAPI_OK) {
        auto disabled = disabled_component_reason(name);
        s.reason = disabled ? *disabled : "not a PAPI event name known here (papi_avail and papi_native_avail list them)";
      } else {
        std::vector<int> rc;
        try_eventset({code}, rc);
        s.available = rc[0] == PAPI_OK;
        if (!s.available) s.reason = reason_for(rc[0]);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

struct CounterSet::Impl {
  std::vector<int> codes;  // counted events
  uint64_t generation = 0;
  struct Thread {
    unsigned long id;
    int eventset;
  };
  std::vector<Thread> threads;  // guarded by papi_mutex()
  std::vector<int64_t> retired_sum;
  int retired = 0;
  int failed = 0;
};

namespace {
// The active CounterSet (guarded by papi_mutex()); generations tell stale thread state apart.
CounterSet::Impl* g_active = nullptr;
std::atomic<uint64_t> g_generation{0};

struct ThreadState {
  uint64_t generation = 0;
  int eventset = PAPI_NULL;
  ~ThreadState() {
    // Thread exit: fold the final counts into the set's retired sum and free the eventset.
    if (generation == 0) return;
    std::lock_guard<std::mutex> lk(papi_mutex());
    CounterSet::Impl* a = g_active;
    if (a && a->generation == generation) {
      std::vector<long long> v(a->codes.size());
      if (PAPI_stop(eventset, v.data()) == PAPI_OK) {
        for (size_t i = 0; i < v.size(); ++i) a->retired_sum[i] += v[i];
      }
      auto me = thread_id();
      a->threads.erase(std::remove_if(a->threads.begin(), a->threads.end(),
                                      [&](const CounterSet::Impl::Thread& t) { return t.id == me; }),
                       a->threads.end());
      ++a->retired;
      PAPI_cleanup_eventset(eventset);
      PAPI_destroy_eventset(&eventset);
    }
    PAPI_unregister_thread();
  }
};
thread_local ThreadState t_state;
}  // namespace

void CounterSet::init_papi(const std::vector<size_t>& idx) {
  const std::string& init = papi_init_error();
  if (!init.empty()) {
    for (size_t i : idx) status_[i].reason = init;
    return;
  }
  std::vector<int> codes;
  std::vector<size_t> resolved;  // indices of names with an event code
  std::vector<std::string> unknown;
  for (size_t i : idx) {
    const std::string& name = status_[i].name;
    int code = 0;
    if (PAPI_event_name_to_code(const_cast<char*>(name.c_str()), &code) != PAPI_OK) {
      if (auto disabled = disabled_component_reason(name)) {
        status_[i].reason = *disabled;  // null in every record, with this reason
        continue;
      }
      unknown.push_back(name);
      continue;
    }
    codes.push_back(code);
    resolved.push_back(i);
  }
  if (!unknown.empty()) {
    std::string list;
    for (const auto& u : unknown) list += (list.empty() ? "'" : ", '") + u + "'";
    throw CounterError(fmt::format("unknown counter event {}: not a PAPI event name known here (papi_avail and "
                                   "papi_native_avail list them; names look like PAPI_TOT_INS or "
                                   "perf::PAGE-FAULTS), nor an OS counter (os::minflt, ...; cuzk-bench info "
                                   "lists them)",
                                   list));
  }
  std::lock_guard<std::mutex> lk(papi_mutex());
  if (g_active) throw CounterError("another CounterSet is active in this process (one at a time)");
  std::vector<int> rc;
  if (!codes.empty()) try_eventset(codes, rc);
  impl_ = std::make_shared<Impl>();
  for (size_t k = 0; k < resolved.size(); ++k) {
    const size_t i = resolved[k];
    if (rc[k] == PAPI_OK) {
      status_[i].available = true;
      counted_.push_back(i);
      impl_->codes.push_back(codes[k]);
    } else {
      status_[i].reason = reason_for(rc[k]);
    }
  }
  impl_->retired_sum.assign(impl_->codes.size(), 0);
  impl_->generation = ++g_generation;
  g_active = impl_.get();
}

CounterSet::~CounterSet() {
  if (!impl_) return;
  std::lock_guard<std::mutex> lk(papi_mutex());
  std::vector<long long> v(impl_->codes.size() + 1);
  for (auto& t : impl_->threads) {
    PAPI_stop(t.eventset, v.data());
    PAPI_cleanup_eventset(t.eventset);
    PAPI_destroy_eventset(&t.eventset);
  }
  impl_->threads.clear();
  if (g_active == impl_.get()) g_active = nullptr;
}

void CounterSet::enlist_this_thread() {
  if (!impl_ || impl_->codes.empty()) return;
  if (t_state.generation == impl_->generation) return;
  std::lock_guard<std::mutex> lk(papi_mutex());
  if (t_state.generation == impl_->generation) return;
  PAPI_register_thread();
  int es = PAPI_NULL;
  bool ok = PAPI_create_eventset(&es) == PAPI_OK;
  if (ok) {
    for (int c : impl_->codes) ok = ok && PAPI_add_event(es, c) == PAPI_OK;
    ok = ok && PAPI_start(es) == PAPI_OK;
    if (!ok) {
      PAPI_cleanup_eventset(es);
      PAPI_destroy_eventset(&es);
    }
  }
  t_state.generation = impl_->generation;  // a failed thread is not retried
  if (!ok) {
    ++impl_->failed;
    return;
  }
  t_state.eventset = es;
  impl_->threads.push_back({thread_id(), es});
}

bool CounterSet::papi_counting() const { return impl_ && !impl_->codes.empty(); }

CounterSet::Reading CounterSet::read_papi() const {
  Reading r;
  if (!papi_counting()) return r;
  std::lock_guard<std::mutex> lk(papi_mutex());
  r.values.assign(impl_->retired_sum.begin(), impl_->retired_sum.end());
  std::vector<long long> buf(impl_->codes.size());
  for (const auto& t : impl_->threads) {
    int rc = PAPI_read(t.eventset, buf.data());
    if (rc != PAPI_OK) {
      r.ok = false;
      r.error = fmt::format("PAPI_read failed: {}", PAPI_strerror(rc));
      continue;
    }
    for (size_t i = 0; i < buf.size(); ++i) r.values[i] += buf[i];
  }
  r.threads = static_cast<int>(impl_->threads.size());
  r.retired = impl_->retired;
  return r;
}

#else  // !CUZK_HAVE_PAPI

static std::vector<CounterStatus> probe_papi(const std::vector<std::string>& names) {
  std::vector<CounterStatus> out;
  for (const auto& n : names) out.push_back({n, false, kReasonNoPapi, "papi"});
  return out;
}

struct CounterSet::Impl {};

void CounterSet::init_papi(const std::vector<size_t>& idx) {
  for (size_t i : idx) status_[i].reason = kReasonNoPapi;
}
bool CounterSet::papi_counting() const { return false; }
CounterSet::~CounterSet() = default;
void CounterSet::enlist_this_thread() {}
CounterSet::Reading CounterSet::read_papi() const { return {}; }

#endif

std::vector<CounterStatus> probe_counters(const std::vector<std::string>& names) {
  std::vector<std::string> papi;
  for (const auto& n : names)
    if (!os_counters::is_os_name(n) && !sim::is_sim_name(n)) papi.push_back(n);
  std::vector<CounterStatus> p = probe_papi(papi), out;
  size_t k = 0;
  for (const auto& n : names) {
    if (sim::is_sim_name(n)) {
      if (!sim::find(n)) {
        out.push_back({n, false, "not a sim counter name (cuzk-bench info lists them)", "sim"});
        continue;
      }
      // A probe reads no dump: under callgrind the counters are there, else the reason says why not.
      std::string why = sim::under_valgrind() ? "" : "not running under Valgrind (--counters sim runs cuzk-bench under callgrind)";
      out.push_back({n, why.empty(), why, "sim"});
      continue;
    }
    if (!os_counters::is_os_name(n)) {
      out.push_back(p[k++]);
      continue;
    }
    if (!os_counters::find(n)) {
      out.push_back({n, false, "not an OS counter name (cuzk-bench info lists them)", "os"});
      continue;
    }
    os_counters::Reader r({n});
    out.push_back({n, r.available(0), r.reason(0), "os"});
  }
  return out;
}

void CounterSet::enlist_pool(ThreadPool& pool) {
  if (!papi_counting()) return;  // the OS counters cover every thread without enlisting
  enlist_this_thread();
  if (ThreadPool::on_worker()) return;  // parallel_for would run inline
  const size_t n = pool.size();
  std::atomic<size_t> arrived{0};
  // One chunk per thread: each chunk waits until all threads hold one, so no thread runs two.
  pool.parallel_for(
      n,
      [&](size_t, size_t) {
        enlist_this_thread();
        arrived.fetch_add(1);
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (arrived.load() < n && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
      },
      n);
}

}  // namespace cuzk
