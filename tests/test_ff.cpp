// Tests of the BLS12-381 fields (prover/ff): Fr, Fp, Fp2, Fp6, Fp12.
// Random inputs come from a fresh seed per test case, printed with INFO, so a failure can be
// replayed by setting CUZK_FF_SEED=<seed>.
#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "catch.hpp"
#include "prover/ff/bls12_381.hpp"
#include "prover/ff/fp_ifma.hpp"

using namespace cuzk;

namespace {

uint64_t fresh_seed() {
  if (const char* s = std::getenv("CUZK_FF_SEED")) return std::strtoull(s, nullptr, 10);
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd();
}

// ---- a small independent bigint (little-endian 64-bit limbs, no leading-zero invariant) ----
using big = std::vector<uint64_t>;

void trim(big& a) {
  while (a.size() > 1 && a.back() == 0) a.pop_back();
}
big big_from(const uint64_t* l, int n) {
  big a(l, l + n);
  trim(a);
  return a;
}
big big_small(uint64_t v) { return big{v}; }
int big_cmp(big a, big b) {
  trim(a);
  trim(b);
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}
big big_add(const big& a, const big& b) {
  big r(std::max(a.size(), b.size()) + 1, 0);
  unsigned __int128 c = 0;
  for (size_t i = 0; i < r.size(); i++) {
    c += (unsigned __int128)(i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0);
    r[i] = (uint64_t)c;
    c >>= 64;
  }
  trim(r);
  return r;
}
big big_sub(const big& a, const big& b) {  // requires a >= b
  big r(a.size(), 0);
  uint64_t br = 0;
  for (size_t i = 0; i < a.size(); i++) {
    uint64_t bi = i < b.size() ? b[i] : 0;
    unsigned __int128 d = (unsigned __int128)a[i] - bi - br;
    r[i] = (uint64_t)d;
    br = (d >> 64) ? 1 : 0;
  }
  trim(r);
  return r;
}
big big_mul(const big& a, const big& b) {
  big r(a.size() + b.size(), 0);
  for (size_t i = 0; i < a.size(); i++) {
    unsigned __int128 c = 0;
    for (size_t j = 0; j < b.size(); j++) {
      c += (unsigned __int128)a[i] * b[j] + r[i + j];
      r[i + j] = (uint64_t)c;
      c >>= 64;
    }
    r[i + b.size()] = (uint64_t)c;
  }
  trim(r);
  return r;
}
big big_div_small(const big& a, uint64_t d, uint64_t* rem = nullptr) {
  big r(a.size(), 0);
  unsigned __int128 cur = 0;
  for (size_t i = a.size(); i-- > 0;) {
    cur = (cur << 64) | a[i];
    r[i] = (uint64_t)(cur / d);
    cur %= d;
  }
  if (rem) *rem = (uint64_t)cur;
  trim(r);
  return r;
}
big big_mod_double(const big& x, const big& m) {  // 2x mod m, x < m
  big r = big_add(x, x);
  if (big_cmp(r, m) >= 0) r = big_sub(r, m);
  return r;
}
std::string big_decimal(big a) {
  std::string s;
  trim(a);
  while (!(a.size() == 1 && a[0] == 0)) {
    uint64_t rem;
    a = big_div_small(a, 10, &rem);
    s.push_back(char('0' + rem));
  }
  if (s.empty()) s = "0";
  return std::string(s.rbegin(), s.rend());
}
template <class F>
big modulus_big() {
  constexpr auto M = F::modulus();
  return big_from(M.v, F::N);
}
template <class F>
std::vector<uint64_t> limbs_of(big a) {  // zero-padded to N
  a.resize(F::N, 0);
  return a;
}
template <class F>
F canon(const big& a) {
  auto l = limbs_of<F>(a);
  F r;
  REQUIRE(F::from_canonical_checked(l.data(), r));
  return r;
}
template <class F>
F minus_one() {
  return canon<F>(big_sub(modulus_big<F>(), big_small(1)));
}

// ---- generic field-law checks (F has one(), zero(), +, -, *, sqr, inv, random) ----
template <class F>
void check_field_laws(std::mt19937_64& g, int iters) {
  for (int i = 0; i < iters; i++) {
    F a = F::random(g), b = F::random(g), c = F::random(g);
    REQUIRE((a + b) + c == a + (b + c));       // additive associativity
    REQUIRE(a + b == b + a);                   // additive commutativity
    REQUIRE((a * b) * c == a * (b * c));       // multiplicative associativity
    REQUIRE(a * b == b * a);                   // multiplicative commutativity
    REQUIRE(a * (b + c) == a * b + a * c);     // distributivity
    REQUIRE((a - b) + b == a);                 // subtraction inverts addition
    REQUIRE(a + (-a) == F::zero());            // additive inverse
    REQUIRE(a * F::one() == a);                // multiplicative identity
    REQUIRE(a + F::zero() == a);               // additive identity
    REQUIRE(a.sqr() == a * a);                 // squaring is self-multiplication
    REQUIRE(a.dbl() == a + a);                 // doubling
    if (!a.is_zero()) REQUIRE(a * a.inv() == F::one());  // a * inv(a) == 1
  }
  REQUIRE(F::zero().inv() == F::zero());  // inv(0) == 0 by convention
  REQUIRE(F::one().is_one());
  REQUIRE(F::zero().is_zero());
  REQUIRE(!F::one().is_zero());
}

template <class F>
void check_prime_field(std::mt19937_64& g) {
  const big p = modulus_big<F>();
  // edge values 0, 1, p-1
  F m1 = minus_one<F>();
  REQUIRE(m1 + F::one() == F::zero());   // (p-1) + 1 == 0
  REQUIRE(m1.sqr() == F::one());         // (p-1)^2 == 1
  REQUIRE(m1 == -F::one());
  REQUIRE(-F::zero() == F::zero());
  REQUIRE(m1.inv() == m1);
  REQUIRE(F::zero() - F::one() == m1);
  REQUIRE(F::from_u64(2) * F::from_u64(3) == F::from_u64(6));
  REQUIRE(F::from_u64(0).is_zero());
  REQUIRE(F::from_u64(1).is_one());
  REQUIRE(F::from_u64(~uint64_t(0)) + F::one() == canon<F>(big{0, 1}));  // carries into limb 1
  // Fermat: a^(p-1) == 1; pow(u64) agrees with repeated multiplication; half() halves
  big pm1 = big_sub(p, big_small(1));
  auto e = limbs_of<F>(pm1);
  for (int i = 0; i < 20; i++) {
    F a = F::random(g);
    if (!a.is_zero()) REQUIRE(a.pow(e.data(), F::N).is_one());
    F r = F::one();
    for (int k = 0; k < 13; k++) r *= a;
    REQUIRE(a.pow(13) == r);
    REQUIRE(a.half().dbl() == a);
    REQUIRE(a.inv_binary() == a.inv_fermat());  // the two inversion methods agree
  }
  REQUIRE(F::one().half() * F::from_u64(2) == F::one());
}

template <class F>
void check_sqrt(std::mt19937_64& g, const F& nonresidue) {
  REQUIRE(nonresidue.legendre() == -1);
  F s;
  REQUIRE(F::zero().sqrt(s));
  REQUIRE(s.is_zero());
  REQUIRE(F::one().sqrt(s));
  REQUIRE((s == F::one() || s == -F::one()));
  for (int i = 0; i < 50; i++) {
    F a = F::random(g);
    F sq = a.sqr();
    REQUIRE(sq.sqrt(s));  // squares have roots
    REQUIRE((s == a || s == -a));
    if (!a.is_zero()) {
      F n = sq * nonresidue;
      REQUIRE(!n.sqrt(s));  // non-residues are rejected
      REQUIRE(n.legendre() == -1);
      REQUIRE(sq.legendre() == 1);
    }
  }
}

template <class F>
void check_encodings(std::mt19937_64& g) {
  const big p = modulus_big<F>();
  constexpr int B = F::BYTES;
  for (int i = 0; i < 200; i++) {
    F a = F::random(g);
    uint64_t c[F::N];
    a.to_canonical(c);
    F b;
    REQUIRE(F::from_canonical_checked(c, b));
    REQUIRE(a == b);
    REQUIRE(F::from_canonical(c) == a);
    uint8_t be[B], le[B];
    a.to_bytes_be(be);
    a.to_bytes_le(le);
    for (int k = 0; k < B; k++) REQUIRE(be[k] == le[B - 1 - k]);  // byte orders mirror each other
    REQUIRE(F::from_bytes_be(be, b));
    REQUIRE(a == b);
    REQUIRE(F::from_bytes_le(le, b));
    REQUIRE(a == b);
    std::string h = a.to_hex();
    REQUIRE(h.size() == size_t(2 + 2 * B));
    REQUIRE(F::from_hex(h) == a);
    std::string d = a.to_decimal();
    REQUIRE(d == big_decimal(big_from(c, F::N)));  // matches an independent conversion
    REQUIRE(F::from_decimal(d) == a);
  }
  // known small values
  REQUIRE(F::from_u64(12345).to_decimal() == "12345");
  REQUIRE(F::zero().to_decimal() == "0");
  REQUIRE(F::from_hex("0x3039") == F::from_u64(12345));
  REQUIRE(F::from_hex("3039") == F::from_u64(12345));
  REQUIRE(F::from_hex("0X0000303a") == F::from_u64(12346));
  REQUIRE(F::from_hex("0xABCDEF") == F::from_u64(0xabcdef));
  REQUIRE(F::from_decimal("10000000000000000000") == F::from_u64(10000000000000000000ull));
  REQUIRE(F::from_decimal("000123") == F::from_u64(123));
  {
    uint8_t be[B] = {};
    be[B - 1] = 5;
    F b;
    REQUIRE(F::from_bytes_be(be, b));
    REQUIRE(b == F::from_u64(5));
  }
  // p - 1 is accepted everywhere, p and above are rejected everywhere
  big pm1 = big_sub(p, big_small(1));
  REQUIRE(F::from_decimal(big_decimal(pm1)) == minus_one<F>());
  REQUIRE(minus_one<F>().to_decimal() == big_decimal(pm1));
  for (const big& bad : {p, big_add(p, big_small(1)), big_add(p, p)}) {
    auto l = limbs_of<F>(bad);
    F r;
    REQUIRE(!F::from_canonical_checked(l.data(), r));
    uint8_t le[B], be[B];
    for (int k = 0; k < B; k++) {
      le[k] = uint8_t(l[k / 8] >> (8 * (k % 8)));
      be[B - 1 - k] = le[k];
    }
    REQUIRE(!F::from_bytes_le(le, r));
    REQUIRE(!F::from_bytes_be(be, r));
    REQUIRE_THROWS_AS(F::from_decimal(big_decimal(bad)), std::invalid_argument);
    F t = minus_one<F>();
    std::string hx = t.to_hex();  // p-1 in hex; turn it into the hex of `bad` by re-encoding
    std::string hb = "0x";
    for (size_t k = F::N; k-- > 0;)
      for (int s = 60; s >= 0; s -= 4) hb.push_back("0123456789abcdef"[(l[k] >> s) & 15]);
    REQUIRE_THROWS_AS(F::from_hex(hb), std::invalid_argument);
    REQUIRE(hx.size() == hb.size());
  }
  uint8_t ff[B];
  for (int k = 0; k < B; k++) ff[k] = 0xff;
  F r;
  REQUIRE(!F::from_bytes_be(ff, r));
  REQUIRE(!F::from_bytes_le(ff, r));
  REQUIRE_THROWS_AS(F::from_hex("0x"), std::invalid_argument);
  REQUIRE_THROWS_AS(F::from_hex("0x12g4"), std::invalid_argument);
  REQUIRE_THROWS_AS(F::from_hex("0x1" + std::string(2 * B, '0')), std::invalid_argument);  // too long
  REQUIRE_THROWS_AS(F::from_decimal(""), std::invalid_argument);
  REQUIRE_THROWS_AS(F::from_decimal("12a"), std::invalid_argument);
  REQUIRE_THROWS_AS(F::from_decimal("-1"), std::invalid_argument);
  REQUIRE_THROWS_AS(F::from_decimal(std::string(200, '9')), std::invalid_argument);
}

template <class F>
void check_lex(std::mt19937_64& g) {
  const big p = modulus_big<F>();
  big half = big_div_small(big_sub(p, big_small(1)), 2);  // (p-1)/2
  REQUIRE(!F::zero().lexicographically_largest());
  REQUIRE(!canon<F>(half).lexicographically_largest());
  REQUIRE(canon<F>(big_add(half, big_small(1))).lexicographically_largest());
  REQUIRE(minus_one<F>().lexicographically_largest());
  for (int i = 0; i < 100; i++) {
    F a = F::random(g);
    if (a.is_zero()) continue;
    REQUIRE(a.lexicographically_largest() != (-a).lexicographically_largest());  // exactly one of +-a
    REQUIRE(a.sgn0() != (-a).sgn0());  // p odd: a and p - a have opposite parity
  }
}

template <class F>
void check_adx_vs_portable(std::mt19937_64& g, int iters) {
#if CUZK_USE_ADX
  if (!cpu_has_adx()) {
    WARN("CPU lacks bmi2/adx: ADX path not exercised");
    return;
  }
  std::vector<F> edge = {F::zero(), F::one(), minus_one<F>(), -F::from_u64(2), F::from_u64(2)};
  {
    F raw_max;  // largest representable reduced limbs: p-1 as raw Montgomery limbs
    constexpr auto M = F::modulus();
    for (int i = 0; i < F::N; i++) raw_max.l[i] = M.v[i];
    raw_max.l[0] -= 1;
    edge.push_back(raw_max);
  }
  for (const F& a : edge)
    for (const F& b : edge) REQUIRE(F::mul_adx(a, b) == F::mul_portable(a, b));
  for (int i = 0; i < iters; i++) {
    F a = F::random(g), b = F::random(g);
    REQUIRE(F::mul_adx(a, b) == F::mul_portable(a, b));
    REQUIRE(F::mul_adx(a, a) == F::mul_portable(a, a));
  }
#else
  WARN("built with CUZK_USE_ADX=0: only the portable path exists");
  (void)g;
  (void)iters;
#endif
}

template <class F>
void check_montgomery_constants() {
  const big p = modulus_big<F>();
  // R = 2^(64N) mod p and R^2 by repeated modular doubling from 1
  big x = big_small(1);
  for (int i = 0; i < 64 * F::N; i++) x = big_mod_double(x, p);
  F one = F::one();
  REQUIRE(big_cmp(big_from(one.l, F::N), x) == 0);
  for (int i = 0; i < 64 * F::N; i++) x = big_mod_double(x, p);
  // R^2: from_canonical(1) multiplies by R^2/R, so the raw limbs of from_u64(1) == R; check R^2
  // directly by converting R (as a canonical integer) into Montgomery form: R * R^2 / R = R^2.
  auto rl = limbs_of<F>(big_from(one.l, F::N));
  F r_mont = F::from_canonical(rl.data());
  REQUIRE(big_cmp(big_from(r_mont.l, F::N), x) == 0);
  // -p^{-1} mod 2^64 via Newton iteration x <- x (2 - p x), which doubles correct bits each step
  uint64_t p0 = p[0], inv = 1;
  for (int i = 0; i < 7; i++) inv *= 2 - p0 * inv;
  REQUIRE(p0 * inv == 1);
  REQUIRE(uint64_t(0) - inv == (std::is_same_v<F, fp_t> ? fp_params::INV : fr_params::INV));
  // spare-bit requirement of the multiplication
  REQUIRE(p.size() == size_t(F::N));
  REQUIRE(p.back() < (~uint64_t(0) >> 1) - 1);
}

// The GPU's +, - and * (32-bit words, carry chains) run here with the emulated flag of
// carry_chain.hpp: they must equal the portable 64-bit code on edge values and random inputs.
template <class F>
void check_words_vs_portable(std::mt19937_64& g, int iters) {
  std::vector<F> edge = {F::zero(), F::one(), minus_one<F>(), -F::from_u64(2), F::from_u64(2)};
  {
    F raw_max;  // p-1 as raw Montgomery limbs: every word of the input near its largest
    constexpr auto M = F::modulus();
    for (int i = 0; i < F::N; i++) raw_max.l[i] = M.v[i];
    raw_max.l[0] -= 1;
    edge.push_back(raw_max);
  }
  auto check = [](const F& a, const F& b) {
    REQUIRE(F::mul_words(a, b) == F::mul_portable(a, b));
    REQUIRE(F::sqr_words(a) == F::mul_portable(a, a));  // the device's square (mont_t::sqr)
    REQUIRE(F::add_words(a, b) == F::add_portable(a, b));
    REQUIRE(F::sub_words(a, b) == F::sub_portable(a, b));
  };
  for (const F& a : edge)
    for (const F& b : edge) check(a, b);
  for (int i = 0; i < iters; i++) {
    const F a = F::random(g), b = F::random(g);
    check(a, b);
    check(a, a);
  }
  // The lazy forms on [0, 2p): each value also as its second representative x + p (2p - 1 the
  // largest), results in [0, 2p) and equal to the reduced ones once made canonical; the product
  // takes its first operand below p.
  auto plus_p = [](const F& x) {
    F r;
    constexpr auto M = F::modulus();
    uint64_t c = 0;
    for (int i = 0; i < F::N; i++) r.l[i] = detail::addc(x.l[i], M.v[i], c);
    return r;
  };
  auto below_2p = [](const F& x) {  // x - 2p borrows
    constexpr auto M = F::modulus();
    uint64_t br = 0;
    for (int i = 0; i < F::N; i++) (void)detail::subb(x.l[i], (M.v[i] << 1) | (i ? M.v[i - 1] >> 63 : 0), br);
    return br == 1;
  };
  auto check_lazy = [&](const F& a, const F& b) {
    for (const F& a2 : {a, plus_p(a)})
      for (const F& b2 : {b, plus_p(b)}) {
        const F s = F::add_words_2p(a2, b2), d = F::sub_words_2p(a2, b2), m = F::mul_words_2p(a, b2);
        REQUIRE(below_2p(s));
        REQUIRE(below_2p(d));
        REQUIRE(below_2p(m));
        REQUIRE(s.canonical() == a + b);
        REQUIRE(d.canonical() == a - b);
        REQUIRE(m.canonical() == a * b);
      }
  };
  for (const F& a : edge)
    for (const F& b : edge) check_lazy(a, b);
  for (int i = 0; i < iters; i++) check_lazy(F::random(g), F::random(g));
}

// Reduced values whose raw limbs sit at the edges of the Fp2 product's bounds: 0, 1, p-1
// and 2 as field elements and as raw limbs, (p-1)/2 and (p+1)/2 (their sum is p), and limbs
// 0..N-2 all ones under a top limb just below p's.
template <class F>
std::vector<F> raw_edge_values() {
  std::vector<F> edge = {F::zero(), F::one(), minus_one<F>(), -F::from_u64(2), F::from_u64(2)};
  constexpr auto M = F::modulus();
  constexpr auto H = F::half_p();
  uint64_t one[F::N] = {1}, two[F::N] = {2}, pm1[F::N], ones[F::N], h1[F::N];
  for (int i = 0; i < F::N; i++) {
    pm1[i] = M.v[i];
    ones[i] = ~uint64_t(0);
    h1[i] = H.v[i];
  }
  pm1[0] -= 1;
  ones[F::N - 1] = M.v[F::N - 1] - 1;
  h1[0] += 1;  // (p+1)/2: the low limb of (p-1)/2 is not all ones, so + 1 does not carry
  for (const uint64_t* l : {(const uint64_t*)one, (const uint64_t*)two, (const uint64_t*)pm1,
                            (const uint64_t*)ones, (const uint64_t*)H.v, (const uint64_t*)h1})
    edge.push_back(F::from_raw(l));
  return edge;
}

// Fp2 product and square against the schoolbook formula in Fp built from the portable operations
// only: (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + (a0 b1 + a1 b0) u.
fp2_t fp2_schoolbook(const fp2_t& a, const fp2_t& b) {
  auto mul = fp_t::mul_portable;
  return fp2_t{fp_t::sub_portable(mul(a.c0, b.c0), mul(a.c1, b.c1)),
               fp_t::add_portable(mul(a.c0, b.c1), mul(a.c1, b.c0))};
}
void check_fp2_mul_vs_schoolbook(std::mt19937_64& g, int iters) {
  const auto edge = raw_edge_values<fp_t>();
  std::vector<fp2_t> e2;
  for (const fp_t& x : edge)
    for (const fp_t& y : edge) e2.push_back(fp2_t{x, y});
  for (const fp2_t& a : e2) {
    REQUIRE(a.sqr() == fp2_schoolbook(a, a));
    for (const fp2_t& b : e2) REQUIRE(a * b == fp2_schoolbook(a, b));
  }
  for (int i = 0; i < iters; i++) {
    const fp2_t a = fp2_t::random(g), b = fp2_t::random(g);
    REQUIRE(a * b == fp2_schoolbook(a, b));
    REQUIRE(a.sqr() == fp2_schoolbook(a, a));
    REQUIRE(a * a == fp2_schoolbook(a, a));
  }
}

// exponent (p^k - 1) / d as limbs
std::vector<uint64_t> frob_exp(int k, uint64_t mult, uint64_t d) {
  big p = modulus_big<fp_t>();
  big pk = big_small(1);
  for (int i = 0; i < k; i++) pk = big_mul(pk, p);
  big e = big_sub(pk, big_small(1));
  e = big_mul(e, big_small(mult));
  uint64_t rem;
  e = big_div_small(e, d, &rem);
  REQUIRE(rem == 0);
  return e;
}

}  // namespace

