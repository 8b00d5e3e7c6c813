#include <stdexcept>
#include <string>

#include "prover/r1cs/shape.hpp"

namespace cuzk::r1cs {

fr_t R1csMatrices::row_value(const CsrMatrix& m, uint64_t row, const fr_t* z) {
  fr_t acc = fr_t::zero();
  for (uint64_t k = m.row_ptr[row]; k < m.row_ptr[row + 1]; k++) acc += m.coeff[k] * z[m.col[k]];
  return acc;
}

int64_t R1csMatrices::first_unsatisfied(const std::vector<fr_t>& input, const std::vector<fr_t>& aux) const {
  if (input.size() != num_inputs || aux.size() != num_aux)
    throw std::invalid_argument("assignment has " + std::to_string(input.size()) + " inputs and " +
                                std::to_string(aux.size()) + " auxiliaries; the matrices expect " +
                                std::to_string(num_inputs) + " and " + std::to_string(num_aux));
  std::vector<fr_t> z(input);
  z.insert(z.end(), aux.begin(), aux.end());
  for (uint64_t i = 0; i < num_constraints; i++) {
    fr_t a = row_value(A, i, z.data()), b = row_value(B, i, z.data()), c = row_value(C, i, z.data());
    if (a * b != c) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace cuzk::r1cs
