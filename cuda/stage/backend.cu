// The CUDA proving stage (groth16::Backend "cuda"): per circuit of a batch,
//   pin_abc   page-lock a, b, c (StageOptions::pin_abc, CUZK_PINNED_HOST=ON; the unpinning
//             after the copies is counted in the same phase)
//   h2d       copy a, b, c and the assignment to the device (and, on the first proof with a key,
//             the key's G1 points, and with CUZK_GPU_G2 its B query's G2 points: sub-phase
//             h2d/srs; they stay resident for later proofs, or from hold_key on, after which
//             the caller may drop those points from the host: prover/groth16/key_residency.hpp)
//   ntt_h     H on the device (cuda/stage/h_poly.cuh)
//   msm_h, msm_l, msm_a, msm_b_g1   G1 MSMs on the device (cuda/msm/msm.cuh); the assignment's
//             digits are sorted once for all of its MSMs, in msm_l's sub-phase msm_l/digits
//   msm_b_g2  CUZK_GPU_G2=ON only: the G2 MSM on the device, after msm_b_g1, over the same
//             resident assignment (sharing the G1 MSM's scratch buffers, MsmWorkspace)
// while, with CUZK_GPU_G2=OFF (the default), msm_b_g2 runs on CPU threads for every circuit of
// the batch, concurrently with all of the above (CUZK_GPU_SPARE_CORE=ON: on one core fewer than
// the process may use, see g2_pool_; with CUZK_GPU_G2 there is no CPU G2 work and the flag does
// nothing); then assemble (shared with the CPU backend). Every GPU phase reports its GPU time
// from CUDA events through instr::report_gpu_time.
//
// Two schedules (StageOptions::overlap, CUZK_GPU_OVERLAP):
//  - serial (the default): on one stream and one host thread, phase after phase: pin_abc, h2d
//    (pageable memory copied by the driver), ntt_h, msm_h, msm_l, msm_a, msm_b_g1 (msm_b_g2);
//  - overlapped: an upload thread copies on a stream of its own, through StagedUploader (pinned
//    staging buffers for pageable memory, cuda/stage/staged_upload.cuh), while the calling thread runs
//    the kernels on the compute stream. Per circuit i the uploads go assignment first:
//      upload thread:  [key] z(i) | pin and copy a, b, c (i)       | z(i+1) ...
//      compute stream:           msm_l, msm_a, msm_b_g1 (msm_b_g2) | ntt_h, msm_h | z MSMs (i+1)
//    so a, b, c go up while the assignment's MSMs run, and circuit i+1's assignment (into the
//    second of two z buffers) while circuit i's ntt_h and msm_h run. The two threads order
//    each other with Progress counts (cuda/util/progress.hpp) and the streams with events. h2d's GPU
//    time is the sum of its copies' spans on the copy stream; its wall time is the upload
//    thread's time enqueuing them (for pageable memory: filling the staging buffers). Each
//    kernel phase's GPU time starts after its wait for the uploads, so it is the kernels' own.
//
// A job that fails on the device (out of memory, a CUDA error) releases every device buffer the
// backend holds (the resident key included) before the error reaches the caller, so the next
// job starts from a clean device (a key whose host points were dropped must then be loaded
// again: ensure_key says so); $CUZK_INJECT_FAULT cuda_oom_at / cuda_error_at
// (prover/engine/fault.hpp) fire such failures at a GPU phase's start, for the tests.
#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "cuda/keygen/fixed_base.hpp"
#include "cuda/util/cuda_check.cuh"
#include "cuda/util/device_array.cuh"
#include "cuda/util/gpu_timer.cuh"
#include "cuda/stage/gpu_phase.cuh"
#include "cuda/stage/h_poly.cuh"
#include "cuda/stage/staged_upload.cuh"
#include "cuda/msm/msm.cuh"
#include "cuda/util/progress.hpp"
#include "cuda/stage/cuda_backend.hpp"
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
#ifndef CUZK_GPU_OVERLAP
#define CUZK_GPU_OVERLAP 0
#endif

