// Environment readings: the parsers and the bitmask decoder on fixed input, the judgement on
// hand-written env objects, live readings on this machine (host values are numbers; GPU values
// are null with an NVML reason where no NVIDIA driver is installed), this process's own CPU use
// not counted as others' load, and Session's sample lines (env, process_id) reading back.
#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <regex>
#include <thread>

#include "catch.hpp"
#include "harness/measure/clock.hpp"
#include "harness/measure/env_readings.hpp"
#include "harness/measure/results.hpp"
#include "harness/measure/session.hpp"
#include "prover/instr/phase.hpp"
#include "test_util.hpp"

using nlohmann::json;
namespace t = cuzk::test;

namespace {

// Whether NVML can be loaded here (the GPU machine), else every GPU value must be null.
bool nvml_here() {
  static const bool here = [] {
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    return h != nullptr;  // left open: the probe uses the same library
  }();
  return here;
}

double own_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

cuzk::ProcStatTimes proc_stat_now() {
  auto s = cuzk::parse_proc_stat(t::slurp("/proc/stat"));
  REQUIRE(s);
  return *s;
}

// An env object with the given values (every other key null with a reason).
json env_with(const json& values, const json& reasons = nullptr) {
  json env = {{"interval_ns", 1000000000}, {"values", json::object()}, {"errors", json::object()}};
  for (const auto& k : cuzk::kEnvValueKeys) {
    env["values"][k] = nullptr;
    env["errors"][k] = "not read in this test";
  }
  for (auto& [k, v] : values.items()) {
    env["values"][k] = v;
    if (!v.is_null()) env["errors"].erase(k);
  }
  if (!reasons.is_null()) env["gpu_clock_event_reasons"] = reasons;
  return env;
}

cuzk::SessionOptions session_options(const std::string& out) {
  cuzk::SessionOptions o;
  o.suite = "env-test";
  o.out = out;
  o.counters = std::string();  // none: counters are not what is tested here
  return o;
}

std::string error_of(const std::string& path, const std::string& text) {
  t::spit(path, text);
  try {
    cuzk::read_results(path);
  } catch (const cuzk::ResultsError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("/proc/stat: busy and steal ticks of the aggregate line, online CPUs counted", "[env]") {
  const std::string text =
      "cpu  100 5 30 1000 40 2 3 7 50 0\n"
      "cpu0 50 5 15 500 20 1 1 3 25 0\n"
      "cpu1 50 0 15 500 20 1 2 4 25 0\n"
      "intr 12345 1 2 3\n"
      "ctxt 999\n";
  auto s = cuzk::parse_proc_stat(text);
  REQUIRE(s);
  CHECK(s->busy_ticks == 100 + 5 + 30 + 2 + 3);  // user nice system irq softirq; not idle, iowait, steal, guest
  CHECK(s->steal_ticks == 7);
  CHECK(s->cpus == 2);
  CHECK_FALSE(cuzk::parse_proc_stat("intr 1 2 3\n"));
  CHECK_FALSE(cuzk::parse_proc_stat("cpu  1 2 3\ncpu0 1 2 3\n"));  // too few fields
  CHECK_FALSE(cuzk::parse_proc_stat(""));
}

TEST_CASE("/proc/pressure/cpu, /proc/loadavg and /proc/cpuinfo parsers", "[env]") {
  CHECK(cuzk::parse_psi_some_total_us("some avg10=1.92 avg60=6.85 avg300=3.57 total=20453549\n"
                                      "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n") == uint64_t(20453549));
  CHECK_FALSE(cuzk::parse_psi_some_total_us("full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n"));
  CHECK_FALSE(cuzk::parse_psi_some_total_us("some avg10=0.00\n"));
  CHECK(cuzk::parse_loadavg_1m("1.92 1.29 0.56 1/86 5531\n") == Approx(1.92));
  CHECK_FALSE(cuzk::parse_loadavg_1m("x 1 2\n"));
  CHECK(cuzk::parse_cpuinfo_mean_mhz("processor\t: 0\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\ncpu MHz\t\t: 3000.5\n") ==
        Approx(2500.25));
  CHECK_FALSE(cuzk::parse_cpuinfo_mean_mhz("processor\t: 0\nBogoMIPS\t: 100\n"));
}

TEST_CASE("cpu_window subtracts this process's CPU time and reports the tick resolution", "[env]") {
  const cuzk::ProcStatTimes a{1000, 10, 4}, b{1300, 30, 4};  // 3.0 s busy, 0.2 s steal at 100 ticks/s
  auto w = cuzk::cpu_window(a, b, /*own_cpu_s=*/1.0, /*wall_s=*/2.0, 100);
  REQUIRE(w);
  CHECK(w->others_busy_cores == Approx(1.0));  // (3.0 - 1.0) / 2
  CHECK(w->others_busy_resolution == Approx(4 * 0.01 / 2.0));
  CHECK(w->steal_cores == Approx(0.1));
  auto idle = cuzk::cpu_window(a, b, /*own_cpu_s=*/3.5, 2.0, 100);  // own time measured finer than ticks
  REQUIRE(idle);
  CHECK(idle->others_busy_cores == 0.0);  // clamped, not negative
  CHECK_FALSE(cuzk::cpu_window(b, a, 0, 2.0, 100));  // counters went backwards
  CHECK_FALSE(cuzk::cpu_window(a, b, 0, 0.0, 100));  // empty window
}

TEST_CASE("NVML clock event reasons decode by bit; idle and clock settings are not throttling", "[env]") {
  using V = std::vector<std::string>;
  CHECK(cuzk::decode_clock_event_reasons(0x0).empty());
  CHECK(cuzk::decode_clock_event_reasons(0x4) == V{"sw_power_cap"});
  CHECK(cuzk::decode_clock_event_reasons(0x1) == V{"gpu_idle"});
  CHECK(cuzk::decode_clock_event_reasons(0x1e8) ==
        V{"hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting"});
  CHECK(cuzk::decode_clock_event_reasons(0x12) == V{"applications_clocks_setting", "sync_boost"});
  CHECK(cuzk::decode_clock_event_reasons(uint64_t(1) << 40) == V{"bit_40"});
  for (const char* r : {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                        "hw_power_brake_slowdown"})
    CHECK(cuzk::is_throttling_reason(r));
  for (const char* r : {"gpu_idle", "applications_clocks_setting", "sync_boost", "display_clock_setting", "bit_40"})
    CHECK_FALSE(cuzk::is_throttling_reason(r));
}

TEST_CASE("judge_env: throttled by violation time or reasons, loaded beyond the resolution, nulls never count",
          "[env]") {
  SECTION("violation time") {
    auto j = cuzk::judge_env(env_with({{"gpu.throttle_ns", 12000000}}));
    CHECK(j.throttled);
    CHECK_FALSE(j.loaded);
    CHECK(j.why == "GPU throttled 12.0 ms (power/thermal)");
    CHECK_FALSE(cuzk::judge_env(env_with({{"gpu.throttle_ns", 0}})).throttled);
  }
  SECTION("clock event reasons") {
    auto j = cuzk::judge_env(env_with(json::object(), {"gpu_idle", "sw_thermal_slowdown"}));
    CHECK(j.throttled);
    CHECK_THAT(j.why, Catch::Matchers::Contains("sw_thermal_slowdown"));
    CHECK_FALSE(cuzk::judge_env(env_with(json::object(), {"gpu_idle", "applications_clocks_setting", "sync_boost",
                                                          "display_clock_setting"}))
                    .throttled);
    CHECK_FALSE(cuzk::judge_env(env_with(json::object(), json::array())).throttled);
  }
  SECTION("others beyond the resolution load the sample; within it they do not") {
    auto j = cuzk::judge_env(env_with({{"host.others_busy_cores", 3.1}, {"host.others_busy_resolution", 0.3}}));
    CHECK(j.loaded);
    CHECK_FALSE(j.throttled);
    CHECK(j.why == "others used 3.1 cores");
    CHECK_FALSE(cuzk::judge_env(env_with({{"host.others_busy_cores", 1.2}, {"host.others_busy_resolution", 0.3}})).loaded);
    cuzk::EnvThresholds strict;
    strict.others_busy_cores = 0.5;
    CHECK(cuzk::judge_env(env_with({{"host.others_busy_cores", 1.2}, {"host.others_busy_resolution", 0.3}}), strict)
              .loaded);
  }
  SECTION("steal") {
    auto j = cuzk::judge_env(env_with({{"host.steal_cores", 0.25}}));
    CHECK(j.loaded);
    CHECK_THAT(j.why, Catch::Matchers::Contains("stole"));
    CHECK_FALSE(cuzk::judge_env(env_with({{"host.steal_cores", 0.05}})).loaded);
  }
  SECTION("both, in one text") {
    auto j = cuzk::judge_env(env_with({{"gpu.throttle_ns", 5000000}, {"host.others_busy_cores", 2.5},
                                       {"host.others_busy_resolution", 0.01}}));
    CHECK(j.throttled);
    CHECK(j.loaded);
    CHECK(j.why == "GPU throttled 5.0 ms (power/thermal); others used 2.5 cores");
  }
  SECTION("nulls and missing env never count") {
    auto j = cuzk::judge_env(env_with(json::object()));  // every value null
    CHECK_FALSE(j.throttled);
    CHECK_FALSE(j.loaded);
    CHECK(j.why.empty());
    CHECK_FALSE(cuzk::judge_env(json()).loaded);
    CHECK_FALSE(cuzk::judge_env(json::object()).throttled);
    json old_sample = {{"type", "sample"}, {"phases", json::object()}};  // written before env existed
    CHECK_FALSE(cuzk::judge_env(old_sample).throttled);
  }
  SECTION("a sample line carrying env") {
    json sample = {{"type", "sample"}, {"env", env_with({{"gpu.throttle_ns", 1000000}})}};
    CHECK(cuzk::judge_env(sample).throttled);
  }
}

TEST_CASE("live readings: host values are numbers; GPU values are numbers or null with an NVML reason", "[env]") {
  cuzk::EnvProbe p;
  p.begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const json env = p.end();
  INFO(env.dump(2));
  REQUIRE(env["interval_ns"].is_number_unsigned());
  CHECK(env["interval_ns"].get<uint64_t>() >= 200000000u);
  const json& v = env["values"];
  for (const auto& k : cuzk::kEnvValueKeys) {
    REQUIRE(v.contains(k));
    if (v[k].is_null()) CHECK(env["errors"].value(k, std::string()) != "");
  }
  REQUIRE(v["host.loadavg_1m"].is_number());
  CHECK(v["host.loadavg_1m"].get<double>() >= 0);
  REQUIRE(v["host.others_busy_cores"].is_number());
  CHECK(v["host.others_busy_cores"].get<double>() >= 0);
  REQUIRE(v["host.others_busy_resolution"].is_number());
  CHECK(v["host.others_busy_resolution"].get<double>() > 0);
  REQUIRE(v["host.steal_cores"].is_number());
  CHECK(v["host.steal_cores"].get<double>() >= 0);
  REQUIRE(v["host.cpu_mhz"].is_number());
  CHECK(v["host.cpu_mhz"].get<double>() > 0);
  CHECK(env["sources"].contains("host.cpu_mhz"));
  if (v["host.cpu_pressure"].is_number()) {
    CHECK(v["host.cpu_pressure"].get<double>() >= 0);
  }
  const char* gpu_keys[] = {"gpu.sm_clock_mhz", "gpu.mem_clock_mhz", "gpu.temperature_c", "gpu.power_w",
                            "gpu.throttle_ns"};
  if (!nvml_here()) {
    for (const char* k : gpu_keys) {
      CHECK(v[k].is_null());
      CHECK_THAT(env["errors"].value(k, std::string()), Catch::Matchers::Contains("NVML"));
    }
    CHECK_FALSE(env.contains("gpu_clock_event_reasons"));
  } else {
    for (const char* k : gpu_keys)
      if (v[k].is_null()) CHECK_THAT(env["errors"].value(k, std::string()), Catch::Matchers::Contains("NVML"));
    CHECK(v["gpu.sm_clock_mhz"].is_number());
    CHECK(v["gpu.temperature_c"].is_number());
    if (!env.contains("gpu_clock_event_reasons")) CHECK(env["errors"].contains("gpu_clock_event_reasons"));
  }
}

TEST_CASE("readings are cheap: no process spawned, point readings well under a millisecond", "[env]") {
  cuzk::EnvProbe p;
  p.begin();
  (void)p.end();  // first use: loads NVML where there is one
  auto median_us = [](const std::function<void()>& f) {
    std::vector<uint64_t> ns;
    for (int i = 0; i < 21; ++i) {
      const uint64_t t0 = cuzk::now_ns();
      f();
      ns.push_back(cuzk::now_ns() - t0);
    }
    std::sort(ns.begin(), ns.end());
    return ns[ns.size() / 2] / 1000;
  };
  const uint64_t point = median_us([] { (void)cuzk::EnvProbe::point_in_time(); });
  const uint64_t window = median_us([&] {
    p.begin();
    (void)p.end();
  });
  WARN("EnvProbe::point_in_time: median " << point << " us; begin + end of a window: median " << window << " us");
  // Files and cheap NVML queries: a few hundred microseconds (the bound leaves room for a busy
  // shared machine). A window adds NVML's energy and violation counters, which take
  // milliseconds on some drivers (about 9 ms in all on the H200 with driver 580); spawning a
  // process such as nvidia-smi would take far longer than either bound.
  CHECK(point < 2000u);
  CHECK(window < 50000u);
}

TEST_CASE("this process's own CPU use in a window is not counted as others' load", "[env]") {
  const long tck = sysconf(_SC_CLK_TCK);
  const double tick_s = 1.0 / static_cast<double>(tck);
  const cuzk::ProcStatTimes s0 = proc_stat_now();
  const double own0 = own_cpu_s();
  // The loop must stand well above the tolerance below (the tick quantization grows with the
  // number of CPUs), or counting it as others' load would go unnoticed.
  const double tolerance = 2 * s0.cpus * tick_s + 0.02;
  const double spin_s = std::max(0.4, 3 * tolerance);
  cuzk::EnvProbe p;
  p.begin();
  std::thread spin([spin_s] {
    const double start = thread_cpu_s();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    volatile uint64_t x = 0;
    while (thread_cpu_s() - start < spin_s && std::chrono::steady_clock::now() < deadline) x = x + 1;
  });
  spin.join();
  const json env = p.end();
  const double own1 = own_cpu_s();
  const cuzk::ProcStatTimes s1 = proc_stat_now();
  INFO(env.dump(2));

  const double own = own1 - own0;
  REQUIRE(own >= 0.9 * spin_s);  // the loop really ran on this process's account
  const double total = static_cast<double>(s1.busy_ticks - s0.busy_ticks) * tick_s;  // every process, core-seconds
  REQUIRE(env["values"]["host.others_busy_cores"].is_number());
  const double interval_s = env["interval_ns"].get<double>() * 1e-9;
  const double others = env["values"]["host.others_busy_cores"].get<double>() * interval_s;  // core-seconds
  // Counted as others', the loop would put `others` near `total`; subtracted, it leaves what
  // other processes used (whatever that is on a shared machine), within the tick quantization
  // of both readings and the test's own work just outside the probe's window.
  CHECK(others <= total - own + tolerance);
}

TEST_CASE("EnvProbe without a window: window values are null with the reason, point values are read", "[env]") {
  const json env = cuzk::EnvProbe::point_in_time();
  CHECK(env["interval_ns"].is_null());
  for (const char* k : {"host.others_busy_cores", "host.others_busy_resolution", "host.steal_cores", "host.cpu_pressure",
                        "gpu.power_w", "gpu.throttle_ns"}) {
    CHECK(env["values"][k].is_null());
    CHECK(env["errors"][k] == cuzk::kNoWindowReason);
  }
  CHECK(env["values"]["host.loadavg_1m"].is_number());
  CHECK(env["values"]["host.cpu_mhz"].is_number());

  cuzk::EnvProbe p;
  const json lone = p.end();  // end() without begin()
  CHECK(lone["interval_ns"].is_null());
  CHECK(lone["values"]["host.others_busy_cores"].is_null());
  CHECK_THAT(lone["errors"]["host.others_busy_cores"].get<std::string>(), Catch::Matchers::Contains("without begin"));
}

TEST_CASE("a Session writes env and one process_id per process; header and summary take extra fields", "[env][results]") {
  t::TempDir d;
  const std::string path = d.file("r.jsonl");
  cuzk::SessionOptions o = session_options(path);
  o.header_extra = {{"stable", {{"mode", "test"}}}};
  std::vector<json> lines;
  {
    cuzk::Session s(o);
    for (int i = 0; i < 2; ++i)
      lines.push_back(s.measure({.suite = "env-test", .case_name = "tiny", .repetition = i}, [] {
        cuzk::instr::Phase ph("proof");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }));
    cuzk::Sample engine;
    engine.phases["proof"].wall_ns = 5;
    engine.phases["proof"].count = 1;
    lines.push_back(s.record({.suite = "env-test", .case_name = "engine", .repetition = 0}, engine));
    CHECK_THROWS_AS(s.finish({{"samples", 3}}), cuzk::ResultsError);  // would replace a summary field
    s.finish({{"noise", {{"verdict", "quiet"}}}});
  }
  auto f = cuzk::read_results(path);
  REQUIRE(f.samples.size() == 3);
  REQUIRE(f.summary);
  CHECK(f.summary->value["noise"]["verdict"] == "quiet");
  const json& h = f.header.value;
  CHECK(h["stable"]["mode"] == "test");
  REQUIRE(h.contains("gpu_state"));
  REQUIRE(h.contains("cpu_governor"));
  if (h["cpu_governor"].is_null()) CHECK(h["cpu_governor_error"].get<std::string>() != "");
  if (!nvml_here()) {
    CHECK(h["gpu_state"].is_null());
    CHECK_THAT(h["gpu_state_error"].get<std::string>(), Catch::Matchers::Contains("NVML"));
  } else {
    REQUIRE(h["gpu_state"].is_object());
    CHECK(h["gpu_state"]["changed_by_cuzk"] == false);
  }

  const std::regex hex16("^[0-9a-f]{16}$");
  const std::string pid = f.samples[0].value["process_id"].get<std::string>();
  CHECK(std::regex_match(pid, hex16));
  CHECK(pid == cuzk::run_process_id());
  for (const auto& s : f.samples) {
    CHECK(s.value["process_id"] == pid);
    REQUIRE(s.value.contains("env"));
    CHECK(s.value["env"]["values"].size() == cuzk::kEnvValueKeys.size());
  }
  CHECK(f.samples[0].value["env"]["interval_ns"].is_number());
  CHECK(f.samples[0].value["env"]["interval_ns"].get<uint64_t>() >= 20000000u);
  CHECK(f.samples[2].value["env"]["interval_ns"].is_null());  // engine samples have no window
  CHECK(f.samples[2].value["env"]["errors"]["gpu.power_w"] == cuzk::kNoWindowReason);

  cuzk::SessionOptions clash = session_options(d.file("clash.jsonl"));
  clash.header_extra = {{"suite", "other"}};  // would replace the header's own field
  CHECK_THROWS_AS(cuzk::Session(clash), cuzk::ResultsError);
  CHECK_FALSE(t::exists(d.file("clash.jsonl")));  // refused before the file was created
}

TEST_CASE("the reader rejects a malformed env or process_id with file:line; files without them stay valid",
          "[env][results]") {
  t::TempDir d;
  const std::string path = d.file("r.jsonl");
  {
    cuzk::Session s(session_options(path));
    s.measure({.suite = "env-test", .case_name = "tiny", .repetition = 0}, [] {});
    s.finish();
  }
  const std::vector<std::string> lines = t::lines_of(t::slurp(path));
  REQUIRE(lines.size() == 3);
  auto with_sample = [&](const std::function<void(json&)>& edit) {
    json s = json::parse(lines[1]);
    edit(s);
    return lines[0] + "\n" + s.dump() + "\n" + lines[2] + "\n";
  };
  const std::string bad = d.file("bad.jsonl");
  CHECK(error_of(bad, with_sample([](json&) {})) == "");
  CHECK(error_of(bad, with_sample([](json& s) { s.erase("env"); s.erase("process_id"); })) == "");  // older files

  CHECK(error_of(bad, with_sample([](json& s) { s["env"]["values"] = json::array(); })) ==
        bad + ":2: env: field 'values' must be an object, not array");
  CHECK(error_of(bad, with_sample([](json& s) { s["env"] = "quiet"; })) ==
        bad + ":2: field 'env' must be an object, not string");
  CHECK(error_of(bad, with_sample([](json& s) { s["env"]["values"]["host.loadavg_1m"] = "high"; })) ==
        bad + ":2: env: value 'host.loadavg_1m' must be a number or null, not \"high\"");
  CHECK(error_of(bad, with_sample([](json& s) {
          s["env"]["values"]["host.loadavg_1m"] = nullptr;
          s["env"]["errors"].erase("host.loadavg_1m");
        })) == bad + ":2: env: value 'host.loadavg_1m' is null without a reason in 'errors'");
  CHECK(error_of(bad, with_sample([](json& s) { s["env"]["errors"]["x"] = 3; })) ==
        bad + ":2: env: errors['x'] must be a string, not 3");
  CHECK(error_of(bad, with_sample([](json& s) { s["env"]["interval_ns"] = "1s"; })) ==
        bad + ":2: env: field 'interval_ns' must be a number or null, not \"1s\"");
  CHECK(error_of(bad, with_sample([](json& s) { s["env"].erase("interval_ns"); })) ==
        bad + ":2: env is missing required field 'interval_ns' (null when the sample had no window)");
  CHECK(error_of(bad, with_sample([](json& s) { s["process_id"] = 42; })) ==
        bad + ":2: field 'process_id' must be a non-empty string, not 42");
}
