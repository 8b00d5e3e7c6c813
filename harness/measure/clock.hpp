// Host wall clock of the harness: std::chrono::steady_clock in nanoseconds.
#pragma once
#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

namespace cuzk {

// Monotonic nanoseconds since an arbitrary epoch (steady clock); only differences mean anything.
inline uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// A duration for people: "1.234 s", "5.678 ms", "9.012 us" or "345 ns" (the tables of compare
// and noise print the same units).
inline std::string fmt_ns(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

}  // namespace cuzk
