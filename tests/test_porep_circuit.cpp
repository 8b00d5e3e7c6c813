// The PoRep-shaped circuit: satisfied by its generated witness at several sizes, unsatisfied
// when a witness value or public input is altered, exact size hints, and parallel synthesis of
// several partitions with per-partition phases.
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "catch.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/synth/synth.hpp"

using namespace cuzk;
using circuits::PorepCircuit;
using circuits::PorepParams;

TEST_CASE("porep circuit is satisfied by its generated witness at several sizes", "[porep]") {
  const PorepParams sizes[] = {
      {1, 0, 0, 1}, {3, 0, 0, 4}, {2, 0, 5, 7}, {1, 1, 0, 2}, {2, 2, 2, 3}, {1, 3, 1, 1},
  };
  for (const PorepParams& p : sizes) {
    INFO(p.to_string());
    PorepCircuit c = PorepCircuit::generate(p, 42);
    auto pa = synth::prove_assignment<r1cs::BaselinePolicy>(c);
    CHECK(pa.first_unsatisfied() == -1);
    // the public inputs are the circuit's inputs (after "one")
    std::vector<fr_t> pub = c.public_inputs();
    REQUIRE(pa.num_inputs() == pub.size() + 1);
    for (size_t i = 0; i < pub.size(); i++) CHECK(pa.input_assignment()[i + 1] == pub[i]);
    // the size hint is exact
    r1cs::SizeHint h = c.size_hint();
    CHECK(h.constraints == pa.num_constraints());
    CHECK(h.inputs == pa.num_inputs());
    CHECK(h.aux == pa.num_aux());
  }
}

TEST_CASE("porep native labels chain layers and label bits match the witness", "[porep]") {
  PorepCircuit c = PorepCircuit::generate({1, 3, 2, 2}, 9);
  const auto& ch = c.witness().challenges[0];
  REQUIRE(ch.labels.size() == 3);
  // parent 0 of layer 2 is layer 1's label
  fr_t p;
  REQUIRE(fr_t::from_bytes_le(ch.parents[2 * 1 + 0].data(), p));
  CHECK(p == ch.labels[0]);
  std::vector<circuits::Sha256Digest> ps(ch.parents.begin() + 2, ch.parents.begin() + 4);
  CHECK(circuits::fr_from_truncated_digest(circuits::porep_label_native(c.witness().replica_id, 2, ch.index, ps)) ==
        ch.labels[1]);
}

TEST_CASE("porep circuit is unsatisfied when any one of several witness values is altered", "[porep]") {
  for (const PorepParams& p : {PorepParams{2, 0, 0, 4}, PorepParams{1, 1, 1, 2}}) {
    INFO(p.to_string());
    PorepCircuit c = PorepCircuit::generate(p, 7);
    auto pa = synth::prove_assignment<r1cs::BaselinePolicy>(c);
    r1cs::R1csMatrices m = synth::record_matrices<r1cs::VectorTerms>(c);
    REQUIRE(m.is_satisfied(pa.input_assignment(), pa.aux_assignment()));
    std::mt19937_64 g(123);
    for (int k = 0; k < 12; k++) {
      std::vector<fr_t> aux = pa.aux_assignment();
      const size_t i = g() % aux.size();
      aux[i] = aux[i] + fr_t::random(g);
      INFO("aux " << i);
      CHECK_FALSE(m.is_satisfied(pa.input_assignment(), aux));
    }
    for (size_t i = 1; i < pa.num_inputs(); i++) {
      std::vector<fr_t> in = pa.input_assignment();
      in[i] += fr_t::one();
      INFO("input " << i);
      CHECK_FALSE(m.is_satisfied(in, pa.aux_assignment()));
    }
  }
}

TEST_CASE("porep circuit from a tampered witness is not satisfied", "[porep]") {
  PorepCircuit c = PorepCircuit::generate({2, 1, 2, 3}, 5);
  SECTION("a parent label") { c.mutable_witness().challenges[1].parents[1][3] ^= 1; }
  SECTION("a Poseidon sibling") { c.mutable_witness().challenges[0].comm_r_last_path[1] += fr_t::one(); }
  SECTION("a SHA-256 sibling") { c.mutable_witness().challenges[0].comm_d_path[2][0] ^= 0x80; }
  SECTION("the data node") { c.mutable_witness().challenges[1].data += fr_t::one(); }
  SECTION("comm_c") { c.mutable_witness().comm_c += fr_t::one(); }
  auto pa = synth::prove_assignment<r1cs::BaselinePolicy>(c);
  CHECK_FALSE(pa.is_satisfied());
}

TEST_CASE("porep parameters are validated with messages that name the value", "[porep]") {
  CHECK(PorepParams{0, 1, 1, 4}.validate().find("--challenges 0") != std::string::npos);
  CHECK(PorepParams{5, 1, 1, 2}.validate().find("exceeds") != std::string::npos);
  CHECK(PorepParams{1, 1, 1, 0}.validate().find("--depth 0") != std::string::npos);
  CHECK(PorepParams{1, 1, 1, 41}.validate().find("--depth 41") != std::string::npos);
  CHECK(PorepParams{1, 65, 1, 4}.validate().find("--layers 65") != std::string::npos);
  CHECK(PorepParams{1, 1, 65, 4}.validate().find("--parents 65") != std::string::npos);
  CHECK(PorepParams{4, 1, 1, 2}.validate().empty());
  CHECK_THROWS_AS(PorepCircuit::generate({0, 1, 1, 4}, 1), std::invalid_argument);
}

namespace {
struct PathSink : instr::PhaseSink {
  std::mutex mu;
  std::set<std::string> paths;
  void* begin(const std::string& path) override {
    std::lock_guard<std::mutex> l(mu);
    paths.insert(path);
    return nullptr;
  }
  void end(void*) override {}
  void gpu_time(const std::string&, uint64_t) override {}
};
}  // namespace

TEST_CASE("partitions synthesize in parallel under proof/synth/partition_<i>", "[porep][synth]") {
  std::vector<PorepCircuit> parts;
  for (uint64_t i = 0; i < 4; i++) parts.push_back(PorepCircuit::generate({2, 0, 0, 5}, 100 + i));
  PathSink sink;
  instr::set_sink(&sink);
  std::vector<r1cs::ProvingAssignment<r1cs::DefaultPolicy>> out;
  {
    instr::Phase proof("proof");
    out = synth::synthesize_partitions(parts);
  }
  instr::set_sink(nullptr);
  REQUIRE(out.size() == 4);
  for (size_t i = 0; i < 4; i++) {
    CHECK(out[i].is_satisfied());
    CHECK(sink.paths.count("proof/synth/partition_" + std::to_string(i)) == 1);
    // same result as a sequential synthesis of that partition
    auto seq = synth::prove_assignment<r1cs::DefaultPolicy>(parts[i]);
    CHECK(seq.c() == out[i].c());
  }
  CHECK(sink.paths.count("proof/synth") == 1);
}
