#include "prover/msm/affine_batch_ifma.hpp"

// GCC 12 reports the AVX-512 intrinsics' own undefined-vector idiom (_mm512_undefined_epi32)
// as maybe-uninitialized once they are inlined here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cstddef>

#include "prover/ff/fp_ifma.hpp"

namespace cuzk {

#if CUZK_USE_IFMA
namespace {
using namespace ifma;

// The vector form of a group's coordinates: eight Fp (G1) or eight Fp2 (G2) elements.
template <class Affine>
struct Lanes;
template <>
struct Lanes<g1_affine_t> {
  using V = fp_x8;
  using F = fp_t;
};
template <>
struct Lanes<g2_affine_t> {
  using V = fp2_x8;
  using F = fp2_t;
};
template <class Affine>
constexpr uint64_t kX = offsetof(Affine, x);
template <class Affine>
constexpr uint64_t kY = offsetof(Affine, y);
template <class Affine>
constexpr uint64_t kInf = offsetof(Affine, inf);
static_assert(sizeof(g1_affine_t) >= kInf<g1_affine_t> + 8, "the flag's gathered word stays inside the point");
static_assert(sizeof(g2_affine_t) >= kInf<g2_affine_t> + 8, "the flag's gathered word stays inside the point");

// Montgomery one (R mod p) in 52-bit limbs, in every lane.
CUZK_IFMA_FN fp_x8 one_fp_x8() {
  constexpr limbs_t<6> r = fp_params::r();
  fp_x8 o;
  for (int k = 0; k < kLimbs; ++k) o.l[k] = bc(limb52(r.v, k));
  return o;
}
CUZK_IFMA_FN void set_one(fp_x8& o) { o = one_fp_x8(); }
CUZK_IFMA_FN void set_one(fp2_x8& o) {
  o.c0 = one_fp_x8();
  for (int k = 0; k < kLimbs; ++k) o.c1.l[k] = _mm512_setzero_si512();
}
template <class V>
CUZK_IFMA_FN V one_x8() {
  V o;
  set_one(o);
  return o;
}
CUZK_IFMA_FN void load_into(fp_x8& r, const void* base, __m512i off) { r = load_fp(base, off); }
CUZK_IFMA_FN void load_into(fp2_x8& r, const void* base, __m512i off) { r = load_fp2(base, off); }
template <class V>
CUZK_IFMA_FN V load_v(const void* base, __m512i off) {
  V r;
  load_into(r, base, off);
  return r;
}
CUZK_IFMA_FN fp_x8 sqr(const fp_x8& a) { return mul(a, a); }

// Byte offsets of the acc slots and q entries of lanes 8g .. 8g+7; lanes past m repeat the
// group's first entry and are masked off.
template <class Affine>
CUZK_IFMA_FN void group_offsets(const uint32_t* slot, size_t m, size_t g, __m512i& acc_off, __m512i& q_off,
                                __mmask8& live) {
  alignas(64) uint64_t a[8];
  live = live_lanes(8 * g, m);
  for (int e = 0; e < 8; ++e) a[e] = uint64_t(slot[(live >> e) & 1 ? 8 * g + e : 8 * g]) * sizeof(Affine);
  acc_off = _mm512_load_si512(a);
  q_off = _mm512_mask_blend_epi64(live, bc(8 * g * sizeof(Affine)), lane_offsets(8 * g, sizeof(Affine)));
}

template <class V>
struct Scratch {
  std::vector<V> d, prefix;
  std::vector<__mmask8> special;
};

// d[g] = 1 / d[g] for g < groups, given prefix[g] = d[0] ... d[g-1] and run = the product of all
// (lane by lane): the eight lanes' products are inverted together on the scalar side, so a batch
// costs one field inversion.
template <class F, class V>
CUZK_IFMA_FN void invert_all(const V& run, V* d, const V* prefix, size_t groups) {
  alignas(64) F lane[8], prefix_lanes[8];
  const __m512i lo = lane_offsets(0, sizeof(F));
  store(lane, lo, run);
  batch_invert_nonzero(lane, prefix_lanes, 8);  // no lane's product is 0: every factor is d or 1
  V rinv = load_v<V>(lane, lo);
  for (size_t g = groups; g-- > 0;) {
    const V di = mul(rinv, prefix[g]);
    rinv = mul(rinv, d[g]);
    d[g] = di;
  }
}

// g1_affine_batch_ifma and g2_affine_batch_ifma (the header).
template <class Affine>
CUZK_IFMA_TARGET void affine_batch_ifma(Affine* acc, const Affine* q, const uint32_t* slot, size_t m,
                                        std::vector<uint32_t>& special) {
  using V = typename Lanes<Affine>::V;
  using F = typename Lanes<Affine>::F;
  if (m == 0) return;
  thread_local Scratch<V> sc;
  const size_t groups = (m + 7) / 8;
  if (sc.d.size() < groups) {
    sc.d.resize(groups);
    sc.prefix.resize(groups);
    sc.special.resize(groups);
  }
  const V one = one_x8<V>();
  const __m512i x_off = bc(kX<Affine>), y_off = bc(kY<Affine>), inf_off = bc(kInf<Affine>);
  // Pass 1: d = q.x - acc.x and the running products of the d (Montgomery's trick, one chain per
  // lane). Lanes that cannot take the affine formula (slot at infinity, equal x) or are padding
  // multiply by 1 instead.
  V run = one;
  for (size_t g = 0; g < groups; ++g) {
    __m512i ao, qo;
    __mmask8 live;
    group_offsets<Affine>(slot, m, g, ao, qo, live);
    const __m512i inf_word = _mm512_i64gather_epi64(_mm512_add_epi64(ao, inf_off), acc, 1);
    const __mmask8 inf = _mm512_test_epi64_mask(inf_word, bc(0xff));
    V d = sub(load_v<V>(q, _mm512_add_epi64(qo, x_off)), load_v<V>(acc, _mm512_add_epi64(ao, x_off)));
    const __mmask8 sp = live & (inf | is_zero(d));
    d = blend(__mmask8(sp | ~live), d, one);
    sc.special[g] = sp;
    sc.d[g] = d;
    sc.prefix[g] = run;
    run = mul(run, d);
  }
  // Pass 2: 1/d for each entry.
  invert_all<F>(run, sc.d.data(), sc.prefix.data(), groups);
  // Pass 3: lambda = (q.y - acc.y) / d, x3 = lambda^2 - acc.x - q.x, y3 = lambda (acc.x - x3) - acc.y.
  for (size_t g = 0; g < groups; ++g) {
    __m512i ao, qo;
    __mmask8 live;
    group_offsets<Affine>(slot, m, g, ao, qo, live);
    const __mmask8 normal = live & __mmask8(~sc.special[g]);
    if (sc.special[g])
      for (int e = 0; e < 8; ++e)
        if ((sc.special[g] >> e) & 1) special.push_back(uint32_t(8 * g + e));
    if (!normal) continue;
    const __m512i ax = _mm512_add_epi64(ao, x_off), ay = _mm512_add_epi64(ao, y_off);
    const V px = load_v<V>(acc, ax), py = load_v<V>(acc, ay);
    const V qx = load_v<V>(q, _mm512_add_epi64(qo, x_off)), qy = load_v<V>(q, _mm512_add_epi64(qo, y_off));
    const V lambda = mul(sub(qy, py), sc.d[g]);
    const V x3 = sub(sub(sqr(lambda), px), qx);
    const V y3 = sub(mul(lambda, sub(px, x3)), py);
    store(acc, ax, x3, normal);
    store(acc, ay, y3, normal);
  }
}

}  // namespace

CUZK_IFMA_TARGET void g1_affine_batch_ifma(g1_affine_t* acc, const g1_affine_t* q, const uint32_t* slot, size_t m,
                                         std::vector<uint32_t>& special) {
  affine_batch_ifma(acc, q, slot, m, special);
}
CUZK_IFMA_TARGET void g2_affine_batch_ifma(g2_affine_t* acc, const g2_affine_t* q, const uint32_t* slot, size_t m,
                                         std::vector<uint32_t>& special) {
  affine_batch_ifma(acc, q, slot, m, special);
}

CUZK_IFMA_TARGET std::vector<g2_affine_t> g2_sum_indexed_ifma(const g2_affine_t* points, const uint32_t* idx,
                                                           size_t count, size_t lanes, g2_jacobian_t& extra) {
  const size_t groups = lanes / 8;
  std::vector<fp2_x8> ax(groups), ay(groups), qx(groups), qy(groups), d(groups), prefix(groups);
  std::vector<__mmask8> inf(groups, 0xff), live_of(groups);  // every running sum starts at infinity
  const fp2_x8 one = one_x8<fp2_x8>();
  const __m512i x_off = bc(kX<g2_affine_t>), y_off = bc(kY<g2_affine_t>);
  const __m512i old_off = lane_offsets(0, sizeof(g2_affine_t));
  alignas(64) uint64_t off[8];
  alignas(64) g2_affine_t old[8];
  for (size_t start = 0; start < count; start += lanes) {
    const size_t batch = std::min(lanes, count - start), used = (batch + 7) / 8;
    fp2_x8 run = one;
    for (size_t g = 0; g < used; ++g) {
      const __mmask8 live = live_lanes(8 * g, batch);
      for (int e = 0; e < 8; ++e) off[e] = uint64_t(idx[start + ((live >> e) & 1 ? 8 * g + e : 0)]) * sizeof(g2_affine_t);
      live_of[g] = live;
      const __m512i qo = _mm512_load_si512(off);
      qx[g] = load_fp2(points, _mm512_add_epi64(qo, x_off));
      qy[g] = load_fp2(points, _mm512_add_epi64(qo, y_off));
      const fp2_x8 dd = sub(qx[g], ax[g]);
      // 1 for lanes that do not take the formula: padding, a sum at infinity, equal x
      d[g] = blend(__mmask8(~live | inf[g] | is_zero(dd)), dd, one);
      prefix[g] = run;
      run = mul(run, d[g]);
    }
    invert_all<fp2_t>(run, d.data(), prefix.data(), used);
    for (size_t g = 0; g < used; ++g) {
      const __mmask8 live = live_of[g];
      const __mmask8 take = live & inf[g];  // a sum at infinity becomes the point
      const __mmask8 equal = live & __mmask8(~inf[g]) & is_zero(sub(qx[g], ax[g]));
      const __mmask8 normal = live & __mmask8(~(take | equal));
      if (equal) {  // rare: P + Q with equal x through the general formula, and the sum restarts
        store(old, _mm512_add_epi64(old_off, x_off), ax[g]);
        store(old, _mm512_add_epi64(old_off, y_off), ay[g]);
        for (int e = 0; e < 8; ++e)
          if ((equal >> e) & 1) {
            old[e].inf = false;
            extra = extra + old[e].to_jacobian() + points[idx[start + 8 * g + e]].to_jacobian();
          }
      }
      const fp2_x8 lambda = mul(sub(qy[g], ay[g]), d[g]);
      const fp2_x8 x3 = sub(sub(sqr(lambda), ax[g]), qx[g]);
      const fp2_x8 y3 = sub(mul(lambda, sub(ax[g], x3)), ay[g]);
      ax[g] = blend(take, blend(normal, ax[g], x3), qx[g]);
      ay[g] = blend(take, blend(normal, ay[g], y3), qy[g]);
      inf[g] = __mmask8((inf[g] & ~take) | equal);
    }
  }
  std::vector<g2_affine_t> out(lanes);
  for (size_t g = 0; g < groups; ++g) {
    const __m512i oo = lane_offsets(8 * g, sizeof(g2_affine_t));
    store(out.data(), _mm512_add_epi64(oo, x_off), ax[g]);
    store(out.data(), _mm512_add_epi64(oo, y_off), ay[g]);
    for (int e = 0; e < 8; ++e) out[8 * g + e].inf = (inf[g] >> e) & 1;
  }
  return out;
}
#else
void g1_affine_batch_ifma(g1_affine_t*, const g1_affine_t*, const uint32_t*, size_t, std::vector<uint32_t>&) {}
void g2_affine_batch_ifma(g2_affine_t*, const g2_affine_t*, const uint32_t*, size_t, std::vector<uint32_t>&) {}
std::vector<g2_affine_t> g2_sum_indexed_ifma(const g2_affine_t*, const uint32_t*, size_t, size_t, g2_jacobian_t&) {
  return {};
}
#endif

}  // namespace cuzk
