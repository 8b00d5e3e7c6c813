#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "cuda/testing/entry_points.hpp"
#include "cuda/stage/h_poly.cuh"
#include "cuda/stage/staged_upload.cuh"
#include "cuda/msm/msm.cuh"
#include "cuda/ntt/ntt.cuh"
#include "cuda/util/cuda_check.cuh"
#include "cuda/util/device_array.cuh"
#include "cuda/util/gpu_timer.cuh"

namespace cuzk::cuda {
namespace {

// A stream owned for the duration of one call.
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CUZK_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
};
// An event for ordering streams (no timing).
struct Event {
  cudaEvent_t e = nullptr;
  Event() { CUZK_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)); }
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
  Event(Event&& o) noexcept : e(std::exchange(o.e, nullptr)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// An MSM's input uploaded in `count` slices on stream `up` (each slice's scalars, then its
// points), starting once `s` reaches this point; the slices carry the events Msm<P> waits for.
// Through `uploader` (cuda/stage/staged_upload.cuh): page-locked input is enqueued here at once; pageable
// input is staged by a thread of its own, so that the MSM starts on the first slice while the
// host still copies the later ones (finish() joins it).
template <class P>
class SlicedUpload {
 public:
  using Affine = typename P::affine;
  std::vector<MsmSliceOf<P>> slices;

  SlicedUpload(Affine* d_points, fr_t* d_scalars, std::span<const Affine> points, std::span<const fr_t> scalars,
               size_t count, cudaStream_t s, cudaStream_t up, StagedUploader& uploader) {
    const std::vector<size_t> lens = slice_lengths(points.size(), count);
    events_.resize(1 + 2 * lens.size());
    CUZK_CUDA_CHECK(cudaEventRecord(events_[0].e, s));
    CUZK_CUDA_CHECK(cudaStreamWaitEvent(up, events_[0].e, 0));
    const bool staged = !is_page_locked(points.data()) || !is_page_locked(scalars.data());
    size_t b = 0;
    for (size_t k = 0; k < lens.size(); ++k) {
      slices.push_back({d_points + b, d_scalars + b, lens[k], events_[2 * k + 1].e, events_[2 * k + 2].e,
                        staged ? &recorded_ : nullptr, 2 * k + 1, 2 * k + 2});
      b += lens[k];
    }
    // Each slice's scalars, then its points; recorded_ counts the events recorded.
    auto enqueue = [this, points, scalars, up, &uploader] {
      size_t done = 0;
      for (const auto& sl : slices) {
        const size_t at = size_t(sl.scalars - slices[0].scalars);
        uploader.copy(const_cast<fr_t*>(sl.scalars), scalars.data() + at, sl.n * sizeof(fr_t), up);
        CUZK_CUDA_CHECK(cudaEventRecord(sl.scalars_ready, up));
        recorded_.reach(++done);
        uploader.copy(const_cast<Affine*>(sl.bases), points.data() + at, sl.n * sizeof(Affine), up);
        CUZK_CUDA_CHECK(cudaEventRecord(sl.bases_ready, up));
        recorded_.reach(++done);
      }
    };
    if (!staged) {
      enqueue();
      return;
    }
    int device = 0;
    CUZK_CUDA_CHECK(cudaGetDevice(&device));
    thread_ = std::thread([this, device, enqueue] {
      try {
        CUZK_CUDA_CHECK(cudaSetDevice(device));
        enqueue();
      } catch (...) {
        error_ = std::current_exception();
        recorded_.fail();
      }
    });
  }
  ~SlicedUpload() {
    if (thread_.joinable()) thread_.join();
  }
  SlicedUpload(const SlicedUpload&) = delete;
  SlicedUpload& operator=(const SlicedUpload&) = delete;

  // Joins the staging thread; rethrows its error (which explains an MSM that stopped waiting).
  void finish() {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  // Slices growing by kGrowth: only the first slice's upload waits in front of the GPU's work,
  // so it is kept short, and each later slice's upload hides behind the GPU's work on the ones
  // before it, which takes about 3 times as long per point (a G2 point is twice the bytes and
  // about three times the additions). Equal slices where n is too short for that.
  static constexpr size_t kGrowth = msm_params::kSliceGrowth;
  static std::vector<size_t> slice_lengths(size_t n, size_t count) {
    count = std::clamp<size_t>(count, 1, std::max<size_t>(n, 1));
    size_t parts = 0, w = 1;
    for (size_t i = 0; i < count && parts <= n; ++i, w *= kGrowth) parts += w;
    std::vector<size_t> len;
    if (parts > n) {
      const size_t per = (n + count - 1) / count;
      for (size_t b = 0; b < n; b += per) len.push_back(std::min(per, n - b));
      return len;
    }
    size_t left = n;
    w = 1;
    for (size_t i = 0; i + 1 < count; ++i, w *= kGrowth) {
      len.push_back(n / parts * w);
      left -= len.back();
    }
    len.push_back(left);
    return len;
  }

 private:
  std::vector<Event> events_;  // the start, then each slice's scalars_ready and bases_ready
  Progress recorded_;
  std::thread thread_;
  std::exception_ptr error_;
};

// The MSM over a sliced upload: the upload's error, when it failed, rather than the MSM's.
template <class P>
typename P::jacobian run_sliced(Msm<P>& msm, SlicedUpload<P>& u, cudaStream_t s, unsigned window_bits) {
  try {
    auto r = msm.run(u.slices, s, window_bits);
    u.finish();
    return r;
  } catch (...) {
    u.finish();
    throw;
  }
}

unsigned log2_exact(size_t n, const char* what) {
  unsigned k = 0;
  while ((size_t(1) << k) < n) ++k;
  if ((size_t(1) << k) != n) throw std::invalid_argument(std::string(what) + ": size " + std::to_string(n) + " is not a power of two");
  return k;
}

template <class T>
DeviceArray<T> upload_array(std::span<const T> v, const char* what, cudaStream_t s, size_t capacity = 0) {
  DeviceArray<T> d(std::max(capacity, v.size()), what);
  if (!v.empty()) CUZK_CUDA_CHECK(cudaMemcpyAsync(d.get(), v.data(), v.size_bytes(), cudaMemcpyHostToDevice, s));
  return d;
}

template <class T>
void download(std::span<T> out, const T* d, cudaStream_t s) {
  if (!out.empty()) CUZK_CUDA_CHECK(cudaMemcpyAsync(out.data(), d, out.size_bytes(), cudaMemcpyDeviceToHost, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
}

enum class Op { kForward, kInverse, kCosetForward, kCosetInverse };

void ntt_op(std::span<fr_t> a, Op op, const fr_t& g, NttPlan plan) {
  const unsigned log_n = log2_exact(a.size(), "GPU NTT");
  Stream st;
  NttContext ctx;
  ctx.set_plan(plan);
  auto d = upload_array<fr_t>(a, "NTT data", st.s);
  switch (op) {
    case Op::kForward: ctx.forward(d.get(), log_n, st.s); break;
    case Op::kInverse: ctx.inverse(d.get(), log_n, st.s); break;
    case Op::kCosetForward: ctx.coset_forward(d.get(), log_n, g, st.s); break;
    case Op::kCosetInverse: ctx.coset_inverse(d.get(), log_n, g, st.s); break;
  }
  download(a, d.get(), st.s);
}

template <class T>
__global__ void mul_kernel(T* out, const T* a, const T* b, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i];
}

// x <- x * y, `iters` times per thread; one store at the end keeps the chain alive.
template <class T>
__global__ void __launch_bounds__(256) mul_chain_kernel(T* data, size_t n, int iters) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  T x = data[i];
  const T y = data[(i + 1) % n];
  for (int k = 0; k < iters; ++k) x = x * y;
  data[i] = x;
}

template <class T>
double mul_throughput() {
  constexpr size_t kThreads = size_t(1) << 20;
  constexpr int kIters = 256;
  Stream st;
  std::vector<T> h(kThreads);
  for (size_t i = 0; i < kThreads; ++i) h[i] = T::from_u64(i + 3);
  auto d = upload_array<T>(std::span<const T>(h), "product chains", st.s);
  auto launch = [&] {
    mul_chain_kernel<T><<<grid_for(kThreads, 256), 256, 0, st.s>>>(d.get(), kThreads, kIters);
    CUZK_CUDA_CHECK_LAUNCH("mul_chain_kernel");
  };
  launch();  // warm-up
  GpuTimer t;
  t.start(st.s);
  launch();
  t.stop(st.s);
  return double(kThreads) * kIters / (double(t.elapsed_ns()) * 1e-9);
}

__global__ void madd_kernel(g1_xyzz_t* out, const g1_xyzz_t* acc, const g1_affine_t* p, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = acc[i].add(p[i]);
}

// msm_g1 / msm_g2: the input uploaded in `slices` parts on a second stream, summed on the first.
template <class P>
typename P::jacobian msm_uploaded(std::span<const typename P::affine> points, std::span<const fr_t> scalars,
                                  unsigned window_bits, unsigned slices) {
  if (points.size() != scalars.size())
    throw std::invalid_argument("GPU MSM: " + std::to_string(points.size()) + " points but " +
                                std::to_string(scalars.size()) + " scalars");
  if (slices == 0) throw std::invalid_argument("GPU MSM: at least one slice");
  if (points.empty()) return P::jacobian::infinity();
  Stream st, up;
  DeviceArray<typename P::affine> p(points.size(), "MSM points");
  DeviceArray<fr_t> k(scalars.size(), "MSM scalars");
  StagedUploader uploader;
  SlicedUpload<P> u(p.get(), k.get(), points, scalars, slices, st.s, up.s, uploader);
  Msm<P> msm;
  return run_sliced(msm, u, st.s, window_bits);
}

template <class T>
std::vector<T> mul_on_device(std::span<const T> a, std::span<const T> b) {
  if (a.size() != b.size()) throw std::invalid_argument("element-wise product of arrays of different lengths");
  Stream st;
  auto da = upload_array<T>(a, "operands", st.s), db = upload_array<T>(b, "operands", st.s);
  DeviceArray<T> dout(a.size(), "products");
  std::vector<T> out(a.size());
  if (!a.empty()) {
    mul_kernel<T><<<grid_for(a.size(), 128), 128, 0, st.s>>>(dout.get(), da.get(), db.get(), a.size());
    CUZK_CUDA_CHECK_LAUNCH("mul_kernel");
  }
  download(std::span<T>(out), dout.get(), st.s);
  return out;
}

}  // namespace

void ntt_forward(std::span<fr_t> a, NttPlan plan) { ntt_op(a, Op::kForward, fr_t::one(), plan); }
void ntt_inverse(std::span<fr_t> a, NttPlan plan) { ntt_op(a, Op::kInverse, fr_t::one(), plan); }
void ntt_coset_forward(std::span<fr_t> a, const fr_t& g, NttPlan plan) { ntt_op(a, Op::kCosetForward, g, plan); }
void ntt_coset_inverse(std::span<fr_t> a, const fr_t& g, NttPlan plan) { ntt_op(a, Op::kCosetInverse, g, plan); }

std::vector<fr_t> compute_h(groth16::HConvention conv, const groth16::Witness& w, uint64_t n, NttPlan plan) {
  const unsigned log_n = log2_exact(n, "GPU H");
  if (w.a.size() > n || w.b.size() != w.a.size() || w.c.size() != w.a.size())
    throw std::invalid_argument("GPU H: a, b, c must have equal lengths of at most the domain size");
  Stream st;
  NttContext ctx;
  ctx.set_plan(plan);
  auto a = upload_array<fr_t>(w.a, "H: a", st.s, n), b = upload_array<fr_t>(w.b, "H: b", st.s, n),
       c = upload_array<fr_t>(w.c, "H: c", st.s, n);
  for (auto* v : {&a, &b, &c}) fill_zero(v->get(), w.a.size(), n, st.s);
  size_t count = 0;
  fr_t* h = compute_h_device(ctx, conv, a.get(), b.get(), c.get(), log_n, &count, st.s);
  std::vector<fr_t> out(count);
  download(std::span<fr_t>(out), h, st.s);
  return out;
}

g1_jacobian_t msm_g1(std::span<const g1_affine_t> points, std::span<const fr_t> scalars, unsigned window_bits,
                     unsigned slices) {
  return msm_uploaded<G1Points>(points, scalars, window_bits, slices);
}
#if CUZK_GPU_G2
g2_jacobian_t msm_g2(std::span<const g2_affine_t> points, std::span<const fr_t> scalars, unsigned window_bits,
                     unsigned slices) {
  return msm_uploaded<G2Points>(points, scalars, window_bits, slices);
}
#endif

std::vector<g1_jacobian_t> msm_g1_planned(std::span<const std::vector<g1_affine_t>> points,
                                          std::span<const size_t> skips, std::span<const fr_t> scalars,
                                          unsigned window_bits, bool stale, bool skip_zero,
                                          std::optional<bool> equal_chunks) {
  if (points.size() != skips.size()) throw std::invalid_argument("msm_g1_planned: one skip per set of points");
  for (size_t k = 0; k < points.size(); ++k)
    if (skips[k] > scalars.size() || points[k].size() != scalars.size() - skips[k])
      throw std::invalid_argument("msm_g1_planned: set " + std::to_string(k) + " has " +
                                  std::to_string(points[k].size()) + " points for " + std::to_string(scalars.size()) +
                                  " scalars after skipping " + std::to_string(skips[k]));
  Stream st;
  auto d_scalars = upload_array<fr_t>(scalars, "MSM scalars", st.s, 1);
  std::vector<DeviceArray<g1_affine_t>> d_points;
  for (const auto& p : points) d_points.push_back(upload_array<g1_affine_t>(p, "MSM points", st.s, 1));
  MsmG1 msm;
  msm.set_skip_zero_digits(skip_zero);
  msm.set_equal_chunks(equal_chunks);
  const auto plan = msm.plan(d_scalars.get(), scalars.size(), st.s, window_bits);
  if (!plan) return {};
  if (stale) (void)msm.run(d_points[0].get(), d_scalars.get(), points[0].size(), st.s, window_bits);
  std::vector<g1_jacobian_t> out;
  for (size_t k = 0; k < points.size(); ++k) out.push_back(msm.run(*plan, d_points[k].get(), st.s, skips[k]));
  return out;
}

std::vector<fr_t> fr_mul(std::span<const fr_t> a, std::span<const fr_t> b) { return mul_on_device(a, b); }
std::vector<fp_t> fp_mul(std::span<const fp_t> a, std::span<const fp_t> b) { return mul_on_device(a, b); }

double field_mul_throughput(bool fp) { return fp ? mul_throughput<fp_t>() : mul_throughput<fr_t>(); }

std::vector<g1_xyzz_t> g1_madd(std::span<const g1_xyzz_t> acc, std::span<const g1_affine_t> pts) {
  if (acc.size() != pts.size()) throw std::invalid_argument("g1_madd: arrays of different lengths");
  Stream st;
  auto da = upload_array<g1_xyzz_t>(acc, "accumulators", st.s);
  auto dp = upload_array<g1_affine_t>(pts, "points", st.s);
  DeviceArray<g1_xyzz_t> dout(acc.size(), "sums");
  std::vector<g1_xyzz_t> out(acc.size());
  if (!acc.empty()) {
    madd_kernel<<<grid_for(acc.size(), 128), 128, 0, st.s>>>(dout.get(), da.get(), dp.get(), acc.size());
    CUZK_CUDA_CHECK_LAUNCH("madd_kernel");
  }
  download(std::span<g1_xyzz_t>(out), dout.get(), st.s);
  return out;
}

// ---- benchmark helpers ----

template <class P>
struct DeviceMsm<P>::Impl {
  Stream st, upload_st;
  StagedUploader uploader;  // upload_and_run's staging, for pageable input
  DeviceArray<Affine> points;
  DeviceArray<fr_t> scalars;
  size_t n = 0;
  Msm<P> msm;
  double upload_ms = 0, run_ms = 0;
  void reserve(std::span<const Affine> p, std::span<const fr_t> k);
};
template <class P>
DeviceMsm<P>::DeviceMsm() : impl_(std::make_unique<Impl>()) {}
template <class P>
DeviceMsm<P>::~DeviceMsm() = default;
template <class P>
void DeviceMsm<P>::Impl::reserve(std::span<const Affine> p, std::span<const fr_t> k) {
  if (p.size() != k.size()) throw std::invalid_argument("DeviceMsm: points and scalars differ in length");
  if (points.size() < p.size()) {
    points = DeviceArray<Affine>();
    points = DeviceArray<Affine>(p.size(), "MSM points");
    scalars = DeviceArray<fr_t>();
    scalars = DeviceArray<fr_t>(p.size(), "MSM scalars");
  }
  n = p.size();
}
template <class P>
void DeviceMsm<P>::upload(std::span<const Affine> points, std::span<const fr_t> scalars) {
  auto& m = *impl_;
  m.reserve(points, scalars);
  GpuTimer t;
  t.start(m.st.s);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(m.points.get(), points.data(), points.size_bytes(), cudaMemcpyHostToDevice, m.st.s));
  CUZK_CUDA_CHECK(cudaMemcpyAsync(m.scalars.get(), scalars.data(), scalars.size_bytes(), cudaMemcpyHostToDevice, m.st.s));
  t.stop(m.st.s);
  m.upload_ms = double(t.elapsed_ns()) / 1e6;
}
template <class P>
typename P::jacobian DeviceMsm<P>::run(unsigned window_bits) {
  auto& m = *impl_;
  GpuTimer t;
  t.start(m.st.s);
  Jacobian r = m.msm.run(m.points.get(), m.scalars.get(), m.n, m.st.s, window_bits);
  t.stop(m.st.s);
  m.run_ms = double(t.elapsed_ns()) / 1e6;
  return r;
}
template <class P>
typename P::jacobian DeviceMsm<P>::upload_and_run(std::span<const Affine> points, std::span<const fr_t> scalars,
                                                  unsigned window_bits, unsigned slices) {
  auto& m = *impl_;
  m.reserve(points, scalars);
  // Each slice costs work of its own (its sort, its chunk sums, additions into every bucket),
  // so few: 2 growing slices (n/4, 3n/4; SlicedUpload::slice_lengths) from 2^21 points, the
  // fastest count measured (docs/cuda-backend.md#upload-slices-growing-threefold).
  const size_t count = slices ? slices : m.n >= msm_params::kSlicedFromPoints ? msm_params::kSlices : 1;
  GpuTimer t;
  t.start(m.st.s);
  SlicedUpload<P> up(m.points.get(), m.scalars.get(), points, scalars, count, m.st.s, m.upload_st.s, m.uploader);
  Jacobian r = run_sliced(m.msm, up, m.st.s, window_bits);  // 0: the MSM's rule for n and its cut
  t.stop(m.st.s);
  m.run_ms = double(t.elapsed_ns()) / 1e6;
  m.upload_ms = 0;
  return r;
}
template <class P>
void DeviceMsm<P>::set_chunk(uint32_t points) { impl_->msm.set_chunk(points); }
template <class P>
void DeviceMsm<P>::set_skip_zero_digits(bool on) { impl_->msm.set_skip_zero_digits(on); }
template <class P>
void DeviceMsm<P>::set_equal_chunks(std::optional<bool> on) { impl_->msm.set_equal_chunks(on); }
template <class P>
void DeviceMsm<P>::set_fill_later_rounds(bool on) { impl_->msm.set_fill_later_rounds(on); }
template <class P>
double DeviceMsm<P>::last_upload_ms() const { return impl_->upload_ms; }
template <class P>
double DeviceMsm<P>::last_run_gpu_ms() const { return impl_->run_ms; }
template class DeviceMsm<G1Points>;
#if CUZK_GPU_G2
template class DeviceMsm<G2Points>;  // the G2 device MSM exists only with CUZK_GPU_G2 (msm.cu)
#endif

