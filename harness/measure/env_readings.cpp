#include "harness/measure/env_readings.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>

#include "harness/measure/clock.hpp"

namespace cuzk {

using nlohmann::json;

const std::vector<std::string> kEnvValueKeys = {
    "host.loadavg_1m",  "host.others_busy_cores", "host.others_busy_resolution", "host.steal_cores",
    "host.cpu_pressure", "host.cpu_mhz",          "gpu.sm_clock_mhz",            "gpu.mem_clock_mhz",
    "gpu.temperature_c", "gpu.power_w",           "gpu.throttle_ns"};

namespace {

// A reading: a value, or why there is none.
template <class T>
struct Reading {
  std::optional<T> value;
  std::string error;
  static Reading fail(std::string why) { return {std::nullopt, std::move(why)}; }
};

// Sets obj[key] to the reading's value (converted by `to_json`), or to null with the reason
// in errors[key]: the one place where "never a silent 0" is kept.
template <class T, class F>
void put(json& obj, json& errors, const std::string& key, const Reading<T>& r, F to_json) {
  if (r.value) {
    obj[key] = to_json(*r.value);
  } else {
    obj[key] = nullptr;
    errors[key] = r.error;
  }
}
template <class T>
void put(json& obj, json& errors, const std::string& key, const Reading<T>& r) {
  put(obj, errors, key, r, [](const T& v) { return json(v); });
}

// ---------------------------------------------------------------- small file reads

std::string_view trim(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

// The whole of a /proc or /sys file. Plain open/read: no stdio buffers, no allocation beyond
// the text (/proc/stat reaches tens of KiB on large machines).
Reading<std::string> read_text(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Reading<std::string>::fail(fmt::format("{}: {}", path, std::strerror(errno)));
  std::string out;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return Reading<std::string>::fail(fmt::format("{}: read failed: {}", path, std::strerror(e)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return {std::move(out), ""};
}

// Parses the number at the start of s (after blanks); advances s past it.
template <class T>
std::optional<T> take_number(std::string_view& s) {
  s.remove_prefix(std::min(s.size(), s.find_first_not_of(" \t")));
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return v;
}

// Each line of text, in order, until f returns false.
template <class F>
void for_each_line(std::string_view text, F f) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (!f(text.substr(0, nl))) return;
    if (nl == std::string_view::npos) return;
    text.remove_prefix(nl + 1);
  }
}

std::string excerpt(std::string_view text) {
  std::string s(trim(text.substr(0, 60)));
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

// ---------------------------------------------------------------- parsers

std::optional<ProcStatTimes> parse_proc_stat(std::string_view text) {
  ProcStatTimes t;
  bool aggregate = false, bad = false;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 3) != "cpu") return false;  // the cpu lines come first; stop before "intr"
    if (line.size() > 3 && line[3] >= '0' && line[3] <= '9') {
      ++t.cpus;
      return true;
    }
    // "cpu  user nice system idle iowait irq softirq steal guest guest_nice" (proc(5))
    line.remove_prefix(3);
    uint64_t f[8];
    for (uint64_t& x : f) {
      auto v = take_number<uint64_t>(line);
      if (!v) {
        bad = true;
        return false;
      }
      x = *v;
    }
    t.busy_ticks = f[0] + f[1] + f[2] + f[5] + f[6];
    t.steal_ticks = f[7];
    aggregate = true;
    return true;
  });
  if (!aggregate || bad || t.cpus == 0) return std::nullopt;
  return t;
}

std::optional<uint64_t> parse_psi_some_total_us(std::string_view text) {
  std::optional<uint64_t> total;
  // "some avg10=0.00 avg60=0.00 avg300=0.00 total=12345" (Documentation/accounting/psi.rst)
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 5) != "some ") return true;
    const size_t at = line.find(" total=");
    if (at != std::string_view::npos) {
      line.remove_prefix(at + 7);
      total = take_number<uint64_t>(line);
    }
    return false;
  });
  return total;
}

std::optional<double> parse_loadavg_1m(std::string_view text) {
  auto v = take_number<double>(text);
  if (!v || *v < 0) return std::nullopt;
  return v;
}

