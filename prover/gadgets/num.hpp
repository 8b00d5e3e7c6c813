// Field elements in circuit: an allocated variable with its value, and a linear combination
// with its value (what linear layers such as Poseidon's MDS produce without constraints).
#pragma once
#include "prover/r1cs/constraint_system.hpp"

namespace cuzk::gadgets {

using r1cs::Variable;

struct AllocatedNum {
  Variable var;
  fr_t value;

  template <class CS>
  static AllocatedNum alloc(CS& cs, const fr_t& v) {
    return {cs.alloc(v), v};
  }
  template <class CS>
  static AllocatedNum alloc_input(CS& cs, const fr_t& v) {
    return {cs.alloc_input(v), v};
  }
};

template <class L>
struct NumLc {
  L lc;
  fr_t value;
  static NumLc of(const AllocatedNum& n) { return {L(n.var), n.value}; }
  static NumLc constant(const fr_t& v) { return {L::constant(v), v}; }
};

// out = lc, as a new variable: lc * 1 = out.
template <class CS>
AllocatedNum materialize(CS& cs, const NumLc<typename CS::lc_t>& x) {
  using L = typename CS::lc_t;
  AllocatedNum out = AllocatedNum::alloc(cs, x.value);
  cs.enforce(x.lc, L(Variable::one()), L(out.var));
  return out;
}

// a == b: (a - b) * 1 = 0.
template <class CS>
void enforce_equal(CS& cs, const typename CS::lc_t& a, const typename CS::lc_t& b) {
  using L = typename CS::lc_t;
  L d = a;
  d.sub_lc(b);
  cs.enforce(d, L(Variable::one()), L());
}

}  // namespace cuzk::gadgets
