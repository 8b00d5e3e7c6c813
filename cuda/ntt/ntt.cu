#include <algorithm>
#include <vector>
#include <stdexcept>
#include <string>

#include "cuda/ntt/ntt.cuh"
#include "cuda/ntt/ntt_params.hpp"

namespace cuzk::cuda {
namespace {

using ntt_params::kMaxTileLog;
using ntt_params::kPassThreads;

__device__ __forceinline__ fr_t pow_by_table(const PowTable& t, uint32_t e) {
  fr_t r = fr_t::one();
  for (int b = 0; e; ++b, e >>= 1)
    if (e & 1) r = r * t.p[b];
  return r;
}

__device__ __forceinline__ uint32_t rev_bits(uint32_t i, unsigned log_n) {
  return log_n ? __brev(i) >> (32 - log_n) : 0;
}

// An element in two 128-bit accesses instead of four 64-bit ones (every fr_t in these arrays is
// 32-byte aligned: cudaMalloc'd, 32-byte elements): half the memory instructions for the same
// sectors. Twiddles are read-only for the kernel's lifetime, so they go through the read-only path.
__device__ __forceinline__ fr_t load_el(const fr_t* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  const ulonglong2 a = q[0], b = q[1];
  fr_t v;
  v.l[0] = a.x, v.l[1] = a.y, v.l[2] = b.x, v.l[3] = b.y;
  return v;
}
__device__ __forceinline__ fr_t load_tw(const fr_t* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  const ulonglong2 a = __ldg(q), b = __ldg(q + 1);
  fr_t v;
  v.l[0] = a.x, v.l[1] = a.y, v.l[2] = b.x, v.l[3] = b.y;
  return v;
}
__device__ __forceinline__ void store_el(fr_t* p, const fr_t& v) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  q[0] = make_ulonglong2(v.l[0], v.l[1]);
  q[1] = make_ulonglong2(v.l[2], v.l[3]);
}
static_assert(sizeof(fr_t) == 32 && fr_t::N == 4, "load_el/store_el move 4 64-bit limbs");

// The twiddles of every stage, each stage's run contiguous: stage s of a 2^log_n transform uses
// omega^(j 2^s) for j < h = 2^(log_n-s-1), kept at tw[h - 1 + j]. A single table omega^j read at
// stride 2^s made consecutive threads of the early stages fetch a sector each; here they read
// consecutive elements. n - 1 entries in all (the single table had n/2).
__global__ void twiddle_kernel(fr_t* tw, uint32_t count, unsigned log_n, PowTable t) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const unsigned lh = 31 - __clz(i + 1);  // h = 2^lh <= i + 1 < 2h
  const uint32_t j = i + 1 - (1u << lh);
  tw[i] = pow_by_table(t, j << (log_n - 1 - lh));  // stage s = log_n - 1 - lh
}

// Stages s0 .. s0+k-1 of a DIF (or the same stages, in reverse order, of a DIT) on G = 2^lg
// groups of 2^k elements per block. Stage s pairs i and i + h (h = n >> (s+1)) and uses
// omega^(j << s), j = i mod h. A group holds the 2^k elements base + t*hmin (hmin = n >> (s0+k)),
// which the k stages only ever combine with each other. Every size is a power of two: indices
// are 32-bit and split with shifts and masks (a 64-bit division costs a GPU ~100 instructions).
//
// Shared memory holds the elements limb-planar (limb l of slot p at l * elems + p), so a warp
// reading one limb of 32 consecutive slots touches 256 consecutive bytes: with whole 32-byte
// elements side by side every such read was a 4-way bank conflict, and shared memory, not the
// products, bounded the kernel. Slots are ordered so that consecutive threads use consecutive
// slots both when loading and in the butterflies: group-fastest (slot t * G + g) while the
// groups are interleaved in global memory (hmin >= G), position-fastest (g * 2^k + t) otherwise.
struct SharedPlanes {
  uint64_t* p;
  uint32_t stride;
  __device__ __forceinline__ fr_t get(uint32_t i) const {
    fr_t v;
#pragma unroll
    for (int l = 0; l < fr_t::N; ++l) v.l[l] = p[l * stride + i];
    return v;
  }
  __device__ __forceinline__ void put(uint32_t i, const fr_t& v) const {
#pragma unroll
    for (int l = 0; l < fr_t::N; ++l) p[l * stride + i] = v.l[l];
  }
};

