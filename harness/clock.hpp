// Host wall clock of the harness: std::chrono::steady_clock in nanoseconds.
#pragma once
#include <chrono>
#include <cstdint>

namespace cuzk {

// Monotonic nanoseconds since an arbitrary epoch (steady clock); only differences mean anything.
inline uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

}  // namespace cuzk
