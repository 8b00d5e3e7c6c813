// Environment readings around a measurement window, written as "env" in each sample line
// (docs/results-format.md): what else the machine was doing (other processes' CPU use,
// hypervisor steal, CPU pressure, load) and what state the CPU and GPU were in (frequency,
// clocks, temperature, power, throttling). They let compare, gate and the noise diagnosis
// tell a slower build from a disturbed sample.
//
// Host readings come from /proc and /sys; GPU readings from NVML, which is loaded at run time
// with dlopen (no link-time dependency: a machine without the NVIDIA driver gets null values
// with the reason). Every value is a number, or null with its reason: never a silent 0.
// Readings are cheap (file reads and NVML queries, no processes spawned), so they can wrap
// every sample. cuzk only reads these states: it never changes a GPU or CPU setting.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cuzk {

// ---- the "env" object of one sample

// The keys of env["values"]; every one is present in every env object.
extern const std::vector<std::string> kEnvValueKeys;
// The reason given to window values (deltas, averages) of samples that have no window.
constexpr const char* kNoWindowReason = "no measurement window (engine samples overlap)";

// Readings around one measurement window: begin() at its start, end() at its end. Not
// thread-safe (one window at a time per probe); different probes may run concurrently.
class EnvProbe {
 public:
  EnvProbe();
  ~EnvProbe();
  EnvProbe(EnvProbe&&) noexcept;
  EnvProbe& operator=(EnvProbe&&) noexcept;

  void begin();
  // The env object of the window since the last begin() (see docs/results-format.md).
  // Without a begin(), window values are null with a reason.
  nlohmann::json end();
  // An env object without a window: interval_ns and the window values are null with
  // `no_window_reason`; the point-in-time values (load average, CPU frequency, GPU clocks
  // and temperature, clock event reasons) are read now.
  static nlohmann::json point_in_time(const std::string& no_window_reason = kNoWindowReason);

  struct Start;  // the readings taken by begin()

 private:
  std::unique_ptr<Start> start_;
};

// ---- parsers and arithmetic (pure: tested on fixed text)

// The aggregate "cpu" line of /proc/stat, in clock ticks (USER_HZ), and the number of
// per-CPU lines (online CPUs). busy = user + nice + system + irq + softirq (guest time is
// already inside user and nice; idle, iowait and steal are not busy).
struct ProcStatTimes {
  uint64_t busy_ticks = 0;
  uint64_t steal_ticks = 0;
  int cpus = 0;
};
std::optional<ProcStatTimes> parse_proc_stat(std::string_view text);
// The "some ... total=N" field of /proc/pressure/cpu: microseconds in which at least one
// task waited for a CPU.
std::optional<uint64_t> parse_psi_some_total_us(std::string_view text);
// The first field of /proc/loadavg.
std::optional<double> parse_loadavg_1m(std::string_view text);
// The mean of the "cpu MHz" lines of /proc/cpuinfo.
std::optional<double> parse_cpuinfo_mean_mhz(std::string_view text);

// Other processes' CPU use over a window, from two /proc/stat readings and this process's
// own CPU seconds in the window (getrusage). nullopt when the window is empty or the
// counters went backwards (CPUs taken offline during the window).
struct CpuWindow {
  double others_busy_cores = 0;       // (busy - own) / wall, clamped at 0
  double others_busy_resolution = 0;  // +- quantization: cpus ticks / wall
  double steal_cores = 0;             // steal / wall
};
std::optional<CpuWindow> cpu_window(const ProcStatTimes& start, const ProcStatTimes& end, double own_cpu_s,
                                    double wall_s, long ticks_per_s);

// Names of the bits set in NVML's clock event (formerly throttle) reasons mask, in bit order:
// gpu_idle, applications_clocks_setting, sw_power_cap, hw_slowdown, sync_boost,
// sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown, display_clock_setting;
// an unknown bit N is named "bit_N".
std::vector<std::string> decode_clock_event_reasons(uint64_t mask);
// Whether a decoded reason means the GPU was slowed down (power or thermal limits, hardware
// slowdown), rather than idle or held by a clock setting.
bool is_throttling_reason(std::string_view reason);

// ---- judging a window (compare, gate, noise)

struct EnvThresholds {
  double others_busy_cores = 1.0;  // other processes' CPU use beyond which a sample is loaded
  double steal_cores = 0.1;        // hypervisor steal beyond which a sample is loaded
};
struct EnvJudgement {
  bool throttled = false;  // the GPU was slowed down by power or thermal limits
  bool loaded = false;     // other work competed for the CPUs
  std::string why;         // short human text, e.g. "GPU throttled 12.0 ms (power/thermal)"; "" when neither
};
// Judges an env object (or a sample line carrying one under "env"). Missing or null values
// never count; a missing env (files older than these readings) is neither throttled nor loaded.
// throttled: gpu.throttle_ns > 0, or a throttling reason among gpu_clock_event_reasons.
// loaded: others_busy_cores - others_busy_resolution > t.others_busy_cores, or
// steal_cores > t.steal_cores.
EnvJudgement judge_env(const nlohmann::json& env, const EnvThresholds& t = {});

// ---- the results header

// Header fields: "gpu_state" (NVML's read-only view of GPU 0's clock state: name, driver,
// current / application / max clocks, enforced power limit, persistence mode, clock event
// reasons, "changed_by_cuzk": false) or null with "gpu_state_error"; "cpu_governor" (cpu0's
// cpufreq governor) or null with "cpu_governor_error".
nlohmann::json env_header_fields();

}  // namespace cuzk
