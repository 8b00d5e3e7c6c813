// The interface the counter sources that CounterSet reads in-process share (OS counters, sim
// counters): a fixed list of names, each readable here or not with a reason, read together as
// running totals that a phase differences (harness/measure/counters.hpp, docs/counters.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cuzk {

class CounterReader {
 public:
  virtual ~CounterReader() = default;

  // Whether the i-th name can be read here, and why not.
  bool available(size_t i) const { return error_[i].empty(); }
  const std::string& reason(size_t i) const { return error_[i]; }
  // How many of the names are available (read() returns that many values).
  size_t available_count() const {
    size_t n = 0;
    for (const auto& e : error_) n += e.empty();
    return n;
  }

  // Current values of the available names, in their order; false with `error` set on failure.
  virtual bool read(std::vector<int64_t>& out, std::string& error) = 0;

 protected:
  std::vector<std::string> error_;  // per name: "" when readable
};

}  // namespace cuzk
