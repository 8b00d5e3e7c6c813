#include "harness/analysis/output/table.hpp"

namespace cuzk::output {

Table Table::with_titles(const std::vector<std::string>& titles) {
  Table t;
  for (const auto& s : titles) t.columns.push_back({s});
  return t;
}

std::vector<std::string> Table::titles() const {
  std::vector<std::string> out;
  for (const auto& c : columns) out.push_back(c.title);
  return out;
}

}  // namespace cuzk::output
