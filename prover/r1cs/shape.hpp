// Shape-only passes (parameter generation): the circuit is synthesized without a witness.
//
// ShapeCounter counts constraints, inputs, auxiliaries and the terms of each matrix, keeping
// nothing else (a 10^8-constraint circuit costs no memory). MatrixRecorder keeps the sparse A, B,
// C matrices in CSR form (R1csMatrices), for parameter generation and for checking an arbitrary
// assignment against the constraints (is_satisfied).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "prover/r1cs/constraint_system.hpp"

namespace cuzk::r1cs {

struct ShapeCounts {
  uint64_t constraints = 0;
  uint64_t inputs = 1;  // "one"
  uint64_t aux = 0;
  // Terms per matrix as enforced (a variable named twice in one combination counts twice).
  uint64_t nnz_a = 0, nnz_b = 0, nnz_c = 0;
  SizeHint hint() const { return SizeHint{constraints, inputs, aux}; }
};

template <class Storage = Lc::storage_type>
class ShapeCounter {
 public:
  using lc_t = BasicLc<Storage>;
  static constexpr bool kNeedsValues = false;

  Variable alloc(const fr_t&) { return Variable::aux(static_cast<uint32_t>(counts_.aux++)); }
  Variable alloc_input(const fr_t&) { return Variable::input(static_cast<uint32_t>(counts_.inputs++)); }
  void enforce(const lc_t& a, const lc_t& b, const lc_t& c) {
    counts_.constraints++;
    counts_.nnz_a += a.size();
    counts_.nnz_b += b.size();
    counts_.nnz_c += c.size();
  }
  const ShapeCounts& counts() const { return counts_; }
  uint64_t num_inputs() const { return counts_.inputs; }

 private:
  ShapeCounts counts_;
};

// One sparse matrix, CSR: row i's terms are [row_ptr[i], row_ptr[i+1]). Columns number the
// variables inputs first, then auxiliaries: column = is_input ? index : num_inputs + index.
struct CsrMatrix {
  std::vector<uint64_t> row_ptr{0};
  std::vector<uint32_t> col;
  std::vector<fr_t> coeff;
  uint64_t nnz() const { return col.size(); }
};

struct R1csMatrices {
  uint64_t num_inputs = 1;
  uint64_t num_aux = 0;
  uint64_t num_constraints = 0;
  CsrMatrix A, B, C;

  // <row, z> of matrix m, z = (input..., aux...).
  static fr_t row_value(const CsrMatrix& m, uint64_t row, const fr_t* z);
  // Index of the first constraint violated by (input, aux), -1 when all hold; throws
  // std::invalid_argument when the assignment's lengths do not match the matrices.
  int64_t first_unsatisfied(const std::vector<fr_t>& input, const std::vector<fr_t>& aux) const;
  bool is_satisfied(const std::vector<fr_t>& input, const std::vector<fr_t>& aux) const {
    return first_unsatisfied(input, aux) < 0;
  }
};

template <class Storage = Lc::storage_type>
class MatrixRecorder {
 public:
  using lc_t = BasicLc<Storage>;
  static constexpr bool kNeedsValues = false;

  Variable alloc(const fr_t&) { return Variable::aux(static_cast<uint32_t>(m_.num_aux++)); }
  Variable alloc_input(const fr_t&) { return Variable::input(static_cast<uint32_t>(m_.num_inputs++)); }
  void enforce(const lc_t& a, const lc_t& b, const lc_t& c) {
    append(m_.A, a);
    append(m_.B, b);
    append(m_.C, c);
    m_.num_constraints++;
  }
  uint64_t num_inputs() const { return m_.num_inputs; }
  // The matrices, with columns renumbered inputs-then-aux (num_inputs is only known at the end,
  // so columns hold raw Variable encodings until then). Call once, after synthesis.
  R1csMatrices finish() {
    for (CsrMatrix* m : {&m_.A, &m_.B, &m_.C})
      for (uint32_t& col : m->col)
        if (col & Variable::kAuxBit) col = static_cast<uint32_t>(m_.num_inputs + (col & ~Variable::kAuxBit));
    return std::move(m_);
  }

 private:
  static void append(CsrMatrix& m, const lc_t& lc) {
    for (const Term& t : lc) {
      m.col.push_back(t.var.raw());
      m.coeff.push_back(t.coeff);
    }
    m.row_ptr.push_back(m.col.size());
  }
  R1csMatrices m_;
};

}  // namespace cuzk::r1cs
