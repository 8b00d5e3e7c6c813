#include "prover/groth16/setup.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

#include "prover/ntt/ntt.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk::groth16 {
namespace {

ThreadPool& pick(ThreadPool* p) { return p ? *p : ThreadPool::global(); }

template <class Affine>
std::vector<Affine> make_table(const Affine& base) {
  using Jac = jacobian_t<typename Affine::field_t, typename Affine::config_t>;
  std::vector<Jac> tj(size_t(kFixedBaseWindows) * kFixedBaseDigits);
  Jac row = Jac::from_affine(base);
  for (unsigned i = 0; i < kFixedBaseWindows; ++i) {
    Jac acc = row;
    for (size_t d = 1; d <= kFixedBaseDigits; ++d) {
      tj[i * kFixedBaseDigits + d - 1] = acc;
      acc = acc + row;
    }
    row = acc;  // 2^w * row
  }
  return batch_to_affine(tj);
}

template <class Affine>
std::vector<Affine> fixed_base(const std::vector<Affine>& table, std::span<const fr_t> scalars, ThreadPool* pool) {
  using Jac = jacobian_t<typename Affine::field_t, typename Affine::config_t>;
  std::vector<Affine> res(scalars.size());
  // Blocks of points: each summed, then normalized with one inversion per block.
  pick(pool).parallel_for(scalars.size(), [&](size_t b, size_t e) {
    constexpr size_t kBlock = 4096;
    std::vector<Jac> out(std::min(kBlock, e - b));
    for (size_t lo = b; lo < e; lo += kBlock) {
      const size_t hi = std::min(e, lo + kBlock);
      for (size_t k = lo; k < hi; ++k) {
        uint64_t s[4];
        scalars[k].to_canonical(s);
        Jac acc = Jac::infinity();
        for (unsigned i = 0; i < kFixedBaseWindows; ++i)
          if (const unsigned d = fixed_base_digit(s, i)) acc = acc + table[i * kFixedBaseDigits + d - 1];
        out[k - lo] = acc;
      }
      batch_to_affine(out.data(), res.data() + lo, hi - lo);
    }
  });
  return res;
}

fr_t nonzero(std::mt19937_64& g) {
  for (;;) {
    fr_t x = fr_t::random(g);
    if (!x.is_zero()) return x;
  }
}

}  // namespace

std::vector<g1_affine_t> fixed_base_table(const g1_affine_t& base) { return make_table(base); }
std::vector<g2_affine_t> fixed_base_table(const g2_affine_t& base) { return make_table(base); }

std::vector<g1_affine_t> fixed_base_g1(const g1_affine_t& base, std::span<const fr_t> s, ThreadPool* pool) {
  return fixed_base(make_table(base), s, pool);
}
std::vector<g2_affine_t> fixed_base_g2(const g2_affine_t& base, std::span<const fr_t> s, ThreadPool* pool) {
  return fixed_base(make_table(base), s, pool);
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
  return generate_keys(m, seed, KeygenOptions{pool, nullptr});
}

ProvingKey generate_keys(const r1cs::R1csMatrices& m, const ToxicWaste& tw, ThreadPool* pool) {
  return generate_keys(m, tw, KeygenOptions{pool, nullptr});
}

ProvingKey generate_keys(const r1cs::R1csMatrices& m, uint64_t seed, const KeygenOptions& o) {
  ProvingKey pk = generate_keys(m, ToxicWaste::from_seed(seed), o);
  pk.seed = seed;
  return pk;
}

namespace {

// x^b, x^(b+1), ... into out[b..e) for every block, in parallel (one power per block).
void powers(std::vector<fr_t>& out, const fr_t& x, const fr_t& scale, ThreadPool& pool) {
  pool.parallel_for(out.size(), [&](size_t b, size_t e) {
    fr_t p = x.pow(uint64_t(b)) * scale;
    for (size_t i = b; i < e; ++i) {
      out[i] = p;
      p *= x;
    }
  });
}

}  // namespace

namespace {
Domain keygen_domain(uint64_t constraints, const fr_t& tau) {
  const Domain dom = Domain::at_least(std::max<uint64_t>(constraints, 2));
  // The domain must have room for the evaluation at tau to differ from the roots; a tau that
  // is itself a root of unity of the domain would make Z(tau) = 0.
  if (dom.vanishing_on_coset(tau).is_zero()) throw std::invalid_argument("tau lies in the evaluation domain");
  return dom;
}
}  // namespace

std::vector<fr_t> lagrange_at_tau(const fr_t& tau, uint64_t constraints, ThreadPool* pool) {
  const Domain dom = keygen_domain(constraints, tau);
  // L_j(tau) = (1/n) sum_i tau^i omega^{-ij}: the inverse NTT of tau's powers.
  std::vector<fr_t> lag(dom.size());
  powers(lag, tau, fr_t::one(), pick(pool));
  dom.inverse(lag, &pick(pool));
  return lag;
}

