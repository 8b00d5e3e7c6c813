// Number-theoretic transforms over Fr for power-of-two domains (up to 2^27, bounded by
// Fr's two-adicity of 32): forward/inverse, and coset variants, multi-threaded.
//
// Conventions: forward(a) maps coefficients a_0..a_{n-1} to evaluations a(omega^i) in natural
// order; inverse() undoes it. coset_forward(a, g) evaluates at g*omega^i; coset_inverse(e, g)
// takes evaluations on that coset back to coefficients.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "prover/ff/fr.hpp"

namespace cuzk {

class ThreadPool;

class Domain {
 public:
  // Smallest power-of-two domain with at least `min_size` points. Throws std::invalid_argument
  // when that exceeds 2^32 (Fr's two-adicity).
  static Domain at_least(size_t min_size);
  explicit Domain(unsigned log_n);

  size_t size() const { return n_; }
  unsigned log_size() const { return log_n_; }
  const fr_t& omega() const { return omega_; }
  const fr_t& omega_inv() const { return omega_inv_; }
  const fr_t& size_inv() const { return n_inv_; }
  // The multiplicative generator used for the coset (7, per the field's parameters).
  static fr_t coset_generator();

  void forward(std::span<fr_t> a, ThreadPool* pool = nullptr) const;
  void inverse(std::span<fr_t> a, ThreadPool* pool = nullptr) const;
  void coset_forward(std::span<fr_t> a, const fr_t& g, ThreadPool* pool = nullptr) const;
  void coset_inverse(std::span<fr_t> a, const fr_t& g, ThreadPool* pool = nullptr) const;

  // Z(x) = x^n - 1 evaluated at g (constant on the coset g*<omega>: g^n - 1).
  fr_t vanishing_on_coset(const fr_t& g) const;

 private:
  void transform(std::span<fr_t> a, const std::vector<fr_t>& tw, ThreadPool* pool) const;
  size_t n_ = 0;
  unsigned log_n_ = 0;
  fr_t omega_, omega_inv_, n_inv_;
  std::vector<fr_t> tw_fwd_, tw_inv_;  // omega^j and omega^-j, j < n/2
};

// Multiplies a[i] by g^i (distribute powers), in parallel.
void scale_by_powers(std::span<fr_t> a, const fr_t& g, ThreadPool* pool = nullptr);

}  // namespace cuzk