TEST_CASE("moduli equal the BLS12 polynomials at x = -0xd201000000010000", "[ff]") {
  big X = big_small(0xd201000000010000ull);  // |x|, x negative
  big X2 = big_mul(X, X);
  big r = big_add(big_sub(big_mul(X2, X2), X2), big_small(1));                  // x^4 - x^2 + 1
  big p = big_sub(big_div_small(big_mul(big_mul(big_add(X, big_small(1)), big_add(X, big_small(1))), r), 3), X);  // (x-1)^2 r/3 + x
  REQUIRE(big_cmp(r, modulus_big<fr_t>()) == 0);
  REQUIRE(big_cmp(p, modulus_big<fp_t>()) == 0);
  REQUIRE(big_decimal(r) == "52435875175126190479447740508185965837690552500527637822603658699938581184513");
  REQUIRE(fr_t::BITS == 255);
  REQUIRE(fp_t::BITS == 381);
  REQUIRE(fr_t::BYTES == 32);
  REQUIRE(fp_t::BYTES == 48);
}

TEST_CASE("Montgomery constants R, R^2, -p^-1 recomputed from the modulus", "[ff]") {
  SECTION("fp") { check_montgomery_constants<fp_t>(); }
  SECTION("fr") { check_montgomery_constants<fr_t>(); }
}

