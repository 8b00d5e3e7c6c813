// Reading back a results file whose writer was killed with SIGKILL.
//
// Linux may cut a write(2) to a regular file short when SIGKILL arrives while it copies the
// line's pages, so a killed writer leaves either only complete lines, or complete lines and a
// partial last one without its newline. Both are checked here: the partial line is refused at
// its line number with the recovery hint, and the complete lines before it read back whole.
#pragma once

#include <algorithm>
#include <string>

#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "test_util.hpp"

namespace cuzk::test {

// The complete lines of a killed writer's file, read and validated.
inline cuzk::ResultsFile read_killed_results(const std::string& path) {
  const std::string text = slurp(path);
  REQUIRE_FALSE(text.empty());
  const size_t complete = size_t(std::count(text.begin(), text.end(), '\n'));
  if (text.back() != '\n') {
    INFO("the kill cut the last line (" << text.size() - text.rfind('\n') - 1 << " bytes of it on disk)");
    try {
      (void)cuzk::read_results(path);
      FAIL("a file ending in a partial line was accepted");
    } catch (const cuzk::ResultsError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find(":" + std::to_string(complete + 1) + ": truncated line") != std::string::npos);
      CHECK(msg.find("head -n " + std::to_string(complete)) != std::string::npos);
    }
  }
  cuzk::ResultsFile f;
  REQUIRE_NOTHROW(f = cuzk::parse_results(text.substr(0, text.rfind('\n') + 1), path));
  CHECK(f.samples.size() + 1 == complete);  // the header and every complete sample line
  return f;
}

}  // namespace cuzk::test
