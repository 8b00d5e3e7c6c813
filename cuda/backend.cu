// The CUDA proving stage (groth16::Backend "cuda"): per circuit of a batch,
//   pin_abc   page-lock a, b, c (CUZK_PINNED_HOST=ON only; the unpinning after the copies is
//             counted in the same phase)
//   h2d       copy a, b, c and the assignment to the device (and, on the first proof with a key,
//             the key's G1 points, and with CUZK_GPU_G2 its B query's G2 points: sub-phase
//             h2d/srs; they stay resident for later proofs)
//   ntt_h     H on the device (cuda/h_poly.cuh)
//   msm_h, msm_l, msm_a, msm_b_g1   G1 MSMs on the device (cuda/msm.cuh)
//   msm_b_g2  CUZK_GPU_G2=ON only: the G2 MSM on the device, after msm_b_g1, over the same
//             resident assignment (sharing the G1 MSM's scratch buffers, MsmWorkspace)
// while, with CUZK_GPU_G2=OFF (the default), msm_b_g2 runs on CPU threads for every circuit of
// the batch, concurrently with all of the above (CUZK_GPU_SPARE_CORE=ON: on one core fewer than
// the process may use, see g2_pool_; with CUZK_GPU_G2 there is no CPU G2 work and the flag does
// nothing); then assemble (shared with the CPU backend). Every GPU phase reports its GPU time
// from CUDA events through instr::report_gpu_time.
//
// A job that fails on the device (out of memory, a CUDA error) releases every device buffer the
// backend holds (the resident key included) before the error reaches the caller, so the next
// job starts from a clean device; $CUZK_INJECT_FAULT cuda_oom_at / cuda_error_at
// (prover/engine/fault.hpp) fire such failures at a GPU phase's start, for the tests.
#include <algorithm>
#include <exception>
#include <memory>
#include <thread>

#include "cuda/check.cuh"
#include "cuda/gpu_phase.cuh"
#include "cuda/h_poly.cuh"
#include "cuda/msm.cuh"
#include "cuda/runtime.hpp"
#include "prover/engine/fault.hpp"
#include "prover/groth16/backend.hpp"
#include "prover/instr/phase.hpp"
#include "prover/msm/msm.hpp"
#include "prover/util/cpu_placement.hpp"
#include "prover/util/thread_pool.hpp"

#ifndef CUZK_PINNED_HOST
#define CUZK_PINNED_HOST 0
#endif
#ifndef CUZK_GPU_SPARE_CORE
#define CUZK_GPU_SPARE_CORE 0
#endif
#ifndef CUZK_GPU_G2
#define CUZK_GPU_G2 0
#endif

namespace cuzk::cuda {
namespace {

using groth16::Proof;
using groth16::ProvingKey;
using groth16::Randomness;
using groth16::Witness;

// The key's points on the device, for the key they were uploaded from.
struct ResidentKey {
  const void* id = nullptr;  // the h_query data pointer identifies the key's storage
  size_t h = 0, l = 0, a = 0, b = 0;
  DeviceArray<g1_affine_t> h_q, l_q, a_q, b_q;
#if CUZK_GPU_G2
  DeviceArray<g2_affine_t> b_g2_q;
#endif
};

// The test-only injected device failure at GPU phase `phase`, thrown as a real one would be.
void fault_point(const char* phase) {
  if (!fault::active()) return;  // the measured path: no string built when nothing is injected
  const auto k = fault::fire(std::string("proof/prove/") + phase);
  if (!k) return;
  const std::string where = std::string(" (injected: ") + fault::kEnvVar + " at " + phase + ")";
  if (*k == fault::Kind::kCudaOomAt) {
    size_t free_b = 0, total_b = 0;
    (void)cudaMemGetInfo(&free_b, &total_b);
    throw DeviceOutOfMemory(std::string("device out of memory in ") + phase + where, 0, free_b, total_b);
  }
  if (*k == fault::Kind::kCudaErrorAt)
    throw CudaError(std::string("CUDA error in ") + phase + ": cudaErrorLaunchFailure: unspecified launch failure" + where);
}

unsigned log2_of(uint64_t n) {
  unsigned k = 0;
  while ((uint64_t(1) << k) < n) ++k;
  return k;
}

class CudaBackend final : public groth16::Backend {
 public:
  explicit CudaBackend(bool pin_abc) : pin_abc_(pin_abc) {
    CUZK_CUDA_CHECK(cudaSetDevice(0));
    // Wait for the GPU by sleeping, not spinning: msm_b_g2 runs on every CPU core meanwhile
    // (CUZK_GPU_G2 off), and a spinning wait would take one of them for the whole GPU part. Best
    // effort: an older driver may refuse the flag on an already active context, which only costs
    // that core.
    if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) (void)cudaGetLastError();
    CUZK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
#if CUZK_GPU_SPARE_CORE && !CUZK_GPU_G2
    g2_pool_ = std::make_unique<ThreadPool>(spare_core_threads());
#endif
  }
  ~CudaBackend() override { cudaStreamDestroy(stream_); }
  std::string name() const override { return "cuda"; }

