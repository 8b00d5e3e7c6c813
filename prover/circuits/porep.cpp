#include "prover/circuits/porep.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "prover/synth/synth.hpp"

namespace cuzk::circuits {
namespace {

// splitmix64: a small deterministic generator for witness data (not cryptographic).
struct SplitMix {
  uint64_t s;
  uint64_t operator()() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

uint64_t mix(uint64_t a, uint64_t b) { return SplitMix{a * 0x100000001b3ull ^ b}(); }

Sha256Digest random_digest(SplitMix& g) {
  Sha256Digest d;
  for (int i = 0; i < 32; i += 8) {
    uint64_t v = g();
    for (int k = 0; k < 8; k++) d[i + k] = uint8_t(v >> (8 * k));
  }
  return d;
}

// A Merkle tree of the given arity and depth, materialized only along the challenged leaves:
// a subtree with no challenged leaf is a pseudo-random node (filler) derived from the seed and
// its position, so roots and paths agree for every challenge without building 2^depth leaves.
template <class Node, class Hash, class Filler>
class SparseTree {
 public:
  SparseTree(uint32_t arity, uint32_t depth, std::map<uint64_t, Node> leaves, Hash hash, Filler filler)
      : arity_(arity), depth_(depth), leaves_(std::move(leaves)), hash_(hash), filler_(filler) {}

  Node root() { return node(depth_, 0); }
  // Siblings from the leaf up: arity - 1 per level, in child order without the path's node.
  std::vector<Node> path(uint64_t leaf) {
    std::vector<Node> out;
    uint64_t idx = leaf;
    for (uint32_t level = 0; level < depth_; level++) {
      const uint64_t parent = idx / arity_;
      for (uint64_t j = 0; j < arity_; j++)
        if (parent * arity_ + j != idx) out.push_back(node(level, parent * arity_ + j));
      idx = parent;
    }
    return out;
  }

 private:
  bool touched(uint32_t level, uint64_t idx) const {
    uint64_t span = 1;
    for (uint32_t k = 0; k < level; k++) span *= arity_;
    auto it = leaves_.lower_bound(idx * span);
    return it != leaves_.end() && it->first < (idx + 1) * span;
  }
  Node node(uint32_t level, uint64_t idx) {
    auto key = std::make_pair(level, idx);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    Node n;
    if (!touched(level, idx)) {
      n = filler_(level, idx);
    } else if (level == 0) {
      n = leaves_.at(idx);
    } else {
      std::vector<Node> kids;
      for (uint64_t j = 0; j < arity_; j++) kids.push_back(node(level - 1, idx * arity_ + j));
      n = hash_(kids);
    }
    memo_.emplace(key, n);
    return n;
  }
  uint32_t arity_, depth_;
  std::map<uint64_t, Node> leaves_;
  Hash hash_;
  Filler filler_;
  std::map<std::pair<uint32_t, uint64_t>, Node> memo_;
};

template <class Node, class Hash, class Filler>
SparseTree<Node, Hash, Filler> make_tree(uint32_t arity, uint32_t depth, std::map<uint64_t, Node> leaves, Hash h,
                                         Filler f) {
  return SparseTree<Node, Hash, Filler>(arity, depth, std::move(leaves), h, f);
}

}  // namespace

std::string PorepParams::validate() const {
  if (challenges < 1 || challenges > kMaxChallenges)
    return "--challenges " + std::to_string(challenges) + " is out of range (1.." + std::to_string(kMaxChallenges) + ")";
  if (layers > kMaxLayers)
    return "--layers " + std::to_string(layers) + " is out of range (0.." + std::to_string(kMaxLayers) + ")";
  if (parents > kMaxParents)
    return "--parents " + std::to_string(parents) + " is out of range (0.." + std::to_string(kMaxParents) + ")";
  if (depth < 1 || depth > kMaxDepth)
    return "--depth " + std::to_string(depth) + " is out of range (1.." + std::to_string(kMaxDepth) + ")";
  if (depth < 32 && challenges > (uint64_t(1) << depth))
    return "--challenges " + std::to_string(challenges) + " exceeds the " + std::to_string(uint64_t(1) << depth) +
           " nodes of a depth-" + std::to_string(depth) + " tree (challenges are distinct nodes)";
  return {};
}

std::string PorepParams::to_string() const {
  return "challenges=" + std::to_string(challenges) + " layers=" + std::to_string(layers) +
         " parents=" + std::to_string(parents) + " depth=" + std::to_string(depth);
}

Sha256Digest porep_label_native(const std::array<uint8_t, 32>& replica_id, uint32_t layer, uint64_t index,
                                const std::vector<Sha256Digest>& parents) {
  std::vector<uint8_t> msg(replica_id.begin(), replica_id.end());
  for (int i = 0; i < 4; i++) msg.push_back(uint8_t(layer >> (8 * i)));
  for (int i = 0; i < 8; i++) msg.push_back(uint8_t(index >> (8 * i)));
  msg.resize(64, 0);
  for (const Sha256Digest& p : parents) msg.insert(msg.end(), p.begin(), p.end());
  Sha256Digest d = gadgets::sha256_native(msg);
  d[31] &= 0x3f;
  return d;
}

fr_t fr_from_truncated_digest(const Sha256Digest& d) {
  Sha256Digest t = d;
  t[31] &= 0x3f;
  fr_t out;
  // 2^254 < r, so a 254-bit value is always a canonical field element.
  if (!fr_t::from_bytes_le(t.data(), out)) throw std::logic_error("fr_from_truncated_digest: value >= r");
  return out;
}

fr_t porep_column_hash_native(const std::vector<fr_t>& column) {
  const gadgets::PoseidonParams& p = gadgets::poseidon_params(9);
  std::vector<fr_t> in;
  size_t k = 0;
  fr_t h;
  bool first = true;
  while (first || k < column.size()) {
    in.clear();
    if (!first) in.push_back(h);
    while (in.size() < 8) in.push_back(k < column.size() ? column[k++] : fr_t::zero());
    h = gadgets::poseidon_hash_native(p, in);
    first = false;
  }
  return h;
}

PorepCircuit PorepCircuit::generate(const PorepParams& params, uint64_t seed) {
  if (std::string err = params.validate(); !err.empty()) throw std::invalid_argument(err);
  PorepCircuit c;
  c.params_ = params;
  PorepWitness& w = c.w_;
  SplitMix g{seed};
  Sha256Digest rid = random_digest(g);
  std::copy(rid.begin(), rid.end(), w.replica_id.begin());

  // distinct challenge indices
  const uint64_t nodes = params.depth >= 64 ? ~uint64_t(0) : (uint64_t(1) << params.depth);
  std::set<uint64_t> seen;
  while (seen.size() < params.challenges) seen.insert(g() % nodes);
  std::vector<uint64_t> order(seen.begin(), seen.end());
  for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[g() % i]);  // challenge order