namespace cuzk::cuda {
namespace {

using groth16::Proof;
using groth16::ProvingKey;
using groth16::Randomness;
using groth16::Witness;

constexpr bool kGpuG2 = CUZK_GPU_G2 != 0;
// What proving reads on the host once the device holds a key: the G2 query where msm_b_g2
// runs on CPU threads (CpuG2), nothing otherwise.
constexpr groth16::HostQueries kHeldHostQueries = {false, false, !kGpuG2, false, false};

// The key's points on the device, for the key they were uploaded from.
struct ResidentKey {
  const void* id = nullptr;  // ProvingKey::identity of the key they were uploaded from
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

// msm_b_g2 of every circuit of a batch on CPU threads, beside the GPU work, when the build runs
// it there (CUZK_GPU_G2 off); nothing otherwise.
class CpuG2 {
 public:
  CpuG2(const ProvingKey& pk, std::span<const Witness> ws, ThreadPool* pool) {
    if (kGpuG2) return;
    b_g2_.resize(ws.size());
    thread_ = std::thread([this, &pk, ws, pool, parent = instr::current_path()] {
      try {
        // A thread inherits its creator's CPU mask: under a placement (--stable) the creator is
        // the GPU-driving thread, whose core this CPU work must leave free.
        placement::pin_current_thread_to_workers();
        for (size_t i = 0; i < ws.size(); ++i) {
          instr::Phase p("msm_b_g2", parent);
          b_g2_[i] = msm_g2(pk.b_g2_query, ws[i].input, ws[i].aux, pool);
        }
      } catch (...) {
        error_ = std::current_exception();
      }
    });
  }
  ~CpuG2() { join(); }
  CpuG2(const CpuG2&) = delete;
  CpuG2& operator=(const CpuG2&) = delete;
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  // Waits for the CPU's G2 MSMs and puts them into the GPU's results.
  void finish(std::vector<groth16::MsmResults>& res) {
    join();
    if (error_) std::rethrow_exception(error_);
    for (size_t i = 0; i < b_g2_.size(); ++i) res[i].b_g2 = b_g2_[i];
  }

 private:
  std::vector<g2_jacobian_t> b_g2_;
  std::exception_ptr error_;
  std::thread thread_;
};

// Host ranges page-locked for one circuit's copies on stream s; unpinned by unpin() (or on
// destruction, after an error), once s has finished every copy out of them.
class PinnedRanges {
 public:
  explicit PinnedRanges(cudaStream_t s) : s_(s) {}
  ~PinnedRanges() { unpin(); }
  void pin(std::span<const fr_t> v) {
    if (v.empty()) return;
    CUZK_CUDA_CHECK(cudaHostRegister(const_cast<fr_t*>(v.data()), v.size_bytes(), cudaHostRegisterDefault));
    ptrs_.push_back(v.data());
  }
  bool empty() const { return ptrs_.empty(); }
  void unpin() {
    if (ptrs_.empty()) return;
    (void)cudaStreamSynchronize(s_);
    for (const void* p : ptrs_) cudaHostUnregister(const_cast<void*>(p));
    ptrs_.clear();
  }

 private:
  cudaStream_t s_;
  std::vector<const void*> ptrs_;
};

// A Progress wait that failed: the other thread stopped, and its error (if it had one) is the
// one to report.
struct OtherSideStopped {};

class CudaBackend final : public groth16::Backend {
 public:
  explicit CudaBackend(StageOptions o) : opt_(o) {
    CUZK_CUDA_CHECK(cudaSetDevice(opt_.device));
    // Wait for the GPU by sleeping, not spinning: msm_b_g2 runs on every CPU core meanwhile
    // (CUZK_GPU_G2 off), and a spinning wait would take one of them for the whole GPU part. Best
    // effort: an older driver may refuse the flag on an already active context, which only costs
    // that core.
    if (cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync) != cudaSuccess) (void)cudaGetLastError();
    CUZK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUZK_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
    for (auto* e : {&z_ready_[0], &z_ready_[1], &abc_ready_})
      CUZK_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
#if CUZK_GPU_SPARE_CORE && !CUZK_GPU_G2
    g2_pool_ = std::make_unique<ThreadPool>(spare_core_threads());
#endif
    make_msms();
  }
  ~CudaBackend() override {
    (void)cudaSetDevice(opt_.device);  // the destroying thread may be on another device
    for (auto e : {z_ready_[0], z_ready_[1], abc_ready_}) cudaEventDestroy(e);
    cudaStreamDestroy(copy_stream_);
    cudaStreamDestroy(stream_);
  }
  std::string name() const override { return "cuda"; }

