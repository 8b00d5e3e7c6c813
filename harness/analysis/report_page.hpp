// What the A/B report (report.hpp) and the matrix report (report_matrix.hpp) share: the HTML page
// with its one stylesheet, escaping, base64 for embedded images, labels, and writing a file.
// Both reports include this page; neither includes the other.
#pragma once
#include <string>

namespace cuzk::report {

// The HTML page both reports share: <head> with the one stylesheet, `body` inside <body>.
std::string html_page(const std::string& title, const std::string& body);
// Writes `text` to `path`; std::runtime_error naming the file when it cannot.
void write_text(const std::string& path, const std::string& text);
std::string html_escape(const std::string& s);
// A signed duration for labels: "+1.5 ms", "-0.3 ms".
std::string signed_ms(double ns);
std::string base64(const std::string& bytes);
// A table cell with its text escaped, and a class when `cls` is given.
std::string td(const std::string& s, const char* cls = nullptr);
// The whole file's bytes, `what` naming it in errors: a regular file of at most
// limits::kMaxJsonDocumentBytes (prover/interop/input_file.hpp), else CompareError.
std::string slurp(const std::string& path, const char* what);

}  // namespace cuzk::report
