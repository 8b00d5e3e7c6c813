// NTT over Fr: round trips and agreement with naive polynomial evaluation.
#include <random>
#include <vector>

#include "catch.hpp"
#include "prover/ntt/ntt.hpp"
#include "prover/util/thread_pool.hpp"

using cuzk::Domain;
using cuzk::fr_t;

static fr_t eval_naive(const std::vector<fr_t>& coeffs, const fr_t& x) {
  fr_t acc = fr_t::zero();
  for (size_t i = coeffs.size(); i-- > 0;) acc = acc * x + coeffs[i];
  return acc;
}

static std::vector<fr_t> random_vec(size_t n, std::mt19937_64& g) {
  std::vector<fr_t> v(n);
  for (auto& x : v) x = fr_t::random(g);
  return v;
}

TEST_CASE("forward NTT equals naive evaluation at the powers of omega") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  for (unsigned k : {0u, 1u, 2u, 3u, 5u, 7u}) {
    Domain d(k);
    auto coeffs = random_vec(d.size(), g);
    auto evals = coeffs;
    d.forward(evals);
    fr_t x = fr_t::one();
    for (size_t i = 0; i < d.size(); ++i) {
      INFO("log n " << k << " index " << i);
      REQUIRE(evals[i] == eval_naive(coeffs, x));
      x *= d.omega();
    }
  }
}

TEST_CASE("coset NTT equals naive evaluation on g * omega^i") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  Domain d(6);
  const fr_t gen = Domain::coset_generator();
  auto coeffs = random_vec(d.size(), g);
  auto evals = coeffs;
  d.coset_forward(evals, gen);
  fr_t x = gen;
  for (size_t i = 0; i < d.size(); ++i) {
    REQUIRE(evals[i] == eval_naive(coeffs, x));
    x *= d.omega();
  }
  d.coset_inverse(evals, gen);
  REQUIRE(evals == coeffs);
}

TEST_CASE("inverse(forward(a)) == a, single- and multi-threaded, above the parallel threshold") {
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  cuzk::ThreadPool one(1), two(2);
  for (unsigned k : {4u, 12u, 14u}) {
    Domain d(k);
    auto a = random_vec(d.size(), g);
    auto b = a, c = a;
    d.forward(b, &one);
    d.forward(c, &two);
    REQUIRE(b == c);
    d.inverse(c, &two);
    REQUIRE(c == a);
  }
}

TEST_CASE("omega has exact order n and Z vanishes on the domain, not on the coset") {
  Domain d(10);
  REQUIRE(d.omega().pow(uint64_t(d.size())) == fr_t::one());
  REQUIRE(d.omega().pow(uint64_t(d.size() / 2)) != fr_t::one());
  REQUIRE(d.vanishing_on_coset(fr_t::one()) == fr_t::zero());
  REQUIRE(d.vanishing_on_coset(Domain::coset_generator()) != fr_t::zero());
}

TEST_CASE("domain sizing and bad input") {
  REQUIRE(Domain::at_least(1).size() == 1);
  REQUIRE(Domain::at_least(5).size() == 8);
  REQUIRE(Domain::at_least(1024).size() == 1024);
  REQUIRE_THROWS(Domain(33));
  Domain d(3);
  std::vector<fr_t> wrong(7, fr_t::one());
  REQUIRE_THROWS(d.forward(wrong));
}
