// What the GPU tests (test_gpu_*.cpp) share: fresh seeds, random elements and points, the CPU
// and GPU MSMs of either group by the points' type, and sinks that see which phases ran.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/testing/entry_points.hpp"
#include "prover/engine/fault.hpp"
#include "prover/instr/phase.hpp"
#include "prover/msm/msm.hpp"

using namespace cuzk;

namespace {

inline uint64_t fresh_seed() { return (uint64_t(std::random_device{}()) << 32) | std::random_device{}(); }

template <class F>
std::vector<F> random_elems(size_t n, std::mt19937_64& g) {
  std::vector<F> v(n);
  for (auto& x : v) x = F::random(g);
  return v;
}

// Random G1 (or G2) points: multiples of the generator (so in the subgroup), consecutive sums of
// a random step (cheap, one addition each, all distinct), normalized in one batch.
template <class Affine = g1_affine_t>
std::vector<Affine> random_points(size_t n, std::mt19937_64& g) {
  Affine gen;
  if constexpr (std::is_same_v<Affine, g2_affine_t>) gen = g2_generator();
  else gen = g1_generator();
  using Jacobian = decltype(gen.to_jacobian());
  std::vector<Jacobian> jac(n);
  Jacobian p = gen.to_jacobian().mul(fr_t::random(g));
  const Jacobian step = gen.to_jacobian().mul(fr_t::random(g));
  for (size_t i = 0; i < n; ++i) {
    jac[i] = p;
    p = p + step;
  }
  return batch_to_affine(jac);
}

// The CPU and GPU MSMs of either group, chosen by the points' type.
inline g1_jacobian_t cpu_msm(std::span<const g1_affine_t> p, std::span<const fr_t> s) { return msm_g1(p, s); }
#if CUZK_GPU_G2
inline g2_jacobian_t cpu_msm(std::span<const g2_affine_t> p, std::span<const fr_t> s) { return msm_g2(p, s); }
#endif
inline g1_jacobian_t gpu_msm(std::span<const g1_affine_t> p, std::span<const fr_t> s, unsigned c = 0, unsigned slices = 1) {
  return cuda::msm_g1(p, s, c, slices);
}
#if CUZK_GPU_G2
inline g2_jacobian_t gpu_msm(std::span<const g2_affine_t> p, std::span<const fr_t> s, unsigned c = 0, unsigned slices = 1) {
  return cuda::msm_g2(p, s, c, slices);
}
#endif

// Clears an injected fault (prover/engine/fault.hpp) when a test leaves, by a failed check too.
struct FaultReset {
  ~FaultReset() { fault::set_for_testing(""); }
};

// Which phases a run opened and which reported GPU time, by leaf name (the CPU G2 thread opens
// its phase on another thread, hence the lock).
class PhaseLog : public instr::PhaseSink {
 public:
  void* begin(const std::string& path) override {
    std::lock_guard lk(mu_);
    ++opened[leaf(path)];
    return nullptr;
  }
  void end(void*) override {}
  void gpu_time(const std::string& path, uint64_t) override {
    std::lock_guard lk(mu_);
    ++gpu[leaf(path)];
  }
  std::map<std::string, size_t> opened, gpu;

 private:
  static std::string leaf(const std::string& p) { return p.substr(p.rfind('/') + 1); }  // npos + 1 == 0: all of it
  std::mutex mu_;
};

}  // namespace