  void release(const ProvingKey& pk) override {
    if (key_.id != pk.identity()) return;
    (void)cudaSetDevice(opt_.device);  // the key's device memory is freed on its own device
    key_ = ResidentKey{};
  }

  groth16::HostQueries hold_key(const ProvingKey& pk) override {
    CUZK_CUDA_CHECK(cudaSetDevice(opt_.device));
    try {
      ensure_key(pk, stream_);
    } catch (...) {
      release_device_memory();
      throw;
    }
    return kHeldHostQueries;
  }

  std::optional<uint64_t> device_used_bytes() override {
    size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(opt_.device) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      (void)cudaGetLastError();
      return std::nullopt;
    }
    return uint64_t(total_b - free_b);
  }

  std::vector<Proof> prove_batch(const ProvingKey& pk, std::span<const Witness> ws,
                                 std::span<const Randomness> rs) override {
    if (ws.size() != rs.size())
      throw std::invalid_argument("prove_batch: " + std::to_string(ws.size()) + " witnesses but " + std::to_string(rs.size()) + " randomness pairs");
    for (auto& w : ws) groth16::check_witness_shape(pk, w);
    // The calling thread may not be the constructing one: its current device is its own.
    CUZK_CUDA_CHECK(cudaSetDevice(opt_.device));
    // The device reads m points of the G2 query unchecked, where the CPU's msm_g2 refused a
    // length mismatch: so check here.
    if (kGpuG2 && pk.b_g2_query.size() != pk.num_inputs + pk.num_aux)
      throw std::invalid_argument("the key's B query (G2) has " + std::to_string(pk.b_g2_query.size()) +
                                  " points but the assignment " + std::to_string(pk.num_inputs + pk.num_aux) + " values");
    std::vector<groth16::MsmResults> res(ws.size());
    CpuG2 g2(pk, ws, g2_pool_.get());
    try {
      if (opt_.overlap) prove_overlapped(pk, ws, res);
      else
        for (size_t i = 0; i < ws.size(); ++i) prove_serial(pk, ws[i], res[i]);
    } catch (...) {
      g2.join();
      release_device_memory();
      throw;
    }
    g2.finish(res);
    std::vector<Proof> proofs;
    for (size_t i = 0; i < ws.size(); ++i) proofs.push_back(groth16::assemble(pk, res[i], rs[i]));
    return proofs;
  }

 private:
  // After a failed job: every device buffer goes (they are re-created on demand), so a device
  // left short of memory by the failure is not kept short by this backend.
  void release_device_memory() {
    (void)cudaStreamSynchronize(copy_stream_);
    (void)cudaStreamSynchronize(stream_);  // no copy or kernel still uses a buffer freed below
    (void)cudaGetLastError();
    key_ = ResidentKey{};
    a_ = DeviceArray<fr_t>();
    b_ = DeviceArray<fr_t>();
    c_ = DeviceArray<fr_t>();
    z_[0] = DeviceArray<fr_t>();
    z_[1] = DeviceArray<fr_t>();
    ntt_ = NttContext();
    make_msms();  // drops the last references to the old MSM buffers
  }

  // The stage's MSMs: msm_h_ sorts every digit (H's scalars are full-width, a count of their
  // zero digits would be for nothing); the assignment's leave zero digits out
  // (StageOptions::skip_zero_digits: mostly 0 and 1, so most digits are zero). They run one after
  // another on stream_, so they share one workspace (MsmWorkspace): one footprint, the largest.
  void make_msms() {
    msm_h_ = MsmG1();
    msm_h_.set_equal_chunks(opt_.equal_chunks);
    msm_h_.set_fill_later_rounds(opt_.fill_later_rounds);
    msm_z_ = MsmG1(msm_h_.workspace());
    msm_z_.set_skip_zero_digits(opt_.skip_zero_digits);
    msm_z_.set_equal_chunks(opt_.equal_chunks);
    msm_z_.set_fill_later_rounds(opt_.fill_later_rounds);
#if CUZK_GPU_G2
    msm_g2_ = MsmG2(msm_h_.workspace());
    msm_g2_.set_skip_zero_digits(opt_.skip_zero_digits);
    msm_g2_.set_equal_chunks(opt_.equal_chunks);
    msm_g2_.set_fill_later_rounds(opt_.fill_later_rounds);
#endif
  }