// The butterflies, every value lazy in [0, 2p) instead of [0, p) (mont.hpp's lazy forms: sums
// and differences fold back by 2p, the product skips its final subtraction, with the twiddle
// w < p as the operand that bound needs below p); the last pass of a transform reduces its output.
// DIF: (x, y) -> (x + y, (x - y) w); DIT: (x, y) -> (x + w y, x - w y); the unit stage's w = 1
// needs no product. Lazy values skip a subtraction per operation and measured 2-3% faster than
// values reduced after every operation (docs/cuda-backend.md#ntt-plans-lazy-values-no-reversal-pass).
__device__ __forceinline__ void butterfly_unit(fr_t& x, fr_t& y) {
  const fr_t s = fr_t::add_words_2p(x, y);
  y = fr_t::sub_words_2p(x, y);
  x = s;
}
template <bool kDit>
__device__ __forceinline__ void butterfly(fr_t& x, fr_t& y, const fr_t& w) {
  if constexpr (kDit) {
    const fr_t wy = fr_t::mul_words_2p(w, y);
    y = fr_t::sub_words_2p(x, wy);
    x = fr_t::add_words_2p(x, wy);
  } else {
    const fr_t s = fr_t::add_words_2p(x, y);
    y = fr_t::mul_words_2p(w, fr_t::sub_words_2p(x, y));
    x = s;
  }
}

