// Host-memory entry points to the device NTT, H and MSM (plain C++: for tests and benchmarks
// compiled by g++). Each call uploads, runs on its own stream, and downloads; throws CudaError /
// DeviceOutOfMemory (cuda/stage/cuda_backend.hpp) on failure.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cuda/msm/msm_points.hpp"
#include "cuda/ntt/ntt_plan.hpp"
#include "cuda/stage/staged_upload_options.hpp"
#include "prover/ec/g1.hpp"
#include "prover/ec/g2.hpp"
#include "prover/ff/bls12_381.hpp"
#include "prover/groth16/prover.hpp"

namespace cuzk::cuda {

// The same conventions as cuzk::Domain (prover/ntt/ntt.hpp); a.size() must be a power of two.
// plan: the pass split (cuda/ntt/ntt_plan.hpp; {} is the default rule).
void ntt_forward(std::span<fr_t> a, NttPlan plan = {});
void ntt_inverse(std::span<fr_t> a, NttPlan plan = {});
void ntt_coset_forward(std::span<fr_t> a, const fr_t& g, NttPlan plan = {});
void ntt_coset_inverse(std::span<fr_t> a, const fr_t& g, NttPlan plan = {});

// groth16::compute_h on the device, its NTTs under `plan`.
std::vector<fr_t> compute_h(groth16::HConvention conv, const groth16::Witness& w, uint64_t domain_size,
                            NttPlan plan = {});

// sum scalars[i] * points[i]; window_bits 0 picks the GPU default. slices > 1 uploads the input
// in that many parts, each summed into the buckets as it arrives (MsmSlice). One implementation
// for both groups (Msm<P>, cuda/msm/msm.cuh).
g1_jacobian_t msm_g1(std::span<const g1_affine_t> points, std::span<const fr_t> scalars, unsigned window_bits = 0,
                     unsigned slices = 1);
#if CUZK_GPU_G2  // the G2 device MSM is built only with the flag (cuda/msm/msm.cu says why)
g2_jacobian_t msm_g2(std::span<const g2_affine_t> points, std::span<const fr_t> scalars, unsigned window_bits = 0,
                     unsigned slices = 1);
#endif

// MSMs over one set of scalars and several sets of points, the scalars sorted once (DigitPlan,
// cuda/msm/msm.cuh) as the proving stage sorts its assignment: result k is
// sum_{i >= skips[k]} scalars[i] * points[k][i - skips[k]] (points[k] holds scalars.size() -
// skips[k] points). With `stale`, another MSM sorts scalars of its own on the same workspace
// between the plan and its first use, which must throw std::logic_error. `skip_zero`:
// Msm::set_skip_zero_digits; `equal_chunks`: Msm::set_equal_chunks (unset: its rule). Empty
// where the digits do not fit one sort (Msm::plan).
std::vector<g1_jacobian_t> msm_g1_planned(std::span<const std::vector<g1_affine_t>> points,
                                          std::span<const size_t> skips, std::span<const fr_t> scalars,
                                          unsigned window_bits = 0, bool stale = false, bool skip_zero = false,
                                          std::optional<bool> equal_chunks = std::nullopt);

// Element-wise products on the device (to check the device arithmetic against the host).
std::vector<fr_t> fr_mul(std::span<const fr_t> a, std::span<const fr_t> b);
std::vector<fp_t> fp_mul(std::span<const fp_t> a, std::span<const fp_t> b);
// Field products per second on the device: every thread runs a long chain of products (the
// arithmetic's throughput, which bounds the NTT and MSM kernels). `fp`: Fp, else Fr.
double field_mul_throughput(bool fp);
// acc[i] + pts[i] (XYZZ mixed addition) and acc[i].dbl(), on the device.
std::vector<g1_xyzz_t> g1_madd(std::span<const g1_xyzz_t> acc, std::span<const g1_affine_t> pts);

// For benchmarks: data kept on the device between calls, GPU time from CUDA events. P is the
// group (G1Points, G2Points: cuda/msm/msm_points.hpp); both are instantiated in entry_points.cu.
template <class P>
class DeviceMsm {
 public:
  using Affine = typename P::affine;
  using Jacobian = typename P::jacobian;
  DeviceMsm();
  ~DeviceMsm();
  // Uploads bases and scalars (timed separately); then runs the MSM on the resident data.
  void upload(std::span<const Affine> points, std::span<const fr_t> scalars);
  Jacobian run(unsigned window_bits = 0);
  // Upload and MSM overlapped: the input goes up in slices on a second stream (each slice's
  // scalars, then its points) while the GPU sorts and sums the slices already there
  // (MsmSlice). last_run_gpu_ms() is then the whole, from the first copy to the result.
  // slices 0 picks the default count for the length.
  Jacobian upload_and_run(std::span<const Affine> points, std::span<const fr_t> scalars, unsigned window_bits = 0,
                          unsigned slices = 0);
  void set_chunk(uint32_t points);  // Msm<P>::set_chunk
  void set_skip_zero_digits(bool on);  // Msm<P>::set_skip_zero_digits
  void set_equal_chunks(std::optional<bool> on);  // Msm<P>::set_equal_chunks (unset: its rule)
  void set_fill_later_rounds(bool on);  // Msm<P>::set_fill_later_rounds
  double last_upload_ms() const;
  double last_run_gpu_ms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
using DeviceMsmG1 = DeviceMsm<G1Points>;
extern template class DeviceMsm<G1Points>;
#if CUZK_GPU_G2
using DeviceMsmG2 = DeviceMsm<G2Points>;
extern template class DeviceMsm<G2Points>;
#endif

class DeviceNtt {
 public:
  // plan: the pass split of every transform (cuda/ntt/ntt_plan.hpp; {} is the default rule).
  explicit DeviceNtt(unsigned log_n, NttPlan plan = {});
  ~DeviceNtt();
  void upload(std::span<const fr_t> a);
  enum class Order {
    kNatural,     // natural in and out: the last DIF pass stores bit-reversed
    kReversedOut  // the DIF passes alone, natural in, bit-reversed out (as H uses them)
  };
  // On the device, GPU time in last_gpu_ms().
  void forward(Order order = Order::kNatural);
  void download(std::span<fr_t> a);
  double last_gpu_ms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// src to the device through a StagedUploader with this staging (cuda/stage/staged_upload.cuh; page-locked
// src is copied directly) and back (for the tests).
std::vector<uint8_t> staged_round_trip(std::span<const uint8_t> src, const StagedUploadOptions& staging);

// For benchmarks: GB/s of one upload of `bytes` from pageable host memory through a StagedUploader
// with this staging, from the first copy enqueued to the last one done (GPU events), after one
// untimed upload.
double staged_upload_gbps(size_t bytes, const StagedUploadOptions& staging);

// Allocates and frees `bytes` of device memory, labelled `what`: DeviceOutOfMemory when it does
// not fit (for the error tests).
void try_device_alloc(size_t bytes, const char* what);

// Page-locks host memory for the lifetime of the object (cudaHostRegister / Unregister).
class HostPin {
 public:
  HostPin(const void* p, size_t bytes);
  ~HostPin();
  HostPin(const HostPin&) = delete;
  HostPin& operator=(const HostPin&) = delete;

 private:
  void* p_;
};

}  // namespace cuzk::cuda