struct DeviceNtt::Impl {
  Stream st;
  unsigned log_n;
  DeviceArray<fr_t> data;
  NttContext ctx;
  double ms = 0;
};
DeviceNtt::DeviceNtt(unsigned log_n, NttPlan plan) : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.log_n = log_n;
  m.ctx.set_plan(plan);
  m.data = DeviceArray<fr_t>(size_t(1) << log_n, "NTT data");
  m.ctx.tables(log_n, m.st.s);
  CUZK_CUDA_CHECK(cudaStreamSynchronize(m.st.s));
}
DeviceNtt::~DeviceNtt() = default;
void DeviceNtt::upload(std::span<const fr_t> a) {
  auto& m = *impl_;
  if (a.size() != m.data.size()) throw std::invalid_argument("DeviceNtt: input size differs from the domain");
  CUZK_CUDA_CHECK(cudaMemcpyAsync(m.data.get(), a.data(), a.size_bytes(), cudaMemcpyHostToDevice, m.st.s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(m.st.s));
}
void DeviceNtt::forward(Order order) {
  auto& m = *impl_;
  GpuTimer t;
  t.start(m.st.s);
  switch (order) {
    case Order::kNatural: m.ctx.forward(m.data.get(), m.log_n, m.st.s); break;
    case Order::kReversedOut: m.ctx.dif_forward(m.data.get(), m.log_n, m.st.s); break;
  }
  t.stop(m.st.s);
  m.ms = double(t.elapsed_ns()) / 1e6;
}
void DeviceNtt::download(std::span<fr_t> a) { cuda::download(a, impl_->data.get(), impl_->st.s); }
double DeviceNtt::last_gpu_ms() const { return impl_->ms; }

std::vector<uint8_t> staged_round_trip(std::span<const uint8_t> src, const StagedUploadOptions& staging) {
  Stream st;
  DeviceArray<uint8_t> d(src.size(), "staged bytes");
  std::vector<uint8_t> out(src.size());
  {
    StagedUploader up(staging);
    up.copy(d.get(), src.data(), src.size(), st.s);
  }  // the uploader waits for its copies before freeing its buffers
  download(std::span<uint8_t>(out), d.get(), st.s);
  return out;
}

double staged_upload_gbps(size_t bytes, const StagedUploadOptions& staging) {
  Stream st;
  DeviceArray<uint8_t> d(bytes, "staged bytes");
  std::vector<uint8_t> src(bytes, 1);  // written: its pages are resident, as a witness's are
  StagedUploader up(staging);
  up.copy(d.get(), src.data(), bytes, st.s);  // untimed: allocates the pinned buffers
  CUZK_CUDA_CHECK(cudaStreamSynchronize(st.s));
  GpuTimer t;
  t.start(st.s);
  up.copy(d.get(), src.data(), bytes, st.s);
  t.stop(st.s);
  return double(bytes) / double(t.elapsed_ns());
}

void try_device_alloc(size_t bytes, const char* what) { DeviceArray<uint8_t> a(bytes, what); }

HostPin::HostPin(const void* p, size_t bytes) : p_(const_cast<void*>(p)) {
  CUZK_CUDA_CHECK(cudaHostRegister(p_, bytes, cudaHostRegisterDefault));
}
HostPin::~HostPin() { cudaHostUnregister(p_); }

}  // namespace cuzk::cuda