// kBlocks blocks per SM (NttPlan::occupancy), 3 by default: the two-stage round trips need
// 108-112 registers, which allows only two blocks of 256 threads; capped at 80 (48 bytes of
// spills) three fit, and the passes want warps more than registers (measured faster:
// docs/cuda-backend.md#ntt-plans-lazy-values-no-reversal-pass).
//
// The pass reads `in` and writes `out` (the same array, or not: in place the block stores only
// the elements it loaded). With rev_out (only the last stages of a DIF, hmin = 1, where a group is
// a contiguous run) each element goes to the bit reversal of its position, so that a natural-order
// transform needs no reversal pass of its own; out must then be another array unless one block
// holds the whole transform. The block's groups are then 2^(log_n-k-lg) apart instead of adjacent:
// the reversals of their positions at each t are adjacent, so the block writes runs of G
// elements, which the L2 cache merges into whole lines before they reach memory.
template <bool kDit, int kBlocks>
__global__ void __launch_bounds__(kPassThreads, kBlocks) ntt_pass_kernel(const fr_t* in, fr_t* out, unsigned log_n, unsigned s0,
                                                               unsigned k, unsigned lg, const fr_t* tw, bool rev_out,
                                                               bool last) {
  extern __shared__ uint64_t sh_words[];
#if __CUDA_ARCH__ >= 900
  // Launched early (NttPlan::early_launch), the pass waits here for the kernel before it to end
  // and its writes to show; launched plainly, this returns at once.
  cudaGridDependencySynchronize();
#endif
  const unsigned lh = log_n - s0 - k;  // log2(hmin)
  const uint32_t hmask = (1u << lh) - 1;
  const uint32_t elems = 1u << (lg + k);
  const bool group_fastest = lh >= lg;
  const SharedPlanes sh{sh_words, elems};
  // Group gl of this block -> its index among all 2^(log_n-k) groups.
  auto group = [&](uint32_t gl) -> uint32_t {
    return rev_out ? blockIdx.x + (gl << (log_n - k - lg)) : (blockIdx.x << lg) + gl;
  };
  auto slot = [&](uint32_t gl, uint32_t t) { return group_fastest ? (t << lg) + gl : (gl << k) + t; };
  // Element e of the block -> (group gl, position t), chosen so that consecutive threads read
  // consecutive addresses: groups side by side when hmin >= G, whole contiguous runs otherwise.
  auto locate = [&](uint32_t e, uint32_t& gl, uint32_t& t) -> uint32_t {
    if (group_fastest) {
      t = e >> lg;
      gl = e & ((1u << lg) - 1);
    } else {
      const uint32_t blk = e >> (lh + k), rem = e & ((1u << (lh + k)) - 1);
      t = rem >> lh;
      gl = (blk << lh) | (rem & hmask);
    }
    const uint32_t g = group(gl);
    return ((g >> lh) << (lh + k)) + (g & hmask) + (t << lh);
  };
  for (uint32_t e = threadIdx.x; e < elems; e += blockDim.x) {
    uint32_t gl, t;
    const uint32_t a = locate(e, gl, t);
    sh.put(slot(gl, t), load_el(in + a));
  }
  __syncthreads();
  // Two stages per shared-memory round trip: a thread loads the 4 elements t, t+d2, t+d1,
  // t+d1+d2 of a group (d1 = 2 d2, the pair distances of stages q and q+1), which those two
  // stages combine only with each other, does their 4 butterflies in registers and stores them:
  // half the shared-memory round trips and barriers of one stage at a time. An odd k leaves one
  // stage to do alone after the pairs: DIF's stage k-1, DIT's stage 0.
  // Work item i -> (group gl, item u of the group's 2^ulog), in the order of the slots.
  auto split = [&](uint32_t i, unsigned ulog, uint32_t& gl, uint32_t& u) {
    if (group_fastest) {
      gl = i & ((1u << lg) - 1);
      u = i >> lg;
    } else {
      gl = i >> ulog;
      u = i & ((1u << ulog) - 1);
    }
  };
  const uint32_t half_elems = elems >> 1, quarter_elems = elems >> 2;
  for (unsigned qq = 0; qq + 1 < k; qq += 2) {
    const unsigned q = kDit ? k - 2 - qq : qq;  // stages s0 + q (distance d1) and s0 + q + 1 (d2)
    const unsigned lhs = k - 2 - q;             // log2(d2)
    const uint32_t d2 = 1u << lhs;
    const bool unit = s0 + q + 1 == log_n - 1;  // only stage s0 + q + 1 can be the unit one
    for (uint32_t qd = threadIdx.x; qd < quarter_elems; qd += blockDim.x) {
      uint32_t gl, u;  // group and quad within it, in the order of the slots
      split(qd, k - 2, gl, u);
      const uint32_t low = u & (d2 - 1);
      const uint32_t t = ((u >> lhs) << (lhs + 2)) | low;  // bits lhs and lhs+1 clear
      const uint32_t p0 = slot(gl, t), p1 = slot(gl, t + d2), p2 = slot(gl, t + 2 * d2), p3 = slot(gl, t + 3 * d2);
      fr_t x0 = sh.get(p0), x1 = sh.get(p1), x2 = sh.get(p2), x3 = sh.get(p3);
      // Indices mod h of the lower elements: stage q pairs (x0, x2) at j and (x1, x3) at
      // j + (d2 << lh); stage q+1 pairs (x0, x1) and (x2, x3), both at j. DIT does stage q+1 first.
      const uint32_t j = (group(gl) & hmask) + (low << lh);
      const uint32_t tw1 = (1u << (log_n - 1 - s0 - q)) - 1 + j;
      const auto stage_q = [&] {
        butterfly<kDit>(x0, x2, load_tw(tw + tw1));
        butterfly<kDit>(x1, x3, load_tw(tw + tw1 + (d2 << lh)));
      };
      const auto stage_q1 = [&] {  // one twiddle for both pairs
        if (unit) {
          butterfly_unit(x0, x1);
          butterfly_unit(x2, x3);
        } else {
          const fr_t w2 = load_tw(tw + (1u << (log_n - 2 - s0 - q)) - 1 + j);
          butterfly<kDit>(x0, x1, w2);
          butterfly<kDit>(x2, x3, w2);
        }
      };
      if constexpr (kDit) {
        stage_q1();
        stage_q();
      } else {
        stage_q();
        stage_q1();
      }
      sh.put(p0, x0);
      sh.put(p1, x1);
      sh.put(p2, x2);
      sh.put(p3, x3);
    }
    __syncthreads();
  }
  if (k & 1) {
    const unsigned q = kDit ? 0 : k - 1;  // stage s0 + q
    const unsigned lhs = k - 1 - q;       // log2 of the pair distance inside the group
    const bool unit = s0 + q == log_n - 1;
    for (uint32_t bf = threadIdx.x; bf < half_elems; bf += blockDim.x) {
      uint32_t gl, u;  // group and butterfly within it, in the order of the slots
      split(bf, k - 1, gl, u);
      const uint32_t low = u & ((1u << lhs) - 1);
      const uint32_t t = ((u >> lhs) << (lhs + 1)) | low;  // the lower element of the pair
      const uint32_t sx = slot(gl, t), sy = slot(gl, t + (1u << lhs));
      fr_t x0 = sh.get(sx), y0 = sh.get(sy);
      if (unit) {  // the last stage pairs neighbours: every twiddle is omega^0 = 1
        butterfly_unit(x0, y0);
      } else {
        const uint32_t j = (group(gl) & hmask) + (low << lh);  // index mod h of the lower element
        butterfly<kDit>(x0, y0, load_tw(tw + (1u << (log_n - 1 - s0 - q)) - 1 + j));
      }
      sh.put(sx, x0);
      sh.put(sy, y0);
    }
    __syncthreads();
  }
#if __CUDA_ARCH__ >= 900
  // The next pass may be launched once every block is storing; it still waits for this one to end.
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  for (uint32_t e = threadIdx.x; e < elems; e += blockDim.x) {
    uint32_t gl, t;
    const uint32_t a = locate(e, gl, t);
    fr_t v = sh.get(slot(gl, t));
    if (last) v = v.canonical();  // the transform's output is reduced
    store_el(out + (rev_out ? rev_bits(a, log_n) : a), v);
  }
}

