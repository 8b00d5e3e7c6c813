// `cuzk-bench info [--json] [--counters LIST]`: build provenance, the machine, and which
// counters can be read here.
#include <fmt/core.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "prover/groth16/backend.hpp"

#include "harness/cli/commands.hpp"
#include "harness/cli/gpu_counter_pass.hpp"
#include "harness/measure/counters.hpp"
#include "harness/measure/machine.hpp"
#include "harness/measure/provenance.hpp"

namespace cuzk::cli {
namespace {

int run_info(bool as_json, const std::vector<std::string>& counters) {
  nlohmann::json prov = provenance_json();
  nlohmann::json machine = machine_json();
  auto statuses = probe_counters(counters.empty() ? default_probe_counters() : counters);
  nlohmann::json cj = nlohmann::json::array();
  for (const auto& s : statuses) {
    const CounterSource src = counter_source(s.name);
    cj.push_back({{"name", s.name}, {"available", s.available}, {"reason", s.available ? "" : s.reason},
                  {"source", src.source}, {"how", src.how}, {"unit", src.unit}});
  }
  // Which proving backends this binary has and whether each can run here (the CUDA one probes
  // the GPU); scripts read cuda_backend_usable to decide on GPU cases.
  nlohmann::json backends = nlohmann::json::array();
  bool cuda_usable = false;
  for (const auto& name : groth16::backend_names()) {
    std::string why;
    try {
      (void)groth16::make_backend(name);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (name == "cuda" && why.empty()) cuda_usable = true;
    backends.push_back({{"name", name}, {"usable", why.empty()}, {"reason", why}});
  }
  // GPU metrics (CUPTI) readable here: the default set, checked on this GPU.
  nlohmann::json gpu_counters = {{"readable", false}, {"reason", ""}, {"chip", ""}, {"metrics", nlohmann::json::array()}};
  if (!cuda_usable) {
    gpu_counters["reason"] = "no usable CUDA backend here";
  } else {
    try {
      auto pass = gpu_counter_pass_for(std::string("default"), "cuda");
      gpu_counters["readable"] = true;
      gpu_counters["chip"] = pass->chip();
      gpu_counters["passes"] = pass->passes();
      for (const auto& st : pass->status())
        gpu_counters["metrics"].push_back({{"name", st.name}, {"available", st.available}, {"reason", st.reason}});
    } catch (const std::exception& e) {
      gpu_counters["reason"] = e.what();
    }
  }
  if (as_json) {
    nlohmann::json out = {{"tool", "cuzk-bench"}, {"version", "0.1.0"}, {"gpu_counters", gpu_counters},
                          {"provenance", prov},   {"machine", machine},
                          {"counters", cj},       {"backends", backends},
                          {"cuda_backend_usable", cuda_usable}};
    std::cout << out.dump(2) << std::endl;
    return kExitOk;
  }
  fmt::print("cuzk-bench 0.1.0\n\nbuild\n");
  fmt::print("  preset        {}\n", prov["preset"].get<std::string>().empty() ? "(none)" : prov["preset"].get<std::string>());
  fmt::print("  source hash   {} ({} files)\n", prov["source_hash"].get<std::string>(), prov["source_files"].get<int>());
  fmt::print("  git           {}{}\n", prov["git_commit"].get<std::string>(),
             prov["git_dirty"] == "true" ? " (dirty)" : "");
  fmt::print("  build type    {}\n", prov["build_type"].get<std::string>());
  fmt::print("  compiler      {} {}\n", prov["compiler"].get<std::string>(), prov["compiler_version"].get<std::string>());
  if (!prov["nvcc_version"].get<std::string>().empty())
    fmt::print("  nvcc          {} (sm_{})\n", prov["nvcc_version"].get<std::string>(), prov["cuda_archs"].get<std::string>());
  else
    fmt::print("  nvcc          (built without CUDA)\n");
  fmt::print("  flags        ");
  for (auto& [k, v] : prov["flags"].items()) fmt::print(" {}={}", k, v.get<std::string>());
  fmt::print("\n\nmachine\n");
  fmt::print("  cpu           {} ({} logical, {} online){}\n", machine["cpu_model"].get<std::string>(),
             machine["logical_cpus"].get<int>(), machine["online_cpus"].get<int>(),
             machine["virtualized"].get<bool>() ? ", virtualized" : "");
  fmt::print("  cpu flags     {}\n", machine["cpu_flags_of_note"].get<std::string>());
  fmt::print("  memory        {:.1f} GiB\n", machine["memory_bytes"].get<uint64_t>() / double(1ull << 30));
  fmt::print("  os            {} (kernel {})\n", machine["os"].get<std::string>(), machine["kernel"].get<std::string>());
  if (machine["gpus"].empty()) fmt::print("  gpu           none: {}\n", machine["gpu_probe"].get<std::string>());
  for (auto& g : machine["gpus"])
    fmt::print("  gpu           {} (driver {}, {}, SM {} / max {}, mem {})\n", g["name"].get<std::string>(),
               g["driver"].get<std::string>(), g["memory_total"].get<std::string>(), g["sm_clock"].get<std::string>(),
               g["sm_clock_max"].get<std::string>(), g["mem_clock"].get<std::string>());
  fmt::print("\nbackends\n");
  for (auto& b : backends)
    fmt::print("  {:<24} {}\n", b["name"].get<std::string>(),
               b["usable"].get<bool>() ? "usable" : "unusable: " + b["reason"].get<std::string>());
  const std::vector<std::string> names = groth16::backend_names();
  if (std::find(names.begin(), names.end(), "cuda") == names.end())
    fmt::print("  {:<24} {}\n", "cuda", "not built (no nvcc at configure time, or CUZK_CUDA=OFF)");
  fmt::print("\ncounters\n");
  for (const auto& s : statuses)
    fmt::print("  {:<24} {:<5} {}\n", s.name, counter_source(s.name).source,
               s.available ? "available" : "unavailable: " + s.reason);
  if (!gpu_counters["readable"].get<bool>()) {
    fmt::print("\ngpu counters (--gpu-counters): none here: {}\n", gpu_counters["reason"].get<std::string>());
  } else {
    fmt::print("\ngpu counters (--gpu-counters default: CUPTI on {}, {} passes)\n", gpu_counters["chip"].get<std::string>(),
               gpu_counters["passes"].get<size_t>());
    for (const auto& m : gpu_counters["metrics"])
      fmt::print("  {:<52} {}\n", m["name"].get<std::string>(),
                 m["available"].get<bool>() ? "available" : "unavailable: " + m["reason"].get<std::string>());
  }
  return kExitOk;
}

Registrar reg_info("info", [](CLI::App& app) -> Runner {
  auto* sub = app.add_subcommand("info", "print build provenance, the machine, and the counters readable here");
  auto as_json = std::make_shared<bool>(false);
  auto counters = std::make_shared<std::vector<std::string>>();
  sub->add_flag("--json", *as_json, "machine-readable JSON");
  sub->add_option("--counters", *counters, "counters to probe (comma-separated PAPI events and os:: counters); default: a standard list and every os:: counter")
      ->delimiter(',');
  return [=] { return run_info(*as_json, *counters); };
});

}  // namespace
}  // namespace cuzk::cli
