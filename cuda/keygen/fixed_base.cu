#include "cuda/keygen/fixed_base.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda/util/cuda_check.cuh"
#include "cuda/util/device_array.cuh"
#include "cuda/util/device_probe.hpp"

namespace cuzk::cuda {
namespace {

// Points a thread sums and then normalizes together: one inversion per chunk.
constexpr unsigned kChunk = 16;
constexpr unsigned kBlock = 128;
// Points per launch: bounds the device memory (scalars, Jacobian sums, prefix products, results:
// about 0.6 KiB a point in G2) whatever the length.
constexpr size_t kSlice = size_t(1) << 22;

// out[k] = scalars[k] * base through the window table; each thread takes kChunk consecutive
// points, keeps their Jacobian sums and the running product of their Z in `jac` and `prefix`,
// and turns them into affine points with one inversion (batch_to_affine's order).
template <class Affine>
__global__ void fixed_base_kernel(const Affine* __restrict__ table, const fr_t* __restrict__ scalars, size_t n,
                                  jacobian_t<typename Affine::field_t, typename Affine::config_t>* jac,
                                  typename Affine::field_t* prefix, Affine* out) {
  using F = typename Affine::field_t;
  using Jac = jacobian_t<F, typename Affine::config_t>;
  const size_t b = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * kChunk;
  if (b >= n) return;
  const size_t e = b + kChunk < n ? b + kChunk : n;
  F acc = F::one();
  for (size_t k = b; k < e; ++k) {
    uint64_t s[4];
    scalars[k].to_canonical(s);
    Jac p = Jac::infinity();
#pragma unroll 1
    for (unsigned i = 0; i < groth16::kFixedBaseWindows; ++i)
      if (const unsigned d = groth16::fixed_base_digit(s, i)) p = p + table[i * groth16::kFixedBaseDigits + d - 1];
    jac[k] = p;
    prefix[k] = acc;
    if (!p.is_infinity()) acc = acc * p.Z;
  }
  F inv = acc.inv();
  for (size_t k = e; k-- > b;) {
    const Jac p = jac[k];
    if (p.is_infinity()) {
      out[k] = Affine::infinity();
      continue;
    }
    const F zi = inv * prefix[k];
    inv = inv * p.Z;
    const F zi2 = zi.sqr();
    out[k] = Affine{p.X * zi2, p.Y * zi2 * zi, false};
  }
}

template <class Affine>
std::vector<Affine> run_fixed_base(int device, std::span<const Affine> table, std::span<const fr_t> scalars) {
  using F = typename Affine::field_t;
  using Jac = jacobian_t<F, typename Affine::config_t>;
  const size_t want = size_t(groth16::kFixedBaseWindows) * groth16::kFixedBaseDigits;
  if (table.size() != want)
    throw std::invalid_argument("fixed-base table of " + std::to_string(table.size()) + " points (expected " +
                                std::to_string(want) + ")");
  std::vector<Affine> out(scalars.size());
  if (scalars.empty()) return out;
  CUZK_CUDA_CHECK(cudaSetDevice(device));
  const size_t slice = std::min(kSlice, scalars.size());
  DeviceArray<Affine> d_table(table.size(), "fixed-base table");
  DeviceArray<fr_t> d_s(slice, "fixed-base scalars");
  DeviceArray<Jac> d_jac(slice, "fixed-base sums");
  DeviceArray<F> d_prefix(slice, "fixed-base prefix products");
  DeviceArray<Affine> d_out(slice, "fixed-base results");
  CUZK_CUDA_CHECK(cudaMemcpy(d_table.get(), table.data(), d_table.bytes(), cudaMemcpyHostToDevice));
  for (size_t lo = 0; lo < scalars.size(); lo += slice) {
    const size_t len = std::min(slice, scalars.size() - lo);
    CUZK_CUDA_CHECK(cudaMemcpy(d_s.get(), scalars.data() + lo, len * sizeof(fr_t), cudaMemcpyHostToDevice));
    const size_t threads = (len + kChunk - 1) / kChunk;
    fixed_base_kernel<Affine><<<grid_for(threads, kBlock), kBlock>>>(d_table.get(), d_s.get(), len, d_jac.get(),
                                                                    d_prefix.get(), d_out.get());
    CUZK_CUDA_CHECK_LAUNCH("fixed_base_kernel");
    CUZK_CUDA_CHECK(cudaMemcpy(out.data() + lo, d_out.get(), len * sizeof(Affine), cudaMemcpyDeviceToHost));
  }
  return out;
}

class CudaFixedBase final : public groth16::FixedBaseDevice {
 public:
  explicit CudaFixedBase(int device) : device_(device) {
    cudaDeviceProp prop{};
    CUZK_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    name_ = "cuda:" + std::to_string(device) + " " + prop.name;
  }
  std::string describe() const override { return name_; }
  std::vector<g1_affine_t> g1(std::span<const g1_affine_t> table, std::span<const fr_t> scalars) override {
    return run_fixed_base(device_, table, scalars);
  }
  bool has_g2() const override { return CUZK_GPU_G2 != 0; }
  std::vector<g2_affine_t> g2(std::span<const g2_affine_t> table, std::span<const fr_t> scalars) override {
#if CUZK_GPU_G2
    return run_fixed_base(device_, table, scalars);
#else
    (void)table;
    (void)scalars;
    throw std::logic_error("the G2 fixed-base kernel is built only with CUZK_GPU_G2");
#endif
  }

 private:
  int device_;
  std::string name_;
};

}  // namespace

std::unique_ptr<groth16::FixedBaseDevice> make_fixed_base_device(int device) {
  require_device();
  if (const unsigned n = device_count(); device < 0 || unsigned(device) >= n)
    throw std::invalid_argument("fixed-base device " + std::to_string(device) + " (this machine has " +
                                std::to_string(n) + " CUDA device(s))");
  return std::make_unique<CudaFixedBase>(device);
}

}  // namespace cuzk::cuda