std::optional<double> parse_cpuinfo_mean_mhz(std::string_view text) {
  double sum = 0;
  int n = 0;
  for_each_line(text, [&](std::string_view line) {
    if (line.substr(0, 7) != "cpu MHz") return true;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return true;
    line.remove_prefix(colon + 1);
    if (auto v = take_number<double>(line); v && *v > 0) {
      sum += *v;
      ++n;
    }
    return true;
  });
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::optional<CpuWindow> cpu_window(const ProcStatTimes& a, const ProcStatTimes& b, double own_cpu_s, double wall_s,
                                    long ticks_per_s) {
  if (wall_s <= 0 || ticks_per_s <= 0 || b.busy_ticks < a.busy_ticks || b.steal_ticks < a.steal_ticks)
    return std::nullopt;
  const double tick_s = 1.0 / static_cast<double>(ticks_per_s);
  const double busy_s = static_cast<double>(b.busy_ticks - a.busy_ticks) * tick_s;
  CpuWindow w;
  w.others_busy_cores = std::max(0.0, busy_s - own_cpu_s) / wall_s;
  // Each CPU's counter moves in whole ticks, so the sum over CPUs is uncertain by one tick per
  // CPU; own_cpu_s (getrusage) is finer and adds nothing worth counting.
  w.others_busy_resolution = std::max(a.cpus, b.cpus) * tick_s / wall_s;
  w.steal_cores = static_cast<double>(b.steal_ticks - a.steal_ticks) * tick_s / wall_s;
  return w;
}

namespace {
// Bits of NVML's clocks event reasons mask (nvmlClocksEventReason* in nvml.h, formerly
// nvmlClocksThrottleReason*; NVML API Reference, "Clock Event Reasons"), and whether each is a
// slowdown (power or thermal limits, hardware slowdown) rather than idling or a clock setting.
struct ReasonBit {
  uint64_t bit;
  const char* name;
  bool throttling;
};
constexpr ReasonBit kReasonBits[] = {
    {0x1, "gpu_idle", false},
    {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", false},
    {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", false},
};
}  // namespace

std::vector<std::string> decode_clock_event_reasons(uint64_t mask) {
  std::vector<std::string> out;
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t(1) << i;
    if (!(mask & bit)) continue;
    std::string name = fmt::format("bit_{}", i);
    for (const auto& r : kReasonBits)
      if (r.bit == bit) name = r.name;
    out.push_back(std::move(name));
  }
  return out;
}

bool is_throttling_reason(std::string_view reason) {
  for (const auto& r : kReasonBits)
    if (reason == r.name) return r.throttling;
  return false;
}

// ---------------------------------------------------------------- NVML, loaded at run time

namespace {
namespace nvml {
// No nvml.h is needed to build: the few types, values and signatures used here are declared
// from NVML's API Reference (https://docs.nvidia.com/deploy/nvml-api/). nvmlReturn_t and the
// enums are C enums (passed as int), nvmlDevice_t is an opaque pointer, NVML_SUCCESS is 0.
using Return = int;
using Device = void*;
constexpr Return kSuccess = 0;
constexpr int kClockSm = 1;          // nvmlClockType_t: NVML_CLOCK_GRAPHICS 0, NVML_CLOCK_SM 1,
constexpr int kClockMem = 2;         //   NVML_CLOCK_MEM 2
constexpr int kTemperatureGpu = 0;   // nvmlTemperatureSensors_t: NVML_TEMPERATURE_GPU 0
constexpr int kPolicyPower = 0;      // nvmlPerfPolicyType_t: NVML_PERF_POLICY_POWER 0,
constexpr int kPolicyThermal = 1;    //   NVML_PERF_POLICY_THERMAL 1
constexpr int kFeatureEnabled = 1;   // nvmlEnableState_t: NVML_FEATURE_ENABLED 1
constexpr unsigned kStringSize = 96;  // >= NVML_DEVICE_NAME_V2_BUFFER_SIZE (96), driver version (80)
struct ViolationTime {               // nvmlViolationTime_t
  unsigned long long reference_time_us;
  unsigned long long violation_time_ns;
};

// The entry points used, resolved once per process. A missing optional entry point (older
// drivers) makes only the values that need it null.
struct Api {
  std::string error;  // why NVML cannot be used; "" when loaded and GPU 0 was found
  Device device = nullptr;
  const char* (*error_string)(Return) = nullptr;                           // nvmlErrorString
  Return (*clock_info)(Device, int, unsigned*) = nullptr;                  // MHz
  Return (*applications_clock)(Device, int, unsigned*) = nullptr;          // MHz
  Return (*max_clock_info)(Device, int, unsigned*) = nullptr;              // MHz
  Return (*temperature)(Device, int, unsigned*) = nullptr;                 // degrees C
  Return (*power_usage)(Device, unsigned*) = nullptr;                      // mW
  Return (*total_energy)(Device, unsigned long long*) = nullptr;           // mJ since the driver loaded
  Return (*violation_status)(Device, int, ViolationTime*) = nullptr;
  Return (*clock_event_reasons)(Device, unsigned long long*) = nullptr;    // bitmask
  const char* clock_event_reasons_name = "nvmlDeviceGetCurrentClocksEventReasons";
  Return (*enforced_power_limit)(Device, unsigned*) = nullptr;             // mW
  Return (*persistence_mode)(Device, int*) = nullptr;                      // nvmlEnableState_t
  Return (*name)(Device, char*, unsigned) = nullptr;
  Return (*driver_version)(char*, unsigned) = nullptr;

  std::string why(const char* fn, Return r) const {
    return fmt::format("NVML {}: {} (error {})", fn, error_string ? error_string(r) : "?", r);
  }
};

template <class F>
bool resolve(void* lib, F& f, const char* name, const char* older_name = nullptr) {
  void* p = ::dlsym(lib, name);
  if (!p && older_name) p = ::dlsym(lib, older_name);
  f = reinterpret_cast<F>(p);
  return p != nullptr;
}

void load(Api& a) {
  // Never closed: the library stays for the life of the process, as NVML expects.
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    const std::string detail = e ? e : "";
    a.error = detail.find("No such file") != std::string::npos || detail.empty()
                  ? "NVML: libnvidia-ml.so.1 not found (no NVIDIA driver here)"
                  : "NVML: cannot load libnvidia-ml.so.1: " + detail;
    return;
  }
  Return (*init)() = nullptr;
  Return (*handle_by_index)(unsigned, Device*) = nullptr;
  if (!resolve(lib, init, "nvmlInit_v2", "nvmlInit") || !resolve(lib, a.error_string, "nvmlErrorString") ||
      !resolve(lib, handle_by_index, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex")) {
    a.error = "NVML: libnvidia-ml.so.1 lacks nvmlInit, nvmlErrorString or nvmlDeviceGetHandleByIndex";
    return;
  }
  if (const Return r = init(); r != kSuccess) {
    a.error = a.why("nvmlInit", r);
    return;
  }
  if (const Return r = handle_by_index(0, &a.device); r != kSuccess) {
    a.error = a.why("nvmlDeviceGetHandleByIndex(0)", r) + " (no GPU 0)";
    return;
  }
  resolve(lib, a.clock_info, "nvmlDeviceGetClockInfo");
  resolve(lib, a.applications_clock, "nvmlDeviceGetApplicationsClock");
  resolve(lib, a.max_clock_info, "nvmlDeviceGetMaxClockInfo");
  resolve(lib, a.temperature, "nvmlDeviceGetTemperature");
  resolve(lib, a.power_usage, "nvmlDeviceGetPowerUsage");
  resolve(lib, a.total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  resolve(lib, a.violation_status, "nvmlDeviceGetViolationStatus");
  // Renamed in driver 535 (CUDA 12.2); older drivers only have the throttle name.
  if (!resolve(lib, a.clock_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons") &&
      resolve(lib, a.clock_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons"))
    a.clock_event_reasons_name = "nvmlDeviceGetCurrentClocksThrottleReasons";
  resolve(lib, a.enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  resolve(lib, a.persistence_mode, "nvmlDeviceGetPersistenceMode");
  resolve(lib, a.name, "nvmlDeviceGetName");
  resolve(lib, a.driver_version, "nvmlSystemGetDriverVersion");
}

// Loaded and initialized once per process, on first use, from any thread.
const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] { load(a); });
  return a;
}

bool available() { return api().error.empty(); }

// One device query: fn(device, args..., &out).
template <class T, class Fn, class... Args>
Reading<T> query(Fn Api::*fn, const char* fn_name, Args... args) {
  const Api& a = api();
  if (!a.error.empty()) return Reading<T>::fail(a.error);
  if (!(a.*fn)) return Reading<T>::fail(fmt::format("NVML: this driver's libnvidia-ml.so.1 has no {}", fn_name));
  T out{};
  if (const Return r = (a.*fn)(a.device, args..., &out); r != kSuccess) return Reading<T>::fail(a.why(fn_name, r));
  return {out, ""};
}

Reading<std::string> device_name() {
  const Api& a = api();
  if (!a.error.empty()) return Reading<std::string>::fail(a.error);
  if (!a.name) return Reading<std::string>::fail("NVML: this driver's libnvidia-ml.so.1 has no nvmlDeviceGetName");
  char buf[kStringSize] = {0};
  if (const Return r = a.name(a.device, buf, kStringSize); r != kSuccess)
    return Reading<std::string>::fail(a.why("nvmlDeviceGetName", r));
  return {std::string(buf), ""};
}

Reading<std::string> driver_version() {
  const Api& a = api();
  if (!a.error.empty()) return Reading<std::string>::fail(a.error);
  if (!a.driver_version)
    return Reading<std::string>::fail("NVML: this driver's libnvidia-ml.so.1 has no nvmlSystemGetDriverVersion");
  char buf[kStringSize] = {0};
  if (const Return r = a.driver_version(buf, kStringSize); r != kSuccess)
    return Reading<std::string>::fail(a.why("nvmlSystemGetDriverVersion", r));
  return {std::string(buf), ""};
}

Reading<unsigned long long> clock_event_reasons() {
  return query<unsigned long long>(&Api::clock_event_reasons, api().clock_event_reasons_name);
}

// Nanoseconds the power and thermal policies held the clocks down since the driver loaded.
Reading<uint64_t> violation_ns() {
  if (!available()) return Reading<uint64_t>::fail(api().error);
  uint64_t sum = 0;
  for (const int policy : {kPolicyPower, kPolicyThermal}) {
    auto v = query<ViolationTime>(&Api::violation_status, "nvmlDeviceGetViolationStatus", policy);
    if (!v.value)
      return Reading<uint64_t>::fail(fmt::format("{} ({} policy)", v.error, policy == kPolicyPower ? "power" : "thermal"));
    sum += v.value->violation_time_ns;
  }
  return {sum, ""};
}

}  // namespace nvml

// ---------------------------------------------------------------- host readings

// Every CPU's cpufreq/scaling_cur_freq, opened once and re-read with pread at offset 0 (sysfs
// regenerates an attribute on each read from offset 0): on machines with a hundred CPUs,
// opening every file at every reading would cost a millisecond. The descriptors stay open for
// the life of the process (close-on-exec).
const std::vector<int>& cpufreq_fds() {
  static std::vector<int> fds;
  static std::once_flag once;
  std::call_once(once, [] {
    DIR* d = ::opendir("/sys/devices/system/cpu");
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() < 4 || n.compare(0, 3, "cpu") != 0 || n.find_first_not_of("0123456789", 3) != std::string::npos)
        continue;
      const std::string path = "/sys/devices/system/cpu/" + n + "/cpufreq/scaling_cur_freq";
      if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) fds.push_back(fd);
    }
    ::closedir(d);
  });
  return fds;
}

struct CpuMhz {
  Reading<double> mhz;
  std::string source;
};

CpuMhz read_cpu_mhz() {
  double sum_khz = 0;
  int n = 0;
  for (const int fd : cpufreq_fds()) {
    char buf[32];
    const ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
    if (got <= 0) continue;  // a CPU taken offline: the mean is over the others
    std::string_view s(buf, static_cast<size_t>(got));
    if (auto khz = take_number<double>(s); khz && *khz > 0) {
      sum_khz += *khz;
      ++n;
    }
  }
  if (n > 0) return {{sum_khz / n / 1000.0, ""}, "scaling_cur_freq"};
  auto text = read_text("/proc/cpuinfo");
  if (!text.value)
    return {Reading<double>::fail("no cpufreq scaling_cur_freq, and " + text.error), ""};
  if (auto mhz = parse_cpuinfo_mean_mhz(*text.value)) return {{*mhz, ""}, "/proc/cpuinfo (nominal on virtual machines)"};
  return {Reading<double>::fail("no cpufreq scaling_cur_freq, and no 'cpu MHz' line in /proc/cpuinfo"), ""};
}

Reading<double> read_loadavg() {
  auto text = read_text("/proc/loadavg");
  if (!text.value) return Reading<double>::fail(text.error);
  if (auto v = parse_loadavg_1m(*text.value)) return {*v, ""};
  return Reading<double>::fail(fmt::format("/proc/loadavg: unexpected content '{}'", excerpt(*text.value)));
}

Reading<ProcStatTimes> read_proc_stat() {
  auto text = read_text("/proc/stat");
  if (!text.value) return Reading<ProcStatTimes>::fail(text.error);
  if (auto t = parse_proc_stat(*text.value)) return {*t, ""};
  return Reading<ProcStatTimes>::fail(
      fmt::format("/proc/stat: no aggregate 'cpu' line with 8 fields and per-CPU lines (starts '{}')", excerpt(*text.value)));
}

Reading<uint64_t> read_psi_us() {
  auto text = read_text("/proc/pressure/cpu");
  if (!text.value) return Reading<uint64_t>::fail(text.error + " (kernel without pressure stall information?)");
  if (auto v = parse_psi_some_total_us(*text.value)) return {*v, ""};
  return Reading<uint64_t>::fail(
      fmt::format("/proc/pressure/cpu: no 'some ... total=N' line (starts '{}')", excerpt(*text.value)));
}

// This process's CPU time, all threads, user + system (getrusage(RUSAGE_SELF)).
Reading<double> own_cpu_s() {
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) != 0) return Reading<double>::fail(fmt::format("getrusage: {}", std::strerror(errno)));
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return {s(u.ru_utime) + s(u.ru_stime), ""};
}

