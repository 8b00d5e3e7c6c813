// Gadgets against their native computations: booleans, 32-bit words, SHA-256 (NIST vectors),
// Poseidon (widths 3 and 9), Merkle paths (Poseidon arity 2 and 8, SHA-256 binary).
#include <random>
#include <string>

#include "catch.hpp"
#include "prover/gadgets/merkle.hpp"
#include "prover/gadgets/poseidon.hpp"
#include "prover/gadgets/sha256.hpp"
#include "prover/r1cs/proving_assignment.hpp"
#include "prover/r1cs/shape.hpp"

using namespace cuzk;
using namespace cuzk::gadgets;
using PA = r1cs::ProvingAssignment<r1cs::BaselinePolicy>;
using Rec = r1cs::MatrixRecorder<r1cs::VectorTerms>;

namespace {

std::string hex(const Sha256Digest& d) {
  static const char* x = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) {
    s += x[b >> 4];
    s += x[b & 15];
  }
  return s;
}

// Runs `build` on a proving assignment and on a matrix recorder; checks that the witness
// satisfies the matrices, and that changing any one of up to `probes` auxiliary values breaks
// them (every auxiliary is constrained).
template <class F>
void check_sound(F build, int probes = 16) {
  PA pa;
  build(pa);
  Rec rec;
  build(rec);
  r1cs::R1csMatrices m = rec.finish();
  REQUIRE(pa.is_satisfied());
  REQUIRE(m.num_constraints == pa.num_constraints());
  REQUIRE(m.is_satisfied(pa.input_assignment(), pa.aux_assignment()));
  std::mt19937_64 g(7);
  for (int k = 0; k < probes && pa.num_aux() > 0; k++) {
    std::vector<fr_t> aux = pa.aux_assignment();
    size_t i = g() % aux.size();
    aux[i] += fr_t::one();
    INFO("altered aux " << i);
    CHECK_FALSE(m.is_satisfied(pa.input_assignment(), aux));
  }
}

Boolean make(PA& cs, int kind, bool v) {
  if (kind == 0) return Boolean::constant(v);
  Boolean b = Boolean::alloc(cs, kind == 1 ? v : !v);
  return kind == 1 ? b : !b;
}

}  // namespace

TEST_CASE("boolean and/xor/or/not match truth tables for every operand kind", "[gadgets]") {
  for (int ka = 0; ka < 3; ka++)
    for (int kb = 0; kb < 3; kb++)
      for (int va = 0; va < 2; va++)
        for (int vb = 0; vb < 2; vb++) {
          PA cs;
          Boolean a = make(cs, ka, va), b = make(cs, kb, vb);
          INFO("kinds " << ka << kb << " values " << va << vb);
          Boolean x = boolean_xor(cs, a, b), n = boolean_and(cs, a, b), o = boolean_or(cs, a, b);
          CHECK(x.value() == bool(va ^ vb));
          CHECK(n.value() == bool(va & vb));
          CHECK(o.value() == bool(va | vb));
          CHECK((!a).value() == !bool(va));
          // the circuit's value of the result equals the native one
          using L = PA::lc_t;
          CHECK(r1cs::evaluate(x.lc<L>(), cs.input_assignment().data(), cs.aux_assignment().data()) == bit_value(va ^ vb));
          CHECK(r1cs::evaluate(n.lc<L>(), cs.input_assignment().data(), cs.aux_assignment().data()) == bit_value(va & vb));
          CHECK(cs.is_satisfied());
        }
}

TEST_CASE("a bit with value 2 violates its booleanity constraint", "[gadgets]") {
  Rec rec;
  alloc_bit(rec, true);
  r1cs::R1csMatrices m = rec.finish();
  CHECK(m.is_satisfied({fr_t::one()}, {fr_t::one()}));
  CHECK(m.is_satisfied({fr_t::one()}, {fr_t::zero()}));
  CHECK_FALSE(m.is_satisfied({fr_t::one()}, {fr_t::from_u64(2)}));
}

TEST_CASE("sha256 ch and maj match their definitions on all inputs", "[gadgets]") {
  for (int v = 0; v < 8; v++)
    for (int kinds = 0; kinds < 27; kinds++) {
      PA cs;
      bool a = v & 1, b = v & 2, c = v & 4;
      Boolean A = make(cs, kinds % 3, a), B = make(cs, kinds / 3 % 3, b), C = make(cs, kinds / 9, c);
      INFO("values " << v << " kinds " << kinds);
      CHECK(sha256_ch(cs, A, B, C).value() == ((a && b) != (!a && c)));
      CHECK(sha256_maj(cs, A, B, C).value() == (int(a) + int(b) + int(c) >= 2));
      CHECK(cs.is_satisfied());
    }
}

