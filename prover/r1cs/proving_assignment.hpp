// The proving assignment: the constraint system the prover synthesizes into.
//
// It evaluates each constraint's three linear combinations against the witness as the
// constraint arrives and appends the values to a, b, c; the constraints themselves are not kept.
// With Policy::kPresize the five vectors are reserved from the circuit's SizeHint first
// (CUZK_PRESIZE); otherwise they grow geometrically as std::vector does.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "prover/r1cs/constraint_system.hpp"

namespace cuzk::r1cs {

// Index of the first constraint with a*b != c, or -1 when every constraint holds. Because a, b,
// c are the evaluations of the constraints' combinations, this is the R1CS check.
inline int64_t first_unsatisfied(std::span<const fr_t> a, std::span<const fr_t> b, std::span<const fr_t> c) {
  for (size_t i = 0; i < a.size(); i++)
    if (a[i] * b[i] != c[i]) return static_cast<int64_t>(i);
  return -1;
}

template <class Policy = DefaultPolicy>
class ProvingAssignment {
 public:
  using policy = Policy;
  using lc_t = typename Policy::lc_t;
  static constexpr bool kNeedsValues = true;

  ProvingAssignment() { input_.push_back(fr_t::one()); }

  // Reserves capacity from the hint when the policy asks for it; a no-op otherwise.
  void presize(const SizeHint& h) {
    if constexpr (Policy::kPresize) {
      a_.reserve(h.constraints);
      b_.reserve(h.constraints);
      c_.reserve(h.constraints);
      input_.reserve(h.inputs);
      aux_.reserve(h.aux);
    }
  }

  Variable alloc(const fr_t& value) {
    aux_.push_back(value);
    return Variable::aux(static_cast<uint32_t>(aux_.size() - 1));
  }
  Variable alloc_input(const fr_t& value) {
    input_.push_back(value);
    return Variable::input(static_cast<uint32_t>(input_.size() - 1));
  }
  void enforce(const lc_t& a, const lc_t& b, const lc_t& c) {
    const fr_t* in = input_.data();
    const fr_t* ax = aux_.data();
    a_.push_back(evaluate(a, in, ax));
    b_.push_back(evaluate(b, in, ax));
    c_.push_back(evaluate(c, in, ax));
  }

  const fr_t& value(Variable v) const { return v.is_input() ? input_[v.index()] : aux_[v.index()]; }

  size_t num_constraints() const { return a_.size(); }
  size_t num_inputs() const { return input_.size(); }
  size_t num_aux() const { return aux_.size(); }

  const std::vector<fr_t>& a() const { return a_; }
  const std::vector<fr_t>& b() const { return b_; }
  const std::vector<fr_t>& c() const { return c_; }
  const std::vector<fr_t>& input_assignment() const { return input_; }
  const std::vector<fr_t>& aux_assignment() const { return aux_; }
  // Mutable access, for tests that tamper with evaluations.
  std::vector<fr_t>& mutable_a() { return a_; }

  // Moves the vectors out (for the proving stage); the assignment is empty afterwards.
  struct Vectors {
    std::vector<fr_t> a, b, c, input, aux;
  };
  Vectors release() && {
    return Vectors{std::move(a_), std::move(b_), std::move(c_), std::move(input_), std::move(aux_)};
  }

  int64_t first_unsatisfied() const { return r1cs::first_unsatisfied(a_, b_, c_); }
  bool is_satisfied() const { return first_unsatisfied() < 0; }

 private:
  std::vector<fr_t> a_, b_, c_;
  std::vector<fr_t> input_, aux_;
};

}  // namespace cuzk::r1cs
