#include "harness/cli/cmake_args.hpp"

#include <fmt/core.h>

#include "harness/cli/commands.hpp"

namespace cuzk::cli {
namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// One cache entry, as cmState::ParseCacheEntry splits it: "NAME:TYPE=VALUE" (the name may be
// quoted) before "NAME=VALUE". False when it has no '='.
bool split_entry(const std::string& entry, CmakeDefine& d) {
  const std::string e = trimmed(entry);
  size_t name_end = 0, after = 0;  // the name is e[name_begin, name_end); after: ':' or '='
  size_t name_begin = 0;
  if (!e.empty() && e[0] == '"') {
    const auto close = e.find('"', 1);
    if (close != std::string::npos && close + 1 < e.size() && (e[close + 1] == ':' || e[close + 1] == '=')) {
      name_begin = 1;
      name_end = close;
      after = close + 1;
    }
  }
  if (after == 0) {
    const auto eq = e.find('=');
    if (eq == std::string::npos) return false;
    const auto colon = e.find(':');
    name_end = after = colon != std::string::npos && colon < eq ? colon : eq;
  }
  const auto eq = e.find('=', after);
  if (eq == std::string::npos) return false;
  d.name = trimmed(e.substr(name_begin, name_end - name_begin));
  d.type = e[after] == ':' ? trimmed(e.substr(after + 1, eq - after - 1)) : "";
  d.value = e.substr(eq + 1);
  return !d.name.empty();
}

}  // namespace

std::vector<CmakeDefine> parse_cmake_defines(const std::vector<std::string>& args) {
  std::vector<CmakeDefine> out;
  for (size_t i = 0; i < args.size(); ++i) {
    CmakeDefine d;
    const std::string& a = args[i];
    std::string entry;
    if (a.rfind("-D", 0) != 0)
      throw Error(fmt::format("--cmake-arg '{}': expected -DNAME=VALUE (e.g. -DCUZK_CUDA=OFF)", a));
    if (trimmed(a) == "-D") {  // cmake takes the next argument as the definition
      if (i + 1 == args.size())
        throw Error("--cmake-arg '-D' is the last one: cmake expects NAME=VALUE in the next --cmake-arg");
      entry = args[++i];
      d.spelled = a + " " + entry;
    } else {
      entry = a.substr(2);
      d.spelled = a;
    }
    if (!split_entry(entry, d))
      throw Error(fmt::format("--cmake-arg '{}': expected -DNAME=VALUE (e.g. -DCUZK_CUDA=OFF)", d.spelled));
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace cuzk::cli
