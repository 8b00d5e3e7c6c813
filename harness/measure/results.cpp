#include "harness/measure/results.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <random>

#include "harness/measure/env_readings.hpp"
#include "harness/measure/inject.hpp"
#include "harness/measure/machine.hpp"
#include "harness/measure/output_file.hpp"
#include "harness/measure/output_lock.hpp"
#include "harness/measure/process.hpp"
#include "harness/measure/provenance.hpp"
#include "prover/engine/fault.hpp"
#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"

namespace cuzk {

using nlohmann::json;

// ---------------------------------------------------------------- building lines

namespace {
json line_base(const char* type) { return {{"schema", kResultsSchema}, {"version", kResultsVersion}, {"type", type}}; }
}  // namespace

std::string variant_name() {
  const Provenance& p = build_provenance();
  return p.preset && *p.preset ? std::string(p.preset) : std::string("custom");
}

json make_gpu_counters_line(const json& body) {
  json g = line_base("gpu_counters");
  for (auto& [k, v] : body.items()) g[k] = v;
  return g;
}

json make_header(const HeaderInfo& info) {
  json h = line_base("header");
  h["tool"] = {{"name", kToolName}, {"version", kToolVersion}};
  h["provenance"] = provenance_json();
  h["machine"] = machine_json();
  json requested = json::array(), available = json::array(), unavailable = json::object(), sources = json::object();
  for (const auto& c : info.counters) {
    requested.push_back(c.name);
    if (c.available)
      available.push_back(c.name);
    else
      unavailable[c.name] = c.reason;
    const CounterSource src = counter_source(c.name);
    sources[c.name] = {{"source", src.source}, {"scope", src.scope}, {"how", src.how}, {"unit", src.unit}};
  }
  h["counters"] = {{"requested", requested}, {"available", available}, {"unavailable", unavailable},
                   {"sources", sources}};
  h["command_line"] = info.command_line;
  h["suite"] = info.suite;
  // When the run started: reference results (results/reference/) must say when they were taken.
  h["started_utc"] = utc_stamp();
  merge_line_fields(h, env_header_fields(), "header");  // gpu_state, cpu_governor
  // A file written under $CUZK_INJECT_SLOWDOWN says so itself, so that compare, gate and the rest
  // can refuse to take its planted slowdown for a real change (the stderr notice is gone with
  // the terminal). No key at all when no injection is active: plain files stay as they were.
  if (inject::active()) h["injected"] = inject::describe();
  // A test-only fault injection (docs/reliability.md) is recorded the same way.
  if (fault::active()) h["fault_injection"] = fault::describe();
  merge_line_fields(h, info.extra, "header");
  return h;
}

void merge_line_fields(json& line, const json& extra, const std::string& what) {
  if (extra.is_null()) return;
  if (!extra.is_object())
    throw ResultsError(fmt::format("extra {} fields must be a JSON object, not {}", what, extra.type_name()));
  for (auto& [k, v] : extra.items()) {
    if (line.contains(k))
      throw ResultsError(fmt::format("extra {} field '{}' would replace the {} line's own field", what, k, what));
    line[k] = v;
  }
}

const std::string& run_process_id() {
  static const std::string id = [] {
    std::random_device rd;
    const uint64_t v = (uint64_t(rd()) << 32) ^ uint64_t(rd());
    return fmt::format("{:016x}", v);
  }();
  return id;
}

int64_t parse_round_id(const std::string& text) {
  // Digits only: a sign, spaces or a fraction would name a round the writer did not mean.
  const bool digits = !text.empty() && text.size() <= 18 &&
                      std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  if (!digits)
    throw ResultsError(fmt::format("{}=\"{}\" is not a round number: it must be a non-negative integer (ab, matrix, "
                                   "calibrate and bisect set it for each measured process)",
                                   kRoundIdEnvVar, text));
  return std::stoll(text);
}

std::optional<int64_t> round_id_from_env() {
  static const std::optional<int64_t> id = []() -> std::optional<int64_t> {
    const char* v = std::getenv(kRoundIdEnvVar);
    if (!v) return std::nullopt;
    return parse_round_id(v);
  }();
  return id;
}

namespace {
// The measurement variables ($CUZK_ROUND_ID, $CUZK_INJECT_SLOWDOWN, and the test-only
// $CUZK_INJECT_FAULT of prover/engine/fault.hpp) are checked once, before any work, in every
// process that writes results: a malformed one is one line naming it and exit 2 (bad input,
// docs/cli.md), so it never reaches a sample line; an active injection is announced once.
const int g_env_checked = [] {
  try {
    (void)round_id_from_env();
    inject::check_env();
    fault::check_env();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuzk-bench: error: %s\n", e.what());
    std::fflush(stderr);
    std::_Exit(2);
  }
  return 0;
}();
}  // namespace

json phase_record_json(const PhaseRecord& r) {
  json j = {{"wall_ns", r.wall_ns}, {"count", r.count}};
  j["gpu_ns"] = r.gpu_ns ? json(*r.gpu_ns) : json(nullptr);
  // Optional, and only all three together (the reader checks that).
  if (r.gpu_kernel_ns && r.gpu_copy_ns && r.gpu_idle_ns) {
    j["gpu_kernel_ns"] = *r.gpu_kernel_ns;
    j["gpu_copy_ns"] = *r.gpu_copy_ns;
    j["gpu_idle_ns"] = *r.gpu_idle_ns;
  }
  json counters = json::object();
  for (const auto& [name, v] : r.counters) counters[name] = v ? json(*v) : json(nullptr);
  j["counters"] = counters;
  j["counter_errors"] = r.counter_errors;
  j["counter_scope"] = r.counter_scope;
  return j;
}

json make_sample(const SampleInfo& info, const Sample& sample, bool with_spans) {
  json s = line_base("sample");
  s["suite"] = info.suite;
  s["case"] = info.case_name;
  s["parameters"] = info.parameters.is_object() ? info.parameters : json::object();
  s["variant"] = info.variant.empty() ? variant_name() : info.variant;
  s["repetition"] = info.repetition;
  s["warmup"] = info.warm;
  s["process_id"] = run_process_id();
  if (const auto round = round_id_from_env()) s["round_id"] = *round;
  s["wall_ns"] = sample.wall_ns;
  json phases = json::object();
  for (const auto& [path, r] : sample.phases) {
    phases[path] = phase_record_json(r);
    for (const auto& [prefix, gpu] : info.gpu_index)
      if (path == prefix || (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
                             path[prefix.size()] == '/'))
        phases[path]["gpu_index"] = gpu;
  }
  s["phases"] = phases;
  if (with_spans) {
    json spans = json::array();
    for (const auto& sp : sample.spans)
      spans.push_back({{"path", sp.path}, {"start_ns", sp.start_ns}, {"dur_ns", sp.dur_ns}, {"tid", sp.tid}});
    s["spans"] = spans;
    s["spans_dropped"] = sample.spans_dropped;
  }
  return s;
}

namespace {
template <class T>
T median_of(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : static_cast<T>((v[n / 2 - 1] + v[n / 2]) / 2);
}
}  // namespace

json make_summary(const std::vector<json>& samples, uint64_t elapsed_ns) {
  json s = line_base("summary");
  struct Acc {
    std::vector<uint64_t> wall, gpu, gpu_kernel;
    size_t gpu_missing = 0, gpu_kernel_missing = 0;
    std::map<std::string, std::vector<int64_t>> counters;
    std::map<std::string, size_t> counter_missing;
  };
  std::map<std::string, Acc> acc;
  size_t measured = 0, warm = 0;
  for (const auto& smp : samples) {
    if (smp.value("warmup", false)) {
      ++warm;
      continue;
    }
    ++measured;
    for (auto& [path, r] : smp.at("phases").items()) {
      Acc& a = acc[path];
      a.wall.push_back(r.at("wall_ns").get<uint64_t>());
      if (r.at("gpu_ns").is_null())
        ++a.gpu_missing;
      else
        a.gpu.push_back(r.at("gpu_ns").get<uint64_t>());
      if (r.contains("gpu_kernel_ns"))
        a.gpu_kernel.push_back(r.at("gpu_kernel_ns").get<uint64_t>());
      else
        ++a.gpu_kernel_missing;
      for (auto& [name, v] : r.at("counters").items()) {
        if (v.is_null())
          ++a.counter_missing[name];
        else
          a.counters[name].push_back(v.get<int64_t>());
      }
    }
  }
  json phases = json::object();
  for (auto& [path, a] : acc) {
    json p = {{"n", a.wall.size()},
              {"median_wall_ns", median_of(a.wall)},
              {"min_wall_ns", *std::min_element(a.wall.begin(), a.wall.end())},
              {"max_wall_ns", *std::max_element(a.wall.begin(), a.wall.end())}};
    p["median_gpu_ns"] = a.gpu.empty() || a.gpu_missing ? json(nullptr) : json(median_of(a.gpu));
    // Only where every measured sample has it (GPU time without gaps was collected): absent otherwise.
    if (!a.gpu_kernel.empty() && a.gpu_kernel_missing == 0) p["median_gpu_kernel_ns"] = median_of(a.gpu_kernel);
    json c = json::object();
    for (auto& [name, vals] : a.counters) c[name] = a.counter_missing.count(name) ? json(nullptr) : json(median_of(vals));
    for (auto& [name, n] : a.counter_missing) c[name] = nullptr;
    p["median_counters"] = c;
    phases[path] = p;
  }
  s["samples"] = measured;
  s["warmup_samples"] = warm;
  s["elapsed_ns"] = elapsed_ns;
  s["phases"] = phases;
  return s;
}

// ---------------------------------------------------------------- writing

ResultsWriter::ResultsWriter(const std::string& path, Mode mode) : path_(path) {
  // Claimed before anything is written or truncated: a second writer of the same file is
  // refused with the holder's pid and leaves the file as it was (harness/measure/output_lock.hpp).
  for (int attempt = 0;; ++attempt) {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (mode == Mode::kCreateNew ? O_EXCL : 0);
    fd_ = ::open(path.c_str(), flags, 0644);
    if (fd_ < 0) {
      int e = errno;
      if (e == EEXIST) {
        try {
          check_not_claimed(path, path);
        } catch (const FileError& claimed) {
          throw ResultsError(claimed.what());
        }
        throw ResultsError(fmt::format("results file '{}' already exists (choose another output path, or pass "
                                       "--force to overwrite it)",
                                       path));
      }
      throw ResultsError(fmt::format("cannot create results file '{}': {}", path, std::strerror(e)));
    }
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && !S_ISREG(st.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      throw ResultsError(fmt::format("results path '{}' is not a regular file", path));
    }
    if (!try_lock_exclusive(fd_)) {
      const pid_t holder = lock_holder(fd_);
      ::close(fd_);
      fd_ = -1;
      throw ResultsError(claimed_message(path, holder));
    }
    struct stat now {};
    if (::stat(path.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) break;
    // Its previous writer removed it (a header-only file) after we opened it: open it afresh.
    ::close(fd_);
    fd_ = -1;
    if (attempt >= 4) throw ResultsError(fmt::format("results file '{}' keeps being replaced", path));
  }
  if (mode == Mode::kOverwrite && ::ftruncate(fd_, 0) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw ResultsError(fmt::format("cannot truncate results file '{}': {}", path, std::strerror(e)));
  }
}

ResultsWriter::~ResultsWriter() {
  // Removed while still locked, so that a writer waiting for the lock never writes into it.
  if (drop_header_only_ && lines_ <= 1) ::unlink(path_.c_str());
  if (fd_ >= 0) ::close(fd_);
}

size_t ResultsWriter::lines() const {
  std::lock_guard lk(mu_);
  return lines_;
}

std::string results_line(const json& line) {
  constexpr auto kReplace = json::error_handler_t::replace;
  if (!line.is_object() || !line.contains("schema") || !line.contains("version") || !line.contains("type"))
    return line.dump(-1, ' ', false, kReplace);
  json rest = line;
  std::string s = "{\"schema\":" + rest["schema"].dump(-1, ' ', false, kReplace) +
                  ",\"version\":" + rest["version"].dump() + ",\"type\":" + rest["type"].dump(-1, ' ', false, kReplace);
  rest.erase("schema");
  rest.erase("version");
  rest.erase("type");
  std::string tail = rest.dump(-1, ' ', false, kReplace);  // "{...}"
  if (tail.size() > 2) s += "," + tail.substr(1);
  else s += "}";
  return s;
}

void ResultsWriter::write(const json& line) {
  std::string s = results_line(line);
  s.push_back('\n');
  std::lock_guard lk(mu_);
  const fault::WriteFault injected = fault::on_write(lines_);
  ssize_t n;
  if (injected == fault::WriteFault::kEnospc) {
    n = -1;
    errno = ENOSPC;
  } else if (injected != fault::WriteFault::kNone) {  // short: half the line reaches the disk
    do {
      n = ::write(fd_, s.data(), s.size() / 2);
    } while (n < 0 && errno == EINTR);
    if (n >= 0) errno = ENOSPC;
  } else {
    do {
      n = ::write(fd_, s.data(), s.size());
    } while (n < 0 && errno == EINTR);
  }
  if (n != static_cast<ssize_t>(s.size())) {
    const int e = n < 0 ? errno : ENOSPC;  // a short write means the disk filled up
    std::string repaired;
    if (n > 0) repaired = "; " + repair_torn(static_cast<size_t>(n), injected == fault::WriteFault::kTorn);
    throw ResultsError(fmt::format("cannot write results file '{}' (line {}): {}{}", path_, lines_ + 1, std::strerror(e),
                                   repaired));
  }
  if (::fsync(fd_) != 0) {
    throw ResultsError(fmt::format("cannot sync results file '{}': {}", path_, std::strerror(errno)));
  }
  offset_ += s.size();
  ++lines_;
}

std::string ResultsWriter::repair_torn(size_t torn, bool truncate_fails) {
  const off_t at = static_cast<off_t>(offset_);
  if (!truncate_fails && ::ftruncate(fd_, at) == 0) {
    ::lseek(fd_, at, SEEK_SET);
    ::fsync(fd_);
    return fmt::format("the partial line was cut off: the file ends with its last complete line ({})", lines_);
  }
  // Overwriting bytes already on disk needs no new space, where appending would. A marker too
  // long for the torn bytes is cut to a '#' line (still reported by readers, as invalid JSON).
  std::string mark = fmt::format(R"({{"schema":"{}","version":{},"type":"torn","note":"a write failed mid-line here; the line is lost"}})",
                                 kResultsSchema, kResultsVersion);
  if (mark.size() + 1 > torn) mark = std::string(torn > 1 ? torn - 1 : 0, '#');
  mark.resize(torn - 1, ' ');
  mark.push_back('\n');
  const bool ok = ::pwrite(fd_, mark.data(), mark.size(), at) == static_cast<ssize_t>(mark.size());
  ::fsync(fd_);
  offset_ += torn;  // later lines (if any) go after the marker
  ::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET);
  return ok ? fmt::format("cutting the partial line off failed, so line {} is marked torn", lines_ + 1)
            : fmt::format("line {} is torn and could not be marked", lines_ + 1);
}

// ---------------------------------------------------------------- reading

namespace {

struct Ctx {
  const std::string& name;
  size_t line;
  [[noreturn]] void fail(const std::string& what) const {
    throw ResultsError(fmt::format("{}:{}: {}", name, line, what));
  }
};

const char* kind(const json& v) { return v.type_name(); }

// Keys are string literals: a const char* key (not a std::string temporary) also keeps GCC 13's
// -Wdangling-reference from flagging the reference into `obj` that callers hold.
const json& need(const Ctx& c, const json& obj, const char* type, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) c.fail(fmt::format("{} line is missing required field '{}'", type, key));
  return *it;
}

void need_string(const Ctx& c, const json& obj, const char* type, const char* key) {
  const json& v = need(c, obj, type, key);
  if (!v.is_string()) c.fail(fmt::format("field '{}' must be a string, not {}", key, kind(v)));
}
void need_object(const Ctx& c, const json& obj, const char* type, const char* key) {
  const json& v = need(c, obj, type, key);
  if (!v.is_object()) c.fail(fmt::format("field '{}' must be an object, not {}", key, kind(v)));
}
void need_uint(const Ctx& c, const json& obj, const char* type, const char* key) {
  const json& v = need(c, obj, type, key);
  if (!v.is_number_unsigned()) c.fail(fmt::format("field '{}' must be a non-negative integer, not {}", key, v.dump()));
}

void validate_header(const Ctx& c, const json& h) {
  need_object(c, h, "header", "tool");
  need_string(c, h["tool"], "header tool", "name");
  need_string(c, h["tool"], "header tool", "version");
  need_object(c, h, "header", "provenance");
  need_string(c, h["provenance"], "header provenance", "source_hash");
  need_object(c, h["provenance"], "header provenance", "flags");
  need_object(c, h, "header", "machine");
  need_object(c, h, "header", "counters");
  const json& cn = h["counters"];
  for (const char* k : {"requested", "available"}) {
    const json& v = need(c, cn, "header counters", k);
    if (!v.is_array()) c.fail(fmt::format("field 'counters.{}' must be an array, not {}", k, kind(v)));
    for (const auto& name : v)
      if (!name.is_string()) c.fail(fmt::format("field 'counters.{}' must hold counter names (strings), not {}", k, name.dump()));
  }
  need_object(c, cn, "header counters", "unavailable");
  const json& cl = need(c, h, "header", "command_line");
  if (!cl.is_array()) c.fail(fmt::format("field 'command_line' must be an array of strings, not {}", kind(cl)));
  need_string(c, h, "header", "suite");
  // Optional: absent (or null) in a plain file; else what make_header writes from inject::describe().
  if (auto in = h.find("injected"); in != h.end() && !in->is_null()) {
    if (!in->is_object()) c.fail(fmt::format("field 'injected' must be an object or null, not {}", kind(*in)));
    need_string(c, *in, "header injected", "spec");
  }
}

// A non-negative integer, where present.
void optional_uint(const Ctx& c, const json& obj, const char* key, const std::string& what = "") {
  auto it = obj.find(key);
  if (it != obj.end() && !it->is_number_unsigned())
    c.fail(fmt::format("{}field '{}' must be a non-negative integer, not {}", what, key, it->dump()));
}

// GPU time without gaps: gpu_kernel_ns, gpu_copy_ns and gpu_idle_ns, optional, but all three or none,
// each a non-negative integer (never null: a record without them leaves them out).
void validate_gpu_activity(const Ctx& c, const std::string& what, const json& r) {
  size_t present = 0;
  for (const char* k : kGpuActivityFields) {
    auto it = r.find(k);
    if (it == r.end()) continue;
    ++present;
    if (!it->is_number_unsigned())
      c.fail(fmt::format("{}: field '{}' must be a non-negative integer (nanoseconds), not {}", what, k, it->dump()));
  }
  if (present != 0 && present != std::size(kGpuActivityFields))
    c.fail(fmt::format("{}: fields 'gpu_kernel_ns', 'gpu_copy_ns' and 'gpu_idle_ns' go together (all three or none)", what));
}

// The header's counters.requested: the only counters a phase record may name.
using Declared = std::set<std::string, std::less<>>;

void validate_record(const Ctx& c, const std::string& path, const json& r, const Declared& declared) {
  if (!r.is_object()) c.fail(fmt::format("phase '{}': record must be an object, not {}", path, kind(r)));
  const std::string what = fmt::format("phase '{}' record", path);
  for (const char* k : {"wall_ns", "count"}) {
    auto it = r.find(k);
    if (it == r.end()) c.fail(fmt::format("{} is missing required field '{}'", what, k));
    if (!it->is_number_unsigned())
      c.fail(fmt::format("{}: field '{}' must be a non-negative integer, not {}", what, k, it->dump()));
  }
  auto g = r.find("gpu_ns");
  if (g == r.end()) c.fail(fmt::format("{} is missing required field 'gpu_ns' (null when no GPU time)", what));
  if (!g->is_null() && !g->is_number_unsigned())
    c.fail(fmt::format("{}: field 'gpu_ns' must be null or a non-negative integer, not {}", what, g->dump()));
  validate_gpu_activity(c, what, r);
  auto cs = r.find("counters");
  if (cs == r.end()) c.fail(fmt::format("{} is missing required field 'counters'", what));
  if (!cs->is_object()) c.fail(fmt::format("{}: field 'counters' must be an object, not {}", what, kind(*cs)));
  json errors = r.value("counter_errors", json::object());
  if (!errors.is_object()) c.fail(fmt::format("{}: field 'counter_errors' must be an object", what));
  for (auto& [name, v] : cs->items()) {
    if (v.is_null()) {
      auto e = errors.find(name);
      if (e == errors.end() || !e->is_string() || e->get<std::string>().empty())
        c.fail(fmt::format("{}: counter '{}' is null without a reason in 'counter_errors'", what, name));
    } else if (!v.is_number_integer()) {
      c.fail(fmt::format("{}: counter '{}' must be an integer or null, not {}", what, name, v.dump()));
    }
    if (!declared.count(name))
      c.fail(fmt::format("{}: counter '{}' is not declared in the header (line 1: counters.requested)", what, name));
  }
  if (r.contains("counter_scope") && !r["counter_scope"].is_string())
    c.fail(fmt::format("{}: field 'counter_scope' must be a string", what));
  if (auto gi = r.find("gpu_index"); gi != r.end() && !gi->is_number_unsigned())
    c.fail(fmt::format("{}: field 'gpu_index' must be a non-negative integer, not {}", what, gi->dump()));
}

// "env" (harness/measure/env_readings.hpp): interval_ns a number or null; values an object of numbers
// or nulls, each null with its reason in errors (an object of strings); sources an object of
// strings and gpu_clock_event_reasons an array of strings, where present.
void validate_env(const Ctx& c, const json& env) {
  if (!env.is_object()) c.fail(fmt::format("field 'env' must be an object, not {}", kind(env)));
  auto iv = env.find("interval_ns");
  if (iv == env.end()) c.fail("env is missing required field 'interval_ns' (null when the sample had no window)");
  if (!iv->is_null() && !iv->is_number())
    c.fail(fmt::format("env: field 'interval_ns' must be a number or null, not {}", iv->dump()));
  if (iv->is_number() && !(iv->get<double>() >= 0))
    c.fail(fmt::format("env: field 'interval_ns' must be >= 0 (the window's length), not {}", iv->dump()));
  auto vs = env.find("values");
  if (vs == env.end()) c.fail("env is missing required field 'values'");
  if (!vs->is_object()) c.fail(fmt::format("env: field 'values' must be an object, not {}", kind(*vs)));
  const json errors = env.value("errors", json::object());
  if (!errors.is_object()) c.fail(fmt::format("env: field 'errors' must be an object, not {}", kind(errors)));
  for (auto& [key, e] : errors.items())
    if (!e.is_string()) c.fail(fmt::format("env: errors['{}'] must be a string, not {}", key, e.dump()));
  for (auto& [key, v] : vs->items()) {
    if (v.is_null()) {
      auto e = errors.find(key);
      if (e == errors.end() || e->get<std::string>().empty())
        c.fail(fmt::format("env: value '{}' is null without a reason in 'errors'", key));
    } else if (!v.is_number()) {
      c.fail(fmt::format("env: value '{}' must be a number or null, not {}", key, v.dump()));
    }
  }
  if (auto so = env.find("sources"); so != env.end()) {
    if (!so->is_object()) c.fail(fmt::format("env: field 'sources' must be an object, not {}", kind(*so)));
    for (auto& [key, v] : so->items())
      if (!v.is_string()) c.fail(fmt::format("env: sources['{}'] must be a string, not {}", key, v.dump()));
  }
  if (auto rs = env.find("gpu_clock_event_reasons"); rs != env.end()) {
    if (!rs->is_array()) c.fail(fmt::format("env: field 'gpu_clock_event_reasons' must be an array, not {}", kind(*rs)));
    for (const auto& r : *rs)
      if (!r.is_string()) c.fail(fmt::format("env: gpu_clock_event_reasons must hold strings, not {}", r.dump()));
  }
}

// 16 lowercase hex digits, as run_process_id() draws them.
bool is_process_id(const std::string& p) {
  return p.size() == 16 && std::all_of(p.begin(), p.end(), [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); });
}