  // The key's points on the device, uploaded on stream s (and waited for) when not resident:
  // through the staging buffers, as the key is usually in pageable memory (at 2^27, 77 GB of
  // points with the G2 query, which the driver's own pageable copies would take about 15 s for).
  void ensure_key(const ProvingKey& pk, cudaStream_t s) {
    if (key_.id == pk.identity() && key_.h == pk.h_query.size()) return;
    key_ = ResidentKey{};  // free the previous key first
    // A copy of the key without its host points is proved only while the device holds them.
    groth16::require_host_points(pk, kHeldHostQueries.others(), "the CUDA backend's upload of the key");
    instr::Phase p("srs");
    // A query of G1 or G2 points into its device array.
    auto up = [&]<class T>(const groth16::PointArray<T>& q, DeviceArray<T>& d, const char* what) {
      d = DeviceArray<T>(q.size(), what);
      uploader().copy(d.get(), q.data(), q.size() * sizeof(T), s);
    };
    up(pk.h_query, key_.h_q, "the key's H query");
    up(pk.l_query, key_.l_q, "the key's L query");
    up(pk.a_query, key_.a_q, "the key's A query");
    up(pk.b_g1_query, key_.b_q, "the key's B query (G1)");
#if CUZK_GPU_G2
    up(pk.b_g2_query, key_.b_g2_q, "the key's B query (G2)");
#endif
    CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
    key_.id = pk.identity();
    key_.h = pk.h_query.size();
  }

  // Device buffers for circuits of domain n and m variables (kept between proofs); `slots`
  // assignment buffers (2 when one is uploaded while the other is read).
  void ensure_buffers(uint64_t n, size_t m, int slots) {
    if (a_.size() < n) {
      for (auto* d : {&a_, &b_, &c_}) {
        *d = DeviceArray<fr_t>();
        *d = DeviceArray<fr_t>(n, "a, b, c of one circuit");
      }
    }
    for (int k = 0; k < slots; ++k) {
      if (z_[k].size() >= m) continue;
      z_[k] = DeviceArray<fr_t>();
      z_[k] = DeviceArray<fr_t>(m, "the assignment of one circuit");
    }
  }

  // a, b, c of w into a_, b_, c_ (zero past the constraints) by plain copies, on s: the serial
  // schedule's way (the overlapped one stages them, copy_one with its uploader).
  void copy_abc(const Witness& w, uint64_t n, cudaStream_t s) {
    const fr_t* src[3] = {w.a.data(), w.b.data(), w.c.data()};
    fr_t* dst[3] = {a_.get(), b_.get(), c_.get()};
    for (int k = 0; k < 3; ++k) copy_one(dst[k], src[k], w.a.size(), n, s, nullptr);
  }
  static void copy_one(fr_t* dst, const fr_t* src, size_t rows, uint64_t n, cudaStream_t s, StagedUploader* up) {
    if (up) up->copy(dst, src, rows * sizeof(fr_t), s);
    else if (rows) CUZK_CUDA_CHECK(cudaMemcpyAsync(dst, src, rows * sizeof(fr_t), cudaMemcpyHostToDevice, s));
    fill_zero(dst, rows, n, s);
  }
  static void copy_z(const Witness& w, fr_t* z, cudaStream_t s, StagedUploader* up) {
    if (up) {
      up->copy(z, w.input.data(), w.input.size_bytes(), s);
      up->copy(z + w.input.size(), w.aux.data(), w.aux.size_bytes(), s);
      return;
    }
    CUZK_CUDA_CHECK(cudaMemcpyAsync(z, w.input.data(), w.input.size_bytes(), cudaMemcpyHostToDevice, s));
    if (!w.aux.empty())
      CUZK_CUDA_CHECK(cudaMemcpyAsync(z + w.input.size(), w.aux.data(), w.aux.size_bytes(), cudaMemcpyHostToDevice, s));
  }