// A window counter with the steady-clock time it was read at (the middle of the read: some
// NVML reads take milliseconds).
template <class T>
struct Stamped {
  Reading<T> r;
  uint64_t at_ns = 0;
};
template <class F>
auto stamped(F read) {
  const uint64_t t0 = now_ns();
  auto r = read();
  const uint64_t t1 = now_ns();
  return Stamped<typename decltype(r.value)::value_type>{std::move(r), t0 + (t1 - t0) / 2};
}

// The counters read at both ends of a window.
struct WindowCounters {
  Stamped<unsigned long long> energy_mj;
  Stamped<uint64_t> violation_ns;
  Stamped<uint64_t> psi_us;
  Reading<ProcStatTimes> stat;
  Reading<double> own_s;
  uint64_t wall_ns = 0;  // when stat and own_s were read
};

// /proc/stat, getrusage and the clock: read together, right next to the measured work.
void read_cpu_counters(WindowCounters& c) {
  c.stat = read_proc_stat();
  c.own_s = own_cpu_s();
  c.wall_ns = now_ns();
}

// PSI and NVML's energy and violation counters, each with its own time stamp (NVML's take
// milliseconds on some drivers, so they are read outside the CPU counters' span).
void read_other_counters(WindowCounters& c) {
  c.psi_us = stamped(read_psi_us);
  c.energy_mj = stamped([] {
    return nvml::query<unsigned long long>(&nvml::Api::total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  });
  c.violation_ns = stamped(nvml::violation_ns);
}

// The first error of two readings of the same counter (start, end).
template <class T>
std::string either_error(const Reading<T>& a, const Reading<T>& b) {
  return !a.value ? a.error : b.error;
}

// The env object under construction: every value key present, each null with its reason.
class EnvBuilder {
 public:
  EnvBuilder() {
    for (const auto& k : kEnvValueKeys) values_[k] = nullptr;
  }
  template <class T, class F>
  void set(const std::string& key, const Reading<T>& r, F to_json) {
    put(values_, errors_, key, r, to_json);
  }
  template <class T>
  void set(const std::string& key, const Reading<T>& r) {
    put(values_, errors_, key, r);
  }
  void source(const std::string& key, const std::string& s) { sources_[key] = s; }

  void window(const WindowCounters& a, const WindowCounters& b) {
    interval_ = b.wall_ns - a.wall_ns;
    const double wall_s = static_cast<double>(b.wall_ns - a.wall_ns) * 1e-9;
    Reading<CpuWindow> cpu;
    if (!a.stat.value || !b.stat.value || !a.own_s.value || !b.own_s.value) {
      cpu = Reading<CpuWindow>::fail(!a.stat.value || !b.stat.value ? either_error(a.stat, b.stat)
                                                                    : either_error(a.own_s, b.own_s));
    } else if (auto w = cpu_window(*a.stat.value, *b.stat.value, *b.own_s.value - *a.own_s.value, wall_s,
                                   ::sysconf(_SC_CLK_TCK))) {
      cpu = {*w, ""};
    } else {
      cpu = Reading<CpuWindow>::fail("/proc/stat counters went backwards in the window (CPUs taken offline?)");
    }
    set("host.others_busy_cores", cpu, [](const CpuWindow& w) { return json(w.others_busy_cores); });
    set("host.others_busy_resolution", cpu, [](const CpuWindow& w) { return json(w.others_busy_resolution); });
    set("host.steal_cores", cpu, [](const CpuWindow& w) { return json(w.steal_cores); });

    Reading<double> pressure;
    if (!a.psi_us.r.value || !b.psi_us.r.value)
      pressure = Reading<double>::fail(either_error(a.psi_us.r, b.psi_us.r));
    else if (*b.psi_us.r.value < *a.psi_us.r.value || b.psi_us.at_ns <= a.psi_us.at_ns)
      pressure = Reading<double>::fail("/proc/pressure/cpu total went backwards in the window");
    else
      pressure = {static_cast<double>(*b.psi_us.r.value - *a.psi_us.r.value) * 1e3 /
                      static_cast<double>(b.psi_us.at_ns - a.psi_us.at_ns),
                  ""};
    set("host.cpu_pressure", pressure);

    power(a.energy_mj, b.energy_mj);

    Reading<uint64_t> throttle;
    if (a.violation_ns.r.value && b.violation_ns.r.value && *b.violation_ns.r.value >= *a.violation_ns.r.value)
      throttle = {*b.violation_ns.r.value - *a.violation_ns.r.value, ""};
    else if (a.violation_ns.r.value && b.violation_ns.r.value)
      throttle = Reading<uint64_t>::fail("NVML violation time went backwards in the window (driver reloaded?)");
    else
      throttle = Reading<uint64_t>::fail(either_error(a.violation_ns.r, b.violation_ns.r));
    set("gpu.throttle_ns", throttle);
  }

  // Values that need a window, when there is none.
  void no_window(const std::string& why) {
    for (const char* k : {"host.others_busy_cores", "host.others_busy_resolution", "host.steal_cores",
                          "host.cpu_pressure", "gpu.power_w", "gpu.throttle_ns"})
      set(k, Reading<double>::fail(why));
  }

  // GPU clocks, temperature and clock event reasons, read now (cheap NVML queries).
  void gpu_point_in_time() {
    set("gpu.sm_clock_mhz", nvml::query<unsigned>(&nvml::Api::clock_info, "nvmlDeviceGetClockInfo", nvml::kClockSm));
    set("gpu.mem_clock_mhz", nvml::query<unsigned>(&nvml::Api::clock_info, "nvmlDeviceGetClockInfo", nvml::kClockMem));
    set("gpu.temperature_c",
        nvml::query<unsigned>(&nvml::Api::temperature, "nvmlDeviceGetTemperature", nvml::kTemperatureGpu));
    if (nvml::available()) {
      auto reasons = nvml::clock_event_reasons();
      if (reasons.value)
        reasons_ = decode_clock_event_reasons(*reasons.value);
      else
        errors_["gpu_clock_event_reasons"] = reasons.error;
    }
  }

  // Load average and CPU frequency, read now.
  void host_point_in_time() {
    set("host.loadavg_1m", read_loadavg());
    CpuMhz mhz = read_cpu_mhz();
    set("host.cpu_mhz", mhz.mhz);
    if (!mhz.source.empty()) source("host.cpu_mhz", mhz.source);
  }

  json take(bool with_interval) {
    // Belt and braces for "never a silent null": a key nothing set keeps a reason too.
    for (const auto& k : kEnvValueKeys)
      if (values_[k].is_null() && !errors_.contains(k)) errors_[k] = "not read (internal error: no reading taken)";
    json env = {{"interval_ns", with_interval ? json(interval_) : json(nullptr)},
                {"values", std::move(values_)},
                {"errors", std::move(errors_)},
                {"sources", std::move(sources_)}};
    if (reasons_) env["gpu_clock_event_reasons"] = *reasons_;
    return env;
  }

 private:
  // Average power over the window from the energy counter; the instantaneous reading when the
  // counter is unavailable or did not move (it updates coarsely: short windows can see no step).
  void power(const Stamped<unsigned long long>& a, const Stamped<unsigned long long>& b) {
    if (a.r.value && b.r.value && *b.r.value > *a.r.value && b.at_ns > a.at_ns) {
      set("gpu.power_w", Reading<double>{static_cast<double>(*b.r.value - *a.r.value) * 1e6 /
                                             static_cast<double>(b.at_ns - a.at_ns),
                                         ""});
      source("gpu.power_w", "energy counter");
      return;
    }
    const std::string energy_why =
        a.r.value && b.r.value ? "energy counter did not advance in the window" : either_error(a.r, b.r);
    auto mw = nvml::query<unsigned>(&nvml::Api::power_usage, "nvmlDeviceGetPowerUsage");
    if (mw.value) {
      set("gpu.power_w", Reading<double>{*mw.value / 1000.0, ""});
      source("gpu.power_w", "instantaneous (" + energy_why + ")");
    } else {
      set("gpu.power_w", Reading<double>::fail(energy_why == mw.error ? mw.error : energy_why + "; " + mw.error));
    }
  }

  json values_ = json::object(), errors_ = json::object(), sources_ = json::object();
  std::optional<std::vector<std::string>> reasons_;
  uint64_t interval_ = 0;
};

}  // namespace

