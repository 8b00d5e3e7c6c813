// Zcash/Filecoin point encodings: published known answers, round trips, and rejection of every
// class of malformed input (each bad encoding is built explicitly).
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "prover/ec/serialize.hpp"

using namespace cuzk;

namespace {

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

std::vector<uint8_t> hex_bytes(const std::string& h) {
  std::vector<uint8_t> b;
  REQUIRE(from_hex(h, b));
  return b;
}

// p, big-endian (draft-irtf-cfrg-pairing-friendly-curves-11, section 4.2.1).
const char* p_hex =
    "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab";

// Known answers (compressed, hex):
//  G1: the generator's encoding is in zkcrypto/bls12_381's tests and is the ETH2 public key of
//      the secret key 1; [2]G1 is the KZG commitment to the constant polynomial 2 in Ethereum's
//      consensus-spec-tests (verify_kzg_proof_case_correct_proof_05c1f3685f3393f0: the sum of
//      the Lagrange basis is 1, so the commitment is [2]G1); its uncompressed form is
//      x || y with y = 0x166a9d8c...49d28 (EIP-2537 test vectors, G1ADD of G + G).
//  G2: multiples 1..4 of the generator, from the BLS12-381 G2 serialization test vectors of
//      dfinity/ic (POSITIVE_NUMBERS, which cite draft-irtf-cfrg-pairing-friendly-curves); [2]G2
//      also appears as the mint key "K = 2 G2" of the Cashu NUT-00 test vectors; -[1]G2 from the
//      same dfinity/ic file (NEGATIVE_NUMBERS).
const char* g1_1 =
    "97f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb";
const char* g1_2 =
    "a572cbea904d67468808c8eb50a9450c9721db309128012543902d0ac358a62ae28f75bb8f1c7c42c39a8c5529bf0f4e";
const char* g1_2_uncompressed =
    "0572cbea904d67468808c8eb50a9450c9721db309128012543902d0ac358a62ae28f75bb8f1c7c42c39a8c5529bf0f4e"
    "166a9d8cabc673a322fda673779d8e3822ba3ecb8670e461f73bb9021d5fd76a4c56d9d4cd16bd1bba86881979749d28";
const char* g2_multiples[4] = {
    "93e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e"
    "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8",
    "aa4edef9c1ed7f729f520e47730a124fd70662a904ba1074728114d1031e1572c6c886f6b57ec72a6178288c47c33577"
    "1638533957d540a9d2370f17cc7ed5863bc0b995b8825e0ee1ea1e1e4d00dbae81f14b0bf3611b78c952aacab827a053",
    "89380275bbc8e5dcea7dc4dd7e0550ff2ac480905396eda55062650f8d251c96eb480673937cc6d9d6a44aaa56ca66dc"
    "122915c824a0857e2ee414a3dccb23ae691ae54329781315a0c75df1c04d6d7a50a030fc866f09d516020ef82324afae",
    "870227d3f13684fdb7ce31b8065ba3acb35f7bde6fe2ddfefa359f8b35d08a9ab9537b43e24f4ffb720b5a0bda2a82f2"
    "0e7a30979a8853a077454eb63b8dcee75f106221b262886bb8e01b0abb043368da82f60899cc1412e33e4120195fc557",
};
const char* g2_minus_1 =
    "b3e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e"
    "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8";

// x = 0, 1, 2, ... with x^3 + b a square (on_curve = true) or not (false).
fp_t g1_small_x(bool on_curve) {
  for (uint64_t x = 0;; x++) {
    fp_t fx = fp_t::from_u64(x), y;
    if ((fx.sqr() * fx + g1_config::b()).sqrt(y) == on_curve) return fx;
  }
}
fp2_t g2_small_x(bool on_curve) {
  for (uint64_t x = 0;; x++) {
    fp2_t fx{fp_t::from_u64(x), fp_t::one()}, y;
    if ((fx.sqr() * fx + g2_config::b()).sqrt(y) == on_curve) return fx;
  }
}

template <size_t N> std::vector<uint8_t> vec(const uint8_t (&a)[N]) { return {a, a + N}; }

}  // namespace

