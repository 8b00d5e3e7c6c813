// Groth16 keys and proofs over BLS12-381 (the notation of Groth, "On the Size of Pairing-based
// Non-interactive Arguments", EUROCRYPT 2016, in the layout bellman/bellperson use).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"
#include "prover/ff/fr.hpp"

namespace cuzk::groth16 {

// An immutable array of points that either owns its storage or views a memory-mapped
// parameter file (kept alive by `owner`). Converts to std::span for the MSMs.
template <class T>
class PointArray {
 public:
  PointArray() = default;
  PointArray(std::vector<T>&& v) {  // NOLINT: implicit from an owned vector
    auto holder = std::make_shared<std::vector<T>>(std::move(v));
    data_ = holder->data();
    n_ = holder->size();
    owner_ = std::move(holder);
  }
  static PointArray view(std::shared_ptr<const void> owner, const T* data, size_t n) {
    PointArray a;
    a.owner_ = std::move(owner);
    a.data_ = data;
    a.n_ = n;
    return a;
  }
  // n points that only a device holds: the count stays, the host has no points to read
  // (prover/groth16/key_residency.hpp).
  static PointArray device_only(size_t n) {
    PointArray a;
    a.n_ = n;
    return a;
  }
  bool has_points() const { return n_ == 0 || data_ != nullptr; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T* data() const {
    // A reader on the host of points only a device holds is a caller's mistake, not a crash
    // (std::span's range constructor reads here too).
    if (!has_points()) throw std::logic_error("a key query whose points only a device holds was read on the host");
    return data_;
  }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& back() const { return data_[n_ - 1]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + n_; }
  operator std::span<const T>() const { return {data(), n_}; }  // NOLINT
  // The same points in the same order, wherever each array's memory comes from (arrays only a
  // device holds: the same count).
  friend bool operator==(const PointArray& a, const PointArray& b) {
    if (!a.has_points() || !b.has_points()) return a.has_points() == b.has_points() && a.n_ == b.n_;
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::shared_ptr<const void> owner_;
  const T* data_ = nullptr;
  size_t n_ = 0;
};

struct VerifyingKey {
  g1_affine_t alpha_g1;
  g1_affine_t beta_g1;
  g2_affine_t beta_g2;
  g2_affine_t gamma_g2;
  g1_affine_t delta_g1;
  g2_affine_t delta_g2;
  PointArray<g1_affine_t> ic;  // one per public input, input 0 being the constant one
  bool operator==(const VerifyingKey&) const = default;
};

// How the H polynomial's MSM inputs are formed; each kind of parameters carries its own.
enum class HConvention : uint32_t {
  // bellman/bellperson: H's coefficients h_0..h_{n-2}; h_query[i] = tau^i Z(tau) / delta.
  kBellman = 0,
  // snarkjs .zkey: evaluations of (A*B-C) on the odd coset of the 2n-th roots of unity, no
  // final inverse transform; the zkey's H points absorb the Lagrange basis and 1/Z.
  kSnarkjs = 1,
};

struct ProvingKey {
  VerifyingKey vk;
  HConvention convention = HConvention::kBellman;
  uint64_t num_inputs = 0;       // including the constant one
  uint64_t num_aux = 0;
  uint64_t num_constraints = 0;  // including bellman's one constraint per input
  uint64_t domain_size = 0;      // n, a power of two >= num_constraints
  PointArray<g1_affine_t> a_query;     // num_inputs + num_aux
  PointArray<g1_affine_t> b_g1_query;  // num_inputs + num_aux
  PointArray<g2_affine_t> b_g2_query;  // num_inputs + num_aux
  PointArray<g1_affine_t> h_query;     // n - 1 (bellman) or n (snarkjs)
  PointArray<g1_affine_t> l_query;     // num_aux
  uint64_t seed = 0;             // toxic-waste seed (generated keys only; 0 for imported ones)
  std::string origin;            // "generated", "file:<path>", "zkey:<path>"
  // Set on a key held on devices (groth16::with_residency): shared by its copies, including
  // those whose host points were dropped, so that a device knows them all as one key.
  std::shared_ptr<const void> residency;
  // What a backend keeps device copies under: the residency token, else the H query's address.
  const void* identity() const { return residency ? residency.get() : static_cast<const void*>(h_query.data()); }
  // The same keys: every point and count (where the points live and `origin` aside).
  bool same_keys(const ProvingKey& o) const {
    return vk == o.vk && convention == o.convention && num_inputs == o.num_inputs && num_aux == o.num_aux &&
           num_constraints == o.num_constraints && domain_size == o.domain_size && a_query == o.a_query &&
           b_g1_query == o.b_g1_query && b_g2_query == o.b_g2_query && h_query == o.h_query && l_query == o.l_query;
  }
};

struct Proof {
  g1_affine_t a;
  g2_affine_t b;
  g1_affine_t c;
  bool operator==(const Proof& o) const { return a == o.a && b == o.b && c == o.c; }
};

}  // namespace cuzk::groth16