TEST_CASE("prime field laws on random inputs", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  SECTION("fp") { check_field_laws<fp_t>(g, 500); }
  SECTION("fr") { check_field_laws<fr_t>(g, 500); }
}

TEST_CASE("prime field edge values 0, 1, p-1, Fermat, inversion methods agree", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  SECTION("fp") { check_prime_field<fp_t>(g); }
  SECTION("fr") { check_prime_field<fr_t>(g); }
}

TEST_CASE("sqrt round trip: sqrt(a^2) == +-a, non-residues rejected", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  SECTION("fp (p = 3 mod 4; -1 is a non-residue)") { check_sqrt<fp_t>(g, -fp_t::one()); }
  SECTION("fr (Tonelli-Shanks; the generator 7 is a non-residue)") { check_sqrt<fr_t>(g, fr_t::from_u64(7)); }
}

TEST_CASE("canonical, bytes, hex and decimal round trips; non-canonical encodings rejected", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  SECTION("fp") { check_encodings<fp_t>(g); }
  SECTION("fr") { check_encodings<fr_t>(g); }
}

TEST_CASE("lexicographically_largest splits +-a; sgn0 parity", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  SECTION("fp") { check_lex<fp_t>(g); }
  SECTION("fr") { check_lex<fr_t>(g); }
}

