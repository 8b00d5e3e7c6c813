// Poseidon over BLS12-381's Fr with the x^5 S-box (Grassi, Khovratovich, Rechberger, Roy,
// Schofnegger: "Poseidon: A New Hash Function for Zero-Knowledge Proof Systems", USENIX Security
// 2021, eprint 2019/458), in two widths: t = 3 (arity 2) and t = 9 (arity 8).
//
// Parameters (poseidon.cpp; the procedure is in docs/poseidon.md):
//   rounds      R_F = 8 full rounds (4 before, 4 after the partial ones); R_P = 56 partial rounds
//               for t = 3 and 57 for t = 9: the 128-bit-security round numbers for alpha = 5 and a
//               255-bit prime from the paper's round-number formulas (section 5.4, Table 2 and
//               its script calc_round_numbers.py), as used by BLS12-381 implementations
//               (e.g. tezos mec poseidon128: t = 3, R_F = 8, R_P = 56; Filecoin's neptune computes
//               57 for t = 9).
//   constants   c_k = SHA-256("cuzk/poseidon/x5/t=<t>/rc/<k>") read as a big-endian 256-bit
//               integer, reduced mod r; t * (R_F + R_P) of them, round-major.
//   MDS         the Cauchy matrix M_ij = 1 / (x_i + y_j), x_i = i, y_j = t + j (0 <= i, j < t):
//               x's distinct, y's distinct, x_i + y_j != 0, so every square submatrix is
//               nonsingular (MDS).
//   hash        state = (domain tag 2^arity - 1, m_1..m_arity); permute; output state[1].
// This is this project's own instance: it is not meant to reproduce another library's digests.
//
// In circuit: each S-box is 3 constraints (x2 = x*x, x4 = x2*x2, x5 = x4*x) on a linear
// combination; full rounds keep the MDS output as linear combinations (free); in partial rounds
// the t-1 elements that skip the S-box are materialized (t-1 linear constraints) so that linear
// combinations do not grow. Cost: t=3: 8*9 + 56*5 + 1 = 353; t=9: 8*27 + 57*11 + 1 = 844.
#pragma once
#include <span>
#include <vector>

#include "prover/gadgets/num.hpp"

namespace cuzk::gadgets {

struct PoseidonParams {
  int width = 0;
  int full_rounds = 0;
  int partial_rounds = 0;
  std::vector<fr_t> round_constants;  // width * (full + partial), round-major
  std::vector<fr_t> mds;              // width * width, row-major
  fr_t domain_tag;
  int arity() const { return width - 1; }
  int rounds() const { return full_rounds + partial_rounds; }
  const fr_t& rc(int round, int i) const { return round_constants[size_t(round) * width + i]; }
  const fr_t& m(int i, int j) const { return mds[size_t(i) * width + j]; }
};

// The parameter sets (built once, thread-safe): width 3 or 9; throws std::invalid_argument else.
const PoseidonParams& poseidon_params(int width);
// Deterministic field element from SHA-256 of a label (the constants' procedure).
fr_t fr_from_sha256_label(const std::string& label);

void poseidon_permute_native(const PoseidonParams& p, std::vector<fr_t>& state);
// Hash of exactly p.arity() elements.
fr_t poseidon_hash_native(const PoseidonParams& p, std::span<const fr_t> inputs);

namespace detail {
inline fr_t pow5(const fr_t& x) {
  fr_t x2 = x.sqr();
  return x2.sqr() * x;
}
}  // namespace detail

// x^5 of a linear combination (plus constant), 3 constraints; returns the variable holding it.
template <class CS>
AllocatedNum sbox(CS& cs, const typename CS::lc_t& x, const fr_t& xv) {
  using L = typename CS::lc_t;
  // Zero where values are not needed (shape-only synthesis): alloc ignores them then, but they
  // are initialized so that no compiler sees a maybe-uninitialized read (GCC 12's sanitize build did).
  fr_t x2v = fr_t::zero(), x4v = fr_t::zero(), x5v = fr_t::zero();
  if constexpr (CS::kNeedsValues) {
    x2v = xv.sqr();
    x4v = x2v.sqr();
    x5v = x4v * xv;
  }
  AllocatedNum x2 = AllocatedNum::alloc(cs, x2v);
  cs.enforce(x, x, L(x2.var));
  AllocatedNum x4 = AllocatedNum::alloc(cs, x4v);
  cs.enforce(L(x2.var), L(x2.var), L(x4.var));
  AllocatedNum x5 = AllocatedNum::alloc(cs, x5v);
  cs.enforce(L(x4.var), x, L(x5.var));
  return x5;
}

template <class CS>
AllocatedNum poseidon_hash(CS& cs, const PoseidonParams& p, std::span<const NumLc<typename CS::lc_t>> inputs) {
  using L = typename CS::lc_t;
  using N = NumLc<L>;
  const int t = p.width;
  if (int(inputs.size()) != p.arity()) throw std::invalid_argument("poseidon_hash: wrong number of inputs");
  std::vector<N> state;
  state.reserve(t);
  state.push_back(N::constant(p.domain_tag));
  for (const N& in : inputs) state.push_back(in);

  const int half = p.full_rounds / 2;
  std::vector<AllocatedNum> s(t);
  std::vector<N> next(t);
  for (int r = 0; r < p.rounds(); r++) {
    const bool full = r < half || r >= half + p.partial_rounds;
    // add round constants
    for (int i = 0; i < t; i++) {
      state[i].lc.add_constant(p.rc(r, i));
      if constexpr (CS::kNeedsValues) state[i].value += p.rc(r, i);
    }
    if (full) {
      for (int i = 0; i < t; i++) s[i] = sbox(cs, state[i].lc, state[i].value);
      for (int i = 0; i < t; i++) {
        L lc;
        lc.reserve(t);
        fr_t v = fr_t::zero();
        for (int j = 0; j < t; j++) {
          lc.add(s[j].var, p.m(i, j));
          if constexpr (CS::kNeedsValues) v += p.m(i, j) * s[j].value;
        }
        state[i] = N{std::move(lc), v};
      }
    } else {
      AllocatedNum x5 = sbox(cs, state[0].lc, state[0].value);
      for (int i = 0; i < t; i++) {
        L lc;
        fr_t v = fr_t::zero();
        lc.add(x5.var, p.m(i, 0));
        if constexpr (CS::kNeedsValues) v = p.m(i, 0) * x5.value;
        for (int j = 1; j < t; j++) {
          lc.add_lc(state[j].lc, p.m(i, j));
          if constexpr (CS::kNeedsValues) v += p.m(i, j) * state[j].value;
        }
        next[i] = N{std::move(lc), v};
      }
      state[0] = std::move(next[0]);
      for (int i = 1; i < t; i++) state[i] = N::of(materialize(cs, next[i]));
    }
  }
  return materialize(cs, state[1]);
}

}  // namespace cuzk::gadgets