TEST_CASE("known answers: compressed generators and small multiples", "[serialize]") {
  g1_jacobian_t g1 = g1_jacobian_t::from_affine(g1_generator());
  g2_jacobian_t g2 = g2_jacobian_t::from_affine(g2_generator());
  REQUIRE(to_hex(g1_compress(g1_generator())) == g1_1);
  REQUIRE(to_hex(g1_compress(g1.dbl().to_affine())) == g1_2);
  uint8_t u[96];
  g1_to_uncompressed(g1.dbl().to_affine(), u);
  REQUIRE(to_hex(u, 96) == g1_2_uncompressed);
  for (int k = 1; k <= 4; k++) {
    INFO("k = " << k);
    REQUIRE(to_hex(g2_compress(g2.mul_u64(k).to_affine())) == g2_multiples[k - 1]);
    // and decoding the published bytes gives the same point
    auto b = hex_bytes(g2_multiples[k - 1]);
    g2_affine_t q;
    REQUIRE(g2_decode(b.data(), b.size(), q) == decode_error::ok);
    REQUIRE(g2.mul_u64(k) == g2_jacobian_t::from_affine(q));
  }
  REQUIRE(to_hex(g2_compress(-g2_generator())) == g2_minus_1);
  auto b = hex_bytes(g1_2);
  g1_affine_t p;
  REQUIRE(g1_decode(b.data(), b.size(), p) == decode_error::ok);
  REQUIRE(g1.dbl() == g1_jacobian_t::from_affine(p));
  // infinity: 0xc0 then zeros (compressed), 0x40 then zeros (uncompressed)
  REQUIRE(to_hex(g1_compress(g1_affine_t::infinity())) == "c0" + std::string(94, '0'));
  REQUIRE(to_hex(g2_compress(g2_affine_t::infinity())) == "c0" + std::string(190, '0'));
  uint8_t u2[192];
  g2_to_uncompressed(g2_affine_t::infinity(), u2);
  REQUIRE(to_hex(u2, 192) == "40" + std::string(382, '0'));
}

TEST_CASE("round trips: compressed, uncompressed, infinity, both signs of y", "[serialize]") {
  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  g1_jacobian_t g1 = g1_jacobian_t::from_affine(g1_generator());
  g2_jacobian_t g2 = g2_jacobian_t::from_affine(g2_generator());
  for (int i = 0; i < 16; i++) {
    g1_affine_t p = g1.mul(fr_t::random(rng)).to_affine();
    g2_affine_t q = g2.mul(fr_t::random(rng)).to_affine();
    if (i == 0) p = g1_affine_t::infinity(), q = g2_affine_t::infinity();
    INFO("point " << i);
    uint8_t c1[48], u1[96], c2[96], u2[192];
    g1_to_compressed(p, c1);
    g1_to_uncompressed(p, u1);
    g2_to_compressed(q, c2);
    g2_to_uncompressed(q, u2);
    g1_affine_t p1, p2;
    g2_affine_t q1, q2;
    REQUIRE(g1_decode(c1, 48, p1) == decode_error::ok);
    REQUIRE(g1_decode(u1, 96, p2) == decode_error::ok);
    REQUIRE(g2_decode(c2, 96, q1) == decode_error::ok);
    REQUIRE(g2_decode(u2, 192, q2) == decode_error::ok);
    REQUIRE(p1 == p);
    REQUIRE(p2 == p);
    REQUIRE(q1 == q);
    REQUIRE(q2 == q);
    if (i > 0) {
      // -P has the same x and the opposite sort flag
      uint8_t n1[48], n2[96];
      g1_to_compressed(-p, n1);
      g2_to_compressed(-q, n2);
      REQUIRE((n1[0] ^ c1[0]) == 0x20);
      REQUIRE(std::memcmp(n1 + 1, c1 + 1, 47) == 0);
      REQUIRE((n2[0] ^ c2[0]) == 0x20);
      REQUIRE(std::memcmp(n2 + 1, c2 + 1, 95) == 0);
      g1_affine_t np;
      REQUIRE(g1_decode(n1, 48, np) == decode_error::ok);
      REQUIRE(np == -p);
    }
  }
}

