// Boolean gadgets: allocated bits (constrained to 0/1), and the Boolean value type that is a
// constant, an allocated bit, or the negation of one (negation and constants cost nothing).
//
// Constraint costs (allocated operands): alloc 1, and 1, xor 1, and_not 1, nor 1, not 0.
#pragma once
#include <cstdint>

#include "prover/r1cs/constraint_system.hpp"

namespace cuzk::gadgets {

using r1cs::Variable;

inline fr_t bit_value(bool b) { return b ? fr_t::one() : fr_t::zero(); }

struct AllocatedBit {
  Variable var;
  bool value = false;
};

// A bit: x * (1 - x) = 0, written x * (one - x) = 0.
template <class CS>
AllocatedBit alloc_bit(CS& cs, bool value) {
  using L = typename CS::lc_t;
  Variable v = cs.alloc(bit_value(value));
  L one_minus(Variable::one());
  one_minus.sub(v);
  cs.enforce(L(v), one_minus, L());
  return {v, value};
}

// An auxiliary holding a bit whose booleanity follows from the constraint that defines it.
template <class CS>
AllocatedBit alloc_bit_unchecked(CS& cs, bool value) {
  return {cs.alloc(bit_value(value)), value};
}

// c = a AND b:  a * b = c
template <class CS>
AllocatedBit bit_and(CS& cs, const AllocatedBit& a, const AllocatedBit& b) {
  using L = typename CS::lc_t;
  AllocatedBit c = alloc_bit_unchecked(cs, a.value && b.value);
  cs.enforce(L(a.var), L(b.var), L(c.var));
  return c;
}

// c = a XOR b:  (2a) * b = a + b - c
template <class CS>
AllocatedBit bit_xor(CS& cs, const AllocatedBit& a, const AllocatedBit& b) {
  using L = typename CS::lc_t;
  AllocatedBit c = alloc_bit_unchecked(cs, a.value != b.value);
  L rhs(a.var);
  rhs.add(b.var).sub(c.var);
  cs.enforce(L(a.var, fr_t::one().dbl()), L(b.var), rhs);
  return c;
}

// c = a AND NOT b:  a * (1 - b) = c
template <class CS>
AllocatedBit bit_and_not(CS& cs, const AllocatedBit& a, const AllocatedBit& b) {
  using L = typename CS::lc_t;
  AllocatedBit c = alloc_bit_unchecked(cs, a.value && !b.value);
  L nb(Variable::one());
  nb.sub(b.var);
  cs.enforce(L(a.var), nb, L(c.var));
  return c;
}

// c = NOT a AND NOT b:  (1 - a) * (1 - b) = c
template <class CS>
AllocatedBit bit_nor(CS& cs, const AllocatedBit& a, const AllocatedBit& b) {
  using L = typename CS::lc_t;
  AllocatedBit c = alloc_bit_unchecked(cs, !a.value && !b.value);
  L na(Variable::one()), nb(Variable::one());
  na.sub(a.var);
  nb.sub(b.var);
  cs.enforce(na, nb, L(c.var));
  return c;
}

class Boolean {
 public:
  enum class Kind : uint8_t { Constant, Is, Not };

  Boolean() = default;
  static Boolean constant(bool v) {
    Boolean b;
    b.kind_ = Kind::Constant;
    b.bit_.value = v;
    return b;
  }
  static Boolean is(const AllocatedBit& bit) {
    Boolean b;
    b.kind_ = Kind::Is;
    b.bit_ = bit;
    return b;
  }
  template <class CS>
  static Boolean alloc(CS& cs, bool v) {
    return is(alloc_bit(cs, v));
  }

  Kind kind() const { return kind_; }
  bool is_constant() const { return kind_ == Kind::Constant; }
  const AllocatedBit& bit() const { return bit_; }
  bool value() const { return kind_ == Kind::Not ? !bit_.value : bit_.value; }

  Boolean operator!() const {
    Boolean b = *this;
    if (kind_ == Kind::Constant) b.bit_.value = !bit_.value;
    else b.kind_ = kind_ == Kind::Is ? Kind::Not : Kind::Is;
    return b;
  }

