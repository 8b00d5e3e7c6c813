// snarkjs interoperability: .zkey import, proofs from circom witnesses, snarkjs's JSON
// formats both ways, and cross-verification with snarkjs itself.
//
// Fixtures: tests/fixtures/circom/small.{r1cs,wtns} (circom2, --prime bls12381) and
// tests/fixtures/snarkjs/{small.zkey, verification_key.json, proof.json, public.json} made by
// scripts/regen-snarkjs-fixtures.sh with the snarkjs of tests/interop/snarkjs/package.json.
//
// The cases tagged [npm] install that snarkjs into <build>/snarkjs (once per build tree; the
// install is reused while its version matches) and run `snarkjs groth16 verify`. Where node or
// npm is missing, or the registry cannot be reached, they print "SNARKJS-SKIPPED: <why>" and
// return; ctest reports the test as skipped (tests/cmake/snarkjs.cmake). Set
// CUZK_REQUIRE_SNARKJS=1 to turn a failed install into a failure.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/prove_circom.hpp"
#include "prover/circom/circom.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/interop/snarkjs_json.hpp"
#include "prover/interop/zkey.hpp"
#include "prover/pairing/pairing.hpp"
#include "prover/synth/synth.hpp"
#include "subprocess.hpp"

using namespace cuzk;
namespace fs = std::filesystem;
using cuzk::testing::run_command;

namespace {

fs::path src_dir() { return fs::path(cuzk::testing::env_or("CUZK_SOURCE_DIR", CUZK_SOURCE_DIR)); }
fs::path build_dir() { return fs::path(cuzk::testing::env_or("CUZK_BUILD_DIR", CUZK_BUILD_DIR)); }
fs::path circom_fix() { return src_dir() / "tests/fixtures/circom"; }
fs::path snarkjs_fix() { return src_dir() / "tests/fixtures/snarkjs"; }
std::string bench() { return cuzk::testing::env_or("CUZK_BENCH", (build_dir() / "harness/cuzk-bench").string()); }

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
std::vector<uint8_t> slurp_bytes(const fs::path& p) {
  std::string s = slurp(p);
  return std::vector<uint8_t>(s.begin(), s.end());
}
void spit(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }
void spit(const fs::path& p, const std::vector<uint8_t>& b) {
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// A fresh scratch folder per test case, under the build tree.
fs::path scratch(const std::string& name) {
  fs::path d = build_dir() / "test-scratch" / "snarkjs_interop" / name;  // kept for inspection; reset per case
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// The message of the exception `fn` throws (fails the test when it throws nothing).
template <class E, class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no exception thrown");
  return "";
}

void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + i] = uint8_t(v >> (8 * i));
}
uint32_t get_u32(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
}
// Offset of section `type`'s data in a zkey image (walks the container).
size_t section_offset(const std::vector<uint8_t>& b, uint32_t type) {
  size_t pos = 12;
  for (uint32_t i = 0, n = get_u32(b, 8); i < n; i++) {
    uint32_t t = get_u32(b, pos);
    uint64_t size = uint64_t(get_u32(b, pos + 4)) | uint64_t(get_u32(b, pos + 8)) << 32;
    if (t == type) return pos + 12;
    pos += 12 + size;
  }
  return 0;
}

// ---- snarkjs from npm ----
struct Snarkjs {
  bool ok = false;
  std::string bin;  // node_modules/.bin/snarkjs
};

void skip(const std::string& why) {
  std::printf("SNARKJS-SKIPPED: %s\n", why.c_str());
  std::fflush(stdout);
  WARN("SNARKJS-SKIPPED: " << why);
}

bool have(const char* tool) { return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0; }

