// The three printers of the output model (table.hpp): terminal text, Markdown and JSON. Each
// renders a Table or a Summary whole; an analysis places the rendered pieces in its page.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "harness/analysis/output/table.hpp"

namespace cuzk::output {

// Terminal (text.cpp): the header and rows, cells flush left two spaces apart, the last cell of a
// row unpadded and trailing spaces cut, with the rule the table asks for under the header. Cells
// past the last column are dropped. Notes and warnings are not part of it: see text_notes.
std::string text(const Table& t);
// The table's notes, one a line, then its warnings as "warning: ..." lines.
std::string text_notes(const Table& t);
// A summary: headline, lines, then each non-empty section as "title:" and its items indented.
std::string text(const Summary& s);

// Markdown (markdown.cpp): a pipe table with the columns' alignment, "|" in cells escaped; a row
// shorter than the header is filled with empty cells.
std::string markdown(const Table& t);
// "|" as "\|", so that a cell's text cannot end its cell.
std::string markdown_escape(const std::string& s);
// A summary: "## headline", each line as a paragraph, each non-empty section as "### title" and a
// bulleted list.
std::string markdown(const Summary& s);

// JSON (json.cpp): an array of one object per row, each cell under its column's key with its value
// (its text when it has none), then {"rows", "notes", "warnings"} around it.
nlohmann::json to_json(const Table& t);
nlohmann::json to_json(const Summary& s);

}  // namespace cuzk::output