  // ntt_h and msm_h on a_, b_, c_ (on the device, on stream_).
  void h_and_msm_h(const ProvingKey& pk, unsigned log_n, groth16::MsmResults& out) {
    const fr_t* h = nullptr;
    size_t h_count = 0;
    {
      fault_point("ntt_h");
      GpuPhase p("ntt_h", stream_);
      h = compute_h_device(ntt_, pk.convention, a_.get(), b_.get(), c_.get(), log_n, &h_count, stream_);
    }
    if (h_count != pk.h_query.size())
      throw std::invalid_argument("H has " + std::to_string(h_count) + " terms but the key's H query has " + std::to_string(pk.h_query.size()));
    fault_point("msm_h");
    GpuPhase p("msm_h", stream_);
    out.h = msm_h_.run(key_.h_q.get(), h, h_count, stream_, opt_.h_window_bits);
  }

  // The window width of w's assignment MSMs: the options', else the sparse rule's for a sample of
  // w's values (gpu_msm_window_bits_sparse; about a millisecond of this thread, msm_params::kWindowSample:
  // the overlapped schedule spends it while the assignment goes up).
  unsigned assignment_bits(const Witness& w) const {
    return opt_.assignment_window_bits ? opt_.assignment_window_bits : default_assignment_window_bits(w);
  }

  // The MSMs over the assignment z (on the device, on stream_; w's copy on the host): msm_l,
  // msm_a, msm_b_g1, and with CUZK_GPU_G2 msm_b_g2. They read the same scalars, so z's digits
  // are sorted once (DigitPlan, cuda/msm/msm.cuh) inside msm_l, the first of them, in its sub-phase
  // msm_l/digits, and each MSM then only sums its points: msm_l skips the public inputs, which
  // have no L point. Where the digits do not fit one sort (more than 2^30 non-zero ones; with
  // every digit sorted, more than 2^26 variables at 16-bit windows), or with
  // StageOptions::share_digits off, each MSM sorts its own. `bits`: assignment_bits(w).
  void assignment_msms(const ProvingKey& pk, unsigned bits, const fr_t* z, groth16::MsmResults& out) {
    const size_t m = pk.num_inputs + pk.num_aux;
    std::optional<DigitPlan> plan;
    {
      fault_point("msm_l");
      GpuPhase p("msm_l", stream_);
      if (opt_.share_digits && msm_z_.may_plan(m, bits)) {
        GpuPhase d("digits", stream_);
        plan = msm_z_.plan(z, m, stream_, bits);
      }
      out.l = plan ? msm_z_.run(*plan, key_.l_q.get(), stream_, pk.num_inputs)
                   : msm_z_.run(key_.l_q.get(), z + pk.num_inputs, pk.num_aux, stream_, bits);
    }
    {
      fault_point("msm_a");
      GpuPhase p("msm_a", stream_);
      out.a = plan ? msm_z_.run(*plan, key_.a_q.get(), stream_) : msm_z_.run(key_.a_q.get(), z, m, stream_, bits);
    }
    {
      fault_point("msm_b_g1");
      GpuPhase p("msm_b_g1", stream_);
      out.b_g1 = plan ? msm_z_.run(*plan, key_.b_q.get(), stream_) : msm_z_.run(key_.b_q.get(), z, m, stream_, bits);
    }
#if CUZK_GPU_G2
    fault_point("msm_b_g2");
    GpuPhase p("msm_b_g2", stream_);
    out.b_g2 = plan ? msm_g2_.run(*plan, key_.b_g2_q.get(), stream_) : msm_g2_.run(key_.b_g2_q.get(), z, m, stream_, bits);
#endif
  }

  // The serial schedule: one circuit, phase after phase on stream_.
  void prove_serial(const ProvingKey& pk, const Witness& w, groth16::MsmResults& out) {
    const uint64_t n = pk.domain_size;
    ensure_buffers(n, pk.num_inputs + pk.num_aux, 1);
    PinnedRanges pinned(stream_);
    if (opt_.pin_abc) {
      instr::Phase p("pin_abc");
      for (auto v : {w.a, w.b, w.c}) pinned.pin(v);
    }
    {
      fault_point("h2d");
      GpuPhase p("h2d", stream_);
      ensure_key(pk, stream_);
      copy_abc(w, n, stream_);
      copy_z(w, z_[0].get(), stream_, nullptr);
    }
    if (!pinned.empty()) {
      instr::Phase p("pin_abc");
      pinned.unpin();
    }
    h_and_msm_h(pk, log2_of(n), out);
    assignment_msms(pk, assignment_bits(w), z_[0].get(), out);
  }