// d[i] *= lo[k & lo_mask] * hi[k >> lo_bits], k = i or its reversal: x^k from two tables of about
// sqrt(n) powers each (lo holds c x^j, hi holds x^(j 2^lo_bits)), two products per element where
// raising x to k would take one per set bit of k.
__global__ void scale_kernel(fr_t* d, size_t n, unsigned log_n, const fr_t* lo, const fr_t* hi, unsigned lo_bits,
                             bool rev) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const uint32_t k = rev ? rev_bits(uint32_t(i), log_n) : uint32_t(i);
  d[i] = d[i] * (lo[k & ((1u << lo_bits) - 1)] * hi[k >> lo_bits]);
}

// out[j] = c * x^j for j < count
__global__ void powers_kernel(fr_t* out, uint32_t count, PowTable t, fr_t c) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < count) out[j] = c * pow_by_table(t, j);
}

__global__ void mul_const_kernel(fr_t* d, size_t n, fr_t c) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) d[i] = d[i] * c;
}

__global__ void h_pointwise_kernel(fr_t* a, const fr_t* b, const fr_t* c, fr_t z, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = (a[i] * b[i] - c[i]) * z;
}

__global__ void zero_kernel(fr_t* d, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) d[i] = fr_t::zero();
}

using ntt_params::default_plan;
using ntt_params::kDefaultOccupancy;

// The pass kernel of a direction at an occupancy of 2, 3 or 4 blocks per SM.
using PassKernel = void (*)(const fr_t*, fr_t*, unsigned, unsigned, unsigned, unsigned, const fr_t*, bool, bool);
PassKernel pass_kernel(bool dit, unsigned occupancy) {
  static constexpr PassKernel dif[] = {ntt_pass_kernel<false, 2>, ntt_pass_kernel<false, 3>, ntt_pass_kernel<false, 4>};
  static constexpr PassKernel dit_[] = {ntt_pass_kernel<true, 2>, ntt_pass_kernel<true, 3>, ntt_pass_kernel<true, 4>};
  return (dit ? dit_ : dif)[occupancy - 2];
}

void check_log(unsigned log_n) {
  if (log_n > 31)
    throw std::invalid_argument("GPU NTT: domain 2^" + std::to_string(log_n) + " exceeds 2^31 (32-bit indices)");
}

}  // namespace

PowTable PowTable::of(const fr_t& x) {
  PowTable t;
  t.p[0] = x;
  for (int b = 1; b < 32; ++b) t.p[b] = t.p[b - 1].sqr();
  return t;
}

const NttContext::Tables& NttContext::tables(unsigned log_n, cudaStream_t s) {
  check_log(log_n);
  auto& slot = tables_[log_n];
  if (slot) return *slot;
  auto t = std::make_unique<Tables>();
  const size_t n = size_t(1) << log_n;
  t->omega = fr_t::root_of_unity(log_n);
  t->omega_inv = t->omega.inv();
  t->n_inv = fr_t::from_u64(n).inv();
  if (n > 1) {
    const uint32_t count = uint32_t(n - 1);
    t->fwd = DeviceArray<fr_t>(count, "NTT twiddles (forward)");
    t->inv = DeviceArray<fr_t>(count, "NTT twiddles (inverse)");
    twiddle_kernel<<<grid_for(count, 256), 256, 0, s>>>(t->fwd.get(), count, log_n, PowTable::of(t->omega));
    twiddle_kernel<<<grid_for(count, 256), 256, 0, s>>>(t->inv.get(), count, log_n, PowTable::of(t->omega_inv));
    CUZK_CUDA_CHECK_LAUNCH("twiddle_kernel");
  }
  slot = std::move(t);
  return *slot;
}

