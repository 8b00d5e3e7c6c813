#include "harness/analysis/gbench.hpp"

namespace cuzk {

std::string gbench_json_nonfinite_to_null(std::string_view text) {
  static constexpr std::string_view kTokens[] = {"-Infinity", "Infinity", "-NaN", "NaN", "-nan", "nan", "-inf", "inf"};
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) out += text[++i];
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') {
      in_string = true;
      out += ch;
      continue;
    }
    bool replaced = false;
    if (ch == '-' || ch == 'N' || ch == 'I' || ch == 'n' || ch == 'i')  // fast path: any other byte is kept
      for (auto t : kTokens)
        if (text.substr(i, t.size()) == t) {
          out += "null";
          i += t.size() - 1;
          replaced = true;
          break;
        }
    if (!replaced) out += ch;
  }
  return out;
}

nlohmann::json parse_gbench_json(std::string_view text) { return nlohmann::json::parse(gbench_json_nonfinite_to_null(text)); }

}  // namespace cuzk