  std::map<uint64_t, fr_t> col_leaves, rep_leaves;
  std::map<uint64_t, Sha256Digest> data_leaves;
  for (uint64_t idx : order) {
    PorepChallenge ch;
    ch.index = idx;
    ch.data = fr_t::random(g);
    for (uint32_t l = 0; l < params.layers; l++) {
      std::vector<Sha256Digest> ps;
      for (uint32_t p = 0; p < params.parents; p++) {
        Sha256Digest d = random_digest(g);
        d[31] &= 0x3f;  // parents are labels: 254 bits
        if (p == 0 && l > 0) {
          fr_t prev = ch.labels.back();
          prev.to_bytes_le(d.data());
        }
        ch.parents.push_back(d);
        ps.push_back(d);
      }
      ch.labels.push_back(fr_from_truncated_digest(porep_label_native(w.replica_id, l + 1, idx, ps)));
    }
    std::vector<fr_t> column = ch.labels;
    if (params.layers == 0) column = {ch.data};
    ch.column_hash = porep_column_hash_native(column);
    col_leaves[idx] = ch.column_hash;
    rep_leaves[idx] = params.layers == 0 ? ch.data : ch.labels.back() + ch.data;
    Sha256Digest db;
    ch.data.to_bytes_le(db.data());
    data_leaves[idx] = db;
    w.challenges.push_back(std::move(ch));
  }

  const gadgets::PoseidonParams& p2 = gadgets::poseidon_params(3);
  const gadgets::PoseidonParams& p8 = gadgets::poseidon_params(9);
  auto fr_filler = [seed](uint64_t tree) {
    return [seed, tree](uint32_t level, uint64_t idx) {
      SplitMix r{mix(mix(seed, tree), mix(level, idx))};
      return fr_t::random(r);
    };
  };
  auto tc = make_tree<fr_t>(8, params.poseidon8_levels(), col_leaves,
                            [&](const std::vector<fr_t>& k) { return gadgets::poseidon_hash_native(p8, k); },
                            fr_filler(1));
  auto tr = make_tree<fr_t>(2, params.depth, rep_leaves,
                            [&](const std::vector<fr_t>& k) { return gadgets::poseidon_hash_native(p2, k); },
                            fr_filler(2));
  w.comm_c = tc.root();
  w.comm_r_last = tr.root();
  {
    const fr_t in[2] = {w.comm_c, w.comm_r_last};
    w.comm_r = gadgets::poseidon_hash_native(p2, in);
  }
  for (PorepChallenge& ch : w.challenges) {
    ch.comm_c_path = tc.path(ch.index);
    ch.comm_r_last_path = tr.path(ch.index);
  }
  if (params.layers > 0) {
    auto td = make_tree<Sha256Digest>(
        2, params.depth, data_leaves,
        [](const std::vector<Sha256Digest>& k) {
          std::vector<uint8_t> m(k[0].begin(), k[0].end());
          m.insert(m.end(), k[1].begin(), k[1].end());
          return gadgets::sha256_native(m);
        },
        [seed](uint32_t level, uint64_t idx) {
          SplitMix r{mix(mix(seed, 3), mix(level, idx))};
          return random_digest(r);
        });
    w.comm_d = td.root();
    w.comm_d[31] &= 0x3f;
    for (PorepChallenge& ch : w.challenges) ch.comm_d_path = td.path(ch.index);
  }
  return c;
}

std::vector<fr_t> PorepCircuit::public_inputs() const {
  std::vector<fr_t> out;
  if (params_.layers > 0) out.push_back(fr_from_truncated_digest(w_.comm_d));
  out.push_back(w_.comm_r);
  for (const PorepChallenge& ch : w_.challenges) out.push_back(fr_t::from_u64(ch.index));
  return out;
}

r1cs::ShapeCounts PorepCircuit::shape(const PorepParams& params) {
  static std::mutex mu;
  static std::vector<std::pair<PorepParams, r1cs::ShapeCounts>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [p, s] : cache)
      if (p == params) return s;
  }
  // The shape does not depend on witness values: any instance of these parameters will do.
  r1cs::ShapeCounts s = synth::count_shape(generate(params, 0));
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace_back(params, s);
  return s;
}

r1cs::SizeHint PorepCircuit::size_hint() const { return shape(params_).hint(); }

}  // namespace cuzk::circuits