const Snarkjs& snarkjs() {
  static Snarkjs s = [] {
    Snarkjs r;
    if (!have("node") || !have("npm")) {
      skip("node or npm not found on PATH; install Node.js >= 18 to run the snarkjs cross-checks");
      return r;
    }
    auto pkg = nlohmann::json::parse(slurp(src_dir() / "tests/interop/snarkjs/package.json"));
    std::string version = pkg["dependencies"]["snarkjs"].get<std::string>();
    fs::path dir = build_dir() / "snarkjs";
    fs::create_directories(dir);
    fs::path installed = dir / "node_modules/snarkjs/package.json";
    bool present = fs::exists(installed) &&
                   nlohmann::json::parse(slurp(installed)).value("version", std::string()) == version &&
                   fs::exists(dir / "node_modules/.bin/snarkjs");
    if (!present) {
      fs::path log = dir / "npm-install.log";
      std::string cmd = "npm install --prefix " + q(dir) + " --no-audit --no-fund --no-save snarkjs@" + version + " > " +
                        q(log) + " 2>&1";
      if (std::system(cmd.c_str()) != 0) {
        const char* req = std::getenv("CUZK_REQUIRE_SNARKJS");
        if (req && std::string(req) == "1") {
          std::printf("npm install failed:\n%s\n", slurp(log).c_str());
          return r;  // ok stays false: the [npm] cases fail below
        }
        skip("npm install snarkjs@" + version + " failed (offline?): see " + log.string());
        return r;
      }
    }
    r.ok = true;
    r.bin = (dir / "node_modules/.bin/snarkjs").string();
    return r;
  }();
  return s;
}

bool need_snarkjs() {
  const Snarkjs& s = snarkjs();
  if (s.ok) return true;
  const char* req = std::getenv("CUZK_REQUIRE_SNARKJS");
  if (req && std::string(req) == "1") FAIL("snarkjs unavailable (CUZK_REQUIRE_SNARKJS=1)");
  return false;
}

// `snarkjs groth16 verify`: exit 0 and "OK!" for a valid proof.
bool snarkjs_verifies(const fs::path& vk, const fs::path& pub, const fs::path& proof) {
  auto r = run_command(snarkjs().bin + " groth16 verify " + q(vk) + " " + q(pub) + " " + q(proof));
  INFO("snarkjs groth16 verify output:\n" << r.output);
  bool ok = r.status == 0 && r.output.find("OK!") != std::string::npos;
  if (!ok) CHECK(r.status == 1);  // a rejection, not a crash
  return ok;
}

std::vector<fr_t> fixture_wires() { return circom::read_wtns((circom_fix() / "small.wtns").string()); }

interop::ZkeyCircuit fixture_zkey() { return interop::read_zkey((snarkjs_fix() / "small.zkey").string()); }

// A proof with pi_a negated: well-formed points, wrong proof.
groth16::Proof altered(groth16::Proof p) {
  p.a = -p.a;
  return p;
}

}  // namespace

TEST_CASE("zkey: the snarkjs fixture loads, and its key matches snarkjs's verification_key.json", "[zkey]") {
  interop::ZkeyCircuit z = fixture_zkey();
  circom::R1csFile r1cs = circom::read_r1cs((circom_fix() / "small.r1cs").string());
  CHECK(z.pk.convention == groth16::HConvention::kSnarkjs);
  CHECK(z.n_vars == r1cs.n_wires);
  CHECK(z.n_public == r1cs.num_public());
  CHECK(z.pk.num_inputs == z.n_public + 1);
  CHECK(z.pk.num_aux == z.n_vars - z.n_public - 1);
  CHECK(z.pk.num_constraints == r1cs.constraints.size() + z.n_public + 1);
  CHECK(z.pk.domain_size == 8);
  CHECK(z.pk.h_query.size() == z.pk.domain_size);
  CHECK(z.pk.a_query.size() == z.n_vars);
  CHECK(z.pk.l_query.size() == z.pk.num_aux);
  // The coefficients decode to the r1cs's (the doubly-Montgomery encoding undone).
  REQUIRE_NOTHROW(interop::check_r1cs_matches(z, r1cs, "small.zkey", "small.r1cs"));

  // Every point of snarkjs's exported key, and e(alpha, beta) in snarkjs's Fp12 order.
  auto ours = nlohmann::json::parse(interop::vk_to_json(z.pk.vk));
  auto theirs = nlohmann::json::parse(slurp(snarkjs_fix() / "verification_key.json"));
  for (const char* k : {"protocol", "curve", "nPublic", "vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2", "IC",
                        "vk_alphabeta_12"}) {
    INFO("field " << k);
    CHECK(ours[k] == theirs[k]);
  }
  // and our reader accepts snarkjs's file (including its vk_alphabeta_12)
  groth16::VerifyingKey vk = interop::read_vk_json((snarkjs_fix() / "verification_key.json").string());
  CHECK(vk.alpha_g1 == z.pk.vk.alpha_g1);
  CHECK(vk.delta_g2 == z.pk.vk.delta_g2);
  REQUIRE(vk.ic.size() == z.pk.vk.ic.size());
  for (size_t i = 0; i < vk.ic.size(); i++) CHECK(vk.ic[i] == z.pk.vk.ic[i]);
}

