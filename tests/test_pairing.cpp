// Optimal ate pairing: a published known answer, bilinearity, non-degeneracy, identity
// handling, the final exponentiation's pieces, and multi-pairing products (true and false).
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "prover/ec/serialize.hpp"
#include "prover/pairing/pairing.hpp"

using namespace cuzk;

namespace {

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

// The 12 Fp coefficients, order c0.c0.c0, c0.c0.c1, c0.c1.c0, ..., c1.c2.c1, big-endian hex.
std::vector<std::string> coeffs_hex(const fp12_t& f) {
  std::vector<std::string> out;
  for (const fp6_t* c6 : {&f.c0, &f.c1})
    for (const fp2_t* c2 : {&c6->c0, &c6->c1, &c6->c2})
      for (const fp_t* c : {&c2->c0, &c2->c1}) {
        uint8_t b[48];
        c->to_bytes_be(b);
        out.push_back(to_hex(b, 48));
      }
  return out;
}

fp12_t gt_pow(const fp12_t& f, const fr_t& e) {
  uint64_t k[4];
  e.to_canonical(k);
  return f.pow(k, 4);
}

g1_affine_t g1_mul(const fr_t& a) { return g1_jacobian_t::from_affine(g1_generator()).mul(a).to_affine(); }
g2_affine_t g2_mul(const fr_t& a) { return g2_jacobian_t::from_affine(g2_generator()).mul(a).to_affine(); }

}  // namespace

TEST_CASE("known answer: e(G1, G2) equals the published GT generator", "[pairing]") {
  // zkcrypto/bls12_381 src/pairings.rs (Gt::generator, "e(G1, G2)"); the same 12 values come out
  // of @noble/curves 1.9.7: bls12_381.pairing(G1.ProjectivePoint.BASE, G2.ProjectivePoint.BASE).
  const char* expected[12] = {
      "1250ebd871fc0a92a7b2d83168d0d727272d441befa15c503dd8e90ce98db3e7b6d194f60839c508a84305aaca1789b6",
      "089a1c5b46e5110b86750ec6a532348868a84045483c92b7af5af689452eafabf1a8943e50439f1d59882a98eaa0170f",
      "1368bb445c7c2d209703f239689ce34c0378a68e72a6b3b216da0e22a5031b54ddff57309396b38c881c4c849ec23e87",
      "193502b86edb8857c273fa075a50512937e0794e1e65a7617c90d8bd66065b1fffe51d7a579973b1315021ec3c19934f",
      "01b2f522473d171391125ba84dc4007cfbf2f8da752f7c74185203fcca589ac719c34dffbbaad8431dad1c1fb597aaa5",
      "018107154f25a764bd3c79937a45b84546da634b8f6be14a8061e55cceba478b23f7dacaa35c8ca78beae9624045b4b6",
      "19f26337d205fb469cd6bd15c3d5a04dc88784fbb3d0b2dbdea54d43b2b73f2cbb12d58386a8703e0f948226e47ee89d",
      "06fba23eb7c5af0d9f80940ca771b6ffd5857baaf222eb95a7d2809d61bfe02e1bfd1b68ff02f0b8102ae1c2d5d5ab1a",
      "11b8b424cd48bf38fcef68083b0b0ec5c81a93b330ee1a677d0d15ff7b984e8978ef48881e32fac91b93b47333e2ba57",
      "03350f55a7aefcd3c31b4fcb6ce5771cc6a0e9786ab5973320c806ad360829107ba810c5a09ffdd9be2291a0c25a99a2",
      "04c581234d086a9902249b64728ffd21a189e87935a954051c7cdba7b3872629a4fafc05066245cb9108f0242d0fe3ef",
      "0f41e58663bf08cf068672cbd01a7ec73baca4d72ca93544deff686bfd6df543d48eaa24afe47e1efde449383b676631",
  };
  auto got = coeffs_hex(pairing(g1_generator(), g2_generator()));
  for (int i = 0; i < 12; i++) {
    INFO("coefficient " << i);
    REQUIRE(got[i] == expected[i]);
  }
}

TEST_CASE("non-degeneracy and order: e(G1, G2) != 1, e(G1, G2)^r == 1", "[pairing]") {
  fp12_t e = pairing(g1_generator(), g2_generator());
  REQUIRE(!e.is_one());
  REQUIRE(e.pow(bls12_381_r_limbs, 4).is_one());
}

TEST_CASE("the point at infinity pairs to 1", "[pairing]") {
  REQUIRE(pairing(g1_affine_t::infinity(), g2_generator()).is_one());
  REQUIRE(pairing(g1_generator(), g2_affine_t::infinity()).is_one());
  REQUIRE(multi_pairing_is_one({{g1_affine_t::infinity(), g2_generator()}}));
}

