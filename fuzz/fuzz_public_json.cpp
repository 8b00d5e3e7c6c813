// libFuzzer target: the public_json reader (fuzz/entry_points.hpp).
#include "fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuzk::fuzz::parse_public_json({data, size});
  return 0;
}
