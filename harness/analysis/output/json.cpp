#include "harness/analysis/output/printers.hpp"

namespace cuzk::output {

nlohmann::json to_json(const Table& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : t.rows) {
    nlohmann::json row = nlohmann::json::object();
    for (size_t i = 0; i < r.size() && i < t.columns.size(); ++i) {
      const Column& c = t.columns[i];
      row[c.key.empty() ? c.title : c.key] = r[i].value ? *r[i].value : nlohmann::json(r[i].text);
    }
    rows.push_back(std::move(row));
  }
  return {{"rows", rows}, {"notes", t.notes}, {"warnings", t.warnings}};
}

nlohmann::json to_json(const Summary& s) {
  nlohmann::json sections = nlohmann::json::object();
  for (const auto& sec : s.sections) sections[sec.title] = sec.items;
  return {{"headline", s.headline}, {"lines", s.lines}, {"sections", sections}};
}

}  // namespace cuzk::output