  void release(const ProvingKey& pk) override {
    if (key_.id == pk.h_query.data()) key_ = ResidentKey{};
  }

  std::vector<Proof> prove_batch(const ProvingKey& pk, std::span<const Witness> ws,
                                 std::span<const Randomness> rs) override {
    if (ws.size() != rs.size())
      throw std::invalid_argument("prove_batch: " + std::to_string(ws.size()) + " witnesses but " + std::to_string(rs.size()) + " randomness pairs");
    for (auto& w : ws) groth16::check_witness_shape(pk, w);
    const uint64_t n = pk.domain_size;
    const unsigned log_n = log2_of(n);
    const size_t m = pk.num_inputs + pk.num_aux;

#if CUZK_GPU_G2
    // Every MSM, msm_b_g2 included, on the device (gpu_part). The device reads m points of the
    // G2 query unchecked, where the CPU's msm_g2 refused a length mismatch: so check here.
    if (pk.b_g2_query.size() != m)
      throw std::invalid_argument("the key's B query (G2) has " + std::to_string(pk.b_g2_query.size()) +
                                  " points but the assignment " + std::to_string(m) + " values");
    std::vector<groth16::MsmResults> res(ws.size());
    try {
      for (size_t i = 0; i < ws.size(); ++i) gpu_part(pk, ws[i], n, log_n, m, res[i]);
    } catch (...) {
      release_device_memory();
      throw;
    }
    std::vector<Proof> proofs;
    for (size_t i = 0; i < ws.size(); ++i) proofs.push_back(groth16::assemble(pk, res[i], rs[i]));
    return proofs;
#else
    // msm_b_g2 for every circuit on CPU threads, concurrently with the GPU work below.
    std::vector<g2_jacobian_t> b_g2(ws.size());
    std::exception_ptr g2_error;
    const std::string parent = instr::current_path();
    std::thread g2([&] {
      try {
        // A thread inherits its creator's CPU mask: under a placement (--stable) the creator is
        // the GPU-driving thread, whose core this CPU work must leave free.
        placement::pin_current_thread_to_workers();
        for (size_t i = 0; i < ws.size(); ++i) {
          instr::Phase p("msm_b_g2", parent);
          b_g2[i] = msm_g2(pk.b_g2_query, ws[i].input, ws[i].aux, g2_pool_.get());
        }
      } catch (...) {
        g2_error = std::current_exception();
      }
    });
    std::vector<groth16::MsmResults> res(ws.size());
    try {
      for (size_t i = 0; i < ws.size(); ++i) gpu_part(pk, ws[i], n, log_n, m, res[i]);
    } catch (...) {
      g2.join();
      release_device_memory();
      throw;
    }
    g2.join();
    if (g2_error) std::rethrow_exception(g2_error);
    std::vector<Proof> proofs;
    for (size_t i = 0; i < ws.size(); ++i) {
      res[i].b_g2 = b_g2[i];
      proofs.push_back(groth16::assemble(pk, res[i], rs[i]));
    }
    return proofs;
#endif
  }

