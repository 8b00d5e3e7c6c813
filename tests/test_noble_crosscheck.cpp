// Cross-check against an independent implementation: @noble/curves (JavaScript, BigInt
// arithmetic) from the npm registry, installed by this test into the build tree.
// Agreement is checked on random scalar multiples of the G1 and G2 generators (compressed
// encodings), on the decoding and re-encoding of random points, and on pairing values (all 12
// Fp coefficients, order documented in tests/interop/noble/crosscheck.mjs).
// Where node or npm is missing, or the registry cannot be reached, the test prints
// "NOBLE-SKIPPED: <why>" and returns; ctest reports it as skipped (tests/cmake/noble.cmake).
// Set CUZK_REQUIRE_NOBLE=1 to turn a failed install into a failure.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "prover/ec/serialize.hpp"
#include "prover/pairing/pairing.hpp"

using namespace cuzk;
namespace fs = std::filesystem;

namespace {

// Pinned; keep equal to tests/interop/noble/package.json. 1.9.x exports bls12_381 from
// '@noble/curves/bls12-381' (ESM) with the ProjectivePoint API used by crosscheck.mjs.
constexpr const char* noble_version = "1.9.7";

uint64_t fresh_seed() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) | rd();
}

std::string scalar_hex(const fr_t& s) {
  uint64_t k[4];
  s.to_canonical(k);
  char buf[65];
  std::snprintf(buf, sizeof buf, "%016llx%016llx%016llx%016llx", (unsigned long long)k[3],
                (unsigned long long)k[2], (unsigned long long)k[1], (unsigned long long)k[0]);
  return buf;
}

fr_t nonzero_scalar(std::mt19937_64& rng) {
  for (;;)
    if (fr_t s = fr_t::random(rng); !s.is_zero()) return s;
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool have(const char* tool) {
  return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0;
}

void skip(const std::string& why) {
  std::printf("NOBLE-SKIPPED: %s\n", why.c_str());
  std::fflush(stdout);
  WARN("NOBLE-SKIPPED: " << why);
}

std::vector<std::string> split(const std::string& line) {
  std::istringstream is(line);
  std::vector<std::string> out;
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> fp12_coeffs_hex(const fp12_t& f) {
  std::vector<std::string> out;
  for (const fp6_t* c6 : {&f.c0, &f.c1})
    for (const fp2_t* c2 : {&c6->c0, &c6->c1, &c6->c2})
      for (const fp_t* c : {&c2->c0, &c2->c1}) {
        uint8_t b[48];
        c->to_bytes_be(b);
        out.push_back(to_hex(b, 48));
      }
  return out;
}

}  // namespace

TEST_CASE("agreement with @noble/curves bls12_381", "[noble][interop]") {
  if (!have("node") || !have("npm")) {
    skip("node or npm not found on PATH; install Node.js >= 18 to run the noble cross-check");
    return;
  }
  fs::path dir = fs::path(CUZK_BUILD_DIR) / "noble";
  fs::path script_src = fs::path(CUZK_SOURCE_DIR) / "tests/interop/noble/crosscheck.mjs";
  fs::create_directories(dir);
  fs::path installed = dir / "node_modules/@noble/curves/package.json";
  bool present = fs::exists(installed) &&
                 read_file(installed).find(std::string("\"version\": \"") + noble_version + "\"") !=
                     std::string::npos;
  if (!present) {
    std::string cmd = "npm install --prefix '" + dir.string() + "' --no-audit --no-fund @noble/curves@" +
                      noble_version + " > '" + (dir / "npm-install.log").string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::string log = read_file(dir / "npm-install.log");
      INFO("npm install failed:\n" << log);
      const char* req = std::getenv("CUZK_REQUIRE_NOBLE");
      if (req && std::string(req) == "1") FAIL("npm install @noble/curves failed (CUZK_REQUIRE_NOBLE=1)");
      skip("npm install @noble/curves@" + std::string(noble_version) + " failed (offline?): see " +
           (dir / "npm-install.log").string());
      return;
    }
  }
  // The script must sit next to node_modules for ESM resolution.
  fs::copy_file(script_src, dir / "crosscheck.mjs", fs::copy_options::overwrite_existing);

  uint64_t seed = fresh_seed();
  INFO("seed = " << seed);
  std::mt19937_64 rng(seed);
  g1_jacobian_t g1 = g1_jacobian_t::from_affine(g1_generator());
  g2_jacobian_t g2 = g2_jacobian_t::from_affine(g2_generator());

  std::ostringstream req;
  std::vector<std::string> expect;  // what cuzk computes, line by line
  std::vector<std::string> what;
  for (int i = 0; i < 8; i++) {
    fr_t k = nonzero_scalar(rng);
    req << "g1mul " << scalar_hex(k) << "\n";
    expect.push_back(to_hex(g1_compress(g1.mul(k).to_affine())));
    what.push_back("g1mul " + scalar_hex(k));
  }
  for (int i = 0; i < 8; i++) {
    fr_t k = nonzero_scalar(rng);
    req << "g2mul " << scalar_hex(k) << "\n";
    expect.push_back(to_hex(g2_compress(g2.mul(k).to_affine())));
    what.push_back("g2mul " + scalar_hex(k));
  }
  for (int i = 0; i < 4; i++) {
    g1_affine_t p = g1.mul(nonzero_scalar(rng)).to_affine();
    uint8_t u[96];
    g1_to_uncompressed(p, u);
    req << "g1dec " << to_hex(u, 96) << "\n";
    expect.push_back(to_hex(g1_compress(p)) + " " + to_hex(u, 96));
    what.push_back("g1dec " + to_hex(u, 96));
    g2_affine_t q = g2.mul(nonzero_scalar(rng)).to_affine();
    uint8_t v[192];
    g2_to_uncompressed(q, v);
    req << "g2dec " << to_hex(v, 192) << "\n";
    expect.push_back(to_hex(g2_compress(q)) + " " + to_hex(v, 192));
    what.push_back("g2dec " + to_hex(v, 192));
  }
  for (int i = 0; i < 2; i++) {
    fr_t a = nonzero_scalar(rng), b = nonzero_scalar(rng);
    req << "pair " << scalar_hex(a) << " " << scalar_hex(b) << "\n";
    fp12_t e = pairing(g1.mul(a).to_affine(), g2.mul(b).to_affine());
    // our own bilinearity check, mirrored by noble's "bilinear" token
    REQUIRE(e == pairing(g1.mul(a * b).to_affine(), g2_generator()));
    std::string line;
    for (auto& c : fp12_coeffs_hex(e)) line += c + " ";
    expect.push_back(line + "bilinear");
    what.push_back("pair " + scalar_hex(a) + " " + scalar_hex(b));
  }

  fs::path in = dir / "requests.txt", out = dir / "answers.txt", err = dir / "node-stderr.txt";
  std::ofstream(in) << req.str();
  fs::remove(out);
  std::string cmd = "cd '" + dir.string() + "' && node crosscheck.mjs '" + in.string() + "' '" +
                    out.string() + "' 2> '" + err.string() + "'";
  int rc = std::system(cmd.c_str());
  INFO("node stderr:\n" << read_file(err));
  REQUIRE(rc == 0);

  std::istringstream answers(read_file(out));
  std::vector<std::string> got;
  for (std::string line; std::getline(answers, line);)
    if (!line.empty()) got.push_back(line);
  REQUIRE(got.size() == expect.size());
  for (size_t i = 0; i < expect.size(); i++) {
    INFO("request " << i << ": " << what[i]);
    REQUIRE(split(got[i]) == split(expect[i]));
  }
}
