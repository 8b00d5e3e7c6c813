// libFuzzer target: gpu_counters results lines (tests/fuzz/entry_points.hpp).
#include "tests/fuzz/entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cuzk::fuzz::parse_gpu_counters({data, size});
  return 0;
}
