#include "prover/groth16/setup.hpp"

#include <random>
#include <stdexcept>

#include "prover/ntt/ntt.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk::groth16 {
namespace {

constexpr unsigned kFixedBaseWindow = 8;  // 32 windows of 8 bits: 8160 table points, 32 adds per scalar

ThreadPool& pick(ThreadPool* p) { return p ? *p : ThreadPool::global(); }

template <class Affine>
std::vector<Affine> fixed_base(const Affine& base, std::span<const fr_t> scalars, ThreadPool* pool) {
  using Jac = jacobian_t<typename Affine::field_t, typename Affine::config_t>;
  constexpr unsigned w = kFixedBaseWindow;
  constexpr unsigned windows = (256 + w - 1) / w;
  constexpr size_t per = (size_t(1) << w) - 1;  // digits 1..2^w-1
  // table[i * per + d - 1] = d * 2^(w i) * base
  std::vector<Jac> tj(windows * per);
  Jac row = Jac::from_affine(base);
  for (unsigned i = 0; i < windows; ++i) {
    Jac acc = row;
    for (size_t d = 1; d <= per; ++d) {
      tj[i * per + d - 1] = acc;
      acc = acc + row;
    }
    row = acc;  // 2^w * row
  }
  std::vector<Affine> table = batch_to_affine(tj);
  std::vector<Jac> out(scalars.size());
  pick(pool).parallel_for(scalars.size(), [&](size_t b, size_t e) {
    for (size_t k = b; k < e; ++k) {
      uint64_t s[4];
      scalars[k].to_canonical(s);
      Jac acc = Jac::infinity();
      for (unsigned i = 0; i < windows; ++i) {
        unsigned d = unsigned(s[(i * w) / 64] >> ((i * w) % 64)) & ((1u << w) - 1);
        if (d) acc = acc + table[i * per + d - 1];
      }
      out[k] = acc;
    }
  });
  std::vector<Affine> res(out.size());
  // Normalize in parallel blocks (one inversion per block).
  pick(pool).parallel_for(out.size(), [&](size_t b, size_t e) { batch_to_affine(out.data() + b, res.data() + b, e - b); });
  return res;
}

fr_t nonzero(std::mt19937_64& g) {
  for (;;) {
    fr_t x = fr_t::random(g);
    if (!x.is_zero()) return x;
  }
}

}  // namespace

std::vector<g1_affine_t> fixed_base_g1(const g1_affine_t& base, std::span<const fr_t> s, ThreadPool* pool) {
  return fixed_base(base, s, pool);
}
std::vector<g2_affine_t> fixed_base_g2(const g2_affine_t& base, std::span<const fr_t> s, ThreadPool* pool) {
  return fixed_base(base, s, pool);
}

ToxicWaste ToxicWaste::from_seed(uint64_t seed) {
  // Deterministic by design (benchmarks must be reproducible); never use for real deployments.
  std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), 0x67726f74u /* "grot" */};
  std::mt19937_64 g(seq);
  ToxicWaste t;
  t.tau = nonzero(g);
  t.alpha = nonzero(g);
  t.beta = nonzero(g);
  t.gamma = nonzero(g);
  t.delta = nonzero(g);
  return t;
}

ProvingKey generate_keys(const r1cs::R1csMatrices& m, uint64_t seed, ThreadPool* pool) {
  ProvingKey pk = generate_keys(m, ToxicWaste::from_seed(seed), pool);
  pk.seed = seed;
  return pk;
}