QapAtTau qap_at_tau(const r1cs::R1csMatrices& m, std::span<const fr_t> lag) {
  if (lag.size() < m.num_constraints)
    throw std::invalid_argument("qap_at_tau: " + std::to_string(lag.size()) + " Lagrange values for " +
                                std::to_string(m.num_constraints) + " constraints");
  QapAtTau q = QapAtTau::zeros(m.num_inputs, m.num_aux, m.num_constraints);
  // One thread per matrix: a row scatters into any column, so a matrix is summed by one thread.
  auto accumulate = [&](const r1cs::CsrMatrix& mat, std::vector<fr_t>& out) {
    for (uint64_t row = 0; row < m.num_constraints; ++row)
      for (uint64_t k = mat.row_ptr[row]; k < mat.row_ptr[row + 1]; ++k) out[mat.col[k]] += mat.coeff[k] * lag[row];
  };
  std::thread ta([&] { accumulate(m.A, q.u); });
  std::thread tb([&] { accumulate(m.B, q.v); });
  accumulate(m.C, q.w);
  ta.join();
  tb.join();
  return q;
}

QapAtTau QapAtTau::zeros(uint64_t inputs, uint64_t aux, uint64_t constraints) {
  QapAtTau q;
  q.num_inputs = inputs;
  q.num_aux = aux;
  q.num_constraints = constraints;
  for (auto* v : {&q.u, &q.v, &q.w}) v->assign(inputs + aux, fr_t::zero());
  return q;
}

ProvingKey generate_keys(const r1cs::R1csMatrices& m, const ToxicWaste& tw, const KeygenOptions& o) {
  // The QAP's overload checks the counts.
  QapAtTau q;
  {
    const std::vector<fr_t> lag = lagrange_at_tau(tw.tau, m.num_constraints, o.pool);
    q = qap_at_tau(m, lag);
  }
  return generate_keys(std::move(q), tw, o);
}

ProvingKey generate_keys(QapAtTau q, const ToxicWaste& tw, const KeygenOptions& o) {
  if (q.num_constraints == 0) throw std::invalid_argument("cannot generate keys for a circuit with no constraints");
  if (q.num_inputs == 0) throw std::invalid_argument("the circuit has no constant-one input");
  const size_t vars = q.num_inputs + q.num_aux;
  if (q.u.size() != vars || q.v.size() != vars || q.w.size() != vars)
    throw std::invalid_argument("generate_keys: the QAP's columns do not have one value per variable");
  ThreadPool& pool = pick(o.pool);
  const Domain dom = keygen_domain(q.num_constraints, tw.tau);
  const size_t n = dom.size();

  const fr_t gamma_inv = tw.gamma.inv(), delta_inv = tw.delta.inv();
  std::vector<fr_t> ic_s(q.num_inputs), l_s(q.num_aux);
  pool.parallel_for(vars, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      fr_t k = tw.beta * q.u[i] + tw.alpha * q.v[i] + q.w[i];
      if (i < q.num_inputs)
        ic_s[i] = k * gamma_inv;
      else
        l_s[i - q.num_inputs] = k * delta_inv;
    }
  });
  std::vector<fr_t>().swap(q.w);

  const g1_affine_t& g1 = g1_generator();
  const g2_affine_t& g2 = g2_generator();
  const std::vector<g1_affine_t> t1 = make_table(g1);
  const std::vector<g2_affine_t> t2 = make_table(g2);
  auto many_g1 = [&](std::span<const fr_t> s) { return o.device ? o.device->g1(t1, s) : fixed_base(t1, s, &pool); };
  auto many_g2 = [&](std::span<const fr_t> s) {
    return o.device && o.device->has_g2() ? o.device->g2(t2, s) : fixed_base(t2, s, &pool);
  };
  auto one_g1 = [&](const fr_t& k) { return g1.to_jacobian().mul(k).to_affine(); };
  auto one_g2 = [&](const fr_t& k) { return g2.to_jacobian().mul(k).to_affine(); };

  ProvingKey pk;
  pk.convention = HConvention::kBellman;
  pk.num_inputs = q.num_inputs;
  pk.num_aux = q.num_aux;
  pk.num_constraints = q.num_constraints;
  pk.domain_size = n;
  pk.origin = "generated";
  pk.vk.alpha_g1 = one_g1(tw.alpha);
  pk.vk.beta_g1 = one_g1(tw.beta);
  pk.vk.beta_g2 = one_g2(tw.beta);
  pk.vk.gamma_g2 = one_g2(tw.gamma);
  pk.vk.delta_g1 = one_g1(tw.delta);
  pk.vk.delta_g2 = one_g2(tw.delta);
  // Each scalar vector is dropped once its points exist: at 2^27 they are 4 GiB each.
  pk.vk.ic = many_g1(ic_s);
  pk.l_query = many_g1(l_s);
  std::vector<fr_t>().swap(l_s);
  pk.a_query = many_g1(q.u);
  std::vector<fr_t>().swap(q.u);
  pk.b_g1_query = many_g1(q.v);
  pk.b_g2_query = many_g2(q.v);
  std::vector<fr_t>().swap(q.v);
  {
    // h_query[i] = tau^i Z(tau) / delta, i < n - 1 (deg H <= n - 2).
    std::vector<fr_t> h_s(n - 1);
    powers(h_s, tw.tau, dom.vanishing_on_coset(tw.tau) * delta_inv, pool);
    pk.h_query = many_g1(h_s);
  }
  return pk;
}

}  // namespace cuzk::groth16