TEST_CASE("uint32 addmany, xor, and, rotations and shifts match native arithmetic", "[gadgets]") {
  std::mt19937_64 g(1);
  for (int n : {2, 3, 5, 7}) {
    std::vector<uint32_t> vals;
    for (int i = 0; i < n; i++) vals.push_back(uint32_t(g()));
    uint32_t sum = 0;
    for (uint32_t v : vals) sum += v;
    check_sound([&](auto& cs) {
      std::vector<UInt32> ws;
      for (int i = 0; i < n; i++) ws.push_back(i == 1 ? UInt32::constant(vals[i]) : UInt32::alloc(cs, vals[i]));
      UInt32 s = uint32_addmany(cs, std::span<const UInt32>(ws));
      CHECK(s.value == sum);
      uint32_t bits = 0;
      for (int i = 0; i < 32; i++) bits |= uint32_t(s.bits[i].value()) << i;
      CHECK(bits == sum);
      UInt32 x = uint32_xor(cs, ws[0].rotr(7), (~ws[n - 1]).shr(3));
      CHECK(x.value == (((vals[0] >> 7) | (vals[0] << 25)) ^ (~vals[n - 1] >> 3)));
      UInt32 a = uint32_and(cs, ws[0], ws[n - 1]);
      CHECK(a.value == (vals[0] & vals[n - 1]));
    });
  }
}