TEST_CASE("ADX multiplication equals the portable multiplication", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  SECTION("fp") { check_adx_vs_portable<fp_t>(g, 100000); }
  SECTION("fr") { check_adx_vs_portable<fr_t>(g, 100000); }
}

TEST_CASE("Fp2 product and square (delayed reduction on ADX hosts) equal the schoolbook formula", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  check_fp2_mul_vs_schoolbook(g, 100000);
}

TEST_CASE("32-bit word arithmetic (the GPU's +, -, *) equals the portable code", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  SECTION("fp") { check_words_vs_portable<fp_t>(g, 20000); }
  SECTION("fr") { check_words_vs_portable<fr_t>(g, 20000); }
}

TEST_CASE("Fr two-adic structure: root of unity of exact order 2^32 equals 7^((r-1)/2^32)", "[ff]") {
  REQUIRE(fr_t::two_adicity() == 32);
  REQUIRE(fp_t::two_adicity() == 1);
  REQUIRE(fr_t::multiplicative_generator() == fr_t::from_u64(7));
  REQUIRE(fr_t::from_u64(7).legendre() == -1);  // a generator is a non-square
  big t = big_sub(modulus_big<fr_t>(), big_small(1));
  for (int i = 0; i < 32; i++) t = big_div_small(t, 2);
  REQUIRE((t[0] & 1) == 1);  // (r-1)/2^32 is odd
  auto tl = limbs_of<fr_t>(t);
  fr_t w = fr_t::from_u64(7).pow(tl.data(), 4);
  REQUIRE(w == fr_t::root_of_unity(32));
  for (int k = 0; k <= 32; k++) {
    fr_t r = fr_t::root_of_unity(k);
    // exact order 2^k: r^(2^k) == 1 and (k > 0) r^(2^(k-1)) == -1
    fr_t x = r;
    for (int i = 0; i + 1 < k; i++) x = x.sqr();
    if (k > 0) {
      REQUIRE(x == -fr_t::one());
      x = x.sqr();
    }
    REQUIRE(x.is_one());
  }
}