  // The overlapped schedule (the file's header): this thread runs the kernels, an upload thread
  // the copies. Counts: uploaded reaches 2i+1 once circuit i's assignment is enqueued (z_ready_
  // recorded) and 2i+2 once its a, b, c are (abc_ready_); computed reaches 2i+1 once its
  // assignment's MSMs are done (its z buffer free) and 2i+2 once msm_h is (a, b, c free).
  void prove_overlapped(const ProvingKey& pk, std::span<const Witness> ws, std::vector<groth16::MsmResults>& res) {
    const uint64_t n = pk.domain_size;
    const unsigned log_n = log2_of(n);
    ensure_buffers(n, pk.num_inputs + pk.num_aux, ws.size() > 1 ? 2 : 1);
    Progress uploaded, computed;
    std::exception_ptr upload_error;
    std::thread up([&, parent = instr::current_path()] {
      try {
        CUZK_CUDA_CHECK(cudaSetDevice(opt_.device));
        placement::pin_current_thread_to_workers();
        upload_all(pk, ws, parent, uploaded, computed);
      } catch (const OtherSideStopped&) {
      } catch (...) {
        upload_error = std::current_exception();
      }
      uploaded.fail();  // releases the compute side if it still waits (no-op for reached counts)
    });
    auto wait = [](const Progress& p, size_t v) {
      if (!p.wait(v)) throw OtherSideStopped{};
    };
    try {
      for (size_t i = 0; i < ws.size(); ++i) {
        const unsigned bits = assignment_bits(ws[i]);  // while the assignment goes up
        wait(uploaded, 2 * i + 1);
        CUZK_CUDA_CHECK(cudaStreamWaitEvent(stream_, z_ready_[i % 2], 0));
        assignment_msms(pk, bits, z_[i % 2].get(), res[i]);
        computed.reach(2 * i + 1);
        wait(uploaded, 2 * i + 2);
        CUZK_CUDA_CHECK(cudaStreamWaitEvent(stream_, abc_ready_, 0));
        h_and_msm_h(pk, log_n, res[i]);
        computed.reach(2 * i + 2);
      }
    } catch (const OtherSideStopped&) {
      up.join();  // it has stopped: its error is the job's
      if (upload_error) std::rethrow_exception(upload_error);
      throw CudaError("overlapped proving stage: the upload thread stopped before its last copy");
    } catch (...) {
      computed.fail();  // this thread's own error is the job's; the upload thread stops
      up.join();
      throw;
    }
    up.join();
    if (upload_error) std::rethrow_exception(upload_error);
  }

  // The upload thread of prove_overlapped.
  void upload_all(const ProvingKey& pk, std::span<const Witness> ws, const std::string& parent, Progress& uploaded,
                  const Progress& computed) {
    const uint64_t n = pk.domain_size;
    auto wait = [&](size_t v) {
      if (!computed.wait(v)) throw OtherSideStopped{};
    };
    for (size_t i = 0; i < ws.size(); ++i) {
      const Witness& w = ws[i];
      std::vector<std::unique_ptr<GpuTimer>> spans;  // the copies' spans on the copy stream
      auto timed = [&](auto&& enqueue) {
        spans.push_back(std::make_unique<GpuTimer>());
        spans.back()->start(copy_stream_);
        enqueue();
        spans.back()->stop(copy_stream_);
      };
      if (i >= 2) wait(2 * (i - 2) + 1);  // circuit i-2's assignment MSMs have left this z buffer
      {
        fault_point("h2d");
        instr::Phase p("h2d", parent);
        timed([&] {
          ensure_key(pk, copy_stream_);
          copy_z(w, z_[i % 2].get(), copy_stream_, &uploader());
        });
        CUZK_CUDA_CHECK(cudaEventRecord(z_ready_[i % 2], copy_stream_));
      }
      uploaded.reach(2 * i + 1);
      // a, b, c: each pinned (pin_abc) while the previous one is copied; the copies wait for
      // circuit i-1's msm_h, the last reader of a, b, c.
      PinnedRanges pinned(copy_stream_);
      const std::span<const fr_t> abc[3] = {w.a, w.b, w.c};
      fr_t* dst[3] = {a_.get(), b_.get(), c_.get()};
      for (int k = 0; k < 3; ++k) {
        if (opt_.pin_abc) {
          instr::Phase p("pin_abc", parent);
          pinned.pin(abc[k]);
        }
        if (i >= 1) wait(2 * (i - 1) + 2);
        instr::Phase p("h2d", parent);
        timed([&] { copy_one(dst[k], abc[k].data(), abc[k].size(), n, copy_stream_, &uploader()); });
      }
      CUZK_CUDA_CHECK(cudaEventRecord(abc_ready_, copy_stream_));
      uploaded.reach(2 * i + 2);
      uint64_t ns = 0;
      for (auto& t : spans) ns += t->elapsed_ns();  // waits for the copies
      instr::report_gpu_time(parent + "/h2d", ns);
      if (!pinned.empty()) {
        instr::Phase p("pin_abc", parent);
        pinned.unpin();
      }
    }
  }

