// The one main() of every Catch2 test binary, on Catch2 v2 (Debian 12) and v3 (the GPU machine).
// A binary that must decide before any test runs (the GPU tests: is there a device?) defines
// cuzk::test_preamble(); Catch2's implementation is then compiled once for all binaries.
#if defined(CUZK_CATCH3)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include "catch_preamble.hpp"

namespace cuzk {
// Weak: a test binary's own definition replaces this one at link time.
__attribute__((weak)) int test_preamble() { return -1; }
}  // namespace cuzk

int main(int argc, char** argv) {
  const int rc = cuzk::test_preamble();
  if (rc >= 0) return rc;
  return Catch::Session().run(argc, argv);
}
