// libFuzzer target: the matrix manifest reader (tests/fuzz/entry_points.hpp).
#include "tests/fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuzk::fuzz::parse_manifest({data, size});
  return 0;
}
