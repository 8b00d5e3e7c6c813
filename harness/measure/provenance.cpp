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

}  // namespace cuzk
