#include "prover/groth16/prover.hpp"

#include <sys/random.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

#include "prover/groth16/key_residency.hpp"
#include "prover/instr/phase.hpp"
#include "prover/msm/msm.hpp"
#include "prover/ntt/ntt.hpp"
#include "prover/util/thread_pool.hpp"

namespace cuzk::groth16 {
namespace {

ThreadPool& pick(ThreadPool* p) { return p ? *p : ThreadPool::global(); }

// A UniformRandomBitGenerator over getrandom(2).
struct SystemRandom {
  using result_type = uint64_t;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t(0); }
  uint64_t operator()() {
    uint64_t v;
    size_t got = 0;
    while (got < sizeof v) {
      ssize_t k = getrandom(reinterpret_cast<char*>(&v) + got, sizeof v - got, 0);
      if (k < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
      }
      got += size_t(k);
    }
    return v;
  }
};

std::vector<fr_t> padded(std::span<const fr_t> v, size_t n) {
  std::vector<fr_t> out(n, fr_t::zero());
  std::copy(v.begin(), v.end(), out.begin());
  return out;
}


}  // namespace

Randomness Randomness::from_seed(uint64_t seed) {
  std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), 0x72732121u /* "rs!!" */};
  std::mt19937_64 g(seq);
  return {fr_t::random(g), fr_t::random(g)};
}

Randomness Randomness::secure() {
  SystemRandom g;
  return {fr_t::random(g), fr_t::random(g)};
}

std::vector<fr_t> compute_h(HConvention conv, const Witness& w, uint64_t n, ThreadPool* pool) {
  instr::Phase phase("ntt_h");
  ThreadPool& tp = pick(pool);
  if (w.a.size() > n || w.b.size() > n || w.c.size() > n)
    throw std::invalid_argument("H: more constraint evaluations (" + std::to_string(w.a.size()) +
                                ") than the domain holds (" + std::to_string(n) + ")");
  // ceil(log2 n) without a loop: a shift loop never ends for n > 2^63 (a corrupt key).
  if (n == 0) throw std::invalid_argument("H: the key's domain is empty");
  const unsigned log_n = unsigned(std::bit_width(n - 1));
  if (log_n > unsigned(fr_t::two_adicity()))
    throw std::invalid_argument("H: the key's domain (" + std::to_string(n) + ") exceeds Fr's 2-adicity");
  Domain dom(log_n);
  std::vector<fr_t> a = padded(w.a, n), b = padded(w.b, n), c = padded(w.c, n);
  // Coset shift: bellman uses the multiplicative generator; snarkjs the primitive 2n-th root
  // (the odd coset of the 2n-th roots), where Z(x) = x^n - 1 is the constant -2.
  const fr_t shift = conv == HConvention::kBellman ? Domain::coset_generator() : fr_t::root_of_unity(log_n + 1);
  for (auto* v : {&a, &b, &c}) {
    dom.inverse(*v, &tp);
    dom.coset_forward(*v, shift, &tp);
  }
  tp.parallel_for(n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) a[i] = a[i] * b[i] - c[i];
  });
  if (conv == HConvention::kSnarkjs) return a;
  const fr_t zinv = dom.vanishing_on_coset(shift).inv();
  tp.parallel_for(n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) a[i] *= zinv;
  });
  dom.coset_inverse(a, shift, &tp);
  a.resize(n - 1);  // deg H <= n - 2; the top coefficient is 0 for a satisfied witness
  return a;
}

void check_witness_shape(const ProvingKey& pk, const Witness& w) {
  auto fail = [](const std::string& what, size_t got, size_t want) {
    throw std::invalid_argument("witness does not match the proving key: " + what + " is " + std::to_string(got) +
                                ", the key expects " + std::to_string(want));
  };
  if (w.input.size() != pk.num_inputs) fail("the number of inputs", w.input.size(), pk.num_inputs);
  if (w.aux.size() != pk.num_aux) fail("the number of auxiliary variables", w.aux.size(), pk.num_aux);
  if (w.a.size() != w.b.size() || w.a.size() != w.c.size())
    throw std::invalid_argument("witness a, b, c have different lengths");
  if (w.a.size() > pk.domain_size) fail("the number of constraints", w.a.size(), pk.num_constraints);
  if (w.input.empty() || !w.input[0].is_one()) throw std::invalid_argument("witness input 0 must be the constant 1");
}

Proof assemble(const ProvingKey& pk, const MsmResults& m, const Randomness& rs) {
  instr::Phase phase("assemble");
  const auto& vk = pk.vk;
  // A = alpha + sum a_i u_i(tau) + r delta
  g1_jacobian_t A = m.a + vk.alpha_g1 + vk.delta_g1.to_jacobian().mul(rs.r);
  // B = beta + sum a_i v_i(tau) + s delta (in G2, and in G1 for C)
  g2_jacobian_t B = m.b_g2 + vk.beta_g2 + vk.delta_g2.to_jacobian().mul(rs.s);
  g1_jacobian_t B1 = m.b_g1 + vk.beta_g1 + vk.delta_g1.to_jacobian().mul(rs.s);
  // C = h + l + s A + r B1 - r s delta
  g1_jacobian_t C = m.h + m.l + A.mul(rs.s) + B1.mul(rs.r) - vk.delta_g1.to_jacobian().mul(rs.r * rs.s);
  return Proof{A.to_affine(), B.to_affine(), C.to_affine()};
}

Proof prove_cpu(const ProvingKey& pk, const Witness& w, const Randomness& rs, ThreadPool* pool) {
  check_witness_shape(pk, w);
  require_host_points(pk, HostQueries{}, "the CPU prover");
  ThreadPool& tp = pick(pool);
  std::vector<fr_t> h = compute_h(pk.convention, w, pk.domain_size, &tp);
  if (h.size() != pk.h_query.size())
    throw std::invalid_argument("H has " + std::to_string(h.size()) + " terms but the key's H query has " +
                                std::to_string(pk.h_query.size()));
  // One canonical conversion of the assignment (input then aux), shared by the a, b_g1, b_g2 MSMs.
  const CanonicalScalars zc = to_canonical(w.input, w.aux, &tp);
  const CanonicalScalars hc = to_canonical(h, {}, &tp);
  const uint64_t* auxc = zc.data() + 4 * w.input.size();
  MsmResults m;
  {
    instr::Phase p("msm_h");
    m.h = msm_g1_canonical(pk.h_query, hc.data(), h.size(), &tp);
  }
  {
    instr::Phase p("msm_l");
    m.l = msm_g1_canonical(pk.l_query, auxc, w.aux.size(), &tp);
  }
  {
    instr::Phase p("msm_a");
    m.a = msm_g1_canonical(pk.a_query, zc.data(), zc.size(), &tp);
  }
  {
    instr::Phase p("msm_b_g1");
    m.b_g1 = msm_g1_canonical(pk.b_g1_query, zc.data(), zc.size(), &tp);
  }
  {
    instr::Phase p("msm_b_g2");
    m.b_g2 = msm_g2_canonical(pk.b_g2_query, zc.data(), zc.size(), &tp);
  }
  return assemble(pk, m, rs);
}

}  // namespace cuzk::groth16