void NttContext::set_plan(NttPlan plan) {
  const bool default_rule = plan.tile_log == 0 && plan.max_stages == 0;
  if (!default_rule && (plan.tile_log < 2 || plan.tile_log > kMaxTileLog || plan.max_stages < 1 ||
                        plan.max_stages > plan.tile_log))
    throw std::invalid_argument("GPU NTT plan: tile 2^" + std::to_string(plan.tile_log) + " with up to " +
                                std::to_string(plan.max_stages) + " stages per pass; the tile must be 2^2..2^" +
                                std::to_string(kMaxTileLog) + " and hold the pass's stages");
  if (plan.occupancy != 0 && (plan.occupancy < 2 || plan.occupancy > 4))
    throw std::invalid_argument("GPU NTT plan: occupancy " + std::to_string(plan.occupancy) +
                                " blocks per SM; it must be 2, 3 or 4 (0: the default, " +
                                std::to_string(kDefaultOccupancy) + ")");
  plan_ = plan;
}

NttPlan NttContext::plan_for(unsigned log_n) const {
  NttPlan p = plan_.tile_log ? plan_ : default_plan(log_n);  // {0, 0, k}: the rule's tiles at k
  if (plan_.occupancy) p.occupancy = plan_.occupancy;
  p.early_launch = plan_.early_launch;
  if (!p.occupancy) p.occupancy = kDefaultOccupancy;
  return p;
}

fr_t* NttContext::scratch(size_t n) {
  if (scratch_.size() < n) {
    scratch_ = DeviceArray<fr_t>();
    scratch_ = DeviceArray<fr_t>(n, "NTT scratch (natural-order output)");
  }
  return scratch_.get();
}

void NttContext::passes(const fr_t* src, fr_t* mid, fr_t* dst, unsigned log_n, const fr_t* tw, bool dit, bool rev_out,
                        cudaStream_t s) {
  if (log_n == 0) {
    if (dst != src) CUZK_CUDA_CHECK(cudaMemcpyAsync(dst, src, sizeof(fr_t), cudaMemcpyDeviceToDevice, s));
    return;
  }
  static bool attr_set = [] {
    const int bytes = int((size_t(1) << kMaxTileLog) * sizeof(fr_t));
    for (bool dit : {false, true})
      for (unsigned occupancy = 2; occupancy <= 4; ++occupancy)
        CUZK_CUDA_CHECK(
            cudaFuncSetAttribute(pass_kernel(dit, occupancy), cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return true;
  }();
  (void)attr_set;
  const NttPlan plan = plan_for(log_n);
  // Stage ranges [s0, s0+k), as even as they go: DIF runs them first to last, DIT last to first.
  const unsigned count = (log_n + plan.max_stages - 1) / plan.max_stages;
  std::vector<std::pair<unsigned, unsigned>> ranges;
  for (unsigned i = 0, s0 = 0; i < count; ++i) {
    const unsigned k = log_n / count + (i < log_n % count ? 1 : 0);
    ranges.push_back({s0, k});
    s0 += k;
  }
  if (dit) std::reverse(ranges.begin(), ranges.end());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto [s0, k] = ranges[i];
    const unsigned lg = std::min(plan.tile_log - k, log_n - k);  // log2(groups per block)
    const unsigned blocks = 1u << (log_n - k - lg);
    const size_t smem = size_t(1) << (lg + k);
    const unsigned threads = unsigned(std::min<size_t>(kPassThreads, std::max<size_t>(smem / 2, 1)));
    const fr_t* in = i == 0 ? src : mid;
    fr_t* out = i + 1 == ranges.size() ? dst : mid;
    const bool rev = rev_out && i + 1 == ranges.size() && !dit;
    const bool last = i + 1 == ranges.size();
    const PassKernel kernel = pass_kernel(dit, plan.occupancy);
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(blocks);
    cfg.blockDim = dim3(threads);
    cfg.dynamicSmemBytes = smem * sizeof(fr_t);
    cfg.stream = s;
    // No capability check: the backend runs only on compute capability 9.0 and up, where early
    // launches exist (cuda/util/device_probe.cu refuses older GPUs).
    cudaLaunchAttribute early{};
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    if (plan.early_launch) {
      cfg.attrs = &early;
      cfg.numAttrs = 1;
    }
    CUZK_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, in, out, log_n, s0, k, lg, tw, rev, last));
  }
}