TEST_CASE("Fp2, Fp6, Fp12 field laws and inverses", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  SECTION("fp2") {
    check_field_laws<fp2_t>(g, 200);
    fp2_t u{fp_t::zero(), fp_t::one()};
    REQUIRE(u.sqr() == -fp2_t::one());  // u^2 = -1
    for (int i = 0; i < 50; i++) {
      fp2_t a = fp2_t::random(g);
      REQUIRE(a.mul_by_nonresidue() == a * fp2_t{fp_t::one(), fp_t::one()});  // times (u+1)
      REQUIRE(fp2_t::from_fp(a.norm()) == a * a.conjugate());
      fp_t s = fp_t::random(g);
      REQUIRE(a * s == a * fp2_t::from_fp(s));
    }
  }
  SECTION("fp6") {
    check_field_laws<fp6_t>(g, 100);
    fp6_t v{fp2_t::zero(), fp2_t::one(), fp2_t::zero()};
    fp6_t xi = fp6_t::from_fp2(fp2_t{fp_t::one(), fp_t::one()});
    REQUIRE(v * v * v == xi);  // v^3 = u + 1
    for (int i = 0; i < 50; i++) {
      fp6_t a = fp6_t::random(g);
      fp2_t b0 = fp2_t::random(g), b1 = fp2_t::random(g);
      REQUIRE(a.mul_by_nonresidue() == a * v);
      REQUIRE(a.mul_by_1(b1) == a * fp6_t{fp2_t::zero(), b1, fp2_t::zero()});
      REQUIRE(a.mul_by_01(b0, b1) == a * fp6_t{b0, b1, fp2_t::zero()});
      REQUIRE(a * b0 == a * fp6_t::from_fp2(b0));
    }
  }
  SECTION("fp12") {
    check_field_laws<fp12_t>(g, 50);
    fp12_t w{fp6_t::zero(), fp6_t::one()};
    fp12_t v{fp6_t{fp2_t::zero(), fp2_t::one(), fp2_t::zero()}, fp6_t::zero()};
    REQUIRE(w.sqr() == v);  // w^2 = v
    for (int i = 0; i < 30; i++) {
      fp12_t a = fp12_t::random(g);
      fp2_t b0 = fp2_t::random(g), b1 = fp2_t::random(g), b4 = fp2_t::random(g);
      fp2_t z = fp2_t::zero();
      // sparse products equal the dense product with the documented sparse element
      REQUIRE(a.mul_by_014(b0, b1, b4) == a * fp12_t{fp6_t{b0, b1, z}, fp6_t{z, b4, z}});
      REQUIRE(a.mul_by_034(b0, b1, b4) == a * fp12_t{fp6_t{b0, z, z}, fp6_t{b1, b4, z}});
      // conjugate is the p^6-power Frobenius
      REQUIRE(a.conjugate() == a.frobenius_map(6));
      REQUIRE(a.pow(5) == a * a * a * a * a);
    }
  }
}

