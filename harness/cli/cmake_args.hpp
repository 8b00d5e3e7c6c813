// --cmake-arg values read as cmake reads its -D arguments, so that the check of the variables a
// preset sets (check_cmake_args, variant_builds.hpp) sees the variable cmake would set, however
// it is spelled: "-DNAME=VALUE", "-DNAME:TYPE=VALUE", "-D" then "NAME=VALUE" as the next
// argument, a quoted "NAME", spaces around the name.
#pragma once
#include <string>
#include <vector>

namespace cuzk::cli {

struct CmakeDefine {
  std::string name;     // without surrounding quotes or whitespace
  std::string type;     // "" when untyped
  std::string value;
  std::string spelled;  // the argument(s) as given, for messages
};

// Throws Error (exit 2) for an argument that is not a -D definition, or a "-D" with nothing after it.
std::vector<CmakeDefine> parse_cmake_defines(const std::vector<std::string>& args);

}  // namespace cuzk::cli