  // Appends coeff * this to lc (constants and negations go through "one").
  template <class L>
  void add_to(L& lc, const fr_t& coeff) const {
    switch (kind_) {
      case Kind::Constant:
        if (bit_.value) lc.add(Variable::one(), coeff);
        break;
      case Kind::Is:
        lc.add(bit_.var, coeff);
        break;
      case Kind::Not:
        lc.add(Variable::one(), coeff);
        lc.add(bit_.var, -coeff);
        break;
    }
  }
  template <class L>
  L lc() const {
    L lc;
    add_to(lc, fr_t::one());
    return lc;
  }

 private:
  Kind kind_ = Kind::Constant;
  AllocatedBit bit_;
};

template <class CS>
Boolean boolean_and(CS& cs, const Boolean& a, const Boolean& b) {
  using K = Boolean::Kind;
  if (a.is_constant()) return a.value() ? b : Boolean::constant(false);
  if (b.is_constant()) return b.value() ? a : Boolean::constant(false);
  if (a.kind() == K::Is && b.kind() == K::Is) return Boolean::is(bit_and(cs, a.bit(), b.bit()));
  if (a.kind() == K::Is && b.kind() == K::Not) return Boolean::is(bit_and_not(cs, a.bit(), b.bit()));
  if (a.kind() == K::Not && b.kind() == K::Is) return Boolean::is(bit_and_not(cs, b.bit(), a.bit()));
  return Boolean::is(bit_nor(cs, a.bit(), b.bit()));
}

template <class CS>
Boolean boolean_xor(CS& cs, const Boolean& a, const Boolean& b) {
  using K = Boolean::Kind;
  if (a.is_constant()) return a.value() ? !b : b;
  if (b.is_constant()) return b.value() ? !a : a;
  Boolean r = Boolean::is(bit_xor(cs, a.bit(), b.bit()));
  return (a.kind() == K::Not) != (b.kind() == K::Not) ? !r : r;
}

template <class CS>
Boolean boolean_or(CS& cs, const Boolean& a, const Boolean& b) {
  return !boolean_and(cs, !a, !b);
}

// SHA-256 choice: ch = (a AND b) XOR (NOT a AND c), one constraint when a, b, c are variables:
//   a * (b - c) = ch - c
template <class CS>
Boolean sha256_ch(CS& cs, const Boolean& a, const Boolean& b, const Boolean& c) {
  using L = typename CS::lc_t;
  bool v = a.value() ? b.value() : c.value();
  if (a.is_constant()) return a.value() ? b : c;
  if (b.is_constant() || c.is_constant())
    return boolean_xor(cs, boolean_and(cs, a, b), boolean_and(cs, !a, c));
  AllocatedBit ch = alloc_bit_unchecked(cs, v);
  L bc = b.template lc<L>();
  c.add_to(bc, -fr_t::one());
  L rhs(ch.var);
  c.add_to(rhs, -fr_t::one());
  cs.enforce(a.template lc<L>(), bc, rhs);
  return Boolean::is(ch);
}

// SHA-256 majority: maj = (a AND b) XOR (a AND c) XOR (b AND c), two constraints when a, b, c
// are variables: bc = b AND c, then a * (b + c - 2 bc) = maj - bc.
template <class CS>
Boolean sha256_maj(CS& cs, const Boolean& a, const Boolean& b, const Boolean& c) {
  using L = typename CS::lc_t;
  if (a.is_constant() || b.is_constant() || c.is_constant())
    return boolean_xor(cs, boolean_xor(cs, boolean_and(cs, a, b), boolean_and(cs, a, c)),
                       boolean_and(cs, b, c));
  Boolean bc = boolean_and(cs, b, c);
  int ones = int(a.value()) + int(b.value()) + int(c.value());
  AllocatedBit maj = alloc_bit_unchecked(cs, ones >= 2);
  L mid = b.template lc<L>();
  c.add_to(mid, fr_t::one());
  bc.add_to(mid, -fr_t::one().dbl());
  L rhs(maj.var);
  bc.add_to(rhs, -fr_t::one());
  cs.enforce(a.template lc<L>(), mid, rhs);
  return Boolean::is(maj);
}

}  // namespace cuzk::gadgets
