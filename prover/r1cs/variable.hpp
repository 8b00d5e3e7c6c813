// A variable of a rank-1 constraint system, as in bellman: an input (public) or an auxiliary
// (private) index. Input 0 is the constant "one" that every linear combination uses for its
// constant terms.
#pragma once
#include <cstdint>

#include "prover/ff/fr.hpp"

namespace cuzk::r1cs {

class Variable {
 public:
  static constexpr uint32_t kAuxBit = 0x80000000u;  // top bit: auxiliary; indices < 2^31
  static constexpr uint32_t kMaxIndex = kAuxBit - 1;

  constexpr Variable() = default;
  static constexpr Variable input(uint32_t i) { return Variable(i); }
  static constexpr Variable aux(uint32_t i) { return Variable(i | kAuxBit); }
  static constexpr Variable one() { return input(0); }

  constexpr bool is_input() const { return (raw_ & kAuxBit) == 0; }
  constexpr bool is_aux() const { return !is_input(); }
  constexpr uint32_t index() const { return raw_ & ~kAuxBit; }
  constexpr uint32_t raw() const { return raw_; }
  constexpr bool operator==(const Variable& o) const { return raw_ == o.raw_; }

 private:
  constexpr explicit Variable(uint32_t raw) : raw_(raw) {}
  uint32_t raw_ = 0;
};

// One term of a linear combination: coeff * var.
struct Term {
  fr_t coeff;
  Variable var;
};

// Number of constraints and variables a circuit expects; used by CUZK_PRESIZE to reserve.
struct SizeHint {
  uint64_t constraints = 0;
  uint64_t inputs = 0;  // including "one"
  uint64_t aux = 0;
};

}  // namespace cuzk::r1cs