TEST_CASE("zkey + wtns: a/b/c satisfy the constraints and the proof verifies under our verifier", "[zkey]") {
  interop::ZkeyCircuit z = fixture_zkey();
  circom::R1csFile r1cs = circom::read_r1cs((circom_fix() / "small.r1cs").string());
  std::vector<fr_t> wires = fixture_wires();
  REQUIRE(interop::first_unsatisfied(r1cs, wires, "small.r1cs") == -1);
  interop::Abc abc = interop::compute_abc(z, wires, "small.wtns");
  REQUIRE(abc.a.size() == z.pk.domain_size);
  // snarkjs's roots of unity are not ours: its 2n-th root is ours^k (k odd, != 1 here since
  // ffjavascript starts from 5 and we from 7), and row c lands at index k c mod n.
  CHECK(z.root_exponent % 2 == 1);
  CHECK(z.root_exponent != 1);
  const uint64_t n = z.pk.domain_size;
  // a, b agree with the r1cs's A z, B z; c = a∘b equals C z on the r1cs rows.
  for (size_t row = 0; row < r1cs.constraints.size(); row++) {
    const size_t i = size_t(z.root_exponent * row % n), r = row;
    auto eval = [&](const std::vector<circom::WireTerm>& lc) {
      fr_t acc = fr_t::zero();
      for (auto& t : lc) acc += t.coeff * wires[t.wire];
      return acc;
    };
    INFO("constraint " << r);
    CHECK(abc.a[i] == eval(r1cs.constraints[r].a));
    CHECK(abc.b[i] == eval(r1cs.constraints[r].b));
    CHECK(abc.c[i] == eval(r1cs.constraints[r].c));
  }
  std::vector<fr_t> publics(wires.begin() + 1, wires.begin() + 1 + z.n_public);
  const uint64_t seed = std::random_device{}();
  INFO("randomness seed " << seed);
  groth16::Proof p = groth16::prove_cpu(z.pk, interop::make_witness(z, wires, abc), groth16::Randomness::from_seed(seed));
  CHECK(groth16::verify(z.pk.vk, p, publics));
  CHECK_FALSE(groth16::verify(z.pk.vk, altered(p), publics));
  std::vector<fr_t> other = publics;
  other[0] += fr_t::one();
  CHECK_FALSE(groth16::verify(z.pk.vk, p, other));
  // and the public signals are snarkjs's for the same witness
  CHECK(interop::read_public_json((snarkjs_fix() / "public.json").string()) == publics);
}