// "pipeline" (docs/results-format.md, "Pipeline samples"): counts and durations, none negative.
void validate_pipeline(const Ctx& c, const json& p) {
  if (!p.is_object()) c.fail(fmt::format("field 'pipeline' must be an object, not {}", kind(p)));
  for (const char* k : {"run", "job", "jobs", "run_wall_ns", "batch_size", "preload_ns"}) optional_uint(c, p, k, "pipeline: ");
  if (auto it = p.find("proofs_per_minute"); it != p.end() && !(it->is_number() && it->get<double>() >= 0))
    c.fail(fmt::format("pipeline: field 'proofs_per_minute' must be a number >= 0, not {}", it->dump()));
}

void validate_sample(const Ctx& c, const json& s, const Declared& declared) {
  need_string(c, s, "sample", "suite");
  need_string(c, s, "sample", "case");
  need_object(c, s, "sample", "parameters");
  need_string(c, s, "sample", "variant");
  const json& rep = need(c, s, "sample", "repetition");
  if (!rep.is_number_integer()) c.fail(fmt::format("field 'repetition' must be an integer, not {}", rep.dump()));
  if (!rep.is_number_unsigned()) c.fail(fmt::format("field 'repetition' must be >= 0 (it counts from 0), not {}", rep.dump()));
  const json& w = need(c, s, "sample", "warmup");
  if (!w.is_boolean()) c.fail(fmt::format("field 'warmup' must be true or false, not {}", w.dump()));
  optional_uint(c, s, "wall_ns");
  optional_uint(c, s, "spans_dropped");
  if (s.contains("process_id")) {
    const json& p = s["process_id"];
    if (!p.is_string() || p.get<std::string>().empty())
      c.fail(fmt::format("field 'process_id' must be a non-empty string, not {}", p.dump()));
    if (!is_process_id(p.get<std::string>()))
      c.fail(fmt::format("field 'process_id' must be 16 lowercase hex digits, not {}", p.dump()));
  }
  if (s.contains("pipeline")) validate_pipeline(c, s["pipeline"]);
  if (s.contains("round_id")) {
    const json& r = s["round_id"];
    if (!r.is_number_integer() || (r.is_number_integer() && !r.is_number_unsigned() && r.get<int64_t>() < 0))
      c.fail(fmt::format("field 'round_id' must be a non-negative integer, not {}", r.dump()));
  }
  if (s.contains("primary_metric")) {
    const json& m = s["primary_metric"];
    if (!m.is_string() || m.get<std::string>().empty())
      c.fail(fmt::format("field 'primary_metric' must be a non-empty string naming a counter, not {}", m.dump()));
  }
  if (s.contains("env")) validate_env(c, s["env"]);
  need_object(c, s, "sample", "phases");
  for (auto& [path, r] : s["phases"].items()) {
    if (path.empty() || path.front() == '/' || path.back() == '/')
      c.fail(fmt::format("phase name '{}' is not a slash path such as proof/synth", path));
    validate_record(c, path, r, declared);
  }
  if (s.contains("spans")) {
    const json& sp = s["spans"];
    if (!sp.is_array()) c.fail(fmt::format("field 'spans' must be an array, not {}", kind(sp)));
    for (size_t i = 0; i < sp.size(); ++i) {
      const json& x = sp[i];
      if (!x.is_object() || !x.contains("path") || !x["path"].is_string() || !x.contains("start_ns") ||
          !x["start_ns"].is_number_integer() || !x.contains("dur_ns") || !x["dur_ns"].is_number_unsigned() ||
          !x.contains("tid") || !x["tid"].is_number_integer())
        c.fail(fmt::format("spans[{}] must be {{\"path\": string, \"start_ns\": integer, \"dur_ns\": integer >= 0, "
                           "\"tid\": integer}}, not {}",
                           i, x.dump()));
    }
  }
}

