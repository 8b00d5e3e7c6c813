// What an analysis prints, apart from how: a Table (titled columns, rows of cells, the notes and
// warnings under it) and a Summary (a headline, key lines and titled lists). The printers in
// text.hpp, markdown.hpp and json.hpp render these; an analysis fills them once and each output
// format follows, as NVBench keeps its printers apart from its measurements.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cuzk::output {

// Where a column's cells sit in Markdown ("---" or "---:"). The terminal keeps every column flush
// left, so that a cell always starts under its title.
enum class Align { left, right };

struct Column {
  std::string title;
  Align align = Align::left;
  std::string key;  // the column's key in JSON; "" -> the title

  Column(std::string t, Align a = Align::left, std::string k = "") : title(std::move(t)), align(a), key(std::move(k)) {}
};

// One cell: the text the terminal and Markdown show, and the value JSON carries (none -> the
// text). Implicit from a string, because most cells are only text.
struct Cell {
  std::string text;
  std::optional<nlohmann::json> value;
  Cell(std::string t) : text(std::move(t)) {}
  Cell(const char* t) : text(t) {}
  Cell(std::string t, nlohmann::json v) : text(std::move(t)), value(std::move(v)) {}
};

// How the terminal draws the rule under the header: as wide as the header line, or as the widest row.
enum class Rule { none, header, widest };

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  Rule rule = Rule::widest;
  std::vector<std::string> notes;     // lines under the table: footnotes, legend
  std::vector<std::string> warnings;  // lines under the notes, each a warning

  Table() = default;
  explicit Table(std::vector<Column> cs) : columns(std::move(cs)) {}
  // Columns with these titles, all flush left.
  static Table with_titles(const std::vector<std::string>& titles);
  void add_row(std::vector<Cell> cells) { rows.push_back(std::move(cells)); }
  std::vector<std::string> titles() const;
};

// A titled list of lines (errors, regressions, warnings, ...). An empty list is not printed.
struct Section {
  std::string title;
  std::vector<std::string> items;
};

// The key lines of a result: its headline, lines of facts, then its titled lists.
struct Summary {
  std::string headline;
  std::vector<std::string> lines;
  std::vector<Section> sections;
};

}  // namespace cuzk::output
