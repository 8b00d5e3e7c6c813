// A PoRep-shaped partition circuit: the structure of Filecoin's stacked-DRG PoRep partition
// (per challenge: SHA-256 labeling over parent labels and layers, Poseidon column hashing,
// Merkle inclusion proofs), with sizes set by four parameters. It is a workload with the
// proving engine's shape, not a reimplementation of Filecoin's circuit.
//
// Per challenge c (node index i_c < 2^depth, a public input, bound to its index bits):
//   labeling   for layer l = 1..layers: label_l = SHA-256(replica_id || le32(l) || le64(i_c) ||
//              0^20 || parent_1 .. parent_P) with its top two bits cleared (a 254-bit field
//              element); parent_1 of layer l > 1 is label_{l-1} (layers are chained), the other
//              parents are witness labels: ceil((73 + 32 P) / 64) compressions per label.
//   column     h_c = Poseidon-8 over (label_1 .. label_layers) (chunks of 8, then the running
//              hash plus 7 more per further chunk; zero padded); with layers = 0 the column is
//              the data node alone.
//   replica    leaf r_c = label_layers + data_c (data_c alone when layers = 0).
//   inclusion  h_c in comm_c (Poseidon arity 8, ceil(depth/3) levels), r_c in comm_r_last
//              (Poseidon arity 2, depth levels), and, when layers >= 1, data_c's 32 bytes in comm_d
//              (SHA-256 binary, depth levels).
// Once per partition: comm_r = Poseidon-2(comm_c, comm_r_last).
// Public inputs, in order: comm_d (when layers >= 1; the root with its top two bits cleared),
// comm_r, then the challenge indices.
//
// Sizes: layers = 0 gives a few thousand constraints per challenge (tests); each labeling costs
// about 27,000 constraints per SHA-256 compression and each SHA-256 tree level two compressions,
// so challenges/layers/parents/depth reach beyond 10^7 (16 challenges, 2 layers, 6 parents,
// depth 10: 11,521,365 constraints; see `cuzk-bench circuit --describe`).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "prover/gadgets/merkle.hpp"
#include "prover/gadgets/poseidon.hpp"
#include "prover/gadgets/sha256.hpp"
#include "prover/r1cs/shape.hpp"

namespace cuzk::circuits {

using gadgets::AllocatedNum;
using gadgets::Boolean;
using gadgets::Sha256Digest;

struct PorepParams {
  uint32_t challenges = 1;
  uint32_t layers = 1;
  uint32_t parents = 2;
  uint32_t depth = 4;

  static constexpr uint32_t kMaxDepth = 40;
  static constexpr uint32_t kMaxLayers = 64;
  static constexpr uint32_t kMaxParents = 64;
  static constexpr uint32_t kMaxChallenges = 1u << 16;
  // Empty when valid, else what is wrong (one line, names the value).
  std::string validate() const;
  uint32_t poseidon8_levels() const { return (depth + 2) / 3; }
  std::string to_string() const;
  bool operator==(const PorepParams&) const = default;
};

struct PorepChallenge {
  uint64_t index = 0;
  fr_t data;                                  // the data node (a field element)
  std::vector<Sha256Digest> parents;          // layers * parents; [l * P + 0] unused for l > 0
  std::vector<fr_t> labels;                   // layers (native result, for checks)
  fr_t column_hash;                           // native
  std::vector<Sha256Digest> comm_d_path;      // depth siblings (layers >= 1)
  std::vector<fr_t> comm_c_path;              // 7 * poseidon8_levels siblings
  std::vector<fr_t> comm_r_last_path;         // depth siblings
};

struct PorepWitness {
  std::array<uint8_t, 32> replica_id{};
  Sha256Digest comm_d{};  // top two bits of byte 31 cleared
  fr_t comm_c, comm_r_last, comm_r;
  std::vector<PorepChallenge> challenges;
};

// Native (out-of-circuit) computations shared by witness generation and tests.
Sha256Digest porep_label_native(const std::array<uint8_t, 32>& replica_id, uint32_t layer, uint64_t index,
                                const std::vector<Sha256Digest>& parents);
fr_t porep_column_hash_native(const std::vector<fr_t>& column);
fr_t fr_from_truncated_digest(const Sha256Digest& d);  // top two bits cleared, little-endian

class PorepCircuit {
 public:
  // Generates a consistent instance (random data, parents, distinct challenge indices; sparse
  // trees whose untouched subtrees are pseudo-random) from the seed. Throws
  // std::invalid_argument when params.validate() fails.
  static PorepCircuit generate(const PorepParams& params, uint64_t seed);

  const PorepParams& params() const { return params_; }
  const PorepWitness& witness() const { return w_; }
  PorepWitness& mutable_witness() { return w_; }
  std::vector<fr_t> public_inputs() const;

  // Expected constraints and variables (exact: a shape-only pass, computed once per parameter
  // set and cached; in the engine these counts come with the parameters).
  r1cs::SizeHint size_hint() const;
  static r1cs::ShapeCounts shape(const PorepParams& params);