TEST_CASE("zkey: malformed, truncated, wrong-curve and mismatched inputs give clear errors", "[zkey][errors]") {
  const std::vector<uint8_t> good = slurp_bytes(snarkjs_fix() / "small.zkey");
  REQUIRE(good.size() > 1000);
  auto parse_err = [&](const std::vector<uint8_t>& b) {
    return error_of<interop::ZkeyError>([&] { interop::parse_zkey(b, "k.zkey"); });
  };
  SECTION("bad magic") {
    auto b = good;
    std::memcpy(b.data(), "r1cs", 4);
    std::string e = parse_err(b);
    CHECK_THAT(e, Catch::Matchers::Contains("k.zkey: bad magic 'r1cs'"));
  }
  SECTION("unsupported version") {
    auto b = good;
    put_u32(b, 4, 7);
    CHECK_THAT(parse_err(b), Catch::Matchers::Contains("k.zkey: unsupported zkey version 7"));
  }
  SECTION("truncated anywhere") {
    for (size_t cut : {size_t(0), size_t(3), size_t(11), size_t(20), size_t(200), good.size() / 2, good.size() - 1}) {
      std::vector<uint8_t> b(good.begin(), good.begin() + cut);
      std::string e = parse_err(b);
      INFO("cut at " << cut << ": " << e);
      CHECK_THAT(e, Catch::Matchers::StartsWith("k.zkey: "));
      CHECK((e.find("truncated") != std::string::npos || e.find("missing section") != std::string::npos));
    }
  }
  SECTION("wrong curve: bn128-sized fields, or another prime") {
    size_t h = section_offset(good, 2);
    REQUIRE(h > 0);
    auto b = good;
    put_u32(b, h, 32);
    CHECK_THAT(parse_err(b), Catch::Matchers::Contains("n8q = 32") && Catch::Matchers::Contains("another curve"));
    b = good;
    b[h + 4] ^= 0x02;  // q's low byte
    CHECK_THAT(parse_err(b), Catch::Matchers::Contains("base field prime q is not BLS12-381's"));
    b = good;
    b[h + 4 + 48 + 4] ^= 0x02;  // r's low byte
    CHECK_THAT(parse_err(b), Catch::Matchers::Contains("scalar field prime r is not BLS12-381's"));
  }
  SECTION("not Groth16") {
    auto b = good;
    put_u32(b, section_offset(good, 1), 2);
    CHECK_THAT(parse_err(b), Catch::Matchers::Contains("not Groth16") && Catch::Matchers::Contains("PLONK"));
  }
  SECTION("a corrupted point") {
    auto b = good;
    size_t a = section_offset(good, 5);
    b[a + 96 + 7] ^= 0x10;  // A point 1, x
    CHECK_THAT(parse_err(b), Catch::Matchers::Contains("section 5 (A) point 1") && Catch::Matchers::Contains("not on the curve"));
  }
  SECTION("a coefficient outside the domain") {
    auto b = good;
    size_t c = section_offset(good, 4);
    put_u32(b, c + 4 + 4, 1000);  // entry 0's constraint
    CHECK_THAT(parse_err(b), Catch::Matchers::Contains("section 4 (coefficients) entry 0: constraint 1000 is outside"));
  }
  SECTION("a witness of the wrong length") {
    interop::ZkeyCircuit z = interop::parse_zkey(good, "k.zkey");
    std::vector<fr_t> w = fixture_wires();
    w.push_back(fr_t::one());
    CHECK_THAT(error_of<interop::ZkeyError>([&] { interop::compute_abc(z, w, "w.wtns"); }),
               Catch::Matchers::Contains("w.wtns: witness has") && Catch::Matchers::Contains("wires"));
  }
  SECTION("an r1cs of another circuit") {
    interop::ZkeyCircuit z = interop::parse_zkey(good, "k.zkey");
    circom::R1csFile r1cs = circom::read_r1cs((circom_fix() / "small.r1cs").string());
    r1cs.constraints[1].b[0].coeff += fr_t::one();
    CHECK_THAT(error_of<interop::ZkeyError>([&] { interop::check_r1cs_matches(z, r1cs, "k.zkey", "c.r1cs"); }),
               Catch::Matchers::Contains("c.r1cs: does not match k.zkey: constraint 1: B differs"));
  }
  SECTION("missing file") {
    CHECK_THAT(error_of<interop::ZkeyError>([&] { interop::read_zkey("/nonexistent/x.zkey"); }),
               Catch::Matchers::Contains("/nonexistent/x.zkey: cannot open"));
  }
}

