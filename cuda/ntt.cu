#include <algorithm>
#include <vector>
#include <stdexcept>
#include <string>

#include "cuda/ntt.cuh"

namespace cuzk::cuda {
namespace {

constexpr unsigned kPassStages = 8;     // butterfly stages per shared-memory pass
constexpr unsigned kTileLog = 11;       // 2^11 elements per block in shared memory (64 KiB)
constexpr unsigned kTileElems = 1u << kTileLog;
constexpr unsigned kPassThreads = 256;

__device__ __forceinline__ fr_t pow_by_table(const PowTable& t, uint32_t e) {
  fr_t r = fr_t::one();
  for (int b = 0; e; ++b, e >>= 1)
    if (e & 1) r = r * t.p[b];
  return r;
}

__device__ __forceinline__ uint32_t rev_bits(uint32_t i, unsigned log_n) {
  return log_n ? __brev(i) >> (32 - log_n) : 0;
}

__global__ void twiddle_kernel(fr_t* tw, size_t half, PowTable t) {
  size_t j = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (j < half) tw[j] = pow_by_table(t, uint32_t(j));
}

// Stages s0 .. s0+k-1 of a DIF (or the same stages, in reverse order, of a DIT) on G = 2^lg
// groups of 2^k elements per block. Stage s pairs i and i + h (h = n >> (s+1)) and uses
// omega^(j << s), j = i mod h. A group holds the 2^k elements base + t*hmin (hmin = n >> (s0+k)),
// which the k stages only ever combine with each other. Every size is a power of two: indices
// are 32-bit and split with shifts and masks (a 64-bit division costs a GPU ~100 instructions).
template <bool kDit>
__global__ void __launch_bounds__(kPassThreads) ntt_pass_kernel(fr_t* d, unsigned log_n, unsigned s0, unsigned k,
                                                               unsigned lg, const fr_t* tw) {
  extern __shared__ fr_t sh[];
  const unsigned lh = log_n - s0 - k;  // log2(hmin)
  const uint32_t hmask = (1u << lh) - 1;
  const uint32_t elems = 1u << (lg + k);
  const uint32_t g0 = blockIdx.x << lg;  // first group of this block
  // Element e of the block -> (group gl, position t), chosen so that consecutive threads read
  // consecutive addresses: groups side by side when hmin >= G, whole contiguous runs otherwise.
  auto locate = [&](uint32_t e, uint32_t& gl, uint32_t& t) -> uint32_t {
    if (lh >= lg) {
      t = e >> lg;
      gl = e & ((1u << lg) - 1);
    } else {
      const uint32_t blk = e >> (lh + k), rem = e & ((1u << (lh + k)) - 1);
      t = rem >> lh;
      gl = (blk << lh) | (rem & hmask);
    }
    const uint32_t g = g0 + gl;
    return ((g >> lh) << (lh + k)) + (g & hmask) + (t << lh);
  };
  for (uint32_t e = threadIdx.x; e < elems; e += blockDim.x) {
    uint32_t gl, t;
    const uint32_t a = locate(e, gl, t);
    sh[(gl << k) + t] = d[a];
  }
  __syncthreads();
  const uint32_t half_elems = elems >> 1;
  for (unsigned qq = 0; qq < k; ++qq) {
    const unsigned q = kDit ? k - 1 - qq : qq;  // stage s0 + q
    const unsigned lhs = k - 1 - q;             // log2 of the pair distance inside the group
    for (uint32_t bf = threadIdx.x; bf < half_elems; bf += blockDim.x) {
      const uint32_t gl = bf >> (k - 1), u = bf & ((1u << (k - 1)) - 1);
      const uint32_t low = u & ((1u << lhs) - 1);
      const uint32_t t = ((u >> lhs) << (lhs + 1)) | low;  // the lower element of the pair
      const uint32_t j = ((g0 + gl) & hmask) + (low << lh);  // index mod h of the lower element
      const fr_t w = tw[j << (s0 + q)];
      fr_t& x = sh[(gl << k) + t];
      fr_t& y = sh[(gl << k) + t + (1u << lhs)];
      if (kDit) {
        const fr_t wy = y * w;
        const fr_t x0 = x;
        x = x0 + wy;
        y = x0 - wy;
      } else {
        const fr_t x0 = x;
        x = x0 + y;
        y = (x0 - y) * w;
      }
    }
    __syncthreads();
  }
  for (uint32_t e = threadIdx.x; e < elems; e += blockDim.x) {
    uint32_t gl, t;
    const uint32_t a = locate(e, gl, t);
    d[a] = sh[(gl << k) + t];
  }
}

__global__ void scale_kernel(fr_t* d, size_t n, unsigned log_n, PowTable t, fr_t c, bool rev) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const uint32_t idx = rev ? rev_bits(uint32_t(i), log_n) : uint32_t(i);
  d[i] = d[i] * (c * pow_by_table(t, idx));
}

__global__ void bitrev_kernel(fr_t* out, const fr_t* in, size_t n, unsigned log_n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) out[rev_bits(uint32_t(i), log_n)] = in[i];
}

__global__ void h_pointwise_kernel(fr_t* a, const fr_t* b, const fr_t* c, fr_t z, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = (a[i] * b[i] - c[i]) * z;
}

