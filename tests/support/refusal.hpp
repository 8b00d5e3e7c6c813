// The shape of a refusal of bad input (docs/cli.md): exit 2 and exactly one line on stderr,
// "cuzk-bench: error: ...", naming what was wrong.
#pragma once
#include <string>
#include <initializer_list>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"

namespace cuzk::test {

inline void check_refused(const RunResult& r, const std::vector<std::string>& needles) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.rfind("cuzk-bench: error: ", 0) == 0);
  CHECK(lines_of(r.err).size() == 1);
  for (const auto& n : needles) CHECK(r.err.find(n) != std::string::npos);
}

inline void check_refused(const RunResult& r, std::initializer_list<std::string> needles) {
  check_refused(r, std::vector<std::string>(needles));
}

inline void check_refused(const RunResult& r, const std::string& needle) {
  check_refused(r, std::vector<std::string>{needle});
}

}  // namespace cuzk::test
