// The pieces of HTML and files that the A/B report and the matrix report share. report_page.hpp.
#include "harness/analysis/report_page.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>

#include "harness/analysis/compare.hpp"
#include "harness/measure/output_file.hpp"
#include "prover/interop/input_file.hpp"
#include "prover/interop/input_limits.hpp"

namespace cuzk::report {

std::string signed_ms(double ns) { return fmt::format("{}{:.1f} ms", ns >= 0 ? "+" : "-", std::fabs(ns) / 1e6); }

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += k[(v >> 6) & 63];
    out += k[v & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += k[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string html_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
         "</title>\n<style>"
         "body{font-family:sans-serif;margin:2em;max-width:90em}table{border-collapse:collapse;margin:1em 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}td.num{text-align:right}"
         ".summary{font-size:15px;max-width:60em;line-height:1.4}.accounting{margin:1em 0}"
         ".slower{background:#fdd}.faster{background:#dfd}.noisy{background:#ffd}.note{background:#fff3cd;"
         "padding:.6em;border:1px solid #e0c060}img{max-width:100%}code{font-size:12px}"
         "td.heat{text-align:right;white-space:nowrap}td.ns{color:#777}.forest{margin:1em 0}</style></head><body>\n" +
         body + "</body></html>\n";
}

// Through the CLI's output-file rules (harness/measure/output_file.hpp): complete or untouched.
void write_text(const std::string& path, const std::string& text) { write_output_file(path, text); }

std::string td(const std::string& s, const char* cls) {
  return cls ? fmt::format("<td class=\"{}\">{}</td>", cls, html_escape(s)) : "<td>" + html_escape(s) + "</td>";
}

std::string slurp(const std::string& path, const char* what) {
  InputFile in(path, throw_as<CompareError>);
  return in.read_all(limits::kMaxJsonDocumentBytes, what);
}

}  // namespace cuzk::report