// ---------------------------------------------------------------- EnvProbe

struct EnvProbe::Start {
  WindowCounters counters;
};

EnvProbe::EnvProbe() = default;
EnvProbe::~EnvProbe() = default;
EnvProbe::EnvProbe(EnvProbe&&) noexcept = default;
EnvProbe& EnvProbe::operator=(EnvProbe&&) noexcept = default;

void EnvProbe::begin() {
  nvml::api();  // load and initialize NVML (once per process: can take a while) outside the window
  auto start = std::make_unique<Start>();
  read_other_counters(start->counters);
  read_cpu_counters(start->counters);  // last: right before the work
  start_ = std::move(start);
}

json EnvProbe::end() {
  EnvBuilder b;
  const bool had_window = start_ != nullptr;
  if (had_window) {
    WindowCounters end;
    read_cpu_counters(end);  // first: right after the work
    b.gpu_point_in_time();   // the clocks before they start to fall back to idle
    read_other_counters(end);
    b.window(start_->counters, end);
    start_.reset();
  } else {
    b.no_window("no measurement window (EnvProbe::end() without begin())");
    b.gpu_point_in_time();
  }
  b.host_point_in_time();
  return b.take(had_window);
}

json EnvProbe::point_in_time(const std::string& no_window_reason) {
  EnvBuilder b;
  b.no_window(no_window_reason);
  b.gpu_point_in_time();
  b.host_point_in_time();
  return b.take(false);
}

