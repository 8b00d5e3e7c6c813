#include "harness/measure/machine.hpp"

#include "harness/measure/process.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

namespace cuzk {
namespace {

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t\r\n\"");
  size_t b = s.find_last_not_of(" \t\r\n\"");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

void probe_gpus(MachineInfo& m) {
  // nvidia-smi works whether or not this binary was built with CUDA, and it reports the
  // driver and clocks the CUDA runtime API does not expose.
  const CommandOutput r = run_capture(
      "nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,uuid "
      "--format=csv,noheader",
      /*quiet=*/true);
  const std::string smi = r.code == 0 ? r.out : std::string();
  if (smi.empty()) {
    m.gpu_probe = "no GPU found (nvidia-smi absent or reported no device)";
    return;
  }
  std::stringstream lines(smi);
  std::string line;
  while (std::getline(lines, line)) {
    if (trim(line).empty()) continue;
    std::vector<std::string> f;
    std::stringstream cells(line);
    std::string c;
    while (std::getline(cells, c, ',')) f.push_back(trim(c));
    f.resize(7);
    m.gpus.push_back(GpuInfo{f[0], f[1], f[2], f[3], f[4], f[5], f[6]});
  }
  m.gpu_probe = "nvidia-smi";
}

}  // namespace

MachineInfo collect_machine() {
  MachineInfo m;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpu, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon)), val = trim(line.substr(colon + 1));
    if (key == "model name" && m.cpu_model.empty()) m.cpu_model = val;
    if (key == "processor") m.logical_cpus++;
    if (key == "flags" && flags.empty()) flags = " " + val + " ";
  }
  m.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  m.virtualized = flags.find(" hypervisor ") != std::string::npos;
  for (const char* f : {"bmi2", "adx", "avx2", "avx512f", "avx512ifma"}) {
    if (flags.find(std::string(" ") + f + " ") != std::string::npos) {
      if (!m.cpu_flags_of_note.empty()) m.cpu_flags_of_note += ",";
      m.cpu_flags_of_note += f;
    }
  }
  std::ifstream mem("/proc/meminfo");
  while (std::getline(mem, line)) {
    if (line.rfind("MemTotal:", 0) == 0) {
      m.memory_bytes = std::stoull(line.substr(9)) * 1024ull;
      break;
    }
  }
  std::ifstream osr("/etc/os-release");
  while (std::getline(osr, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) m.os = trim(line.substr(12));
  }
  struct utsname u;
  if (uname(&u) == 0) m.kernel = u.release;
  probe_gpus(m);
  return m;
}

nlohmann::json to_json(const MachineInfo& m) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : m.gpus) {
    gpus.push_back({{"name", g.name},
                    {"driver", g.driver},
                    {"memory_total", g.memory_total},
                    {"sm_clock", g.sm_clock},
                    {"sm_clock_max", g.sm_clock_max},
                    {"mem_clock", g.mem_clock},
                    {"uuid", g.uuid}});
  }
  return {{"hostname", m.hostname},
          {"cpu_model", m.cpu_model},
          {"logical_cpus", m.logical_cpus},
          {"online_cpus", m.online_cpus},
          {"memory_bytes", m.memory_bytes},
          {"os", m.os},
          {"kernel", m.kernel},
          {"virtualized", m.virtualized},
          {"cpu_flags_of_note", m.cpu_flags_of_note},
          {"gpus", gpus},
          {"gpu_probe", m.gpu_probe}};
}

nlohmann::json machine_json() {
  static std::once_flag once;
  static nlohmann::json j;
  std::call_once(once, [] { j = to_json(collect_machine()); });
  return j;
}

std::string machine_identity(const nlohmann::json& m) {
  std::string id = m.value("cpu_model", std::string("?")) + " x" + std::to_string(m.value("logical_cpus", 0));
  uint64_t mem = m.value("memory_bytes", uint64_t(0));
  id += " " + std::to_string((mem + (1ull << 29)) >> 30) + "GiB";
  if (m.contains("gpus")) {
    for (const auto& g : m["gpus"]) id += " | " + g.value("name", std::string("?"));
  }
  return id;
}

}  // namespace cuzk
