// libFuzzer target: the results reader (tests/fuzz/entry_points.hpp).
#include "tests/fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuzk::fuzz::parse_results({data, size});
  return 0;
}
