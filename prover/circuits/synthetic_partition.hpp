// A synthetic partition for benchmarks of the proving stage: a proving key of random points
// (bench-only: not from a setup, so its proofs cannot verify) and a witness shaped like one
// partition of the PoRep-shaped circuit, without synthesizing anything. The proving stage's
// work (NTTs of the domain, five MSMs over the key's points) has the size and the scalar mix of
// a real partition, which is what a benchmark of that stage needs.
//
// The shape, for n = 2^log_n: bellman's H convention, 2 public inputs (1 and 5) and n - 2
// auxiliary variables (m = n variables), n constraints, domain n; h_query has n - 1 points,
// a_query, b_g1_query and b_g2_query m, l_query m - 2. a, b, c are random (seeds 11, 12, 13),
// the assignment random (seed 14) then given the value mix of a real PoRep partition (shares
// of 0 and 1, porep_value_mix(); seed 15), since the MSMs' cost depends on it.
//
// The points: the four G1 queries view one host array (random multiples of the generator,
// seed 1, as random_g1_points), the G2 query owns its own (seed 9); the verifying key's points
// come from a generator of seed 7. With table_log < log_n the G1 array is a table of
// 2^table_log random points repeated to n (point i = table[i mod 2^table_log], materialized),
// and the G2 query likewise: a "bench-only key from a repeated table", which spares generating
// 2^27 distinct points (about 3.5 us of a core per G2 point and 1.4 us per G1 point: some 40 s
// more on 16 cores, several minutes on a few; with a table of 2^20 the 2^27 partition builds
// in about 38 s on 16 cores, mostly filling its 58 GB). The MSMs' work does not depend on
// which points repeat, since the scalars are random. The table's points are the first
// 2^table_log points of the distinct set.
//
// Reproducibility: the points depend only on the seeds; the scalars (random_scalars) draw each
// chunk of the thread pool's parallel_for from seed + chunk start, so they also depend on the
// global pool's size (the same on one machine with the same CUZK_THREADS).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "prover/circuits/porep.hpp"
#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"
#include "prover/ff/fr.hpp"
#include "prover/groth16/keys.hpp"
#include "prover/groth16/prover.hpp"

namespace cuzk::circuits {

// Shares of the values 0 and 1 in a partition's auxiliary assignment (the rest: other values).
struct ValueMix {
  double zero = 0, one = 0;
};

// The circuit the value mix is measured on: PoRep-shaped, one labeling layer.
inline constexpr PorepParams kValueMixCircuit{2, 1, 2, 6};

// Sets each of v's values to 0 with probability mix.zero, else to 1 with probability mix.one,
// else leaves it (one draw per value from std::mt19937_64(seed), in order): a mix like an
// assignment's over random values.
void apply_value_mix(std::span<fr_t> v, ValueMix mix, uint64_t seed);

// The value mix of kValueMixCircuit's assignment (witness seed 1), measured on the first call
// (it synthesizes the circuit: about a second) and cached; thread-safe. Prints nothing.
ValueMix porep_value_mix();
// "assignment value mix of PoRep <circuit>: 0.516 zero, 0.470 one, 0.014 other" (no newline),
// for callers that report what they measured.
std::string describe_porep_value_mix();

// n random field elements; chunk [b, e) of the global pool's parallel_for from
// std::mt19937_64(seed + b).
std::vector<fr_t> random_scalars(size_t n, uint64_t seed);

// n points k * P (k = 1..n) for a random multiple P of the group's generator (P from
// std::mt19937_64(seed)), made in parallel chunks. Distinct for any n a benchmark uses.
std::vector<g1_affine_t> random_g1_points(size_t n, uint64_t seed);
std::vector<g2_affine_t> random_g2_points(size_t n, uint64_t seed);

// n points, point i = table[i mod table.size()] (materialized, in parallel chunks): the
// bench-only keys' repeated table, and the benchmarks' point sets past the sizes they generate.
// Throws std::invalid_argument unless the table's size is a power of two.
std::vector<g1_affine_t> repeat_points(std::span<const g1_affine_t> table, size_t n);
std::vector<g2_affine_t> repeat_points(std::span<const g2_affine_t> table, size_t n);

struct SyntheticPartition {
  groth16::ProvingKey pk;
  std::vector<fr_t> a, b, c, input, aux;
  unsigned log_n = 0;
  unsigned table_log = 0;  // the points are 2^table_log distinct ones repeated; == log_n: all distinct
  groth16::Witness witness() const { return {a, b, c, input, aux}; }
  bool distinct_points() const { return table_log == log_n; }
};

inline constexpr unsigned kSyntheticMaxLogN = 27;

// The partition of 2^log_n constraints described above. table_log 0 or == log_n: every point
// distinct; 1 <= table_log < log_n: points repeated from a table of 2^table_log. Throws
// std::invalid_argument for log_n outside [1, 27] or table_log > log_n (the message names the
// value). Uses the global thread pool.
std::unique_ptr<SyntheticPartition> make_synthetic_partition(unsigned log_n, unsigned table_log = 0);

}  // namespace cuzk::circuits
