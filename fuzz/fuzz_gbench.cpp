// libFuzzer target: the gbench reader (fuzz/entry_points.hpp).
#include "fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuzk::fuzz::parse_gbench({data, size});
  return 0;
}
