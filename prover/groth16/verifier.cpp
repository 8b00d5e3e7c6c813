#include "prover/groth16/verifier.hpp"

#include <stdexcept>
#include <string>

#include "prover/pairing/pairing.hpp"

namespace cuzk::groth16 {

bool verify(const VerifyingKey& vk, const Proof& proof, std::span<const fr_t> x) {
  if (vk.ic.empty() || x.size() + 1 != vk.ic.size())
    throw std::invalid_argument("the verifying key takes " + std::to_string(vk.ic.empty() ? 0 : vk.ic.size() - 1) +
                                " public inputs, got " + std::to_string(x.size()));
  // Points must be on the curve and in the subgroup; a proof from an untrusted file could be
  // neither, and the pairing equation says nothing sound about such points.
  for (const auto* p : {&proof.a, &proof.c})
    if (!p->is_on_curve() || !p->in_subgroup()) return false;
  if (!proof.b.is_on_curve() || !proof.b.in_subgroup()) return false;
  g1_jacobian_t ic = vk.ic[0].to_jacobian();
  for (size_t i = 0; i < x.size(); ++i) ic = ic + vk.ic[i + 1].to_jacobian().mul(x[i]);
  // e(-A, B) e(alpha, beta) e(IC, gamma) e(C, delta) == 1
  return multi_pairing_is_one({{-proof.a, proof.b},
                               {vk.alpha_g1, vk.beta_g2},
                               {ic.to_affine(), vk.gamma_g2},
                               {proof.c, vk.delta_g2}});
}

}  // namespace cuzk::groth16