TEST_CASE("prove_circom: writes snarkjs JSON, refuses unsatisfying witnesses and bad inputs", "[zkey][cli]") {
  fs::path d = scratch("prove_circom");
  cli::CircomProveOptions o;
  o.zkey = (snarkjs_fix() / "small.zkey").string();
  o.wtns = (circom_fix() / "small.wtns").string();
  o.r1cs = (circom_fix() / "small.r1cs").string();
  o.proof_out = (d / "proof.json").string();
  o.public_out = (d / "public.json").string();
  o.vk_out = (d / "vk.json").string();
  o.seed = 42;
  o.quiet = true;
  REQUIRE(cli::run_prove_circom(o) == cli::kExitOk);
  groth16::VerifyingKey vk = interop::read_vk_json(o.vk_out);
  groth16::Proof p = interop::read_proof_json(o.proof_out);
  std::vector<fr_t> pub = interop::read_public_json(o.public_out);
  CHECK(groth16::verify(vk, p, pub));
  CHECK(slurp(o.public_out) == slurp(snarkjs_fix() / "public.json") + "\n");  // same layout as snarkjs
  // reproducible with a seed
  std::string first = slurp(o.proof_out);
  o.force = true;  // the second run replaces the first run's files
  REQUIRE(cli::run_prove_circom(o) == cli::kExitOk);
  CHECK(slurp(o.proof_out) == first);
  // no temporary files left behind
  for (auto& e : fs::directory_iterator(d)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);

  SECTION("an unsatisfying witness is refused when the r1cs is given") {
    std::vector<uint8_t> w = slurp_bytes(o.wtns);
    w[w.size() - 1 - 8] ^= 1;  // a byte of the last wire value (< r stays likely)
    fs::path bad = d / "bad.wtns";
    spit(bad, w);
    o.wtns = bad.string();
    fs::remove(o.proof_out);
    std::string e = error_of<cli::Error>([&] { cli::run_prove_circom(o); });
    CHECK_THAT(e, Catch::Matchers::Contains("bad.wtns: the witness does not satisfy constraint"));
    CHECK_FALSE(fs::exists(o.proof_out));
    // without the r1cs the proof is made but does not verify: exit 1
    o.r1cs.clear();
    CHECK(cli::run_prove_circom(o) == cli::kExitFailure);
  }
  SECTION("errors name the file") {
    o.zkey = "/nonexistent/c.zkey";
    CHECK_THAT(error_of<std::runtime_error>([&] { cli::run_prove_circom(o); }), Catch::Matchers::Contains("/nonexistent/c.zkey"));
    o.zkey = (snarkjs_fix() / "small.zkey").string();
    o.wtns = (circom_fix() / "small.r1cs").string();  // not a witness
    CHECK_THAT(error_of<cli::Error>([&] { cli::run_prove_circom(o); }), Catch::Matchers::Contains("small.r1cs"));
  }
}

