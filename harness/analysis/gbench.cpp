#include "harness/analysis/gbench.hpp"

#include <cmath>

#include "prover/interop/input_limits.hpp"

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

nlohmann::json parse_gbench_json(std::string_view text) {
  if (size_t depth = limits::json_nesting_depth(text); depth > limits::kMaxJsonDepth)
    throw GbenchError("JSON nested " + std::to_string(depth) + " levels deep, over the limit of " +
                      std::to_string(limits::kMaxJsonDepth));
  return nlohmann::json::parse(gbench_json_nonfinite_to_null(text));
}

nlohmann::json gbench_field(const nlohmann::json& obj, const char* key, nlohmann::json::value_t want,
                            nlohmann::json fallback) {
  using vt = nlohmann::json::value_t;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  const bool number_ok = want == vt::number_float && it->is_number();
  if (it->type() != want && !number_ok)
    throw GbenchError(std::string("Google Benchmark field '") + key + "' must be " +
                      (want == vt::object  ? "an object"
                       : want == vt::array ? "an array"
                       : want == vt::string ? "a string"
                                            : "a number") + ", not " +
                      it->type_name());
  return *it;
}

double gbench_time_ns(double value, const std::string& unit) {
  if (unit == "ns" || unit.empty()) return value;
  if (unit == "us") return value * 1e3;
  if (unit == "ms") return value * 1e6;
  if (unit == "s") return value * 1e9;
  throw GbenchError("unknown Google Benchmark time_unit '" + unit + "' (one of ns, us, ms, s)");
}

std::string gbench_entry_problem(const nlohmann::json& entry) {
  if (!entry.is_object()) return "benchmark entry is not an object";
  auto name = entry.find("name");
  if (name == entry.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
    return "benchmark entry without a name";
  const std::string who = "benchmark '" + name->get<std::string>() + "'";
  auto rt = entry.find("real_time");
  if (rt == entry.end()) return who + " has no real_time";
  // Non-finite values arrive as null (gbench_json_nonfinite_to_null).
  if (!rt->is_number()) return who + ": real_time is " + rt->dump() + ", expected a finite number >= 0";
  const double t = rt->get<double>();
  if (!std::isfinite(t) || t < 0) return who + ": real_time is " + rt->dump() + ", expected a finite number >= 0";
  return "";
}

}  // namespace cuzk
