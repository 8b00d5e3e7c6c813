// Synthesis drivers: one circuit into a constraint system, and N partition circuits in parallel
// over the thread pool (the engine's proof/synth phase).
//
// A circuit is any type with `template <class CS> void synthesize(CS&) const` and
// `r1cs::SizeHint size_hint() const`. synthesize_circuit appends the input constraints
// (input_i * 0 = 0, as bellman/bellperson do), so every pass (proving, shape, matrices) sees the
// same constraint list.
#pragma once
#include <string>
#include <vector>

#include "prover/instr/phase.hpp"
#include "prover/r1cs/proving_assignment.hpp"
#include "prover/r1cs/shape.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk::synth {

template <class Circuit, class CS>
void synthesize_circuit(const Circuit& circuit, CS& cs) {
  circuit.synthesize(cs);
  r1cs::enforce_input_constraints(cs, static_cast<uint32_t>(cs.num_inputs()));
}

// The proving assignment of one circuit (reserved from its size hint under CUZK_PRESIZE).
template <class Policy = r1cs::DefaultPolicy, class Circuit>
r1cs::ProvingAssignment<Policy> prove_assignment(const Circuit& circuit) {
  r1cs::ProvingAssignment<Policy> pa;
  if constexpr (Policy::kPresize) pa.presize(circuit.size_hint());
  synthesize_circuit(circuit, pa);
  return pa;
}

template <class Storage = r1cs::Lc::storage_type, class Circuit>
r1cs::ShapeCounts count_shape(const Circuit& circuit) {
  r1cs::ShapeCounter<Storage> sc;
  synthesize_circuit(circuit, sc);
  return sc.counts();
}

template <class Storage = r1cs::Lc::storage_type, class Circuit>
r1cs::R1csMatrices record_matrices(const Circuit& circuit) {
  r1cs::MatrixRecorder<Storage> mr;
  synthesize_circuit(circuit, mr);
  return mr.finish();
}

// Synthesizes every circuit on the pool, one task per partition. Opens the phase "synth" under
// the caller's current phase and "synth/partition_<i>" on the thread that runs partition i.
template <class Policy = r1cs::DefaultPolicy, class Circuit>
std::vector<r1cs::ProvingAssignment<Policy>> synthesize_partitions(const std::vector<Circuit>& circuits,
                                                                   ThreadPool& pool = ThreadPool::global()) {
  instr::Phase phase("synth");
  const std::string parent = instr::current_path();
  std::vector<r1cs::ProvingAssignment<Policy>> out(circuits.size());
  pool.parallel_for(
      circuits.size(),
      [&](size_t b, size_t e) {
        for (size_t i = b; i < e; i++) {
          instr::Phase p("partition_" + std::to_string(i), parent);
          out[i] = prove_assignment<Policy>(circuits[i]);
        }
      },
      circuits.size());
  return out;
}

}  // namespace cuzk::synth
