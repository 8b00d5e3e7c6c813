// circom import: the committed fixture (tests/fixtures/circom, made by
// scripts/regen-circom-fixtures.sh) is read and satisfied; a tampered witness is not; each class
// of malformed file gives its own clear error (bad files are made here by editing bytes).
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "catch.hpp"
#include "prover/circom/circom.hpp"
#include "prover/synth/synth.hpp"
#include "subprocess.hpp"

using namespace cuzk;
using circom::FormatError;

namespace {

std::string fixture(const char* f) { return std::string(CUZK_SOURCE_DIR) + "/tests/fixtures/circom/" + f; }

std::vector<uint8_t> load(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  REQUIRE(f);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

uint32_t get32(const std::vector<uint8_t>& b, size_t at) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= uint32_t(b[at + i]) << (8 * i);
  return v;
}
void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + i] = uint8_t(v >> (8 * i));
}

// Offset of the contents of section `type` (after its 12-byte header), and its size.
std::pair<size_t, size_t> find_section(const std::vector<uint8_t>& b, uint32_t type) {
  size_t pos = 12;
  for (uint32_t i = 0; i < get32(b, 8); i++) {
    uint32_t t = get32(b, pos);
    size_t size = get32(b, pos + 4);
    if (t == type) return {pos + 12, size};
    pos += 12 + size;
  }
  FAIL("section not found");
  return {0, 0};
}

// Expects parse to throw FormatError whose message contains `needle`.
template <class F>
void expect_error(F parse, const std::string& needle) {
  try {
    parse();
    FAIL("no error; expected one containing '" << needle << "'");
  } catch (const FormatError& e) {
    INFO("message: " << e.what());
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
}

fr_t u(uint64_t v) { return fr_t::from_u64(v); }

}  // namespace

TEST_CASE("the committed circom fixture is imported and satisfied", "[circom]") {
  circom::R1csFile r = circom::read_r1cs(fixture("small.r1cs"));
  std::vector<fr_t> w = circom::read_wtns(fixture("small.wtns"));
  CHECK(r.n_wires == 7);
  CHECK(r.n_pub_out == 1);
  CHECK(r.n_pub_in == 1);
  CHECK(r.n_prv_in == 2);
  CHECK(r.constraints.size() == 3);
  REQUIRE(w.size() == 7);
  // input.json: a = 3, b = 11, c = 123456789; out = a*b*(c+3)*a + 5b - 7
  const fr_t a = u(3), b = u(11), c = u(123456789);
  const fr_t out = a * b * (c + u(3)) * a + u(5) * b - u(7);
  CHECK(w[1] == out);
  CHECK(w[2] == c);
  circom::CircomCircuit circ(r, w);
  auto pa = synth::prove_assignment<r1cs::BaselinePolicy>(circ);
  CHECK(pa.is_satisfied());
  CHECK(pa.num_inputs() == 3);  // one, out, c
  CHECK(pa.num_aux() == 4);
  CHECK(pa.num_constraints() == 3 + 3);  // + input constraints
  CHECK(circ.size_hint().constraints == pa.num_constraints());
  r1cs::R1csMatrices m = synth::record_matrices(circ);
  CHECK(m.is_satisfied(pa.input_assignment(), pa.aux_assignment()));
}

TEST_CASE("a tampered .wtns does not satisfy the circuit", "[circom]") {
  circom::R1csFile r = circom::read_r1cs(fixture("small.r1cs"));
  std::vector<uint8_t> wb = load(fixture("small.wtns"));
  auto [off, size] = find_section(wb, 2);
  for (uint32_t wire = 1; wire < 7; wire++) {
    std::vector<uint8_t> t = wb;
    t[off + 32 * wire] ^= 1;  // change the low bit of one value
    std::vector<fr_t> w = circom::parse_wtns(t, "tampered.wtns");
    auto pa = synth::prove_assignment<r1cs::BaselinePolicy>(circom::CircomCircuit(r, w));
    INFO("wire " << wire);
    CHECK_FALSE(pa.is_satisfied());
  }
}

TEST_CASE("malformed .r1cs files give clear errors", "[circom]") {
  const std::vector<uint8_t> good = load(fixture("small.r1cs"));
  auto parse = [](const std::vector<uint8_t>& b) { return [b] { circom::parse_r1cs(b, "bad.r1cs"); }; };
  auto [h, hsize] = find_section(good, 1);
  auto [k, ksize] = find_section(good, 2);

  SECTION("wrong magic") {
    auto b = good;
    std::memcpy(b.data(), "wtns", 4);
    expect_error(parse(b), "bad.r1cs: wrong magic 'wtns'");
    expect_error(parse({'r', '1'}), "wrong magic");
  }
  SECTION("unsupported version") {
    auto b = good;
    put32(b, 4, 7);
    expect_error(parse(b), "unsupported .r1cs version 7");
  }
  SECTION("prime other than BLS12-381's r") {
    auto b = good;
    b[h + 4 + 31] ^= 0x01;  // top byte of the prime
    expect_error(parse(b), "not BLS12-381's Fr");
    auto c = good;
    put32(c, h, 8);  // field size 8 bytes
    expect_error(parse(c), "field size is 8 bytes");
  }
  SECTION("truncated file and sections") {
    auto b = good;
    b.resize(b.size() - 10);
    expect_error(parse(b), "truncated section");
    // a section declared (and cut) shorter than its contents: the table stays consistent
    auto c = good;
    put32(c, k - 8, uint32_t(ksize - 40));
    c.erase(c.begin() + k + ksize - 40, c.begin() + k + ksize);
    expect_error(parse(c), "truncated constraints section");
    auto d = good;
    put32(d, h - 8, 20);  // header cut after the field size and part of the prime
    d.erase(d.begin() + h + 20, d.begin() + h + hsize);
    expect_error(parse(d), "truncated header section");
    auto e = good;
    put32(e, k, 1000);  // constraint 0 declares more A terms than the section holds
    expect_error(parse(e), "constraint 0 matrix A declares 1000 terms");
  }
  SECTION("missing section") {
    auto b = good;
    put32(b, h - 12, 9);  // renumber the header section
    expect_error(parse(b), "missing section 1");
  }
  SECTION("out-of-range wire index") {
    auto b = good;
    put32(b, k + 4, 99);  // first term of constraint 0, matrix A
    expect_error(parse(b), "constraint 0 matrix A term 0: wire 99 is out of range");
  }
  SECTION("coefficient not below r") {
    auto b = good;
    std::memset(b.data() + k + 8, 0xff, 32);
    expect_error(parse(b), "is not below the field prime");
  }
}

