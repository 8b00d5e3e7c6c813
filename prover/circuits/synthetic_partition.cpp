#include "prover/circuits/synthetic_partition.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "prover/synth/synth.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk::circuits {
namespace {

template <class Affine, class Jac>
std::vector<Affine> random_points(size_t n, const Affine& gen, uint64_t seed) {
  std::mt19937_64 g(seed);
  const Jac step = gen.to_jacobian().mul(fr_t::random(g));
  std::vector<Affine> out(n);
  ThreadPool::global().parallel_for(n, [&](size_t b, size_t e) {
    std::vector<Jac> jac(e - b);
    Jac p = step.mul(fr_t::from_u64(b + 1));
    for (size_t i = b; i < e; ++i) {
      jac[i - b] = p;
      p = p + step;
    }
    batch_to_affine(jac.data(), out.data() + b, e - b);
  });
  return out;
}

template <class Affine>
std::vector<Affine> repeat(std::span<const Affine> table, size_t n) {
  if (table.empty() || (table.size() & (table.size() - 1)) != 0)
    throw std::invalid_argument(fmt::format("repeat_points: a table of {} points (a power of two is needed)", table.size()));
  std::vector<Affine> out(n);
  const size_t mask = table.size() - 1;
  ThreadPool::global().parallel_for(n, [&](size_t b, size_t e) {
    for (size_t i = b; i < e;) {  // runs of the table, copied whole
      const size_t j = i & mask, len = std::min(e - i, table.size() - j);
      std::copy_n(table.data() + j, len, out.data() + i);
      i += len;
    }
  });
  return out;
}

// n points: all distinct (table_log == log2 n), or a table of 2^table_log repeated to n.
template <class Affine>
std::vector<Affine> key_points(size_t n, unsigned table_log, unsigned log_n,
                               std::vector<Affine> (*make)(size_t, uint64_t), uint64_t seed) {
  if (table_log == log_n) return make(n, seed);
  return repeat<Affine>(make(size_t(1) << table_log, seed), n);
}

}  // namespace

std::vector<g1_affine_t> repeat_points(std::span<const g1_affine_t> table, size_t n) { return repeat(table, n); }
std::vector<g2_affine_t> repeat_points(std::span<const g2_affine_t> table, size_t n) { return repeat(table, n); }

ValueMix porep_value_mix() {
  static const ValueMix mix = [] {
    auto c = PorepCircuit::generate(kValueMixCircuit, 1);
    auto pa = synth::prove_assignment(c);
    size_t z = 0, o = 0, all = 0;
    for (auto& v : pa.aux_assignment()) {
      z += v.is_zero();
      o += v.is_one();
      ++all;
    }
    return ValueMix{double(z) / double(all), double(o) / double(all)};
  }();
  return mix;
}

std::string describe_porep_value_mix() {
  const ValueMix m = porep_value_mix();
  return fmt::format("assignment value mix of PoRep {}: {:.3f} zero, {:.3f} one, {:.3f} other",
                     kValueMixCircuit.to_string(), m.zero, m.one, 1 - m.zero - m.one);
}

std::vector<fr_t> random_scalars(size_t n, uint64_t seed) {
  std::vector<fr_t> s(n);
  ThreadPool::global().parallel_for(n, [&](size_t b, size_t e) {
    std::mt19937_64 g(seed + b);
    for (size_t i = b; i < e; ++i) s[i] = fr_t::random(g);
  });
  return s;
}

std::vector<g1_affine_t> random_g1_points(size_t n, uint64_t seed) {
  return random_points<g1_affine_t, g1_jacobian_t>(n, g1_generator(), seed);
}

std::vector<g2_affine_t> random_g2_points(size_t n, uint64_t seed) {
  return random_points<g2_affine_t, g2_jacobian_t>(n, g2_generator(), seed);
}

std::unique_ptr<SyntheticPartition> make_synthetic_partition(unsigned log_n, unsigned table_log) {
  if (log_n < 1 || log_n > kSyntheticMaxLogN)
    throw std::invalid_argument(
        fmt::format("synthetic partition: log_n = {} is out of range [1, {}]", log_n, kSyntheticMaxLogN));
  if (table_log > log_n)
    throw std::invalid_argument(fmt::format(
        "synthetic partition: table_log = {} exceeds log_n = {} (the table of points cannot be larger than the key; "
        "0 or {} for distinct points)",
        table_log, log_n, log_n));
  if (table_log == 0) table_log = log_n;
  const size_t n = size_t(1) << log_n, m = n;
  auto s = std::make_unique<SyntheticPartition>();
  s->log_n = log_n;
  s->table_log = table_log;
  auto& pk = s->pk;
  pk.convention = groth16::HConvention::kBellman;
  pk.num_inputs = 2;
  pk.num_aux = m - 2;
  pk.num_constraints = n;
  pk.domain_size = n;
  pk.origin = "synthetic";
  std::mt19937_64 g(7);
  auto g1 = [&] { return g1_generator().to_jacobian().mul(fr_t::random(g)).to_affine(); };
  auto g2 = [&] { return g2_generator().to_jacobian().mul(fr_t::random(g)).to_affine(); };
  pk.vk.alpha_g1 = g1();
  pk.vk.beta_g1 = g1();
  pk.vk.delta_g1 = g1();
  pk.vk.beta_g2 = g2();
  pk.vk.gamma_g2 = g2();
  pk.vk.delta_g2 = g2();
  // One host array shared by the four G1 queries (the MSMs' cost does not depend on which
  // points they get); the views keep it alive as long as the key.
  auto pts = std::make_shared<const std::vector<g1_affine_t>>(key_points(n, table_log, log_n, &random_g1_points, 1));
  using G1Array = groth16::PointArray<g1_affine_t>;
  pk.h_query = G1Array::view(pts, pts->data(), n - 1);
  pk.a_query = G1Array::view(pts, pts->data(), m);
  pk.b_g1_query = G1Array::view(pts, pts->data(), m);
  pk.l_query = G1Array::view(pts, pts->data(), m - 2);
  pk.b_g2_query = key_points(m, table_log, log_n, &random_g2_points, 9);
  s->a = random_scalars(n, 11);
  s->b = random_scalars(n, 12);
  s->c = random_scalars(n, 13);
  s->input = {fr_t::one(), fr_t::from_u64(5)};
  s->aux = random_scalars(m - 2, 14);
  apply_value_mix(s->aux, porep_value_mix(), 15);
  return s;
}

void apply_value_mix(std::span<fr_t> v, ValueMix mix, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& x : v) {
    const double p = u(g);
    if (p < mix.zero) x = fr_t::zero();
    else if (p < mix.zero + mix.one) x = fr_t::one();
  }
}

}  // namespace cuzk::circuits
