#include <fmt/core.h>

#include <algorithm>

#include "harness/analysis/output/printers.hpp"

namespace cuzk::output {

std::string text(const Table& t) {
  const size_t ncol = t.columns.size();
  std::vector<size_t> w(ncol, 0);
  for (size_t i = 0; i < ncol; ++i) w[i] = t.columns[i].title.size();
  for (const auto& r : t.rows)
    for (size_t i = 0; i < r.size() && i < ncol; ++i) w[i] = std::max(w[i], r[i].text.size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    const size_t n = std::min(cells.size(), ncol);
    for (size_t i = 0; i < n; ++i) {
      if (i) s += "  ";
      s += i + 1 == n ? cells[i] : fmt::format("{:<{}}", cells[i], w[i]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(t.titles());
  if (t.rule != Rule::none && ncol > 0) {
    // Rule::header ends under the last title; Rule::widest under the widest last cell.
    size_t total = t.rule == Rule::header ? t.columns.back().title.size() : w.back();
    for (size_t i = 0; i + 1 < ncol; ++i) total += w[i] + 2;
    out += std::string(total, '-') + "\n";
  }
  for (const auto& r : t.rows) {
    std::vector<std::string> cells;
    for (const auto& c : r) cells.push_back(c.text);
    out += line(cells);
  }
  return out;
}

std::string text_notes(const Table& t) {
  std::string out;
  for (const auto& n : t.notes) out += n + "\n";
  for (const auto& w : t.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string text(const Summary& s) {
  std::string out;
  if (!s.headline.empty()) out += s.headline + "\n";
  for (const auto& l : s.lines) out += l + "\n";
  for (const auto& sec : s.sections) {
    if (sec.items.empty()) continue;
    out += sec.title + ":\n";
    for (const auto& i : sec.items) out += "  " + i + "\n";
  }
  return out;
}

}  // namespace cuzk::output