void NttContext::dif_inverse(fr_t* d, unsigned log_n, cudaStream_t s) {
  passes(d, d, d, log_n, tables(log_n, s).inv.get(), false, false, s);
}
void NttContext::dit_forward(fr_t* d, unsigned log_n, cudaStream_t s) {
  passes(d, d, d, log_n, tables(log_n, s).fwd.get(), true, false, s);
}
void NttContext::dif_forward(fr_t* d, unsigned log_n, cudaStream_t s) {
  passes(d, d, d, log_n, tables(log_n, s).fwd.get(), false, false, s);
}

void NttContext::dif_natural(fr_t* in, fr_t* out, unsigned log_n, const fr_t* tw, cudaStream_t s) {
  check_log(log_n);
  // One pass is one block, which loads the whole transform before it stores: in place is safe.
  // Otherwise the last pass must not write where other blocks have yet to read, so the passes
  // before it run in `in` itself (out of place) or in a scratch array (in place).
  const bool one_pass = log_n <= plan_for(log_n).max_stages;
  fr_t* mid = in != out ? in : one_pass ? out : scratch(size_t(1) << log_n);
  passes(in, mid, out, log_n, tw, false, true, s);
}

void NttContext::dif_inverse_natural(fr_t* in, fr_t* out, unsigned log_n, cudaStream_t s) {
  dif_natural(in, out, log_n, tables(log_n, s).inv.get(), s);
}

void NttContext::forward(fr_t* d, unsigned log_n, cudaStream_t s) {
  dif_natural(d, d, log_n, tables(log_n, s).fwd.get(), s);
}

void NttContext::inverse(fr_t* d, unsigned log_n, cudaStream_t s) {
  const Tables& t = tables(log_n, s);
  dif_natural(d, d, log_n, t.inv.get(), s);
  const size_t n = size_t(1) << log_n;
  mul_const_kernel<<<grid_for(n, 256), 256, 0, s>>>(d, n, t.n_inv);
  CUZK_CUDA_CHECK_LAUNCH("mul_const_kernel");
}

void NttContext::coset_forward(fr_t* d, unsigned log_n, const fr_t& g, cudaStream_t s) {
  scale(d, log_n, g, fr_t::one(), false, s);
  forward(d, log_n, s);
}

void NttContext::coset_inverse(fr_t* d, unsigned log_n, const fr_t& g, cudaStream_t s) {
  inverse(d, log_n, s);
  scale(d, log_n, g.inv(), fr_t::one(), false, s);
}

void NttContext::scale(fr_t* d, unsigned log_n, const fr_t& x, const fr_t& c, bool reversed_index, cudaStream_t s) {
  check_log(log_n);
  const size_t n = size_t(1) << log_n;
  const unsigned lo_bits = (log_n + 1) / 2, hi_bits = log_n - lo_bits;
  const uint32_t lo_n = 1u << lo_bits, hi_n = 1u << hi_bits;
  if (scale_tables_.size() < size_t(lo_n) + hi_n) {
    scale_tables_ = DeviceArray<fr_t>();
    scale_tables_ = DeviceArray<fr_t>(size_t(lo_n) + hi_n, "NTT scaling tables");
  }
  fr_t* lo = scale_tables_.get();
  fr_t* hi = lo + lo_n;
  fr_t x_step = x;  // x^(2^lo_bits)
  for (unsigned b = 0; b < lo_bits; ++b) x_step = x_step.sqr();
  powers_kernel<<<grid_for(lo_n, 256), 256, 0, s>>>(lo, lo_n, PowTable::of(x), c);
  powers_kernel<<<grid_for(hi_n, 256), 256, 0, s>>>(hi, hi_n, PowTable::of(x_step), fr_t::one());
  scale_kernel<<<grid_for(n, 256), 256, 0, s>>>(d, n, log_n, lo, hi, lo_bits, reversed_index);
  CUZK_CUDA_CHECK_LAUNCH("scale_kernel");
}

void h_pointwise(fr_t* a, const fr_t* b, const fr_t* c, const fr_t& z, size_t n, cudaStream_t s) {
  if (!n) return;
  h_pointwise_kernel<<<grid_for(n, 256), 256, 0, s>>>(a, b, c, z, n);
  CUZK_CUDA_CHECK_LAUNCH("h_pointwise_kernel");
}

void fill_zero(fr_t* d, size_t from, size_t to, cudaStream_t s) {
  if (to <= from) return;
  zero_kernel<<<grid_for(to - from, 256), 256, 0, s>>>(d + from, to - from);
  CUZK_CUDA_CHECK_LAUNCH("zero_kernel");
}

}  // namespace cuzk::cuda