 private:
  // After a failed job: every device buffer goes (they are re-created on demand), so a device
  // left short of memory by the failure is not kept short by this backend.
  void release_device_memory() {
    (void)cudaStreamSynchronize(stream_);  // no copy or kernel still uses a buffer freed below
    (void)cudaGetLastError();
    key_ = ResidentKey{};
    a_ = DeviceArray<fr_t>();
    b_ = DeviceArray<fr_t>();
    c_ = DeviceArray<fr_t>();
    z_ = DeviceArray<fr_t>();
    ntt_ = NttContext();
    const uint32_t chunk = msm_.chunk();
    msm_ = MsmG1();
    msm_.set_chunk(chunk);
#if CUZK_GPU_G2
    msm_g2_ = MsmG2(msm_.workspace());  // drops the last reference to the old buffers
    msm_g2_.set_chunk(chunk);
#endif
  }

  void ensure_key(const ProvingKey& pk) {
    if (key_.id == pk.h_query.data() && key_.h == pk.h_query.size()) return;
    key_ = ResidentKey{};  // free the previous key first
    instr::Phase p("srs");
    // A query of G1 or G2 points into its device array.
    auto up = [&]<class T>(const groth16::PointArray<T>& q, DeviceArray<T>& d, const char* what) {
      d = DeviceArray<T>(q.size(), what);
      if (q.size())
        CUZK_CUDA_CHECK(cudaMemcpyAsync(d.get(), q.data(), q.size() * sizeof(T), cudaMemcpyHostToDevice, stream_));
    };
    up(pk.h_query, key_.h_q, "the key's H query");
    up(pk.l_query, key_.l_q, "the key's L query");
    up(pk.a_query, key_.a_q, "the key's A query");
    up(pk.b_g1_query, key_.b_q, "the key's B query (G1)");
#if CUZK_GPU_G2
    up(pk.b_g2_query, key_.b_g2_q, "the key's B query (G2)");
#endif
    CUZK_CUDA_CHECK(cudaStreamSynchronize(stream_));
    key_.id = pk.h_query.data();
    key_.h = pk.h_query.size();
  }