TEST_CASE("snarkjs JSON: round trips and clear errors for malformed files", "[json]") {
  interop::ZkeyCircuit z = fixture_zkey();
  std::vector<fr_t> wires = fixture_wires();
  interop::Abc abc = interop::compute_abc(z, wires, "small.wtns");
  groth16::Proof p = groth16::prove_cpu(z.pk, interop::make_witness(z, wires, abc), groth16::Randomness::from_seed(9));
  CHECK(interop::proof_from_json(interop::proof_to_json(p), "p.json") == p);
  std::vector<fr_t> pub(wires.begin() + 1, wires.begin() + 3);
  CHECK(interop::public_from_json(interop::public_to_json(pub), "pub.json") == pub);
  groth16::VerifyingKey vk = interop::vk_from_json(interop::vk_to_json(z.pk.vk), "vk.json");
  CHECK(vk.gamma_g2 == z.pk.vk.gamma_g2);

  // snarkjs's own proof file reads and verifies under our verifier
  groth16::Proof theirs = interop::read_proof_json((snarkjs_fix() / "proof.json").string());
  CHECK(groth16::verify(vk, theirs, interop::read_public_json((snarkjs_fix() / "public.json").string())));

  auto jerr = [](auto fn) { return error_of<interop::JsonError>(fn); };
  std::string good = interop::proof_to_json(p);
  CHECK_THAT(jerr([&] { interop::proof_from_json(good.substr(0, good.size() / 2), "p.json"); }),
             Catch::Matchers::StartsWith("p.json:") && Catch::Matchers::Contains("malformed JSON"));
  auto j = nlohmann::json::parse(good);
  j.erase("pi_b");
  CHECK_THAT(jerr([&] { interop::proof_from_json(j.dump(), "p.json"); }), Catch::Matchers::Contains("p.json: pi_b: missing"));
  j = nlohmann::json::parse(good);
  j["pi_c"][1] = "12x4";
  CHECK_THAT(jerr([&] { interop::proof_from_json(j.dump(), "p.json"); }),
             Catch::Matchers::Contains("p.json: pi_c[1]:") && Catch::Matchers::Contains("bad decimal digit"));
  j = nlohmann::json::parse(good);
  j["pi_b"][0][1] = std::string(120, '9');
  CHECK_THAT(jerr([&] { interop::proof_from_json(j.dump(), "p.json"); }), Catch::Matchers::Contains("p.json: pi_b[0][1]:"));
  j = nlohmann::json::parse(good);
  j["pi_a"][0] = "5";  // a number that is no curve point: an invalid proof rather than bad input
  CHECK(error_of<interop::JsonError>([&] { interop::proof_from_json(j.dump(), "p.json"); }).find("pi_a") != std::string::npos);
  try {
    interop::proof_from_json(j.dump(), "p.json");
  } catch (const interop::JsonError& e) {
    CHECK(e.kind() == interop::JsonError::kInvalidPoint);
  }
  j = nlohmann::json::parse(good);
  j["curve"] = "bn128";
  CHECK_THAT(jerr([&] { interop::proof_from_json(j.dump(), "p.json"); }),
             Catch::Matchers::Contains("p.json: curve: is \"bn128\", expected \"bls12381\""));
  CHECK_THAT(jerr([&] { interop::public_from_json("[\"1\", 2, {}]", "pub.json"); }),
             Catch::Matchers::Contains("pub.json: [2]: expected a decimal string"));
  std::string vkj = interop::vk_to_json(z.pk.vk);
  auto v = nlohmann::json::parse(vkj);
  v["nPublic"] = 5;
  CHECK_THAT(jerr([&] { interop::vk_from_json(v.dump(), "vk.json"); }), Catch::Matchers::Contains("vk.json: nPublic: is 5"));
  v = nlohmann::json::parse(vkj);
  v["vk_alphabeta_12"][1][2][0] = "1";
  CHECK_THAT(jerr([&] { interop::vk_from_json(v.dump(), "vk.json"); }), Catch::Matchers::Contains("vk.json: vk_alphabeta_12"));
  v = nlohmann::json::parse(vkj);
  v["IC"][1][1] = v["IC"][1][0];
  CHECK_THAT(jerr([&] { interop::vk_from_json(v.dump(), "vk.json"); }),
             Catch::Matchers::Contains("vk.json: IC[1]: G1 point is not on the curve"));
}

TEST_CASE("cuzk-bench verify: snarkjs's committed proof verifies; altered files are rejected", "[cli]") {
  fs::path d = scratch("verify_cli");
  fs::path vk = snarkjs_fix() / "verification_key.json", proof = snarkjs_fix() / "proof.json",
           pub = snarkjs_fix() / "public.json";
  auto verify = [&](const fs::path& v, const fs::path& pr, const fs::path& pu) {
    auto r = run_command(bench() + " verify --vk " + q(v) + " --proof " + q(pr) + " --public " + q(pu));
    INFO("cuzk-bench verify output:\n" << r.output);
    return r;
  };
  auto r = verify(vk, proof, pub);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("OK") != std::string::npos);

  groth16::Proof p = interop::read_proof_json(proof.string());
  spit(d / "altered_proof.json", interop::proof_to_json(altered(p)));
  CHECK(verify(vk, d / "altered_proof.json", pub).status == 1);
  std::vector<fr_t> publics = interop::read_public_json(pub.string());
  publics[1] += fr_t::one();
  spit(d / "altered_public.json", interop::public_to_json(publics));
  CHECK(verify(vk, proof, d / "altered_public.json").status == 1);
  // an off-curve point in the proof: invalid (1); malformed JSON or a short public file: bad input (2)
  auto j = nlohmann::json::parse(slurp(proof));
  j["pi_a"][1] = "7";
  spit(d / "offcurve.json", j.dump());
  CHECK(verify(vk, d / "offcurve.json", pub).status == 1);
  spit(d / "broken.json", slurp(proof).substr(0, 50));
  r = verify(vk, d / "broken.json", pub);
  CHECK(r.status == 2);
  CHECK(r.output.find("broken.json") != std::string::npos);
  spit(d / "short_public.json", "[\"1\"]");
  r = verify(vk, proof, d / "short_public.json");
  CHECK(r.status == 2);
  CHECK(r.output.find("short_public.json") != std::string::npos);
  r = verify(d / "missing_vk.json", proof, pub);
  CHECK(r.status == 2);
  CHECK(r.output.find("cannot open --vk") != std::string::npos);
  CHECK(r.output.find("missing_vk.json") != std::string::npos);
}