TEST_CASE("Fp2 sqrt round trip, non-squares rejected; Fp2 sign helpers", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  fp2_t xi{fp_t::one(), fp_t::one()};  // norm 2, a non-square in Fp (p = 3 mod 8): xi non-square
  fp2_t s;
  REQUIRE(fp2_t::zero().sqrt(s));
  REQUIRE(s.is_zero());
  REQUIRE((-fp2_t::one()).sqrt(s));  // -1 = u^2
  REQUIRE(s.sqr() == -fp2_t::one());
  REQUIRE(!xi.sqrt(s));
  for (int i = 0; i < 50; i++) {
    fp2_t a = fp2_t::random(g);
    if (i == 0) a = fp2_t{fp_t::zero(), fp_t::random(g)};  // purely imaginary
    if (i == 1) a = fp2_t{fp_t::random(g), fp_t::zero()};  // in Fp
    if (i == 2) a = fp2_t{fp_t::zero(), fp_t::random(g)};  // a^2 in Fp, a non-square there: alpha == -1 branch
    REQUIRE(a.sqr().sqrt(s));
    REQUIRE((s == a || s == -a));
    if (!a.is_zero()) {
      REQUIRE(!(a.sqr() * xi).sqrt(s));
      REQUIRE(a.lexicographically_largest() != (-a).lexicographically_largest());
      REQUIRE(a.sgn0() != (-a).sgn0());
    }
  }
  REQUIRE(!fp2_t::zero().lexicographically_largest());
  REQUIRE(fp2_t{fp_t::zero(), minus_one<fp_t>()}.lexicographically_largest());
  REQUIRE(!fp2_t{minus_one<fp_t>(), fp_t::one()}.lexicographically_largest());  // c1 decides
  REQUIRE(fp2_t{minus_one<fp_t>(), fp_t::zero()}.lexicographically_largest());  // c1 == 0: c0 decides
}