TEST_CASE("bilinearity", "[pairing]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  fr_t a = fr_t::random(rng), b = fr_t::random(rng);
  g1_affine_t P = g1_mul(fr_t::random(rng));
  g2_affine_t Q = g2_mul(fr_t::random(rng));
  g1_affine_t aP = g1_jacobian_t::from_affine(P).mul(a).to_affine();
  g2_affine_t bQ = g2_jacobian_t::from_affine(Q).mul(b).to_affine();
  g2_affine_t aQ = g2_jacobian_t::from_affine(Q).mul(a).to_affine();
  fp12_t e = pairing(P, Q);
  SECTION("e(aP, bQ) == e(P, Q)^(ab)") { REQUIRE(pairing(aP, bQ) == gt_pow(e, a * b)); }
  SECTION("e(aP, Q) == e(P, aQ)") { REQUIRE(pairing(aP, Q) == pairing(P, aQ)); }
  SECTION("e(P1 + P2, Q) == e(P1, Q) e(P2, Q) and e(-P, Q) == e(P, Q)^-1") {
    g1_affine_t P2 = g1_mul(fr_t::random(rng));
    g1_affine_t S = (g1_jacobian_t::from_affine(P) + P2).to_affine();
    REQUIRE(pairing(S, Q) == e * pairing(P2, Q));
    REQUIRE(pairing(-P, Q) == e.inv());
    REQUIRE(pairing(-P, Q) == e.conjugate());  // unitary: inverse is the conjugate
  }
  SECTION("miller_loop then final_exponentiation, plain and prepared, equals pairing") {
    REQUIRE(final_exponentiation(miller_loop(P, Q)) == e);
    g2_prepared_t qp = g2_prepare(Q);
    REQUIRE(final_exponentiation(miller_loop(P, qp)) == e);
    // one final exponentiation of a product of Miller loops
    g2_prepared_t bqp = g2_prepare(bQ);
    fp12_t ml = multi_miller_loop({{P, &qp}, {aP, &bqp}});
    REQUIRE(final_exponentiation(ml) == e * pairing(aP, bQ));
  }
}

TEST_CASE("final exponentiation pieces", "[pairing]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  fp12_t f = fp12_t::random(rng);
  fp12_t g = final_exponentiation(f);
  SECTION("the result lies in GT: g^r == 1") { REQUIRE(g.pow(bls12_381_r_limbs, 4).is_one()); }
  SECTION("cyclotomic exponentiation by x matches the generic power (x < 0)") {
    fp12_t expect = g.pow(bls12_381_x_abs).conjugate();
    REQUIRE(cyclotomic_exp_by_x(g) == expect);
  }
  SECTION("a multiplicatively homomorphic map: FE(f h) == FE(f) FE(h)") {
    fp12_t h = fp12_t::random(rng);
    REQUIRE(final_exponentiation(f * h) == g * final_exponentiation(h));
  }
}

TEST_CASE("multi_pairing_is_one: constructed true and false products", "[pairing]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  fr_t a = fr_t::random(rng), b = fr_t::random(rng);
  SECTION("e(aG1, bG2) e(-(ab)G1, G2) == 1, and not with ab + 1") {
    REQUIRE(multi_pairing_is_one({{g1_mul(a), g2_mul(b)}, {-g1_mul(a * b), g2_generator()}}));
    REQUIRE(!multi_pairing_is_one(
        {{g1_mul(a), g2_mul(b)}, {-g1_mul(a * b + fr_t::one()), g2_generator()}}));
    REQUIRE(!multi_pairing_is_one({{g1_mul(a), g2_mul(b)}}));
  }
  SECTION("a Groth16-shaped check e(A,B) == e(alpha,beta) e(L,gamma) e(C,delta)") {
    fr_t alpha = fr_t::random(rng), beta = fr_t::random(rng), gamma = fr_t::random(rng),
         delta = fr_t::random(rng), l = fr_t::random(rng), c = fr_t::random(rng);
    // a b = alpha beta + l gamma + c delta
    fr_t bb = (alpha * beta + l * gamma + c * delta) * a.inv();
    g1_affine_t A = g1_mul(a), L = g1_mul(l), C = g1_mul(c), Al = g1_mul(alpha);
    g2_affine_t B = g2_mul(bb), Be = g2_mul(beta), Ga = g2_mul(gamma), De = g2_mul(delta);
    REQUIRE(multi_pairing_is_one({{A, B}, {-Al, Be}, {-L, Ga}, {-C, De}}));
    g2_prepared_t bp = g2_prepare(B), bep = g2_prepare(Be), gp = g2_prepare(Ga), dp = g2_prepare(De);
    REQUIRE(multi_pairing_is_one({{A, &bp}, {-Al, &bep}, {-L, &gp}, {-C, &dp}}));
    // a tampered C fails, with and without preparation
    g1_affine_t C2 = (g1_jacobian_t::from_affine(C) + g1_generator()).to_affine();
    REQUIRE(!multi_pairing_is_one({{A, B}, {-Al, Be}, {-L, Ga}, {-C2, De}}));
    REQUIRE(!multi_pairing_is_one({{A, &bp}, {-Al, &bep}, {-L, &gp}, {-C2, &dp}}));
  }
}