TEST_CASE("snarkjs verifies our proof and key for the PoRep-shaped circuit (our generated keys)", "[npm][interop]") {
  if (!need_snarkjs()) return;
  fs::path d = scratch("porep");
  circuits::PorepCircuit circuit = circuits::PorepCircuit::generate(circuits::PorepParams{1, 0, 0, 2}, 11);
  groth16::ProvingKey pk = groth16::generate_keys(synth::record_matrices(circuit), 11);
  auto pa = synth::prove_assignment(circuit);
  REQUIRE(pa.is_satisfied());
  groth16::Witness w{pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()};
  groth16::Proof p = groth16::prove_cpu(pk, w, groth16::Randomness::from_seed(std::random_device{}()));
  std::vector<fr_t> publics = circuit.public_inputs();
  REQUIRE(groth16::verify(pk.vk, p, publics));
  spit(d / "vk.json", interop::vk_to_json(pk.vk));
  spit(d / "proof.json", interop::proof_to_json(p));
  spit(d / "public.json", interop::public_to_json(publics));
  CHECK(snarkjs_verifies(d / "vk.json", d / "public.json", d / "proof.json"));
  // and snarkjs rejects the altered ones
  spit(d / "proof_bad.json", interop::proof_to_json(altered(p)));
  CHECK_FALSE(snarkjs_verifies(d / "vk.json", d / "public.json", d / "proof_bad.json"));
  publics[0] += fr_t::one();
  spit(d / "public_bad.json", interop::public_to_json(publics));
  CHECK_FALSE(snarkjs_verifies(d / "vk.json", d / "public_bad.json", d / "proof.json"));
}

TEST_CASE("snarkjs verifies our proof from snarkjs's .zkey and circom's .wtns", "[npm][interop]") {
  if (!need_snarkjs()) return;
  fs::path d = scratch("zkey_proof");
  cli::CircomProveOptions o;
  o.zkey = (snarkjs_fix() / "small.zkey").string();
  o.wtns = (circom_fix() / "small.wtns").string();
  o.r1cs = (circom_fix() / "small.r1cs").string();
  o.proof_out = (d / "proof.json").string();
  o.public_out = (d / "public.json").string();
  o.vk_out = (d / "vk.json").string();
  o.quiet = true;  // secure randomness
  REQUIRE(cli::run_prove_circom(o) == cli::kExitOk);
  // under snarkjs's own exported key, and under ours
  CHECK(snarkjs_verifies(snarkjs_fix() / "verification_key.json", d / "public.json", d / "proof.json"));
  CHECK(snarkjs_verifies(d / "vk.json", d / "public.json", d / "proof.json"));
  // our verifier (the CLI) agrees
  auto r = run_command(bench() + " verify --vk " + q(d / "vk.json") + " --proof " + q(d / "proof.json") + " --public " +
                       q(d / "public.json"));
  INFO(r.output);
  CHECK(r.status == 0);
  // altered proof rejected by snarkjs
  spit(d / "proof_bad.json", interop::proof_to_json(altered(interop::read_proof_json(o.proof_out))));
  CHECK_FALSE(snarkjs_verifies(snarkjs_fix() / "verification_key.json", d / "public.json", d / "proof_bad.json"));
}

