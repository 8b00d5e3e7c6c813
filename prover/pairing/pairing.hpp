// The optimal ate pairing on BLS12-381 (host): e: G1 x G2 -> GT, GT the order-r subgroup of
// Fp12^*.
//
//   Miller loop over |x| = 0xd201000000010000 (x is negative, so f is conjugated at the end).
//   G2 accumulator T in homogeneous projective coordinates on the M-twist; line functions
//   (Costello-Lange-Naehrig 2010, "Faster pairing computations on curves with high-degree
//   twists", section 4, and Aranha et al. 2010, eprint 2010/526 for the M-type evaluation):
//     doubling  l = (3b'Z^2 - Y^2) + 3X^2 xP w^2 - 2YZ yP w^3
//     addition  l = (th xQ - la yQ) - th xP w^2 + la yP w^3,  th = Y - yQ Z, la = X - xQ Z
//   each one sparse element (slots 0, 1, 4 of Fp12 = Fp6[w], Fp6 = Fp2[v], v = w^2), multiplied
//   into f with fp12_t::mul_by_014. Factors in Fp2 (projective scaling) and the w^3 scaling lie
//   in proper subfields and vanish in the final exponentiation.
//   Final exponentiation: easy part f^((p^6 - 1)(p^2 + 1)), then the hard part as the power
//   3 (p^4 - p^2 + 1)/r = (x - 1)^2 (x + p)(x^2 + p^2 - 1) + 3 with five exponentiations by x
//   (cyclotomic squarings) and Frobenius maps. This is the same power of the "reduced" pairing
//   as zkcrypto/bls12_381 and @noble/curves compute, so GT values agree with theirs bit for bit.
#pragma once
#include <array>
#include <utility>
#include <vector>

#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"
#include "prover/ff/fp12.hpp"

namespace cuzk {

using gt_t = fp12_t;

// G2 point with its Miller-loop line coefficients precomputed (what a verifier keeps for the
// fixed beta, gamma, delta of a verification key). One entry per doubling and per addition:
// {ell_0, ell_x, ell_y}, the line being ell_0 + (ell_x xP) w^2 + (ell_y yP) w^3.
struct g2_prepared_t {
  std::vector<std::array<fp2_t, 3>> coeffs;
  bool inf = true;
};
g2_prepared_t g2_prepare(const g2_affine_t& q);

fp12_t miller_loop(const g1_affine_t& p, const g2_affine_t& q);
fp12_t miller_loop(const g1_affine_t& p, const g2_prepared_t& q);
// Product of Miller loops sharing the squarings of f (one loop over the bits for all pairs).
fp12_t multi_miller_loop(const std::vector<std::pair<g1_affine_t, const g2_prepared_t*>>& terms);
fp12_t final_exponentiation(const fp12_t& f);

fp12_t pairing(const g1_affine_t& p, const g2_affine_t& q);

// prod_i e(P_i, Q_i) == 1, with one final exponentiation. A Groth16 verifier checks
// e(A, B) == e(alpha, beta) e(L, gamma) e(C, delta) as
// multi_pairing_is_one({{A, B}, {-alpha, beta}, {-L, gamma}, {-C, delta}}).
bool multi_pairing_is_one(const std::vector<std::pair<g1_affine_t, g2_affine_t>>& terms);
bool multi_pairing_is_one(const std::vector<std::pair<g1_affine_t, const g2_prepared_t*>>& terms);

// f^x for f in the cyclotomic subgroup (after the easy part), x = -0xd201000000010000.
fp12_t cyclotomic_exp_by_x(const fp12_t& f);

}  // namespace cuzk
