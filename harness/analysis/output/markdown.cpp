#include <fmt/core.h>

#include "harness/analysis/output/printers.hpp"

namespace cuzk::output {

std::string markdown_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '|')
      o += "\\|";
    else
      o += ch;
  }
  return o;
}

std::string markdown(const Table& t) {
  std::string s = "|";
  for (const auto& c : t.columns) s += fmt::format(" {} |", markdown_escape(c.title));
  s += "\n|";
  for (const auto& c : t.columns) s += c.align == Align::right ? " ---: |" : " --- |";
  s += "\n";
  for (const auto& r : t.rows) {
    s += "|";
    for (size_t i = 0; i < t.columns.size(); ++i) s += fmt::format(" {} |", i < r.size() ? markdown_escape(r[i].text) : "");
    s += "\n";
  }
  return s;
}

std::string markdown(const Summary& s) {
  std::string out;
  if (!s.headline.empty()) out += "## " + s.headline + "\n\n";
  for (const auto& l : s.lines) out += l + "\n\n";
  for (const auto& sec : s.sections) {
    if (sec.items.empty()) continue;
    out += "### " + sec.title + "\n\n";
    for (const auto& i : sec.items) out += "- " + i + "\n";
    out += "\n";
  }
  return out;
}

}  // namespace cuzk::output
