// The synthetic partition of prover/circuits/synthetic_partition.hpp (bench_gpu and the suites'
// "stage" kind): the key's and the witness's shapes, points repeated from a table, the value
// mix of the assignment, a CPU proof that runs (it cannot verify: the key is random), and the
// arguments it refuses.
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "prover/circuits/synthetic_partition.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/prover.hpp"

using namespace cuzk;
using circuits::make_synthetic_partition;

namespace {

// The message of the std::invalid_argument that make_synthetic_partition throws ("" if none).
std::string refusal(unsigned log_n, unsigned table_log) {
  try {
    (void)make_synthetic_partition(log_n, table_log);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the key and the witness have a partition's shape") {
  for (unsigned log_n : {6u, 8u}) {
    INFO("log_n " << log_n);
    const auto s = make_synthetic_partition(log_n);
    const size_t n = size_t(1) << log_n;
    const auto& pk = s->pk;
    CHECK(s->log_n == log_n);
    CHECK(s->table_log == log_n);  // 0 asks for distinct points
    CHECK(s->distinct_points());
    CHECK(pk.convention == groth16::HConvention::kBellman);
    CHECK(pk.num_inputs == 2);
    CHECK(pk.num_aux == n - 2);
    CHECK(pk.num_constraints == n);
    CHECK(pk.domain_size == n);
    CHECK(pk.h_query.size() == n - 1);
    CHECK(pk.a_query.size() == n);
    CHECK(pk.b_g1_query.size() == n);
    CHECK(pk.b_g2_query.size() == n);
    CHECK(pk.l_query.size() == n - 2);
    // The four G1 queries share one host array.
    CHECK(pk.a_query.data() == pk.h_query.data());
    CHECK(pk.b_g1_query.data() == pk.h_query.data());
    CHECK(pk.l_query.data() == pk.h_query.data());
    const groth16::Witness w = s->witness();
    CHECK(w.a.size() == n);
    CHECK(w.b.size() == n);
    CHECK(w.c.size() == n);
    REQUIRE(w.input.size() == 2);
    CHECK(w.input[0] == fr_t::one());
    CHECK(w.input[1] == fr_t::from_u64(5));
    CHECK(w.aux.size() == n - 2);
    CHECK_NOTHROW(groth16::check_witness_shape(pk, w));
  }
}

TEST_CASE("the points are the library's random points: distinct, or repeated from a table") {
  const unsigned log_n = 8, table_log = 3;
  const size_t n = size_t(1) << log_n, t = size_t(1) << table_log;
  const auto distinct = make_synthetic_partition(log_n, log_n);
  const auto g1 = circuits::random_g1_points(n, 1);
  const auto g2 = circuits::random_g2_points(n, 9);
  bool same = true, all_distinct = true;
  for (size_t i = 0; i < n; ++i) {
    same &= distinct->pk.a_query[i] == g1[i] && distinct->pk.b_g2_query[i] == g2[i];
    for (size_t j = 0; j < i; ++j) all_distinct &= !(g1[i] == g1[j]);
  }
  CHECK(same);
  CHECK(all_distinct);

  const auto rep = make_synthetic_partition(log_n, table_log);
  CHECK(rep->table_log == table_log);
  CHECK(!rep->distinct_points());
  bool repeats = true, table_is_prefix = true;
  for (size_t i = 0; i + t < n; ++i)
    repeats &= rep->pk.a_query[i] == rep->pk.a_query[i + t] && rep->pk.b_g2_query[i] == rep->pk.b_g2_query[i + t];
  for (size_t i = 0; i < t; ++i)  // the table: the distinct set's first 2^table_log points
    table_is_prefix &= rep->pk.a_query[i] == g1[i] && rep->pk.b_g2_query[i] == g2[i];
  CHECK(repeats);
  CHECK(table_is_prefix);
  CHECK(!(rep->pk.a_query[0] == rep->pk.a_query[1]));
  // Same seeds, same scalars: only the points differ between the two.
  CHECK(rep->a == distinct->a);
  CHECK(rep->aux == distinct->aux);
}

TEST_CASE("repeat_points repeats a table of a power-of-two size, to any length") {
  const auto table = circuits::random_g1_points(4, 3);
  const auto out = circuits::repeat_points(table, 11);  // not a multiple of the table
  REQUIRE(out.size() == 11);
  bool repeats = true;
  for (size_t i = 0; i < out.size(); ++i) repeats &= out[i] == table[i % 4];
  CHECK(repeats);
  const auto g2 = circuits::random_g2_points(2, 5);
  CHECK(circuits::repeat_points(g2, 3)[2] == g2[0]);
  const std::vector<g1_affine_t> three(table.begin(), table.begin() + 3);
  CHECK_THROWS_AS(circuits::repeat_points(three, 8), std::invalid_argument);
  CHECK_THROWS_WITH(circuits::repeat_points(std::span<const g1_affine_t>(), 8), Catch::Matchers::Contains("0 points"));
}

TEST_CASE("the assignment has the PoRep value mix") {
  const circuits::ValueMix mix = circuits::porep_value_mix();
  CHECK(mix.zero > 0);
  CHECK(mix.one > 0);
  CHECK(mix.zero + mix.one <= 1);
  CHECK(circuits::describe_porep_value_mix().find("assignment value mix of PoRep") == 0);
  const auto s = make_synthetic_partition(14);
  size_t zero = 0, one = 0;
  for (const fr_t& v : s->aux) {
    zero += v.is_zero();
    one += v.is_one();
  }
  const double all = double(s->aux.size());
  // 16382 draws: a share's standard deviation is at most 0.004.
  CHECK(double(zero) / all == Approx(mix.zero).margin(0.02));
  CHECK(double(one) / all == Approx(mix.one).margin(0.02));
}

TEST_CASE("the CPU backend proves a synthetic partition, deterministically") {
  for (unsigned table_log : {0u, 4u}) {
    INFO("table_log " << table_log);
    const auto s = make_synthetic_partition(8, table_log);
    auto cpu = groth16::make_backend("cpu");
    const auto rs = groth16::Randomness::from_seed(1);
    groth16::Proof p1, p2;
    REQUIRE_NOTHROW(p1 = cpu->prove(s->pk, s->witness(), rs));  // it would not verify: the key is random
    REQUIRE_NOTHROW(p2 = cpu->prove(s->pk, s->witness(), rs));
    CHECK(p1 == p2);
  }
  // The smallest: 2 constraints, no auxiliary variable.
  const auto tiny = make_synthetic_partition(1);
  CHECK(tiny->pk.l_query.empty());
  CHECK_NOTHROW(groth16::make_backend("cpu")->prove(tiny->pk, tiny->witness(), groth16::Randomness::from_seed(1)));
}

TEST_CASE("bad arguments are refused with a message naming the value") {
  CHECK(refusal(0, 0).find("log_n = 0 is out of range [1, 27]") != std::string::npos);
  CHECK(refusal(28, 20).find("log_n = 28 is out of range [1, 27]") != std::string::npos);
  CHECK(refusal(8, 9).find("table_log = 9 exceeds log_n = 8") != std::string::npos);
  CHECK(refusal(8, 8).empty());
}