__global__ void zero_kernel(fr_t* d, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) d[i] = fr_t::zero();
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
  const size_t n = size_t(1) << log_n, half = n / 2;
  t->omega = fr_t::root_of_unity(log_n);
  t->omega_inv = t->omega.inv();
  t->n_inv = fr_t::from_u64(n).inv();
  if (half) {
    t->fwd = DeviceArray<fr_t>(half, "NTT twiddles (forward)");
    t->inv = DeviceArray<fr_t>(half, "NTT twiddles (inverse)");
    twiddle_kernel<<<grid_for(half, 256), 256, 0, s>>>(t->fwd.get(), half, PowTable::of(t->omega));
    twiddle_kernel<<<grid_for(half, 256), 256, 0, s>>>(t->inv.get(), half, PowTable::of(t->omega_inv));
    CUZK_CUDA_CHECK_LAUNCH("twiddle_kernel");
  }
  slot = std::move(t);
  return *slot;
}

void NttContext::passes(fr_t* d, unsigned log_n, const fr_t* tw, bool dit, cudaStream_t s) {
  if (log_n == 0) return;
  static bool attr_set = [] {
    CUZK_CUDA_CHECK(cudaFuncSetAttribute(ntt_pass_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(kTileElems * sizeof(fr_t))));
    CUZK_CUDA_CHECK(cudaFuncSetAttribute(ntt_pass_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         int(kTileElems * sizeof(fr_t))));
    return true;
  }();
  (void)attr_set;
  // Stage ranges [s0, s0+k): DIF runs them first to last, DIT last to first.
  std::vector<std::pair<unsigned, unsigned>> ranges;
  for (unsigned s0 = 0; s0 < log_n; s0 += kPassStages) ranges.push_back({s0, std::min(kPassStages, log_n - s0)});
  if (dit) std::reverse(ranges.begin(), ranges.end());
  for (auto [s0, k] : ranges) {
    const unsigned lg = std::min(kTileLog - k, log_n - k);  // log2(groups per block)
    const unsigned blocks = 1u << (log_n - k - lg);
    const size_t smem = size_t(1) << (lg + k);
    const unsigned threads = unsigned(std::min<size_t>(kPassThreads, std::max<size_t>(smem / 2, 1)));
    if (dit)
      ntt_pass_kernel<true><<<blocks, threads, smem * sizeof(fr_t), s>>>(d, log_n, s0, k, lg, tw);
    else
      ntt_pass_kernel<false><<<blocks, threads, smem * sizeof(fr_t), s>>>(d, log_n, s0, k, lg, tw);
    CUZK_CUDA_CHECK_LAUNCH("ntt_pass_kernel");
  }
}

void NttContext::dif_inverse(fr_t* d, unsigned log_n, cudaStream_t s) { passes(d, log_n, tables(log_n, s).inv.get(), false, s); }
void NttContext::dit_forward(fr_t* d, unsigned log_n, cudaStream_t s) { passes(d, log_n, tables(log_n, s).fwd.get(), true, s); }

void NttContext::forward(fr_t* d, fr_t* scratch, unsigned log_n, cudaStream_t s) {
  // DIT wants reversed input: reverse first, then the natural-order output lands in d.
  bit_reverse(scratch, d, log_n, s);
  passes(scratch, log_n, tables(log_n, s).fwd.get(), true, s);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(d, scratch, (size_t(1) << log_n) * sizeof(fr_t), cudaMemcpyDeviceToDevice, s));
}

void NttContext::inverse(fr_t* d, fr_t* scratch, unsigned log_n, cudaStream_t s) {
  const Tables& t = tables(log_n, s);
  passes(d, log_n, t.inv.get(), false, s);
  scale_by_index_powers(d, log_n, fr_t::one(), t.n_inv, false, s);
  bit_reverse(scratch, d, log_n, s);
  CUZK_CUDA_CHECK(cudaMemcpyAsync(d, scratch, (size_t(1) << log_n) * sizeof(fr_t), cudaMemcpyDeviceToDevice, s));
}

void NttContext::coset_forward(fr_t* d, fr_t* scratch, unsigned log_n, const fr_t& g, cudaStream_t s) {
  scale_by_index_powers(d, log_n, g, fr_t::one(), false, s);
  forward(d, scratch, log_n, s);
}

void NttContext::coset_inverse(fr_t* d, fr_t* scratch, unsigned log_n, const fr_t& g, cudaStream_t s) {
  inverse(d, scratch, log_n, s);
  scale_by_index_powers(d, log_n, g.inv(), fr_t::one(), false, s);
}

void scale_by_index_powers(fr_t* d, unsigned log_n, const fr_t& x, const fr_t& c, bool reversed_index,
                           cudaStream_t s) {
  check_log(log_n);
  const size_t n = size_t(1) << log_n;
  scale_kernel<<<grid_for(n, 256), 256, 0, s>>>(d, n, log_n, PowTable::of(x), c, reversed_index);
  CUZK_CUDA_CHECK_LAUNCH("scale_kernel");
}

void bit_reverse(fr_t* out, const fr_t* in, unsigned log_n, cudaStream_t s) {
  check_log(log_n);
  const size_t n = size_t(1) << log_n;
  bitrev_kernel<<<grid_for(n, 256), 256, 0, s>>>(out, in, n, log_n);
  CUZK_CUDA_CHECK_LAUNCH("bitrev_kernel");
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