TEST_CASE("Frobenius coefficients equal xi^((p^k-1)/3), xi^(2(p^k-1)/3), xi^((p^k-1)/6)", "[ff]") {
  fp2_t xi{fp_t::one(), fp_t::one()};
  for (int k = 0; k < 6; k++) {
    INFO("k = " << k);
    auto e1 = frob_exp(k, 1, 3);
    auto e2 = frob_exp(k, 2, 3);
    REQUIRE(fp6_t::frobenius_coeff_c1(k) == xi.pow(e1.data(), int(e1.size())));
    REQUIRE(fp6_t::frobenius_coeff_c2(k) == xi.pow(e2.data(), int(e2.size())));
  }
  for (int k = 0; k < 12; k++) {
    INFO("k = " << k);
    auto e = frob_exp(k, 1, 6);
    REQUIRE(fp12_t::frobenius_coeff(k) == xi.pow(e.data(), int(e.size())));
  }
}

TEST_CASE("frobenius_map(1)(x) == x^p and frobenius_map(k) == k-fold composition", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  constexpr auto P = fp_params::modulus();
  SECTION("fp2") {
    for (int i = 0; i < 5; i++) {
      fp2_t a = fp2_t::random(g);
      REQUIRE(a.frobenius_map(1) == a.pow(P.v, 6));
      fp2_t c = a;
      for (int k = 0; k <= 4; k++) {
        REQUIRE(a.frobenius_map(k) == c);
        c = c.frobenius_map(1);
      }
    }
  }
  SECTION("fp6") {
    for (int i = 0; i < 3; i++) {
      fp6_t a = fp6_t::random(g);
      REQUIRE(a.frobenius_map(1) == a.pow(P.v, 6));
      fp6_t c = a;
      for (int k = 0; k <= 7; k++) {
        REQUIRE(a.frobenius_map(k) == c);
        c = c.frobenius_map(1);
      }
    }
  }
  SECTION("fp12") {
    for (int i = 0; i < 2; i++) {
      fp12_t a = fp12_t::random(g);
      REQUIRE(a.frobenius_map(1) == a.pow(P.v, 6));
      fp12_t c = a;
      for (int k = 0; k <= 13; k++) {
        REQUIRE(a.frobenius_map(k) == c);
        c = c.frobenius_map(1);
      }
      REQUIRE((a * a.sqr()).frobenius_map(3) == a.frobenius_map(3) * a.sqr().frobenius_map(3));  // homomorphism
    }
  }
}