TEST_CASE("malformed .wtns files give clear errors", "[circom]") {
  const std::vector<uint8_t> good = load(fixture("small.wtns"));
  auto parse = [](const std::vector<uint8_t>& b) { return [b] { circom::parse_wtns(b, "bad.wtns"); }; };
  auto [h, hsize] = find_section(good, 1);
  auto [d, dsize] = find_section(good, 2);
  SECTION("wrong magic") {
    auto b = good;
    std::memcpy(b.data(), "r1cs", 4);
    expect_error(parse(b), "wrong magic 'r1cs'");
  }
  SECTION("unsupported version") {
    auto b = good;
    put32(b, 4, 3);
    expect_error(parse(b), "unsupported .wtns version 3");
  }
  SECTION("prime") {
    auto b = good;
    b[h + 4] ^= 0x02;
    expect_error(parse(b), "not BLS12-381's Fr");
  }
  SECTION("truncated") {
    auto b = good;
    b.resize(b.size() - 1);
    expect_error(parse(b), "truncated section 2");
    auto c = good;
    put32(c, h + 4 + 32, 9);  // more values than the section holds
    expect_error(parse(c), "truncated witness section");
  }
  SECTION("value not below r") {
    auto b = good;
    std::memset(b.data() + d + 32 * 3, 0xff, 32);
    expect_error(parse(b), "witness value 3: value");
  }
  SECTION("witness of another circuit") {
    circom::R1csFile r = circom::read_r1cs(fixture("small.r1cs"));
    std::vector<fr_t> w = circom::parse_wtns(good, "good.wtns");
    w.pop_back();
    expect_error([&] { circom::CircomCircuit c(r, w); }, "witness has 6 values but the circuit has 7 wires");
    w = circom::parse_wtns(good, "good.wtns");
    w[0] = u(2);
    expect_error([&] { circom::CircomCircuit c(r, w); }, "not 1");
  }
}

TEST_CASE("cuzk-bench circuit --describe reads .r1cs files and rejects bad ones", "[circom][cli]") {
  const std::string bench = cuzk::testing::env_or("CUZK_BENCH", std::string(CUZK_BUILD_DIR) + "/harness/cuzk-bench");
  auto ok = cuzk::testing::run_command(bench + " circuit --describe --r1cs " + fixture("small.r1cs"));
  INFO(ok.output);
  CHECK(ok.status == 0);
  CHECK(ok.output.find("constraints") != std::string::npos);
  CHECK(ok.output.find("6") != std::string::npos);
  auto bad = cuzk::testing::run_command(bench + " circuit --describe --r1cs " + fixture("small.wtns"));
  INFO(bad.output);
  CHECK(bad.status == 2);
  CHECK(bad.output.find("wrong magic") != std::string::npos);
  auto missing = cuzk::testing::run_command(bench + " circuit --describe --r1cs /nonexistent.r1cs");
  CHECK(missing.status == 2);
  CHECK(missing.output.find("cannot open") != std::string::npos);
}

TEST_CASE("hostile .r1cs and .wtns sizes are refused before allocating", "[circom]") {
  const std::vector<uint8_t> good = load(fixture("small.r1cs"));
  auto parse = [](const std::vector<uint8_t>& b) { return [b] { circom::parse_r1cs(b, "bad.r1cs"); }; };
  auto [h, hsize] = find_section(good, 1);
  // header section 1: n8, prime, then nWires, nPubOut, nPubIn, nPrvIn (u32), nLabels (u64), mConstraints
  const size_t wires = h + 36, pub_out = h + 40, constraints = h + 60;

  SECTION("40M constraints in a 636-byte file: refused at once, they cannot fit") {
    auto b = good;
    put32(b, constraints, 40'000'000);
    expect_error(parse(b), "header declares 40000000 constraints");
  }
  SECTION("2^32-1 wires: over the stated maximum") {
    auto b = good;
    put32(b, wires, 0xffffffffu);
    expect_error(parse(b), "over the limit of");
    expect_error(parse(b), "CUZK_MAX_CONSTRAINTS");
  }
  SECTION("nPubOut = 0xFFFFFFFF does not wrap around in 32 bits") {
    auto b = good;
    put32(b, pub_out, 0xffffffffu);
    expect_error(parse(b), "public and");
  }
  SECTION("a wire-to-label map that disagrees with nWires") {
    auto b = good;
    put32(b, wires, get32(b, wires) + 1);
    expect_error(parse(b), "wire-to-label section");
  }
  SECTION(".wtns declaring 2^32-1 values") {
    std::vector<uint8_t> w = load(fixture("small.wtns"));
    auto [wh, whsize] = find_section(w, 1);
    put32(w, wh + 36, 0xffffffffu);
    expect_error([w] { circom::parse_wtns(w, "bad.wtns"); }, "over the limit of");
  }
}
