#include "harness/trace/kernel_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace cuzk::trace {

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

namespace {

// The name without its trailing parameter list: the last ")" of the name and its matching "(".
std::string drop_parameters(const std::string& s) {
  if (s.empty() || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') ++depth;
    else if (s[i] == '(' && --depth == 0) return s.substr(0, i);
  }
  return s;
}

// The part after the last space outside brackets: "void ns::k<a, b>" -> "ns::k<a, b>". Spaces
// inside "<...>" and "(...)" (template arguments, "(anonymous namespace)") do not count.
std::string drop_return_type(const std::string& s) {
  int depth = 0;
  size_t cut = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(' || c == '[') ++depth;
    else if ((c == '>' || c == ')' || c == ']') && depth > 0) --depth;
    else if (c == ' ' && depth == 0) cut = i + 1;
  }
  return s.substr(cut);
}

// Every outermost "<...>" as "<...>"; "operator<" and friends keep their own "<".
std::string fold_templates(const std::string& s) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool op = i >= 8 && s.compare(i - 8, 8, "operator") == 0;
    if (c == '<' && !op) {
      if (depth++ == 0) out += "<...>";
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string normalize_kernel_name(const std::string& name) {
  return fold_templates(drop_return_type(drop_parameters(demangle(name))));
}

}  // namespace cuzk::trace