TEST_CASE("native sha256 reproduces the NIST FIPS 180-2 vectors", "[gadgets]") {
  std::string abc = "abc";
  std::string m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(hex(sha256_native(std::span<const uint8_t>((const uint8_t*)abc.data(), abc.size()))) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex(sha256_native(std::span<const uint8_t>((const uint8_t*)m448.data(), m448.size()))) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("sha256 gadget compression gives the NIST vectors with native padding", "[gadgets]") {
  // FIPS 180-2 appendix B.1 ("abc", one block) and B.2 (448-bit message, two blocks).
  const std::pair<std::string, std::string> vectors[] = {
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"}};
  for (const auto& [msg, want] : vectors) {
    INFO(msg);
    std::vector<uint8_t> padded = sha256_pad(std::span<const uint8_t>((const uint8_t*)msg.data(), msg.size()));
    PA cs;
    std::vector<Boolean> bits = alloc_bytes_be(cs, std::span<const uint8_t>(padded));
    Sha256Words s = sha256_iv_words();
    for (size_t off = 0; off < bits.size(); off += 512) s = sha256_compress(cs, std::span<const Boolean>(bits).subspan(off, 512), s);
    Sha256State st;
    for (int i = 0; i < 8; i++) st[i] = s[i].value;
    CHECK(hex(sha256_state_to_digest(st)) == want);
    // the output bits (not only the carried values) hold the digest
    std::vector<Boolean> out = sha256_words_to_bits(s);
    Sha256Digest d{};
    for (int i = 0; i < 256; i++) d[i / 8] |= uint8_t(out[i].value()) << (7 - i % 8);
    CHECK(hex(d) == want);
    CHECK(cs.is_satisfied());
  }
}

TEST_CASE("sha256 gadget on random messages equals native and is sound", "[gadgets]") {
  std::mt19937_64 g(3);
  for (size_t len : {0, 31, 55, 64, 100}) {
    std::vector<uint8_t> msg(len);
    for (auto& b : msg) b = uint8_t(g());
    Sha256Digest want = sha256_native(msg);
    check_sound(
        [&](auto& cs) {
          std::vector<Boolean> bits = alloc_bytes_be(cs, std::span<const uint8_t>(msg));
          Sha256Words s = sha256_bits(cs, std::span<const Boolean>(bits));
          Sha256State st;
          for (int i = 0; i < 8; i++) st[i] = s[i].value;
          CHECK(sha256_state_to_digest(st) == want);
        },
        len == 64 ? 24 : 4);
  }
}

TEST_CASE("poseidon gadget equals native for widths 3 and 9, with the documented cost", "[gadgets]") {
  std::mt19937_64 g(5);
  for (int t : {3, 9}) {
    const PoseidonParams& p = poseidon_params(t);
    CHECK(p.rounds() == 8 + (t == 3 ? 56 : 57));
    std::vector<fr_t> in;
    for (int i = 0; i < t - 1; i++) in.push_back(fr_t::random(g));
    fr_t want = poseidon_hash_native(p, in);
    uint64_t constraints = 0;
    check_sound([&](auto& cs) {
      using L = typename std::decay_t<decltype(cs)>::lc_t;
      std::vector<NumLc<L>> xs;
      for (const fr_t& v : in) xs.push_back(NumLc<L>::of(AllocatedNum::alloc(cs, v)));
      AllocatedNum h = poseidon_hash(cs, p, std::span<const NumLc<L>>(xs));
      if constexpr (std::decay_t<decltype(cs)>::kNeedsValues) {
        CHECK(h.value == want);
        CHECK(cs.value(h.var) == want);
        constraints = cs.num_constraints();
      }
    });
    CHECK(constraints == (t == 3 ? 353u : 844u));
    // a different input changes the hash
    std::vector<fr_t> in2 = in;
    in2[0] += fr_t::one();
    CHECK(poseidon_hash_native(p, in2) != want);
  }
  // constants are deterministic and distinct
  CHECK(poseidon_params(3).round_constants[0] == fr_from_sha256_label("cuzk/poseidon/x5/t=3/rc/0"));
  CHECK(poseidon_params(3).round_constants[0] != poseidon_params(3).round_constants[1]);
}

TEST_CASE("merkle paths: poseidon arity 2 and 8 and sha256 binary roots equal native", "[gadgets]") {
  std::mt19937_64 g(11);
  const PoseidonParams& p2 = poseidon_params(3);
  const PoseidonParams& p8 = poseidon_params(9);
  SECTION("poseidon arity 2, depth 5, every leaf position parity") {
    for (uint64_t idx : {0u, 1u, 22u, 31u}) {
      fr_t leaf = fr_t::random(g);
      std::vector<fr_t> sib;
      fr_t cur = leaf;
      for (int k = 0; k < 5; k++) {
        sib.push_back(fr_t::random(g));
        fr_t in[2] = {cur, sib.back()};
        if ((idx >> k) & 1) std::swap(in[0], in[1]);
        cur = poseidon_hash_native(p2, in);
      }
      check_sound([&](auto& cs) {
        AllocatedNum l = AllocatedNum::alloc(cs, leaf);
        std::vector<AllocatedNum> s;
        std::vector<Boolean> bits;
        for (int k = 0; k < 5; k++) {
          s.push_back(AllocatedNum::alloc(cs, sib[k]));
          bits.push_back(Boolean::alloc(cs, (idx >> k) & 1));
        }
        AllocatedNum r = merkle_root_poseidon2(cs, l, std::span<const AllocatedNum>(s), std::span<const Boolean>(bits));
        if constexpr (std::decay_t<decltype(cs)>::kNeedsValues) CHECK(cs.value(r.var) == cur);
      });
    }
  }
  SECTION("poseidon arity 8, depth 2, every position") {
    for (uint64_t idx = 0; idx < 64; idx += 9) {
      fr_t leaf = fr_t::random(g);
      std::vector<fr_t> sib;
      fr_t cur = leaf;
      for (int k = 0; k < 2; k++) {
        int pos = (idx >> (3 * k)) & 7;
        std::vector<fr_t> kids;
        for (int j = 0; j < 7; j++) sib.push_back(fr_t::random(g));
        for (int j = 0, s = 0; j < 8; j++) kids.push_back(j == pos ? cur : sib[7 * k + s++]);
        cur = poseidon_hash_native(p8, kids);
      }
      check_sound([&](auto& cs) {
        AllocatedNum l = AllocatedNum::alloc(cs, leaf);
        std::vector<AllocatedNum> s;
        std::vector<Boolean> bits;
        for (const fr_t& v : sib) s.push_back(AllocatedNum::alloc(cs, v));
        for (int k = 0; k < 6; k++) bits.push_back(Boolean::alloc(cs, (idx >> k) & 1));
        AllocatedNum r = merkle_root_poseidon8(cs, l, std::span<const AllocatedNum>(s), std::span<const Boolean>(bits));
        if constexpr (std::decay_t<decltype(cs)>::kNeedsValues) CHECK(cs.value(r.var) == cur);
      });
    }
  }
  SECTION("sha256 binary, depth 2") {
    for (uint64_t idx : {1u, 2u}) {
      Sha256Digest leaf, cur;
      for (auto& b : leaf) b = uint8_t(g());
      cur = leaf;
      std::vector<Sha256Digest> sib(2);
      for (int k = 0; k < 2; k++) {
        for (auto& b : sib[k]) b = uint8_t(g());
        std::vector<uint8_t> m;
        const Sha256Digest& l = (idx >> k) & 1 ? sib[k] : cur;
        const Sha256Digest& r = (idx >> k) & 1 ? cur : sib[k];
        m.insert(m.end(), l.begin(), l.end());
        m.insert(m.end(), r.begin(), r.end());
        cur = sha256_native(m);
      }
      check_sound(
          [&](auto& cs) {
            std::vector<Boolean> lb = alloc_bytes_be(cs, std::span<const uint8_t>(leaf));
            std::vector<std::vector<Boolean>> sb;
            std::vector<Boolean> bits;
            for (int k = 0; k < 2; k++) {
              sb.push_back(alloc_bytes_be(cs, std::span<const uint8_t>(sib[k])));
              bits.push_back(Boolean::alloc(cs, (idx >> k) & 1));
            }
            std::vector<Boolean> root = merkle_root_sha256(cs, std::span<const Boolean>(lb),
                                                           std::span<const std::vector<Boolean>>(sb),
                                                           std::span<const Boolean>(bits));
            Sha256Digest d{};
            for (int i = 0; i < 256; i++) d[i / 8] |= uint8_t(root[i].value()) << (7 - i % 8);
            if constexpr (std::decay_t<decltype(cs)>::kNeedsValues) CHECK(d == cur);
          },
          8);
    }
  }
}
