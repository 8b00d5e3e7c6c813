// Groth16 on the CPU: generated keys, proofs of the PoRep-shaped circuit, verification, and
// rejection of altered proofs and inputs.
#include <random>

#include "catch.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/ntt/ntt.hpp"
#include "prover/synth/synth.hpp"

using namespace cuzk;
using namespace cuzk::groth16;

namespace {

struct Fixture {
  circuits::PorepCircuit circuit;
  ProvingKey pk;
  r1cs::ProvingAssignment<> pa;
  std::vector<fr_t> public_inputs;

  explicit Fixture(const circuits::PorepParams& params, uint64_t seed)
      : circuit(circuits::PorepCircuit::generate(params, seed)),
        pk(generate_keys(synth::record_matrices(circuit), seed)),
        pa(synth::prove_assignment(circuit)),
        public_inputs(circuit.public_inputs()) {}

  Witness witness() const {
    return Witness{pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()};
  }
};

const Fixture& small() {
  static Fixture f(circuits::PorepParams{2, 0, 0, 3}, 7);
  return f;
}

}  // namespace

TEST_CASE("a proof of the PoRep-shaped circuit verifies") {
  const Fixture& f = small();
  REQUIRE(f.pa.is_satisfied());
  const uint64_t seed = std::random_device{}();
  INFO("randomness seed " << seed);
  Proof p = prove_cpu(f.pk, f.witness(), Randomness::from_seed(seed));
  REQUIRE(verify(f.pk.vk, p, f.public_inputs));
}

TEST_CASE("a proof with any element altered does not verify") {
  const Fixture& f = small();
  Proof p = prove_cpu(f.pk, f.witness(), Randomness::from_seed(1));
  REQUIRE(verify(f.pk.vk, p, f.public_inputs));
  const g1_jacobian_t g1 = g1_generator().to_jacobian();
  const g2_jacobian_t g2 = g2_generator().to_jacobian();
  Proof bad = p;
  bad.a = (p.a.to_jacobian() + g1).to_affine();
  CHECK_FALSE(verify(f.pk.vk, bad, f.public_inputs));
  bad = p;
  bad.b = (p.b.to_jacobian() + g2).to_affine();
  CHECK_FALSE(verify(f.pk.vk, bad, f.public_inputs));
  bad = p;
  bad.c = (p.c.to_jacobian() + g1).to_affine();
  CHECK_FALSE(verify(f.pk.vk, bad, f.public_inputs));
  bad = p;
  bad.a = p.c;  // swapped elements
  bad.c = p.a;
  CHECK_FALSE(verify(f.pk.vk, bad, f.public_inputs));
  bad = p;
  bad.a = g1_affine_t::from_xy(p.a.x, p.a.y + fp_t::one());  // off the curve
  CHECK_FALSE(verify(f.pk.vk, bad, f.public_inputs));
}

TEST_CASE("a proof does not verify against a different public input") {
  const Fixture& f = small();
  Proof p = prove_cpu(f.pk, f.witness(), Randomness::from_seed(2));
  for (size_t i = 0; i < f.public_inputs.size(); ++i) {
    auto x = f.public_inputs;
    x[i] += fr_t::one();
    INFO("public input " << i);
    CHECK_FALSE(verify(f.pk.vk, p, x));
  }
  auto shorter = f.public_inputs;
  shorter.pop_back();
  REQUIRE_THROWS_AS(verify(f.pk.vk, p, shorter), std::invalid_argument);
}

TEST_CASE("an unsatisfying witness gives a proof that does not verify") {
  const Fixture& f = small();
  auto pa = f.pa;
  pa.mutable_a()[pa.num_constraints() / 2] += fr_t::one();
  Witness w{pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()};
  Proof p = prove_cpu(f.pk, w, Randomness::from_seed(3));
  REQUIRE_FALSE(verify(f.pk.vk, p, f.public_inputs));
}

TEST_CASE("proving is deterministic for fixed r, s and key generation for a fixed seed") {
  const Fixture& f = small();
  REQUIRE(prove_cpu(f.pk, f.witness(), Randomness::from_seed(5)) ==
          prove_cpu(f.pk, f.witness(), Randomness::from_seed(5)));
  REQUIRE_FALSE(prove_cpu(f.pk, f.witness(), Randomness::from_seed(5)) ==
                prove_cpu(f.pk, f.witness(), Randomness::from_seed(6)));
  ProvingKey again = generate_keys(synth::record_matrices(f.circuit), 7);
  REQUIRE(again.vk.alpha_g1 == f.pk.vk.alpha_g1);
  REQUIRE(again.h_query.back() == f.pk.h_query.back());
}

