#include "prover/interop/input_limits.hpp"

#include <charconv>
#include <cstdlib>

namespace cuzk::limits {

uint64_t max_constraints() {
  const char* env = std::getenv(kMaxConstraintsEnv);
  if (env == nullptr || *env == '\0') return kDefaultMaxConstraints;
  uint64_t v = 0;
  const std::string_view s(env);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // A malformed value must not silently lift the limit: keep the default.
  if (ec != std::errc() || end != s.data() + s.size() || v == 0) return kDefaultMaxConstraints;
  return v;
}

std::string over_max_constraints(const std::string& what, uint64_t declared) {
  return what + " declares " + std::to_string(declared) + ", over the limit of " + std::to_string(max_constraints()) +
         " (raise it with " + kMaxConstraintsEnv + "=N)";
}

size_t json_nesting_depth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (ch == '\\')
        ++i;
      else if (ch == '"')
        in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > deepest) deepest = depth;
    } else if ((ch == ']' || ch == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace cuzk::limits