TEST_CASE("setup_zkey: seeded test keys in snarkjs's format load, prove and verify", "[zkey]") {
  circom::R1csFile r1cs = circom::read_r1cs((circom_fix() / "small.r1cs").string());
  std::vector<uint8_t> bytes = interop::setup_zkey(r1cs, 3);
  CHECK(interop::setup_zkey(r1cs, 3) == bytes);  // deterministic
  CHECK(interop::setup_zkey(r1cs, 4) != bytes);
  interop::ZkeyCircuit z = interop::parse_zkey(bytes, "setup.zkey");
  REQUIRE_NOTHROW(interop::check_r1cs_matches(z, r1cs, "setup.zkey", "small.r1cs"));
  std::vector<fr_t> wires = fixture_wires();
  interop::Abc abc = interop::compute_abc(z, wires, "small.wtns");
  groth16::Proof p = groth16::prove_cpu(z.pk, interop::make_witness(z, wires, abc), groth16::Randomness::from_seed(1));
  std::vector<fr_t> publics(wires.begin() + 1, wires.begin() + 1 + z.n_public);
  CHECK(groth16::verify(z.pk.vk, p, publics));
  publics[0] += fr_t::one();
  CHECK_FALSE(groth16::verify(z.pk.vk, p, publics));
}

TEST_CASE("snarkjs proves with a cuzk-bench zkey-setup key, and both verifiers accept", "[npm][interop]") {
  if (!need_snarkjs()) return;
  fs::path d = scratch("zkey_setup");
  auto r = run_command(bench() + " zkey-setup --r1cs " + q(circom_fix() / "small.r1cs") + " --out " + q(d / "k.zkey") +
                       " --seed 8");
  INFO(r.output);
  REQUIRE(r.status == 0);
  r = run_command(snarkjs().bin + " zkey export verificationkey " + q(d / "k.zkey") + " " + q(d / "vk_snarkjs.json"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  r = run_command(snarkjs().bin + " groth16 prove " + q(d / "k.zkey") + " " + q(circom_fix() / "small.wtns") + " " +
                  q(d / "proof.json") + " " + q(d / "public.json"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(snarkjs_verifies(d / "vk_snarkjs.json", d / "public.json", d / "proof.json"));
  // our reader of snarkjs's export of our key (vk_alphabeta_12 included), and our verifier
  r = run_command(bench() + " verify --vk " + q(d / "vk_snarkjs.json") + " --proof " + q(d / "proof.json") +
                  " --public " + q(d / "public.json"));
  INFO(r.output);
  CHECK(r.status == 0);
}

TEST_CASE("snarkjs JSON: hostile sizes are refused at once", "[json]") {
  auto jerr = [](auto fn) { return error_of<interop::JsonError>(fn); };
  SECTION("a verification key whose IC list disagrees with nPublic: refused before decoding points") {
    auto v = nlohmann::json::parse(interop::vk_to_json(fixture_zkey().pk.vk));
    const nlohmann::json first = v["IC"][0];
    for (int i = 0; i < 2000; i++) v["IC"].push_back(first);
    // The last entry is not a point: a reader that decoded the list before comparing its length
    // with nPublic (200,000 entries took tens of seconds, a subgroup check each) would report it.
    v["IC"].push_back(nlohmann::json::array({"1", "1", "1"}));
    const std::string text = v.dump();
    CHECK_THAT(jerr([&] { interop::vk_from_json(text, "vk.json"); }), Catch::Matchers::Contains("vk.json: nPublic: is "));
  }
  SECTION("a number beyond a double's range (found by fuzz_proof_json, fuzz_public_json, fuzz_vk_json)") {
    CHECK_THAT(jerr([&] { interop::public_from_json("[1e400]", "pub.json"); }),
               Catch::Matchers::Contains("pub.json: malformed JSON"));
    CHECK_THAT(jerr([&] { interop::proof_from_json("{\"pi_a\": 1e400}", "p.json"); }),
               Catch::Matchers::Contains("p.json: malformed JSON"));
  }
  SECTION("nesting deeper than the limit") {
    const std::string deep = "{\"pi_a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
    CHECK_THAT(jerr([&] { interop::proof_from_json(deep, "p.json"); }),
               Catch::Matchers::Contains("p.json: JSON nested 100001 levels deep, over the limit of 64"));
  }
}