void validate_gpu_counters(const Ctx& c, const json& g) {
  need_string(c, g, "gpu_counters", "suite");
  need_string(c, g, "gpu_counters", "case");
  need_object(c, g, "gpu_counters", "parameters");
  for (const char* k : {"method", "chip"})
    if (auto it = g.find(k); it != g.end() && !it->is_string())
      c.fail(fmt::format("gpu_counters: field '{}' must be a string, not {}", k, kind(*it)));
  optional_uint(c, g, "passes", "gpu_counters: ");
  need_object(c, g, "gpu_counters", "metrics");
  const json& metrics = g["metrics"];
  for (auto& [m, st] : metrics.items()) {
    if (!st.is_object() || !st.contains("available") || !st["available"].is_boolean() ||
        (st.contains("reason") && !st["reason"].is_string()))
      c.fail(fmt::format("gpu_counters: metrics['{}'] must be {{\"available\": true|false, \"reason\": string}}, not {}", m,
                         st.dump()));
  }
  need_object(c, g, "gpu_counters", "phases");
  for (auto& [phase, values] : g["phases"].items()) {
    if (!values.is_object()) c.fail(fmt::format("gpu_counters phase '{}' must be an object of metric -> number or null", phase));
    for (auto& [m, v] : values.items()) {
      if (!v.is_number() && !v.is_null())
        c.fail(fmt::format("gpu_counters phase '{}' metric '{}' must be a number or null, not {}", phase, m, kind(v)));
      if (!metrics.contains(m))
        c.fail(fmt::format("gpu_counters phase '{}' metric '{}' is not declared in the line's 'metrics'", phase, m));
    }
  }
}