  // The staging buffers (allocated on first use). One thread at a time copies through them:
  // the calling thread in the serial schedule, the upload thread in the overlapped one.
  StagedUploader& uploader() {
    if (!uploader_) uploader_ = std::make_unique<StagedUploader>(opt_.staged_upload);
    return *uploader_;
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
  StageOptions opt_;
  cudaStream_t stream_ = nullptr;       // kernels (and, serial, the copies)
  cudaStream_t copy_stream_ = nullptr;  // overlapped: the copies
  cudaEvent_t z_ready_[2] = {}, abc_ready_ = nullptr;
  std::unique_ptr<StagedUploader> uploader_;  // uploader()
  ResidentKey key_;
  NttContext ntt_;
  MsmG1 msm_h_, msm_z_;  // make_msms()
#if CUZK_GPU_G2
  MsmG2 msm_g2_;
#endif
  DeviceArray<fr_t> a_, b_, c_, z_[2];
};

}  // namespace

unsigned default_assignment_window_bits(const Witness& w) {
  return gpu_msm_window_bits_sparse(w.input.size() + w.aux.size(), sample_scalars(w.input, w.aux, msm_params::kWindowSample));
}

StageOptions build_stage_options() {
  StageOptions o;
  o.pin_abc = CUZK_PINNED_HOST != 0;
  o.overlap = CUZK_GPU_OVERLAP != 0;
  return o;
}

std::unique_ptr<groth16::Backend> make_cuda_backend(StageOptions options) {
  // The MSM's own bounds (Msm::run), refused before any work.
  for (auto [c, what] : {std::pair{options.assignment_window_bits, "assignment"}, std::pair{options.h_window_bits, "msm_h"}})
    if (c != 0 && (c < kMinWindowBits || c > kMaxWindowBits))
      throw std::invalid_argument(std::string("CUDA proving stage: ") + what + " window bits " + std::to_string(c) +
                                  " (0 for the rule, else " + std::to_string(kMinWindowBits) + ".." +
                                  std::to_string(kMaxWindowBits) + ")");
  // Bounds that catch a mistaken value (bytes for MiB, a count for a size) before threads or
  // page-locked memory are taken for it (tests/gpu/test_stage_options.cpp, run without a GPU).
  const StagedUploadOptions& u = options.staged_upload;
  if (u.threads > 256 || u.buffers > 64 || u.buffer_bytes > (size_t(1) << 30))
    throw std::invalid_argument("CUDA proving stage: staging of " + std::to_string(u.threads) + " threads, " +
                                std::to_string(u.buffers) + " buffers of " + std::to_string(u.buffer_bytes) +
                                " bytes (at most 256 threads, 64 buffers a ring, 1 GiB a buffer; 0: the default)");
  require_device();
  if (const unsigned n = device_count(); options.device < 0 || unsigned(options.device) >= n)
    throw std::invalid_argument("CUDA proving stage: device " + std::to_string(options.device) + " (this machine has " +
                                std::to_string(n) + " CUDA device(s))");
  return std::make_unique<CudaBackend>(options);
}

bool msm_b_g2_on_gpu() { return kGpuG2; }

void register_backend() {
  groth16::register_backend("cuda", [] { return make_cuda_backend(build_stage_options()); });
  groth16::register_device_backend(
      "cuda",
      [](unsigned device) {
        StageOptions o = build_stage_options();
        o.device = int(device);
        return make_cuda_backend(o);
      },
      [] { return device_count(); }, kHeldHostQueries);
  // Parameter generation's fixed-base multiplications, for runs on this backend.
  groth16::register_fixed_base_device("cuda", [] { return make_fixed_base_device(0); });
}

}  // namespace cuzk::cuda