ProvingKey generate_keys(const r1cs::R1csMatrices& m, const ToxicWaste& tw, ThreadPool* pool) {
  if (m.num_constraints == 0) throw std::invalid_argument("cannot generate keys for a circuit with no constraints");
  if (m.num_inputs == 0) throw std::invalid_argument("the circuit has no constant-one input");
  const Domain dom = Domain::at_least(std::max<uint64_t>(m.num_constraints, 2));
  const size_t n = dom.size();
  // The domain must have room for the evaluation at tau to differ from the roots; a tau that
  // is itself a root of unity of the domain would make Z(tau) = 0.
  if (dom.vanishing_on_coset(tw.tau).is_zero()) throw std::invalid_argument("tau lies in the evaluation domain");

  // Lagrange basis at tau: L_j(tau) = (1/n) sum_i tau^i omega^{-ij}, the inverse NTT of tau's powers.
  std::vector<fr_t> lag(n);
  {
    fr_t p = fr_t::one();
    for (size_t i = 0; i < n; ++i) {
      lag[i] = p;
      p *= tw.tau;
    }
    dom.inverse(lag, pool);
  }
  const size_t vars = m.num_inputs + m.num_aux;
  std::vector<fr_t> u(vars, fr_t::zero()), v(vars, fr_t::zero()), w(vars, fr_t::zero());
  auto accumulate = [&](const r1cs::CsrMatrix& mat, std::vector<fr_t>& out) {
    for (uint64_t row = 0; row < m.num_constraints; ++row)
      for (uint64_t k = mat.row_ptr[row]; k < mat.row_ptr[row + 1]; ++k) out[mat.col[k]] += mat.coeff[k] * lag[row];
  };
  accumulate(m.A, u);
  accumulate(m.B, v);
  accumulate(m.C, w);

  const fr_t gamma_inv = tw.gamma.inv(), delta_inv = tw.delta.inv();
  std::vector<fr_t> ic_s(m.num_inputs), l_s(m.num_aux);
  for (size_t i = 0; i < vars; ++i) {
    fr_t k = tw.beta * u[i] + tw.alpha * v[i] + w[i];
    if (i < m.num_inputs)
      ic_s[i] = k * gamma_inv;
    else
      l_s[i - m.num_inputs] = k * delta_inv;
  }
  // h_query[i] = tau^i Z(tau) / delta, i < n - 1 (deg H <= n - 2).
  std::vector<fr_t> h_s(n - 1);
  {
    fr_t zd = dom.vanishing_on_coset(tw.tau) * delta_inv, p = fr_t::one();
    for (size_t i = 0; i + 1 < n; ++i) {
      h_s[i] = p * zd;
      p *= tw.tau;
    }
  }
  const g1_affine_t& g1 = g1_generator();
  const g2_affine_t& g2 = g2_generator();
  ProvingKey pk;
  pk.convention = HConvention::kBellman;
  pk.num_inputs = m.num_inputs;
  pk.num_aux = m.num_aux;
  pk.num_constraints = m.num_constraints;
  pk.domain_size = n;
  pk.origin = "generated";
  auto one_g1 = [&](const fr_t& k) { return fixed_base_g1(g1, std::span<const fr_t>(&k, 1), pool)[0]; };
  auto one_g2 = [&](const fr_t& k) { return fixed_base_g2(g2, std::span<const fr_t>(&k, 1), pool)[0]; };
  pk.vk.alpha_g1 = one_g1(tw.alpha);
  pk.vk.beta_g1 = one_g1(tw.beta);
  pk.vk.beta_g2 = one_g2(tw.beta);
  pk.vk.gamma_g2 = one_g2(tw.gamma);
  pk.vk.delta_g1 = one_g1(tw.delta);
  pk.vk.delta_g2 = one_g2(tw.delta);
  pk.vk.ic = fixed_base_g1(g1, ic_s, pool);
  pk.a_query = fixed_base_g1(g1, u, pool);
  pk.b_g1_query = fixed_base_g1(g1, v, pool);
  pk.b_g2_query = fixed_base_g2(g2, v, pool);
  pk.h_query = fixed_base_g1(g1, h_s, pool);
  pk.l_query = fixed_base_g1(g1, l_s, pool);
  return pk;
}

}  // namespace cuzk::groth16