void validate_summary(const Ctx& c, const json& s) {
  need_uint(c, s, "summary", "samples");
  optional_uint(c, s, "warmup_samples");
  optional_uint(c, s, "elapsed_ns");
  need_object(c, s, "summary", "phases");
}

// One file's reading, line after line: the same checks whether the lines come from a file
// (read_results) or from text in memory (parse_results).
class ResultsParser {
 public:
  explicit ResultsParser(const std::string& name) { f_.path = name; }
  void line(const Ctx& c, const std::string& line);
  ResultsFile take() { return std::move(f_); }

 private:
  ResultsFile f_;
  bool have_header_ = false;
  Declared declared_;
};

// Linux may cut a write(2) short when SIGKILL arrives between pages, so a killed writer can
// leave a partial last line: refuse it, and say how to keep the complete lines.
[[noreturn]] void fail_truncated(const Ctx& c) {
  c.fail(fmt::format("truncated line (no newline at the end of the file: the writer was killed mid-line); "
                     "the {} complete lines before it are intact: 'head -n {} FILE' keeps them",
                     c.line - 1, c.line - 1));
}

// Lines are bounded before they are kept, so one line cannot take the reader's memory.
[[noreturn]] void fail_too_long(const Ctx& c, uint64_t bytes) {
  c.fail(fmt::format("line is {} bytes, over the limit of {} bytes", bytes, kMaxResultsLineBytes));
}