  void gpu_part(const ProvingKey& pk, const Witness& w, uint64_t n, unsigned log_n, size_t m,
                groth16::MsmResults& out) {
    const size_t rows = w.a.size();
    std::vector<std::pair<const void*, size_t>> pinned;
    if (pin_abc_) {
      instr::Phase p("pin_abc");
      for (auto v : {w.a, w.b, w.c}) {
        if (v.empty()) continue;
        CUZK_CUDA_CHECK(cudaHostRegister(const_cast<fr_t*>(v.data()), v.size_bytes(), cudaHostRegisterDefault));
        pinned.push_back({v.data(), v.size_bytes()});
      }
    }
    auto unpin = [&] {
      for (auto& [ptr, bytes] : pinned) cudaHostUnregister(const_cast<void*>(ptr));
      pinned.clear();
    };
    try {
      if (a_.size() < n) {
        for (auto* d : {&a_, &b_, &c_}) {
          *d = DeviceArray<fr_t>();
          *d = DeviceArray<fr_t>(n, "a, b, c of one circuit");
        }
      }
      if (z_.size() < m) {
        z_ = DeviceArray<fr_t>();
        z_ = DeviceArray<fr_t>(m, "the assignment of one circuit");
      }
      {
        fault_point("h2d");
        GpuPhase p("h2d", stream_);
        ensure_key(pk);
        const fr_t* src[3] = {w.a.data(), w.b.data(), w.c.data()};
        fr_t* dst[3] = {a_.get(), b_.get(), c_.get()};
        for (int k = 0; k < 3; ++k) {
          if (rows) CUZK_CUDA_CHECK(cudaMemcpyAsync(dst[k], src[k], rows * sizeof(fr_t), cudaMemcpyHostToDevice, stream_));
          fill_zero(dst[k], rows, n, stream_);
        }
        CUZK_CUDA_CHECK(cudaMemcpyAsync(z_.get(), w.input.data(), w.input.size_bytes(), cudaMemcpyHostToDevice, stream_));
        if (!w.aux.empty())
          CUZK_CUDA_CHECK(cudaMemcpyAsync(z_.get() + w.input.size(), w.aux.data(), w.aux.size_bytes(),
                                          cudaMemcpyHostToDevice, stream_));
      }
      if (!pinned.empty()) {
        instr::Phase p("pin_abc");
        unpin();
      }
      const fr_t* h = nullptr;
      size_t h_count = 0;
      {
        fault_point("ntt_h");
        GpuPhase p("ntt_h", stream_);
        h = compute_h_device(ntt_, pk.convention, a_.get(), b_.get(), c_.get(), log_n, &h_count, stream_);
      }
      if (h_count != pk.h_query.size())
        throw std::invalid_argument("H has " + std::to_string(h_count) + " terms but the key's H query has " + std::to_string(pk.h_query.size()));
      {
        fault_point("msm_h");
        GpuPhase p("msm_h", stream_);
        out.h = msm_.run(key_.h_q.get(), h, h_count, stream_);
      }
      {
        fault_point("msm_l");
        GpuPhase p("msm_l", stream_);
        out.l = msm_.run(key_.l_q.get(), z_.get() + pk.num_inputs, pk.num_aux, stream_);
      }
      {
        fault_point("msm_a");
        GpuPhase p("msm_a", stream_);
        out.a = msm_.run(key_.a_q.get(), z_.get(), m, stream_);
      }
      {
        fault_point("msm_b_g1");
        GpuPhase p("msm_b_g1", stream_);
        out.b_g1 = msm_.run(key_.b_q.get(), z_.get(), m, stream_);
      }
#if CUZK_GPU_G2
      {
        fault_point("msm_b_g2");
        GpuPhase p("msm_b_g2", stream_);
        out.b_g2 = msm_g2_.run(key_.b_g2_q.get(), z_.get(), m, stream_);
      }
#endif
    } catch (...) {
      unpin();
      throw;
    }
  }

  // CUZK_GPU_SPARE_CORE: the threads msm_b_g2 runs on, one fewer than the CPUs the process may
  // use (the worker set under a placement, which already keeps the driver's core free). With
  // every core busy with G2 work, the thread that drives the GPU waits for a core after each GPU
  // synchronization (the MSM synchronizes a few times per window group), and the GPU idles
  // meanwhile: docs/noise.md measured it. nullptr: the global pool, every core (and always with
  // CUZK_GPU_G2, where no G2 work runs on the CPU).
#if CUZK_GPU_SPARE_CORE && !CUZK_GPU_G2
  static unsigned spare_core_threads() {
    if (auto p = placement::current()) return static_cast<unsigned>(p->worker_cpus.size());
    return static_cast<unsigned>(std::max<size_t>(2, placement::allowed_cpus().size()) - 1);
  }
#endif
  std::unique_ptr<ThreadPool> g2_pool_;
  bool pin_abc_;
  cudaStream_t stream_ = nullptr;
  ResidentKey key_;
  NttContext ntt_;
  MsmG1 msm_;
#if CUZK_GPU_G2
  MsmG2 msm_g2_{msm_.workspace()};  // run after msm_ on the same stream: one set of scratch buffers
#endif
  DeviceArray<fr_t> a_, b_, c_, z_;
};

}  // namespace

std::unique_ptr<groth16::Backend> make_cuda_backend(bool pin_abc) {
  require_device();
  return std::make_unique<CudaBackend>(pin_abc);
}

bool msm_b_g2_on_gpu() { return CUZK_GPU_G2 != 0; }

void register_backend() {
  groth16::register_backend("cuda", [] { return make_cuda_backend(CUZK_PINNED_HOST != 0); });
}

}  // namespace cuzk::cuda