  // The variables every challenge names: the public inputs, the commitments and the replica
  // id's bits.
  struct Shared {
    AllocatedNum comm_d_in{}, comm_r_in{}, comm_c{}, comm_r_last{};
    std::vector<AllocatedNum> index_in;
    std::vector<Boolean> replica_bits;
  };
  // synthesize() is synthesize_shared() then synthesize_slice() for every challenge in order.
  // A challenge allocates no input and names only its own variables and the shared ones, and
  // every challenge adds the same counts (porep_shape.hpp): what synthesizing the challenges on
  // several threads relies on (prover/synth/sliced.hpp).
  template <class CS>
  void synthesize(CS& cs) const {
    const Shared shared = synthesize_shared(cs);
    for (size_t c = 0; c < slices(); c++) synthesize_slice(cs, shared, c);
  }
  template <class CS>
  Shared synthesize_shared(CS& cs) const;
  size_t slices() const { return w_.challenges.size(); }
  template <class CS>
  void synthesize_slice(CS& cs, const Shared& shared, size_t c) const;

 private:
  PorepParams params_;
  PorepWitness w_;
};

// ---------------------------------------------------------------------------------------------

namespace detail {

// Packs bits (most significant bit of each byte first, bytes little-endian as a number) into a
// new variable: sum 2^k bit_k * 1 = x. Bits given as constants are skipped (they are zero).
template <class CS>
AllocatedNum pack_le_bytes(CS& cs, const std::vector<Boolean>& bits, const fr_t& value) {
  using L = typename CS::lc_t;
  L lc;
  lc.reserve(bits.size());
  for (size_t p = 0; p < bits.size(); p++) {
    const size_t byte = p / 8, bit = 7 - p % 8;
    bits[p].add_to(lc, gadgets::pow2(int(8 * byte + bit)));
  }
  AllocatedNum x = AllocatedNum::alloc(cs, value);
  cs.enforce(lc, L(r1cs::Variable::one()), L(x.var));
  return x;
}

template <class CS>
AllocatedNum column_hash(CS& cs, const std::vector<AllocatedNum>& column) {
  using N = gadgets::NumLc<typename CS::lc_t>;
  const gadgets::PoseidonParams& p = gadgets::poseidon_params(9);
  std::vector<N> in;
  size_t k = 0;
  AllocatedNum h{};
  bool first = true;
  while (first || k < column.size()) {
    in.clear();
    if (!first) in.push_back(N::of(h));
    while (in.size() < 8) in.push_back(k < column.size() ? N::of(column[k++]) : N::constant(fr_t::zero()));
    h = gadgets::poseidon_hash(cs, p, std::span<const N>(in));
    first = false;
  }
  return h;
}

}  // namespace detail

template <class CS>
PorepCircuit::Shared PorepCircuit::synthesize_shared(CS& cs) const {
  using L = typename CS::lc_t;
  Shared s;
  // public inputs
  if (params_.layers > 0) s.comm_d_in = AllocatedNum::alloc_input(cs, fr_from_truncated_digest(w_.comm_d));
  s.comm_r_in = AllocatedNum::alloc_input(cs, w_.comm_r);
  for (const PorepChallenge& ch : w_.challenges) s.index_in.push_back(AllocatedNum::alloc_input(cs, fr_t::from_u64(ch.index)));

  // comm_r = Poseidon-2(comm_c, comm_r_last)
  s.comm_c = AllocatedNum::alloc(cs, w_.comm_c);
  s.comm_r_last = AllocatedNum::alloc(cs, w_.comm_r_last);
  {
    using N = gadgets::NumLc<L>;
    std::array<N, 2> in = {N::of(s.comm_c), N::of(s.comm_r_last)};
    AllocatedNum r = gadgets::poseidon_hash(cs, gadgets::poseidon_params(3), std::span<const N>(in));
    gadgets::enforce_equal(cs, L(r.var), L(s.comm_r_in.var));
  }

  if (params_.layers > 0) s.replica_bits = gadgets::alloc_bytes_be(cs, std::span<const uint8_t>(w_.replica_id));
  return s;
}

template <class CS>
void PorepCircuit::synthesize_slice(CS& cs, const Shared& shared, size_t c) const {
  using L = typename CS::lc_t;
  const PorepParams& P = params_;
  const uint32_t d8 = P.poseidon8_levels();
  const AllocatedNum& comm_d_in = shared.comm_d_in;
  const AllocatedNum& comm_c = shared.comm_c;
  const AllocatedNum& comm_r_last = shared.comm_r_last;
  const std::vector<AllocatedNum>& index_in = shared.index_in;
  const std::vector<Boolean>& replica_bits = shared.replica_bits;
  {
    const PorepChallenge& ch = w_.challenges[c];
    // index bits, bound to the public index
    std::vector<Boolean> idx_bits;
    idx_bits.reserve(3 * d8);
    L idx_lc;
    for (uint32_t k = 0; k < P.depth; k++) {
      idx_bits.push_back(Boolean::alloc(cs, (ch.index >> k) & 1));
      idx_bits.back().add_to(idx_lc, gadgets::pow2(int(k)));
    }
    gadgets::enforce_equal(cs, idx_lc, L(index_in[c].var));
    while (idx_bits.size() < 3 * size_t(d8)) idx_bits.push_back(Boolean::constant(false));

    AllocatedNum data{};
    std::vector<AllocatedNum> column;
    AllocatedNum replica_leaf{};
    if (P.layers == 0) {
      data = AllocatedNum::alloc(cs, ch.data);
      column.push_back(data);
      replica_leaf = data;
    } else {
      uint8_t data_bytes[32];
      ch.data.to_bytes_le(data_bytes);
      std::vector<Boolean> data_bits = gadgets::alloc_bytes_be(cs, std::span<const uint8_t>(data_bytes, 32));
      data = detail::pack_le_bytes(cs, data_bits, ch.data);

      // labeling, layer by layer
      std::vector<Boolean> prev_label;
      for (uint32_t l = 0; l < P.layers; l++) {
        std::vector<Boolean> msg = replica_bits;
        msg.reserve(512 + 256 * P.parents);
        // le32(layer), le64(index), 20 zero bytes: 32 bytes, MSB of each byte first
        for (int byte = 0; byte < 32; byte++)
          for (int bit = 7; bit >= 0; bit--) {
            if (byte < 4) {
              msg.push_back(Boolean::constant(((l + 1) >> (8 * byte + bit)) & 1));
            } else if (byte < 12) {
              const size_t k = size_t(8 * (byte - 4) + bit);
              msg.push_back(k < P.depth ? idx_bits[k] : Boolean::constant(false));
            } else {
              msg.push_back(Boolean::constant(false));
            }
          }
        for (uint32_t p = 0; p < P.parents; p++) {
          if (p == 0 && l > 0) {
            msg.insert(msg.end(), prev_label.begin(), prev_label.end());
          } else {
            std::vector<Boolean> pb =
                gadgets::alloc_bytes_be(cs, std::span<const uint8_t>(ch.parents[size_t(l) * P.parents + p]));
            msg.insert(msg.end(), pb.begin(), pb.end());
          }
        }
        std::vector<Boolean> label = gadgets::sha256_words_to_bits(gadgets::sha256_bits(cs, std::span<const Boolean>(msg)));
        label[248] = Boolean::constant(false);  // byte 31, bits 7 and 6: truncation to 254 bits
        label[249] = Boolean::constant(false);
        column.push_back(detail::pack_le_bytes(cs, label, ch.labels[l]));
        prev_label = std::move(label);
      }
      // replica leaf = last label + data
      gadgets::NumLc<L> rl{L(column.back().var), ch.labels.back() + ch.data};
      rl.lc.add(data.var);
      replica_leaf = gadgets::materialize(cs, rl);

      // comm_d: SHA-256 binary tree over the data bytes
      std::vector<std::vector<Boolean>> sibs;
      sibs.reserve(P.depth);
      for (const Sha256Digest& s : ch.comm_d_path) sibs.push_back(gadgets::alloc_bytes_be(cs, std::span<const uint8_t>(s)));
      std::vector<Boolean> root = gadgets::merkle_root_sha256(cs, std::span<const Boolean>(data_bits),
                                                              std::span<const std::vector<Boolean>>(sibs),
                                                              std::span<const Boolean>(idx_bits));
      root[248] = Boolean::constant(false);
      root[249] = Boolean::constant(false);
      L root_lc;
      for (size_t p = 0; p < 256; p++) root[p].add_to(root_lc, gadgets::pow2(int(8 * (p / 8) + 7 - p % 8)));
      gadgets::enforce_equal(cs, root_lc, L(comm_d_in.var));
    }

    // column hash in comm_c (Poseidon-8)
    AllocatedNum col = detail::column_hash(cs, column);
    std::vector<AllocatedNum> sc, sr;
    sc.reserve(ch.comm_c_path.size());
    for (const fr_t& v : ch.comm_c_path) sc.push_back(AllocatedNum::alloc(cs, v));
    AllocatedNum rc = gadgets::merkle_root_poseidon8(cs, col, std::span<const AllocatedNum>(sc),
                                                     std::span<const Boolean>(idx_bits));
    gadgets::enforce_equal(cs, L(rc.var), L(comm_c.var));

    // replica leaf in comm_r_last (Poseidon-2)
    sr.reserve(ch.comm_r_last_path.size());
    for (const fr_t& v : ch.comm_r_last_path) sr.push_back(AllocatedNum::alloc(cs, v));
    AllocatedNum rr = gadgets::merkle_root_poseidon2(cs, replica_leaf, std::span<const AllocatedNum>(sr),
                                                     std::span<const Boolean>(idx_bits));
    gadgets::enforce_equal(cs, L(rr.var), L(comm_r_last.var));
  }
}

}  // namespace cuzk::circuits
