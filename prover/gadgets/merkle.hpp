// Merkle inclusion paths in circuit: Poseidon trees of arity 2 and 8, and SHA-256 binary trees.
//
// A path is, per level from the leaf up, the siblings and the position of the current node
// among its parent's children, given by index bits (least significant first; 1 bit per level
// for binary trees, 3 for arity 8). The gadget returns the root it computes; the caller
// constrains it (to a public input, usually).
//
// Costs per level: Poseidon-2: 1 (swap) + 353; Poseidon-8: 19 (insertion) + 844;
// SHA-256: 512 (swap of 256 bit pairs) + 2 compressions.
#pragma once
#include <array>
#include <span>
#include <vector>

#include "prover/gadgets/boolean.hpp"
#include "prover/gadgets/num.hpp"
#include "prover/gadgets/poseidon.hpp"
#include "prover/gadgets/sha256.hpp"

namespace cuzk::gadgets {

// Poseidon arity 2: at each level, (left, right) = bit ? (sibling, cur) : (cur, sibling).
// left = cur + bit * (sibling - cur): bit * (sibling - cur) = left - cur.
template <class CS>
AllocatedNum merkle_root_poseidon2(CS& cs, const AllocatedNum& leaf, std::span<const AllocatedNum> siblings,
                                   std::span<const Boolean> bits) {
  using L = typename CS::lc_t;
  using N = NumLc<L>;
  const PoseidonParams& p = poseidon_params(3);
  AllocatedNum cur = leaf;
  for (size_t k = 0; k < siblings.size(); k++) {
    const AllocatedNum& sib = siblings[k];
    const bool b = bits[k].value();
    AllocatedNum left = AllocatedNum::alloc(cs, b ? sib.value : cur.value);
    L diff(sib.var);
    diff.sub(cur.var);
    L rhs(left.var);
    rhs.sub(cur.var);
    cs.enforce(bits[k].template lc<L>(), diff, rhs);
    L right_lc(cur.var);
    right_lc.add(sib.var).sub(left.var);
    std::array<N, 2> in = {N::of(left), N{std::move(right_lc), b ? cur.value : sib.value}};
    cur = poseidon_hash(cs, p, std::span<const N>(in));
  }
  return cur;
}

// Poseidon arity 8: the current node is inserted among the 7 siblings at position
// pos = b0 + 2 b1 + 4 b2. With e_j = [pos == j] and g_j = [pos > j] (linear in the 8 products of
// the bits, which cost 5 constraints), slot_j = sib_{j-1} + g_j (sib_j - sib_{j-1}) +
// e_j (cur - sib_{j-1}); slot_0 = sib_0 + e_0 (cur - sib_0), slot_7 = sib_6 + e_7 (cur - sib_6)
// (one product each for slots 0 and 7, two for slots 1..6: 14).
template <class CS>
AllocatedNum merkle_root_poseidon8(CS& cs, const AllocatedNum& leaf, std::span<const AllocatedNum> siblings,
                                   std::span<const Boolean> bits) {
  using L = typename CS::lc_t;
  using N = NumLc<L>;
  const PoseidonParams& p = poseidon_params(9);
  const size_t levels = siblings.size() / 7;
  AllocatedNum cur = leaf;
  for (size_t k = 0; k < levels; k++) {
    const AllocatedNum* sib = siblings.data() + 7 * k;
    const Boolean& b0 = bits[3 * k];
    const Boolean& b1 = bits[3 * k + 1];
    const Boolean& b2 = bits[3 * k + 2];
    const int pos = int(b0.value()) | int(b1.value()) << 1 | int(b2.value()) << 2;
    // q[m] = [(b0, b1) == m] as linear combinations, via p01 = b0 b1.
    AllocatedNum p01 = AllocatedNum::alloc(cs, bit_value(b0.value() && b1.value()));
    cs.enforce(b0.template lc<L>(), b1.template lc<L>(), L(p01.var));
    std::array<L, 4> q;
    std::array<bool, 4> qv;
    for (int m = 0; m < 4; m++) {
      // product of (b0 or 1-b0) and (b1 or 1-b1) = combination of 1, b0, b1, p01
      const bool x0 = m & 1, x1 = m & 2;
      L lc;
      fr_t s0 = x0 ? fr_t::one() : -fr_t::one(), s1 = x1 ? fr_t::one() : -fr_t::one();
      // (x0 ? b0 : 1-b0)(x1 ? b1 : 1-b1) = c + s0 b0 + s1 b1 + s0 s1 p01 with c = [!x0 && !x1]
      if (!x0 && !x1) lc.add_constant(fr_t::one());
      if (!x1) b0.add_to(lc, s0);
      if (!x0) b1.add_to(lc, s1);
      lc.add(p01.var, s0 * s1);
      q[m] = std::move(lc);
      qv[m] = (b0.value() == x0) && (b1.value() == x1);
    }
    // e_{m + 4} = q_m * b2 (allocated); e_m = q_m - e_{m+4}
    std::array<L, 8> e;
    std::array<bool, 8> ev;
    for (int m = 0; m < 4; m++) {
      bool hi = qv[m] && b2.value();
      AllocatedNum t = AllocatedNum::alloc(cs, bit_value(hi));
      cs.enforce(q[m], b2.template lc<L>(), L(t.var));
      e[m + 4] = L(t.var);
      ev[m + 4] = hi;
      e[m] = q[m];
      e[m].sub(t.var);
      ev[m] = qv[m] && !b2.value();
    }
    std::array<N, 8> slots;
    for (int j = 0; j < 8; j++) {
      // base = sib_{j-1} (j > 0) or sib_0 (j == 0, where g_0 = 1 - e_0)
      const AllocatedNum& base = j > 0 ? sib[j - 1] : sib[0];
      L lc(base.var);
      fr_t v = j < pos ? sib[j].value : j == pos ? cur.value : sib[j - 1].value;
      if (j > 0 && j < 7) {
        // g_j = sum_{m > j} e_m;  A = g_j * (sib_j - sib_{j-1})
        L g;
        bool gv = pos > j;
        for (int m = j + 1; m < 8; m++) g.add_lc(e[m]);
        AllocatedNum A = AllocatedNum::alloc(cs, gv ? sib[j].value - sib[j - 1].value : fr_t::zero());
        L d(sib[j].var);
        d.sub(sib[j - 1].var);
        cs.enforce(g, d, L(A.var));
        lc.add(A.var);
      }
      // B = e_j * (cur - base)
      AllocatedNum B = AllocatedNum::alloc(cs, ev[j] ? cur.value - base.value : fr_t::zero());
      L d(cur.var);
      d.sub(base.var);
      cs.enforce(e[j], d, L(B.var));
      lc.add(B.var);
      slots[j] = N{std::move(lc), v};
    }
    cur = poseidon_hash(cs, p, std::span<const N>(slots));
  }
  return cur;
}

// SHA-256 binary tree: node = SHA-256(left || right) over 256-bit digests. The swap allocates
// both outputs: bit * (y - x) = left - x, bit * (x - y) = right - y (booleanity follows).
template <class CS>
std::vector<Boolean> merkle_root_sha256(CS& cs, std::span<const Boolean> leaf_bits,
                                        std::span<const std::vector<Boolean>> siblings,
                                        std::span<const Boolean> bits) {
  using L = typename CS::lc_t;
  std::vector<Boolean> cur(leaf_bits.begin(), leaf_bits.end());
  std::vector<Boolean> msg(512);
  for (size_t k = 0; k < siblings.size(); k++) {
    const Boolean& c = bits[k];
    const L c_lc = c.template lc<L>();
    for (int i = 0; i < 256; i++) {
      const Boolean& x = cur[i];
      const Boolean& y = siblings[k][i];
      const bool lv = c.value() ? y.value() : x.value();
      const bool rv = c.value() ? x.value() : y.value();
      L x_lc = x.template lc<L>(), y_lc = y.template lc<L>();
      AllocatedBit left = alloc_bit_unchecked(cs, lv);
      AllocatedBit right = alloc_bit_unchecked(cs, rv);
      L y_minus_x = y_lc;
      y_minus_x.sub_lc(x_lc);
      L l_minus_x(left.var);
      l_minus_x.sub_lc(x_lc);
      cs.enforce(c_lc, y_minus_x, l_minus_x);
      L x_minus_y = x_lc;
      x_minus_y.sub_lc(y_lc);
      L r_minus_y(right.var);
      r_minus_y.sub_lc(y_lc);
      cs.enforce(c_lc, x_minus_y, r_minus_y);
      msg[i] = Boolean::is(left);
      msg[256 + i] = Boolean::is(right);
    }
    cur = sha256_words_to_bits(sha256_bits(cs, std::span<const Boolean>(msg)));
  }
  return cur;
}

}  // namespace cuzk::gadgets