TEST_CASE("G1 decoding rejects each malformed class", "[serialize]") {
  auto good_c = hex_bytes(g1_2);
  auto good_u = hex_bytes(g1_2_uncompressed);
  g1_affine_t out;

  SECTION("bad_length") {
    REQUIRE(g1_decode(good_c.data(), 47, out) == decode_error::bad_length);
    REQUIRE(g1_decode(good_c.data(), 0, out) == decode_error::bad_length);
    std::vector<uint8_t> long_(97, 0);
    REQUIRE(g1_decode(long_.data(), 97, out) == decode_error::bad_length);
  }
  SECTION("bad_flags: compression bit disagrees with the length; sort bit on uncompressed") {
    auto b = good_c;
    b[0] &= 0x7f;  // 48 bytes without the compression flag
    REQUIRE(g1_decode(b.data(), 48, out) == decode_error::bad_flags);
    auto u = good_u;
    u[0] |= 0x80;  // 96 bytes with the compression flag
    REQUIRE(g1_decode(u.data(), 96, out) == decode_error::bad_flags);
    u = good_u;
    u[0] |= 0x20;  // sort flag on an uncompressed point
    REQUIRE(g1_decode(u.data(), 96, out) == decode_error::bad_flags);
  }
  SECTION("non_canonical: x >= p, y >= p") {
    auto pb = hex_bytes(p_hex);
    auto b = pb;
    b[0] |= 0x80;  // compressed x = p
    REQUIRE(g1_decode(b.data(), 48, out) == decode_error::non_canonical);
    b = pb;
    b[47] += 3;  // x = p + 3 (canonically 3)
    b[0] |= 0x80;
    REQUIRE(g1_decode(b.data(), 48, out) == decode_error::non_canonical);
    auto u = good_u;
    std::memcpy(u.data(), pb.data(), 48);  // uncompressed x = p
    REQUIRE(g1_decode(u.data(), 96, out) == decode_error::non_canonical);
    u = good_u;
    std::memcpy(u.data() + 48, pb.data(), 48);  // uncompressed y = p
    REQUIRE(g1_decode(u.data(), 96, out) == decode_error::non_canonical);
    // all ones in the 381 value bits
    std::vector<uint8_t> ones(48, 0xff);
    ones[0] = 0x9f;
    REQUIRE(g1_decode(ones.data(), 48, out) == decode_error::non_canonical);
  }
  SECTION("not_on_curve: x^3 + 4 is not a square; uncompressed y^2 != x^3 + 4") {
    uint8_t b[48];
    g1_small_x(false).to_bytes_be(b);
    b[0] |= 0x80;
    REQUIRE(g1_decode(b, 48, out) == decode_error::not_on_curve);
    auto u = good_u;
    u[95] ^= 1;  // perturb y
    REQUIRE(g1_decode(u.data(), 96, out) == decode_error::not_on_curve);
  }
  SECTION("not_in_subgroup: a curve point outside the r-torsion, both forms") {
    fp_t x = g1_small_x(true), y;
    REQUIRE((x.sqr() * x + g1_config::b()).sqrt(y));
    g1_affine_t p = g1_affine_t::from_xy(x, y);
    REQUIRE(p.is_on_curve());
    uint8_t c[48], u[96];
    g1_to_compressed(p, c);
    g1_to_uncompressed(p, u);
    REQUIRE(g1_decode(c, 48, out) == decode_error::not_in_subgroup);
    REQUIRE(g1_decode(u, 96, out) == decode_error::not_in_subgroup);
    // the unchecked decoder (trusted input) accepts it
    REQUIRE(g1_decode(c, 48, out, /*check_subgroup=*/false) == decode_error::ok);
    REQUIRE(out == p);
  }
  SECTION("bad_infinity: infinity with a non-zero coordinate or the sort bit") {
    std::vector<uint8_t> inf(48, 0);
    inf[0] = 0xc0;
    REQUIRE(g1_decode(inf.data(), 48, out) == decode_error::ok);
    REQUIRE(out.is_infinity());
    auto b = inf;
    b[47] = 1;
    REQUIRE(g1_decode(b.data(), 48, out) == decode_error::bad_infinity);
    b = inf;
    b[0] |= 0x20;
    REQUIRE(g1_decode(b.data(), 48, out) == decode_error::bad_infinity);
    b = inf;
    b[0] |= 0x01;  // a coordinate bit in the flag byte
    REQUIRE(g1_decode(b.data(), 48, out) == decode_error::bad_infinity);
    std::vector<uint8_t> uinf(96, 0);
    uinf[0] = 0x40;
    REQUIRE(g1_decode(uinf.data(), 96, out) == decode_error::ok);
    REQUIRE(out.is_infinity());
    uinf[60] = 7;  // non-zero y
    REQUIRE(g1_decode(uinf.data(), 96, out) == decode_error::bad_infinity);
    // the all-zero uncompressed encoding is (0, 0), which is not on the curve
    std::vector<uint8_t> zero(96, 0);
    REQUIRE(g1_decode(zero.data(), 96, out) == decode_error::not_on_curve);
  }
  SECTION("the throwing wrappers carry the message") {
    auto b = good_c;
    b[0] &= 0x7f;
    REQUIRE_THROWS_AS(g1_decode_or_throw(b.data(), 48), std::invalid_argument);
    REQUIRE_THROWS_AS(g1_from_hex_or_throw("zz"), std::invalid_argument);
    REQUIRE(g1_from_hex_or_throw(g1_1) == g1_generator());
    REQUIRE(std::string(decode_error_message(decode_error::not_in_subgroup)).find("subgroup") !=
            std::string::npos);
  }
}

