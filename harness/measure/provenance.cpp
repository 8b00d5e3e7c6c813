#include "harness/measure/provenance.hpp"

#include <sstream>

namespace cuzk {

std::map<std::string, std::string> provenance_flags(const Provenance& p) {
  std::map<std::string, std::string> out;
  std::stringstream ss(p.flags);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

nlohmann::json provenance_json() {
  const Provenance& p = build_provenance();
  nlohmann::json flags = nlohmann::json::object();
  for (auto& [k, v] : provenance_flags(p)) flags[k] = v;
  return {{"source_hash", p.source_hash},     {"source_files", p.source_files},
          {"git_commit", p.git_commit},       {"git_dirty", p.git_dirty},
          {"flags", flags},                   {"flags_string", p.flags},
          {"preset", p.preset},
          {"build_type", p.build_type},       {"compiler", p.compiler},
          {"compiler_version", p.compiler_version},
          {"nvcc_version", p.nvcc_version},   {"cuda_archs", p.cuda_archs},
          {"build_dir", p.build_dir},         {"source_dir", p.source_dir}};
}

}  // namespace cuzk
