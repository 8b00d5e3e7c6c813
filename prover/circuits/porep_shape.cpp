#include "prover/circuits/porep_shape.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "prover/gadgets/num.hpp"

namespace cuzk::circuits {
namespace {

// Counts as signed numbers, so that differences of instances can be formed and scaled.
struct Shape {
  int64_t v[6] = {};  // constraints, inputs, aux, nnz_a, nnz_b, nnz_c

  static Shape of(const r1cs::ShapeCounts& s) {
    return {{int64_t(s.constraints), int64_t(s.inputs), int64_t(s.aux), int64_t(s.nnz_a), int64_t(s.nnz_b),
             int64_t(s.nnz_c)}};
  }
  r1cs::ShapeCounts counts() const {
    r1cs::ShapeCounts s;
    s.constraints = uint64_t(v[0]);
    s.inputs = uint64_t(v[1]);
    s.aux = uint64_t(v[2]);
    s.nnz_a = uint64_t(v[3]);
    s.nnz_b = uint64_t(v[4]);
    s.nnz_c = uint64_t(v[5]);
    return s;
  }
  Shape operator+(const Shape& o) const {
    Shape r;
    for (int i = 0; i < 6; ++i) r.v[i] = v[i] + o.v[i];
    return r;
  }
  Shape operator-(const Shape& o) const {
    Shape r;
    for (int i = 0; i < 6; ++i) r.v[i] = v[i] - o.v[i];
    return r;
  }
  Shape operator*(int64_t k) const {
    Shape r;
    for (int i = 0; i < 6; ++i) r.v[i] = v[i] * k;
    return r;
  }
};

Shape instance(const PorepParams& p, uint32_t challenges, uint32_t layers) {
  PorepParams q = p;
  q.challenges = challenges;
  q.layers = layers;
  return Shape::of(PorepCircuit::shape(q));
}

// The column hash over `labels` allocated labels, without the labels themselves.
Shape column(uint32_t labels) {
  r1cs::ShapeCounter<> sc;
  std::vector<gadgets::AllocatedNum> col;
  for (uint32_t i = 0; i < labels; ++i) col.push_back(gadgets::AllocatedNum::alloc(sc, fr_t::zero()));
  (void)detail::column_hash(sc, col);
  r1cs::ShapeCounts c = sc.counts();
  c.aux -= labels;
  return Shape::of(c);
}

uint64_t next_pow2(uint64_t n) {
  uint64_t d = 1;
  while (d < n) d <<= 1;
  return d;
}

}  // namespace

r1cs::ShapeCounts porep_shape_by_parts(const PorepParams& P) {
  if (std::string err = P.validate(); !err.empty()) throw std::invalid_argument(err);
  if (P.challenges <= 2 && P.layers <= 3) return PorepCircuit::shape(P);
  const int64_t c = P.challenges, l = P.layers;
  if (l == 0) {
    const Shape s1 = instance(P, 1, 0), s2 = instance(P, 2, 0);
    return (s1 + (s2 - s1) * (c - 1)).counts();
  }
  // F + c * G(l): F is what the partition has once, G(l) one challenge with l layers.
  const Shape s11 = instance(P, 1, 1);
  const Shape g1 = instance(P, 2, 1) - s11;
  const Shape f = s11 - g1;
  Shape s1l;  // one challenge, l layers
  if (l == 1) {
    s1l = s11;
  } else if (l == 2) {
    s1l = instance(P, 1, 2);
  } else {
    const Shape s12 = instance(P, 1, 2), s13 = instance(P, 1, 3);
    const Shape col2 = column(2);
    const Shape label = (s13 - s12) - (column(3) - col2);  // one label after the first
    s1l = s12 + label * (l - 2) + (column(uint32_t(l)) - col2);
  }
  const Shape g = g1 + (s1l - s11);
  return (f + g * c).counts();
}

uint64_t groth16_key_bytes(const r1cs::ShapeCounts& s) {
  constexpr uint64_t kG1 = 104, kG2 = 200;
  const uint64_t vars = s.inputs + s.aux, n = next_pow2(s.constraints);
  return kG1 * (2 * vars + n + s.aux + s.inputs) + kG2 * vars;
}

uint64_t groth16_prove_bytes(const r1cs::ShapeCounts& s, uint64_t partitions) {
  constexpr uint64_t kFr = 32;
  const uint64_t vars = s.inputs + s.aux, n = next_pow2(s.constraints);
  const uint64_t key = groth16_key_bytes(s);
  // Key generation evaluates the QAP as the constraints arrive (no matrices): u, v, w with the
  // Lagrange basis, then with the two scaled vectors (ic, l).
  const uint64_t setup = kFr * (4 * vars + n);
  const uint64_t prove = partitions * kFr * (3 * s.constraints + vars) + 4 * kFr * n;
  return key + std::max(setup, prove);
}

}  // namespace cuzk::circuits
