// A test binary's step before Catch2 runs (tests/support/catch_main.cpp).
#pragma once

namespace cuzk {
// Returns -1 to run the tests, or the exit code to end with instead (77: ctest's "Skipped").
int test_preamble();
}  // namespace cuzk
