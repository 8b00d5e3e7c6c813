#include "prover/gadgets/poseidon.hpp"

#include <stdexcept>
#include <string>

#include "prover/gadgets/sha256_native.hpp"

namespace cuzk::gadgets {
namespace {

constexpr int kFullRounds = 8;
constexpr int kPartialRoundsT3 = 56;
constexpr int kPartialRoundsT9 = 57;

PoseidonParams make_params(int t, int partial) {
  PoseidonParams p;
  p.width = t;
  p.full_rounds = kFullRounds;
  p.partial_rounds = partial;
  const int n = t * (kFullRounds + partial);
  p.round_constants.reserve(n);
  for (int k = 0; k < n; k++)
    p.round_constants.push_back(
        fr_from_sha256_label("cuzk/poseidon/x5/t=" + std::to_string(t) + "/rc/" + std::to_string(k)));
  p.mds.resize(size_t(t) * t);
  for (int i = 0; i < t; i++)
    for (int j = 0; j < t; j++) p.mds[size_t(i) * t + j] = fr_t::from_u64(uint64_t(i) + uint64_t(t + j)).inv();
  p.domain_tag = fr_t::from_u64((uint64_t(1) << (t - 1)) - 1);
  return p;
}

}  // namespace

fr_t fr_from_sha256_label(const std::string& label) {
  Sha256Digest d = sha256_native(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(label.data()), label.size()));
  // Horner over big-endian 64-bit limbs: acc = acc * 2^64 + limb (mod r).
  const uint64_t two64[4] = {0, 1, 0, 0};
  const fr_t base = fr_t::from_canonical(two64);
  fr_t acc = fr_t::zero();
  for (int k = 0; k < 4; k++) {
    uint64_t limb = 0;
    for (int b = 0; b < 8; b++) limb = limb << 8 | d[8 * k + b];
    acc = acc * base + fr_t::from_u64(limb);
  }
  return acc;
}

const PoseidonParams& poseidon_params(int width) {
  static const PoseidonParams t3 = make_params(3, kPartialRoundsT3);
  static const PoseidonParams t9 = make_params(9, kPartialRoundsT9);
  if (width == 3) return t3;
  if (width == 9) return t9;
  throw std::invalid_argument("poseidon: width " + std::to_string(width) + " not supported (3 or 9)");
}

void poseidon_permute_native(const PoseidonParams& p, std::vector<fr_t>& state) {
  const int t = p.width, half = p.full_rounds / 2;
  std::vector<fr_t> next(t);
  for (int r = 0; r < p.rounds(); r++) {
    const bool full = r < half || r >= half + p.partial_rounds;
    for (int i = 0; i < t; i++) state[i] += p.rc(r, i);
    if (full) {
      for (int i = 0; i < t; i++) state[i] = detail::pow5(state[i]);
    } else {
      state[0] = detail::pow5(state[0]);
    }
    for (int i = 0; i < t; i++) {
      fr_t acc = fr_t::zero();
      for (int j = 0; j < t; j++) acc += p.m(i, j) * state[j];
      next[i] = acc;
    }
    state.swap(next);
  }
}

fr_t poseidon_hash_native(const PoseidonParams& p, std::span<const fr_t> inputs) {
  if (int(inputs.size()) != p.arity()) throw std::invalid_argument("poseidon_hash_native: wrong number of inputs");
  std::vector<fr_t> state;
  state.push_back(p.domain_tag);
  state.insert(state.end(), inputs.begin(), inputs.end());
  poseidon_permute_native(p, state);
  return state[1];
}

}  // namespace cuzk::gadgets