TEST_CASE("G2 decoding rejects each malformed class", "[serialize]") {
  auto good_c = hex_bytes(g2_multiples[1]);
  uint8_t good_u[192];
  g2_to_uncompressed(g2_jacobian_t::from_affine(g2_generator()).dbl().to_affine(), good_u);
  auto pb = hex_bytes(p_hex);
  g2_affine_t out;

  SECTION("bad_length") {
    REQUIRE(g2_decode(good_c.data(), 48, out) == decode_error::bad_length);
    REQUIRE(g2_decode(good_u, 191, out) == decode_error::bad_length);
  }
  SECTION("bad_flags") {
    auto b = good_c;
    b[0] &= 0x7f;
    REQUIRE(g2_decode(b.data(), 96, out) == decode_error::bad_flags);
    auto u = vec(good_u);
    u[0] |= 0x80;
    REQUIRE(g2_decode(u.data(), 192, out) == decode_error::bad_flags);
    u = vec(good_u);
    u[0] |= 0x20;
    REQUIRE(g2_decode(u.data(), 192, out) == decode_error::bad_flags);
  }
  SECTION("non_canonical: x.c1 >= p, x.c0 >= p, y >= p") {
    auto b = good_c;
    std::memcpy(b.data(), pb.data(), 48);  // x.c1 = p (first 48 bytes)
    b[0] |= 0x80;
    REQUIRE(g2_decode(b.data(), 96, out) == decode_error::non_canonical);
    b = good_c;
    std::memcpy(b.data() + 48, pb.data(), 48);  // x.c0 = p
    REQUIRE(g2_decode(b.data(), 96, out) == decode_error::non_canonical);
    auto u = vec(good_u);
    std::memcpy(u.data() + 96, pb.data(), 48);  // y.c1 = p
    REQUIRE(g2_decode(u.data(), 192, out) == decode_error::non_canonical);
    u = vec(good_u);
    std::memcpy(u.data() + 144, pb.data(), 48);  // y.c0 = p
    REQUIRE(g2_decode(u.data(), 192, out) == decode_error::non_canonical);
  }
  SECTION("not_on_curve") {
    g2_affine_t fake = g2_affine_t::from_xy(g2_small_x(false), fp2_t::zero());
    uint8_t c[96];
    g2_to_compressed(fake, c);  // encodes x only
    REQUIRE(g2_decode(c, 96, out) == decode_error::not_on_curve);
    auto u = vec(good_u);
    u[191] ^= 1;
    REQUIRE(g2_decode(u.data(), 192, out) == decode_error::not_on_curve);
  }
  SECTION("not_in_subgroup") {
    fp2_t x = g2_small_x(true), y;
    REQUIRE((x.sqr() * x + g2_config::b()).sqrt(y));
    g2_affine_t q = g2_affine_t::from_xy(x, y);
    REQUIRE(q.is_on_curve());
    uint8_t c[96], u[192];
    g2_to_compressed(q, c);
    g2_to_uncompressed(q, u);
    REQUIRE(g2_decode(c, 96, out) == decode_error::not_in_subgroup);
    REQUIRE(g2_decode(u, 192, out) == decode_error::not_in_subgroup);
    REQUIRE(g2_decode(u, 192, out, false) == decode_error::ok);
    REQUIRE(out == q);
  }
  SECTION("bad_infinity") {
    std::vector<uint8_t> inf(96, 0);
    inf[0] = 0xc0;
    REQUIRE(g2_decode(inf.data(), 96, out) == decode_error::ok);
    REQUIRE(out.is_infinity());
    auto b = inf;
    b[50] = 1;  // non-zero x.c0
    REQUIRE(g2_decode(b.data(), 96, out) == decode_error::bad_infinity);
    b = inf;
    b[0] |= 0x20;
    REQUIRE(g2_decode(b.data(), 96, out) == decode_error::bad_infinity);
    std::vector<uint8_t> uinf(192, 0);
    uinf[0] = 0x40;
    REQUIRE(g2_decode(uinf.data(), 192, out) == decode_error::ok);
    uinf[191] = 1;
    REQUIRE(g2_decode(uinf.data(), 192, out) == decode_error::bad_infinity);
  }
}
