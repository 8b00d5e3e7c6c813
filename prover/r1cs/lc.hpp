// Linear combinations: sum of coeff * variable terms, with the storage chosen at compile time.
//
// Storage (the CUZK_SMALLVEC variant):
//   std::vector<Term>                                       baseline: every non-empty LC allocates
//   boost::container::small_vector<Term, CAPACITY>          CUZK_SMALLVEC=1: the first CAPACITY
//                                                           terms live inline, no allocation
// Why Boost.Container's small_vector: it is header-only, Boost is already a dependency of the
// prover (find_package(Boost) in cmake/CuzkDependencies.cmake), and it is well kept; Abseil's
// InlinedVector would need Abseil as a compiled CMake package, which Debian does not ship in the
// form this build needs.
//
// BasicLc is a template over the storage so that both storages can be instantiated in one binary
// (tests compare them in one process); the build flag only picks the default `Lc`.
#pragma once
// g++ 12 (Debian 12) warns -Wstringop-overread inside small_vector's move (a memmove of more than
// the inline capacity, on a path where the terms are inline and so never longer than it) once
// it is inlined into the gadgets; g++ 13 does not. The warning is placed at Boost's line, so the
// pragma around its include silences exactly that header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
#include <boost/container/small_vector.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <cstddef>
#include <vector>

#include "prover/r1cs/variable.hpp"

#ifndef CUZK_SMALLVEC
#define CUZK_SMALLVEC 0
#endif
#ifndef CUZK_SMALLVEC_CAPACITY
#define CUZK_SMALLVEC_CAPACITY 4
#endif
#ifndef CUZK_PRESIZE
#define CUZK_PRESIZE 0
#endif

namespace cuzk::r1cs {

using VectorTerms = std::vector<Term>;
template <size_t Capacity>
using SmallTerms = boost::container::small_vector<Term, Capacity>;

template <class Storage>
class BasicLc {
 public:
  using storage_type = Storage;

  BasicLc() = default;
  explicit BasicLc(Variable v) { terms_.push_back(Term{fr_t::one(), v}); }
  BasicLc(Variable v, const fr_t& coeff) { terms_.push_back(Term{coeff, v}); }

  // A constant: c * one.
  static BasicLc constant(const fr_t& c) { return BasicLc(Variable::one(), c); }

  BasicLc& add(Variable v) {
    terms_.push_back(Term{fr_t::one(), v});
    return *this;
  }
  BasicLc& add(Variable v, const fr_t& coeff) {
    terms_.push_back(Term{coeff, v});
    return *this;
  }
  BasicLc& sub(Variable v) {
    terms_.push_back(Term{-fr_t::one(), v});
    return *this;
  }
  BasicLc& add_constant(const fr_t& c) { return add(Variable::one(), c); }
  BasicLc& add_lc(const BasicLc& o) {
    terms_.insert(terms_.end(), o.terms_.begin(), o.terms_.end());
    return *this;
  }
  BasicLc& add_lc(const BasicLc& o, const fr_t& scale) {
    for (const Term& t : o.terms_) terms_.push_back(Term{t.coeff * scale, t.var});
    return *this;
  }
  BasicLc& sub_lc(const BasicLc& o) {
    for (const Term& t : o.terms_) terms_.push_back(Term{-t.coeff, t.var});
    return *this;
  }
  void reserve(size_t n) { terms_.reserve(n); }
  void clear() { terms_.clear(); }

  size_t size() const { return terms_.size(); }
  bool empty() const { return terms_.empty(); }
  const Storage& terms() const { return terms_; }
  auto begin() const { return terms_.begin(); }
  auto end() const { return terms_.end(); }

 private:
  Storage terms_;
};

using VectorLc = BasicLc<VectorTerms>;
using SmallLc = BasicLc<SmallTerms<CUZK_SMALLVEC_CAPACITY>>;
#if CUZK_SMALLVEC
using Lc = SmallLc;
#else
using Lc = VectorLc;
#endif

// Value of a linear combination under an assignment (input[], aux[] in Montgomery form).
// Witness values are mostly bits, so the 0 and 1 cases skip the multiplication.
template <class Storage>
inline fr_t evaluate(const BasicLc<Storage>& lc, const fr_t* input, const fr_t* aux) {
  fr_t acc = fr_t::zero();
  for (const Term& t : lc.terms()) {
    const fr_t& v = t.var.is_input() ? input[t.var.index()] : aux[t.var.index()];
    if (v.is_zero()) continue;
    if (v.is_one()) {
      acc += t.coeff;
    } else if (t.coeff.is_one()) {
      acc += v;
    } else {
      acc += t.coeff * v;
    }
  }
  return acc;
}

}  // namespace cuzk::r1cs