void ResultsParser::line(const Ctx& c, const std::string& line) {
  if (line.find_first_not_of(" \t\r") == std::string::npos) c.fail("empty line");
  // Limits before parsing: nlohmann's copy and dump recurse once per nesting level, so a deeply
  // nested "parameters" would overflow the stack in compare and gate.
  if (size_t depth = limits::json_nesting_depth(line); depth > limits::kMaxJsonDepth)
    c.fail(fmt::format("JSON nested {} levels deep, over the limit of {}", depth, limits::kMaxJsonDepth));
  json v;
  try {
    v = json::parse(line);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number such as 1e400
    std::string msg = e.what();
    auto p = msg.find("parse error");
    c.fail("invalid JSON: " + (p == std::string::npos ? msg : msg.substr(p)));
  }
  if (!v.is_object()) c.fail(fmt::format("a line must be a JSON object, not {}", kind(v)));
  auto sc = v.find("schema");
  if (sc == v.end()) c.fail(fmt::format("missing required field 'schema' (expected \"{}\")", kResultsSchema));
  if (*sc != kResultsSchema) c.fail(fmt::format("schema is {}, expected \"{}\"", sc->dump(), kResultsSchema));
  auto ver = v.find("version");
  if (ver == v.end()) c.fail("missing required field 'version'");
  if (!ver->is_number_integer() || ver->get<int64_t>() != kResultsVersion)
    c.fail(fmt::format("unsupported version {} (this reader knows version {})", ver->dump(), kResultsVersion));
  auto ty = v.find("type");
  if (ty == v.end() || !ty->is_string()) c.fail("missing required field 'type' (header, sample or summary)");
  const std::string type = ty->get<std::string>();
  if (f_.summary) c.fail(fmt::format("{} line after the summary line (the summary must be last)", type));
  if (type == "header") {
    if (have_header_) c.fail("second header line (one header per file)");
    if (c.line != 1) c.fail("header line is not the first line");
    validate_header(c, v);
    for (const auto& name : v["counters"]["requested"]) declared_.insert(name.get<std::string>());
    f_.header = {c.line, std::move(v)};
    have_header_ = true;
  } else if (type == "sample") {
    if (!have_header_) c.fail("sample line before the header line");
    validate_sample(c, v, declared_);
    f_.samples.push_back({c.line, std::move(v)});
  } else if (type == "gpu_counters") {
    if (!have_header_) c.fail("gpu_counters line before the header line");
    validate_gpu_counters(c, v);
    f_.gpu_counters.push_back({c.line, std::move(v)});
  } else if (type == "summary") {
    if (!have_header_) c.fail("summary line before the header line");
    validate_summary(c, v);
    f_.summary = ResultsLine{c.line, std::move(v)};
  } else {
    c.fail(fmt::format("unknown line type \"{}\" (expected header, sample, gpu_counters or summary)", type));
  }
}

}  // namespace