TEST_CASE("cyclotomic_square equals sqr on the cyclotomic subgroup", "[ff]") {
  uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  for (int i = 0; i < 20; i++) {
    fp12_t f = fp12_t::random(g);
    // c = f^((p^6 - 1)(p^2 + 1)): f^(p^6) = conjugate(f), then t^(p^2 + 1) = frob2(t) t
    fp12_t t = f.conjugate() * f.inv();
    fp12_t c = t.frobenius_map(2) * t;
    REQUIRE(c.cyclotomic_square() == c.sqr());
    REQUIRE(c.conjugate() * c == fp12_t::one());  // unitary: the inverse is the conjugate
    REQUIRE(c.cyclotomic_pow(0x1234567u) == c.pow(0x1234567u));
    // outside the subgroup the shortcut does not square (so the test above can fail)
    if (i == 0) REQUIRE(f.cyclotomic_square() != f.sqr());
  }
}

// fp_ifma.hpp: eight lanes at a time with AVX-512 IFMA, in 52-bit limbs and lazily reduced to
// [0, 2p). Every result, reduced on the way out, must equal the portable code's: products, sums
// and differences on all pairs of the raw edge values (including those whose sums reach 2p - 2)
// and on random pairs, Fp2 products and squares against the schoolbook formula. Odd lengths
// check the masked tail lanes.
TEST_CASE("AVX-512 IFMA Fp and Fp2 arithmetic equals the portable code", "[ff][ifma]") {
  if (!cpu_has_ifma()) {
    WARN("SKIPPED: no AVX-512 IFMA on this CPU or in this build");
    return;
  }
  const uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 g(seed);
  const auto edge = raw_edge_values<fp_t>();
  std::vector<fp_t> a, b;
  for (const fp_t& x : edge)
    for (const fp_t& y : edge) {
      a.push_back(x);
      b.push_back(y);
    }
  for (int i = 0; i < 20001; ++i) {
    a.push_back(fp_t::random(g));
    b.push_back(fp_t::random(g));
  }
  const size_t n = a.size();
  std::vector<fp_t> r(n);
  ifma::fp_mul_n(a.data(), b.data(), r.data(), n);
  for (size_t i = 0; i < n; ++i) REQUIRE(r[i] == fp_t::mul_portable(a[i], b[i]));
  ifma::fp_add_n(a.data(), b.data(), r.data(), n);
  for (size_t i = 0; i < n; ++i) REQUIRE(r[i] == fp_t::add_portable(a[i], b[i]));
  ifma::fp_sub_n(a.data(), b.data(), r.data(), n);
  for (size_t i = 0; i < n; ++i) REQUIRE(r[i] == fp_t::sub_portable(a[i], b[i]));

  std::vector<fp2_t> a2, b2;
  for (size_t i = 0; i + 1 < n; i += 2) {
    a2.push_back(fp2_t{a[i], a[i + 1]});
    b2.push_back(fp2_t{b[i + 1], b[i]});
  }
  for (const fp_t& x : edge)
    for (const fp_t& y : edge) a2.push_back(fp2_t{x, y}), b2.push_back(fp2_t{y, x});
  const size_t n2 = a2.size();
  std::vector<fp2_t> r2(n2);
  ifma::fp2_mul_n(a2.data(), b2.data(), r2.data(), n2);
  for (size_t i = 0; i < n2; ++i) REQUIRE(r2[i] == fp2_schoolbook(a2[i], b2[i]));
  ifma::fp2_sqr_n(a2.data(), r2.data(), n2);
  for (size_t i = 0; i < n2; ++i) REQUIRE(r2[i] == fp2_schoolbook(a2[i], a2[i]));
  // a length that is not a multiple of 8: the tail lanes are masked, the rest of r untouched
  std::vector<fp_t> r5(8, fp_t::from_u64(77));
  ifma::fp_mul_n(a.data(), b.data(), r5.data(), 5);
  for (size_t i = 0; i < 5; ++i) REQUIRE(r5[i] == fp_t::mul_portable(a[i], b[i]));
  for (size_t i = 5; i < 8; ++i) REQUIRE(r5[i] == fp_t::from_u64(77));
}