TEST_CASE("H is the quotient: H(x) Z(x) == A(x) B(x) - C(x) at a random point") {
  const Fixture& f = small();
  const size_t n = f.pk.domain_size;
  auto h = compute_h(HConvention::kBellman, f.witness(), n);
  REQUIRE(h.size() == n - 1);  // deg H <= n - 2: compute_h drops only the top (zero) coefficient
  // A, B, C in coefficient form from their evaluations on the domain.
  Domain dom = Domain::at_least(n);
  auto coeffs = [&](std::span<const fr_t> evals) {
    std::vector<fr_t> v(n, fr_t::zero());
    std::copy(evals.begin(), evals.end(), v.begin());
    dom.inverse(v);
    return v;
  };
  auto eval = [](const std::vector<fr_t>& c, const fr_t& x) {
    fr_t acc = fr_t::zero();
    for (size_t i = c.size(); i-- > 0;) acc = acc * x + c[i];
    return acc;
  };
  const uint64_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  const fr_t x = fr_t::random(g);
  const fr_t lhs = eval(h, x) * (x.pow(uint64_t(n)) - fr_t::one());
  const fr_t rhs = eval(coeffs(f.pa.a()), x) * eval(coeffs(f.pa.b()), x) - eval(coeffs(f.pa.c()), x);
  REQUIRE(lhs == rhs);
}

TEST_CASE("a witness of the wrong shape is refused with a clear error") {
  const Fixture& f = small();
  auto aux = f.pa.aux_assignment();
  aux.pop_back();
  Witness w{f.pa.a(), f.pa.b(), f.pa.c(), f.pa.input_assignment(), aux};
  REQUIRE_THROWS_WITH(prove_cpu(f.pk, w, Randomness::from_seed(1)),
                      Catch::Matchers::Contains("auxiliary"));
}

TEST_CASE("secure randomness gives distinct non-zero r and s") {
  auto a = Randomness::secure(), b = Randomness::secure();
  REQUIRE_FALSE(a.r.is_zero());
  REQUIRE(a.r != b.r);
  REQUIRE(a.s != b.s);
}

namespace {

// A stand-in device: sums the table's points for each scalar's digits on the host, the
// definition the device kernels follow, and counts what it was given.
class TableDevice final : public FixedBaseDevice {
 public:
  explicit TableDevice(bool g2) : g2_(g2) {}
  std::string describe() const override { return "table stand-in"; }
  std::vector<g1_affine_t> g1(std::span<const g1_affine_t> t, std::span<const fr_t> s) override {
    g1_points += s.size();
    return sum(t, s);
  }
  bool has_g2() const override { return g2_; }
  std::vector<g2_affine_t> g2(std::span<const g2_affine_t> t, std::span<const fr_t> s) override {
    g2_points += s.size();
    return sum(t, s);
  }
  size_t g1_points = 0, g2_points = 0;

 private:
  template <class Affine>
  static std::vector<Affine> sum(std::span<const Affine> t, std::span<const fr_t> s) {
    REQUIRE(t.size() == size_t(kFixedBaseWindows) * kFixedBaseDigits);
    std::vector<Affine> out;
    for (const fr_t& x : s) {
      uint64_t l[4];
      x.to_canonical(l);
      auto acc = decltype(t[0].to_jacobian())::infinity();
      for (unsigned i = 0; i < kFixedBaseWindows; ++i)
        if (unsigned d = unsigned(l[i / 8] >> (8 * (i % 8))) & 0xff) acc = acc + t[i * kFixedBaseDigits + d - 1];
      out.push_back(acc.to_affine());
    }
    return out;
  }
  bool g2_;
};

}  // namespace

TEST_CASE("the fixed-base table holds d * 2^(8 i) * G") {
  const auto t1 = fixed_base_table(g1_generator());
  const auto t2 = fixed_base_table(g2_generator());
  REQUIRE(t1.size() == size_t(kFixedBaseWindows) * kFixedBaseDigits);
  for (auto [i, d] : {std::pair{0u, 1u}, {0u, 255u}, {1u, 1u}, {7u, 93u}, {31u, 255u}}) {
    INFO("window " << i << ", digit " << d);
    fr_t k = fr_t::from_u64(d);
    for (unsigned j = 0; j < i; ++j) k *= fr_t::from_u64(256);
    CHECK(t1[i * kFixedBaseDigits + d - 1] == g1_generator().to_jacobian().mul(k).to_affine());
    CHECK(t2[i * kFixedBaseDigits + d - 1] == g2_generator().to_jacobian().mul(k).to_affine());
  }
}

TEST_CASE("key generation hands its fixed-base multiplications to a device, and the keys are the same") {
  const Fixture& f = small();
  const auto m = synth::record_matrices(f.circuit);
  const size_t vars = f.pk.num_inputs + f.pk.num_aux;
  SECTION("G1 and G2 on the device") {
    TableDevice dev(true);
    CHECK(generate_keys(m, 7, KeygenOptions{nullptr, &dev}).same_keys(f.pk));
    // ic and l (one point per variable), a, b_g1, h on G1; b_g2 on G2.
    CHECK(dev.g1_points == vars + vars + vars + (f.pk.domain_size - 1));
    CHECK(dev.g2_points == vars);
  }
  SECTION("G2 on CPU threads where the device has no G2 kernel") {
    TableDevice dev(false);
    CHECK(generate_keys(m, 7, KeygenOptions{nullptr, &dev}).same_keys(f.pk));
    CHECK(dev.g2_points == 0);
  }
}

TEST_CASE("a backend without a fixed-base device leaves key generation on CPU threads") {
  CHECK(make_fixed_base_device("cpu") == nullptr);
  register_fixed_base_device("stand-in", [] { return std::make_unique<TableDevice>(true); });
  auto dev = make_fixed_base_device("stand-in");
  REQUIRE(dev);
  CHECK(dev->describe() == "table stand-in");
}