// ---------------------------------------------------------------- judging

EnvJudgement judge_env(const json& in, const EnvThresholds& t) {
  EnvJudgement j;
  const json* env = &in;
  if (in.is_object() && !in.contains("values") && in.contains("env")) env = &in["env"];
  if (!env->is_object()) return j;
  const json* values = nullptr;
  if (auto it = env->find("values"); it != env->end() && it->is_object()) values = &*it;
  auto num = [&](const char* key) -> std::optional<double> {
    if (!values) return std::nullopt;
    auto it = values->find(key);
    if (it == values->end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  std::vector<std::string> why;

  if (auto ns = num("gpu.throttle_ns"); ns && *ns > 0) {
    j.throttled = true;
    why.push_back(fmt::format("GPU throttled {:.1f} ms (power/thermal)", *ns / 1e6));
  }
  if (auto it = env->find("gpu_clock_event_reasons"); it != env->end() && it->is_array()) {
    std::string slow;
    for (const auto& r : *it)
      if (r.is_string() && is_throttling_reason(r.get<std::string>())) slow += (slow.empty() ? "" : ", ") + r.get<std::string>();
    if (!slow.empty()) {
      j.throttled = true;
      why.push_back("GPU clocks held down: " + slow);
    }
  }
  if (auto others = num("host.others_busy_cores")) {
    const double res = num("host.others_busy_resolution").value_or(0.0);
    if (*others - res > t.others_busy_cores) {
      j.loaded = true;
      why.push_back(fmt::format("others used {:.1f} cores", *others));
    }
  }
  if (auto steal = num("host.steal_cores"); steal && *steal > t.steal_cores) {
    j.loaded = true;
    why.push_back(fmt::format("hypervisor stole {:.2f} cores", *steal));
  }
  for (size_t i = 0; i < why.size(); ++i) j.why += (i ? "; " : "") + why[i];
  return j;
}

// ---------------------------------------------------------------- header

namespace {

json gpu_state() {
  using nvml::Api;
  json s = {{"device_index", 0}}, errors = json::object();
  put(s, errors, "name", nvml::device_name());
  put(s, errors, "driver_version", nvml::driver_version());
  put(s, errors, "sm_clock_mhz", nvml::query<unsigned>(&Api::clock_info, "nvmlDeviceGetClockInfo", nvml::kClockSm));
  put(s, errors, "mem_clock_mhz", nvml::query<unsigned>(&Api::clock_info, "nvmlDeviceGetClockInfo", nvml::kClockMem));
  put(s, errors, "applications_sm_clock_mhz",
      nvml::query<unsigned>(&Api::applications_clock, "nvmlDeviceGetApplicationsClock", nvml::kClockSm));
  put(s, errors, "applications_mem_clock_mhz",
      nvml::query<unsigned>(&Api::applications_clock, "nvmlDeviceGetApplicationsClock", nvml::kClockMem));
  put(s, errors, "max_sm_clock_mhz",
      nvml::query<unsigned>(&Api::max_clock_info, "nvmlDeviceGetMaxClockInfo", nvml::kClockSm));
  put(s, errors, "max_mem_clock_mhz",
      nvml::query<unsigned>(&Api::max_clock_info, "nvmlDeviceGetMaxClockInfo", nvml::kClockMem));
  put(s, errors, "power_limit_w", nvml::query<unsigned>(&Api::enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit"),
      [](unsigned mw) { return json(mw / 1000.0); });
  put(s, errors, "persistence_mode", nvml::query<int>(&Api::persistence_mode, "nvmlDeviceGetPersistenceMode"),
      [](int m) { return json(m == nvml::kFeatureEnabled); });
  put(s, errors, "clock_event_reasons", nvml::clock_event_reasons(),
      [](unsigned long long m) { return json(decode_clock_event_reasons(m)); });
  s["errors"] = errors;
  s["changed_by_cuzk"] = false;
  s["note"] = "read only: cuzk reads the GPU's clock state and never changes a GPU setting "
              "(clocks, application clocks, power limit, persistence mode)";
  return s;
}

}  // namespace

json env_header_fields() {
  json h = json::object();
  if (nvml::available()) {
    h["gpu_state"] = gpu_state();
  } else {
    h["gpu_state"] = nullptr;
    h["gpu_state_error"] = nvml::api().error;
  }
  const char* gov = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
  auto text = read_text(gov);
  if (text.value && !trim(*text.value).empty()) {
    h["cpu_governor"] = std::string(trim(*text.value));
  } else {
    h["cpu_governor"] = nullptr;
    h["cpu_governor_error"] = text.value ? fmt::format("{}: empty", gov)
                                         : text.error + " (no cpufreq driver: usual on virtual machines)";
  }
  return h;
}

}  // namespace cuzk