ResultsFile parse_results(const std::string& text, const std::string& name) {
  if (text.empty()) throw ResultsError(fmt::format("{}: empty results file (no header line)", name));
  ResultsParser parser(name);
  size_t pos = 0, lineno = 0;
  while (pos < text.size()) {
    ++lineno;
    Ctx c{name, lineno};
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    if (end - pos > kMaxResultsLineBytes) fail_too_long(c, end - pos);
    if (nl == std::string::npos) fail_truncated(c);
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    parser.line(c, line);
  }
  return parser.take();
}

ResultsFile read_results(InputFile& in) {
  ResultsParser parser(in.path());
  in.rewind();
  std::string line;
  size_t lineno = 0;
  for (;;) {
    uint64_t length = 0;
    const InputFile::Line got = in.next_line(line, kMaxResultsLineBytes, &length);
    if (got == InputFile::Line::kEnd) break;
    Ctx c{in.path(), ++lineno};
    if (got == InputFile::Line::kTooLong) fail_too_long(c, length);
    if (got == InputFile::Line::kUnterminated) fail_truncated(c);
    parser.line(c, line);
  }
  if (lineno == 0) throw ResultsError(fmt::format("{}: empty results file (no header line)", in.path()));
  return parser.take();
}

ResultsFile read_results(const std::string& path) {
  InputFile in(path, throw_as<ResultsError>);
  return read_results(in);
}

}  // namespace cuzk
