// The constraint-system interface (bellman/bellperson style) as a C++20 concept.
//
// A constraint system accepts allocations with their values and constraints <a, x> * <b, x> =
// <c, x> over linear combinations. Gadgets and circuits are templates over the system, so the
// same synthesis code drives the proving assignment, the shape-only counter and the matrix
// recorder without a virtual call per constraint (synthesis issues ~10^8 enforce calls per
// partition in the engine this project models).
//
//   using lc_t = BasicLc<...>;                 linear-combination type the system takes
//   Variable alloc(const fr_t& value);        auxiliary (private) variable
//   Variable alloc_input(const fr_t& value);  input (public) variable; input 0 is "one"
//   void enforce(const lc_t& a, const lc_t& b, const lc_t& c);
//   static constexpr bool kNeedsValues;        false: values may be garbage (shape-only passes)
//
// Every system starts with the input "one" (value 1) at index 0, as in bellman.
#pragma once
#include <concepts>
#include <cstdint>

#include "prover/r1cs/lc.hpp"

namespace cuzk::r1cs {

template <class CS>
concept ConstraintSystem = requires(CS& cs, const fr_t& v, const typename CS::lc_t& lc) {
  typename CS::lc_t;
  { cs.alloc(v) } -> std::same_as<Variable>;
  { cs.alloc_input(v) } -> std::same_as<Variable>;
  { cs.enforce(lc, lc, lc) };
  { CS::kNeedsValues } -> std::convertible_to<bool>;
};

// Compile-time synthesis policy: LC storage and whether to reserve from size hints.
template <class Storage, bool Presize>
struct SynthPolicy {
  using storage_type = Storage;
  using lc_t = BasicLc<Storage>;
  static constexpr bool kPresize = Presize;
};

using BaselinePolicy = SynthPolicy<VectorTerms, false>;
using SmallvecPolicy = SynthPolicy<SmallTerms<CUZK_SMALLVEC_CAPACITY>, false>;
using PresizePolicy = SynthPolicy<VectorTerms, true>;
// The policy the build's flags select (CUZK_SMALLVEC, CUZK_PRESIZE).
using DefaultPolicy = SynthPolicy<Lc::storage_type, bool(CUZK_PRESIZE)>;

// Enforces input_i * 0 = 0 for every input, as bellman/bellperson do after synthesis, so that
// each public input appears in the A matrix (needed by Groth16's soundness argument).
template <class CS>
void enforce_input_constraints(CS& cs, uint32_t num_inputs) {
  using L = typename CS::lc_t;
  for (uint32_t i = 0; i < num_inputs; i++) cs.enforce(L(Variable::input(i)), L(), L());
}

}  // namespace cuzk::r1cs
