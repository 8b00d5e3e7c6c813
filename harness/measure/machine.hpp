// What machine a measurement ran on: CPU, cores, memory, OS, GPUs (name, driver, clocks).
// Recorded in every results header, printed by `cuzk-bench info`, and compared by `compare`
// and `gate`, which refuse results from different machines unless told otherwise.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cuzk {

struct GpuInfo {
  std::string name;
  std::string driver;
  std::string memory_total;    // as reported, e.g. "143771 MiB"
  std::string sm_clock;        // current SM clock, e.g. "1980 MHz"
  std::string sm_clock_max;
  std::string mem_clock;
  std::string uuid;
};

struct MachineInfo {
  std::string hostname;
  std::string cpu_model;
  int logical_cpus = 0;
  int online_cpus = 0;
  uint64_t memory_bytes = 0;
  std::string os;              // PRETTY_NAME from /etc/os-release
  std::string kernel;          // uname -r
  bool virtualized = false;    // "hypervisor" CPU flag
  std::string cpu_flags_of_note;  // bmi2, adx, avx2, avx512f, avx512ifma where present (which arithmetic paths can run)
  std::vector<GpuInfo> gpus;
  std::string gpu_probe;       // how GPUs were found, or why none were
};

MachineInfo collect_machine();
nlohmann::json to_json(const MachineInfo& m);
nlohmann::json machine_json();  // to_json(collect_machine()), cached after the first call

// A short identity used to decide whether two results came from the same machine:
// CPU model, logical CPUs, memory (GiB, rounded) and GPU names.
std::string machine_identity(const nlohmann::json& machine);

}  // namespace cuzk
