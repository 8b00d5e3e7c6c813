// Sliced synthesis (prover/synth/sliced.hpp): the PoRep circuit's challenges synthesized on
// several threads give the serial synthesis's assignment value for value, the QAP at tau without
// matrices equals the matrices' one, parameters generated that way are the same keys, and a
// circuit that breaks the slicing contract is a clear error, never a wrong assignment.
#include <random>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "harness/suite/porep_job.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/circuits/porep_shape.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/synth/sliced.hpp"
#include "prover/synth/synth.hpp"

using namespace cuzk;

namespace {

template <class A, class B>
bool same_values(const A& a, const B& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// A small circuit with slices: x_i * y_i = z_i per slice over a shared input and a shared aux.
// `fault` breaks the contract in slice 1: 1 an extra auxiliary, 2 an input, 3 naming slice 0's
// variable, 4 one constraint fewer.
struct ToyCircuit {
  uint32_t n = 4;
  int fault = 0;
  struct Shared {
    r1cs::Variable in, k;
  };
  template <class CS>
  Shared synthesize_shared(CS& cs) const {
    using L = typename CS::lc_t;
    Shared s{cs.alloc_input(fr_t::from_u64(3)), cs.alloc(fr_t::from_u64(5))};
    cs.enforce(L(s.in), L(r1cs::Variable::one()), L(s.in));
    return s;
  }
  size_t slices() const { return n; }
  template <class CS>
  void synthesize_slice(CS& cs, const Shared& s, size_t i) const {
    using L = typename CS::lc_t;
    const fr_t x = fr_t::from_u64(7 + i), y = fr_t::from_u64(3);
    const r1cs::Variable vx = cs.alloc(x), vz = cs.alloc(x * y);
    cs.enforce(L(vx), L(s.in), L(vz));
    L sum(vx);
    sum.add(s.k);
    if (i == 1 && fault == 1) (void)cs.alloc(x);
    if (i == 1 && fault == 2) (void)cs.alloc_input(x);
    // Slice 0's first auxiliary sits right after the shared one (aux 1).
    if (i == 1 && fault == 3) sum.add(r1cs::Variable::aux(1));
    if (!(i == 1 && fault == 4)) cs.enforce(sum, L(r1cs::Variable::one()), sum);
  }
  template <class CS>
  void synthesize(CS& cs) const {
    const Shared s = synthesize_shared(cs);
    for (size_t i = 0; i < slices(); ++i) synthesize_slice(cs, s, i);
  }
  r1cs::SizeHint size_hint() const { return {}; }
};

}  // namespace

TEST_CASE("sliced proving assignment: equal to the serial one, value for value, on any number of threads") {
  for (const circuits::PorepParams& p : {circuits::PorepParams{1, 0, 0, 2}, circuits::PorepParams{3, 1, 2, 4},
                                         circuits::PorepParams{4, 2, 3, 5}}) {
    const auto circuit = circuits::PorepCircuit::generate(p, 11);
    const auto serial = synth::prove_assignment(circuit);
    const r1cs::ShapeCounts counts = circuits::porep_shape_by_parts(p);
    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      INFO(p.to_string() << ", " << threads << " thread(s)");
      const auto sliced = synth::prove_assignment_sliced(circuit, counts, threads);
      CHECK(same_values(sliced.a(), serial.a()));
      CHECK(same_values(sliced.b(), serial.b()));
      CHECK(same_values(sliced.c(), serial.c()));
      CHECK(same_values(sliced.input_assignment(), serial.input_assignment()));
      CHECK(same_values(sliced.aux_assignment(), serial.aux_assignment()));
      CHECK(sliced.is_satisfied());
    }
  }
}

TEST_CASE("sliced QAP at tau: equal to the matrices' evaluation, so the keys are the same keys") {
  const circuits::PorepParams p{3, 1, 2, 4};
  const auto circuit = circuits::PorepCircuit::generate(p, 5);
  const r1cs::ShapeCounts counts = circuits::porep_shape_by_parts(p);
  const auto m = synth::record_matrices(circuit);
  const groth16::ToxicWaste tw = groth16::ToxicWaste::from_seed(9);
  const std::vector<fr_t> lag = groth16::lagrange_at_tau(tw.tau, counts.constraints, nullptr);
  const groth16::QapAtTau want = groth16::qap_at_tau(m, lag);
  for (unsigned threads : {1u, 3u}) {
    INFO(threads << " thread(s)");
    auto got = groth16::QapAtTau::zeros(counts.inputs, counts.aux, counts.constraints);
    synth::evaluate_qap_sliced(circuit, counts, synth::QapColumns{got.u.data(), got.v.data(), got.w.data(), lag.data(), counts.inputs},
                               threads);
    CHECK(got.u == want.u);
    CHECK(got.v == want.v);
    CHECK(got.w == want.w);
  }
  // The harness's key generation goes the sliced way; the keys are those of the matrices (on a
  // circuit of a few thousand constraints: the fixed-base multiplications are the slow part).
  const auto small = circuits::PorepCircuit::generate(circuits::PorepParams{2, 0, 0, 3}, 5);
  const auto sliced_keys = generate_porep_keys(small, 9, "cpu", nullptr);
  const auto matrix_keys = groth16::generate_keys(synth::record_matrices(small), uint64_t(9));
  CHECK(sliced_keys.same_keys(matrix_keys));
  CHECK(sliced_keys.seed == matrix_keys.seed);
}

TEST_CASE("sliced synthesis: a circuit that breaks the contract is a clear error") {
  const ToyCircuit good{};
  const r1cs::ShapeCounts counts = synth::count_shape(good);
  const auto serial = synth::prove_assignment(good);
  const auto sliced = synth::prove_assignment_sliced(good, counts, 3);
  CHECK(same_values(sliced.a(), serial.a()));
  CHECK(same_values(sliced.aux_assignment(), serial.aux_assignment()));
  CHECK(sliced.is_satisfied());

  std::vector<fr_t> u(counts.inputs + counts.aux), v(u), w(u), lag(counts.constraints, fr_t::one());
  const synth::QapColumns q{u.data(), v.data(), w.data(), lag.data(), counts.inputs};
  struct Case {
    int fault;
    const char* says;
  };
  for (const Case& c : {Case{1, "more auxiliary variables than its place"}, Case{2, "a slice allocated an input"},
                        Case{4, "slice 1 filled 1 of its 2 constraints"}}) {
    INFO(c.fault);
    const ToyCircuit bad{4, c.fault};
    CHECK_THROWS_WITH(synth::prove_assignment_sliced(bad, counts, 2), Catch::Contains(c.says));
    CHECK_THROWS_WITH(synth::evaluate_qap_sliced(bad, counts, q, 2), Catch::Contains(c.says));
  }
  // Naming another slice's variable: the QAP pass checks every variable.
  CHECK_THROWS_WITH(synth::evaluate_qap_sliced(ToyCircuit{4, 3}, counts, q, 2),
                    Catch::Contains("names variable 3, which belongs to another slice"));
  // Counts that do not split into equal slices.
  r1cs::ShapeCounts odd = counts;
  odd.aux += 1;
  CHECK_THROWS_WITH(synth::prove_assignment_sliced(good, odd, 2), Catch::Contains("do not split into 4 equal slices"));
}
