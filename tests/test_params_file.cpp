// The parameter file: round trip through a memory-mapped load, and a clear error for each
// kind of damage (missing, not ours, wrong version, truncated, corrupt, wrong shape).
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "catch.hpp"
#include "prover/circuits/porep.hpp"
#include "prover/groth16/params_file.hpp"
#include "prover/groth16/prover.hpp"
#include "prover/groth16/setup.hpp"
#include "prover/groth16/verifier.hpp"
#include "prover/synth/synth.hpp"
#include "subprocess.hpp"

using namespace cuzk;
using namespace cuzk::groth16;
namespace fs = std::filesystem;

namespace {
struct Files {
  fs::path dir = fs::temp_directory_path() / ("cuzk-params-" + std::to_string(::getpid()));
  Files() { fs::create_directories(dir); }
  ~Files() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

std::vector<char> slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), {});
}
void spit(const std::string& p, const std::vector<char>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(b.data(), std::streamsize(b.size()));
}

const circuits::PorepCircuit& circuit() {
  static auto c = circuits::PorepCircuit::generate(circuits::PorepParams{1, 0, 0, 2}, 11);
  return c;
}
const ProvingKey& key() {
  static ProvingKey pk = generate_keys(synth::record_matrices(circuit()), 99);
  return pk;
}

std::string load_error(const std::string& p) {
  try {
    load_params(p);
  } catch (const ParamsError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("parameters round-trip through the file and prove a verifying proof") {
  Files f;
  const std::string p = f.path("k.params");
  save_params(key(), p);
  ProvingKey loaded = load_params(p);
  REQUIRE(loaded.seed == 99);
  REQUIRE(loaded.num_aux == key().num_aux);
  REQUIRE(loaded.h_query.size() == key().h_query.size());
  REQUIRE(loaded.h_query.back() == key().h_query.back());
  REQUIRE(loaded.vk.delta_g2 == key().vk.delta_g2);
  auto pa = synth::prove_assignment(circuit());
  Witness w{pa.a(), pa.b(), pa.c(), pa.input_assignment(), pa.aux_assignment()};
  Proof a = prove_cpu(loaded, w, Randomness::from_seed(4));
  REQUIRE(a == prove_cpu(key(), w, Randomness::from_seed(4)));
  REQUIRE(verify(loaded.vk, a, circuit().public_inputs()));
  // saving the loaded key gives the same bytes
  save_params(loaded, f.path("again.params"));
  REQUIRE(slurp(p) == slurp(f.path("again.params")));
}

TEST_CASE("damaged parameter files give clear errors") {
  Files f;
  const std::string good = f.path("good.params");
  save_params(key(), good);
  const auto bytes = slurp(good);

  SECTION("missing file") { REQUIRE_THAT(load_error(f.path("nope.params")), Catch::Matchers::Contains("cannot open")); }
  SECTION("not a parameter file") {
    spit(f.path("x"), std::vector<char>(bytes.size(), 'x'));
    REQUIRE_THAT(load_error(f.path("x")), Catch::Matchers::Contains("bad magic"));
  }
  SECTION("wrong version") {
    auto b = bytes;
    b[8] = 7;
    spit(f.path("v"), b);
    REQUIRE_THAT(load_error(f.path("v")), Catch::Matchers::Contains("version 7"));
  }
  SECTION("truncated payload") {
    auto b = bytes;
    b.resize(b.size() - 100);
    spit(f.path("t"), b);
    REQUIRE_THAT(load_error(f.path("t")), Catch::Matchers::Contains("truncated"));
  }
  SECTION("truncated header") {
    spit(f.path("h"), std::vector<char>(bytes.begin(), bytes.begin() + 50));
    REQUIRE_THAT(load_error(f.path("h")), Catch::Matchers::Contains("truncated"));
  }
  SECTION("corrupt payload byte") {
    auto b = bytes;
    b[b.size() / 2] ^= 0x10;
    spit(f.path("c"), b);
    REQUIRE_THAT(load_error(f.path("c")), Catch::Matchers::Contains("corrupt"));
  }
  SECTION("corrupt header count") {
    auto b = bytes;
    b[60] ^= 1;
    spit(f.path("hc"), b);
    REQUIRE_THAT(load_error(f.path("hc")), Catch::Matchers::Contains("corrupt"));
  }
  SECTION("parameters of another circuit shape") {
    ProvingKey pk = load_params(good);
    REQUIRE_THROWS_AS(check_params_shape(pk, pk.num_inputs, pk.num_aux + 1, pk.num_constraints, "the circuit"),
                      ParamsError);
    REQUIRE_NOTHROW(check_params_shape(pk, pk.num_inputs, pk.num_aux, pk.num_constraints, "the circuit"));
  }
  SECTION("an unwritable destination leaves nothing behind") {
    REQUIRE_THROWS_AS(save_params(key(), f.path("no/such/dir/k.params")), ParamsError);
  }
}

TEST_CASE("cuzk-bench srs generate writes parameters that inspect validates; damage is exit 2") {
  const char* bench = std::getenv("CUZK_BENCH");
  if (!bench) {
    WARN("CUZK_BENCH not set: skipping the CLI check");
    return;
  }
  Files f;
  const std::string p = f.path("cli.params");
  auto gen = cuzk::testing::run_command(std::string(bench) + " srs generate --challenges 1 --depth 2 -o " + p);
  INFO(gen.output);
  REQUIRE(gen.status == 0);
  auto ok = cuzk::testing::run_command(std::string(bench) + " srs inspect " + p + " --json");
  REQUIRE(ok.status == 0);
  REQUIRE(ok.output.find("\"num_constraints\"") != std::string::npos);
  auto again = cuzk::testing::run_command(std::string(bench) + " srs generate --challenges 1 --depth 2 -o " + p);
  REQUIRE(again.status == 2);  // refuses to replace without --force
  auto b = slurp(p);
  b.resize(b.size() / 2);
  spit(p, b);
  auto bad = cuzk::testing::run_command(std::string(bench) + " srs inspect " + p);
  REQUIRE(bad.status == 2);
  REQUIRE(bad.output.find("truncated") != std::string::npos);
}

namespace {
// Offsets of header fields (params_file.hpp): domain_size, the H count, the header checksum.
constexpr size_t kDomainOffset = 40, kNhOffset = 88, kNlOffset = 96, kHeaderChecksumOffset = 128;
uint64_t get_u64(const std::vector<char>& b, size_t off) {
  uint64_t v;
  std::memcpy(&v, b.data() + off, 8);
  return v;
}
// Sets a header field and recomputes the header checksum, as a deliberate forger would: only
// the reader's own validation stands between such a file and the prover.
void forge_u64(std::vector<char>& b, size_t off, uint64_t v) {
  std::memcpy(b.data() + off, &v, 8);
  const uint64_t sum = params_checksum(b.data(), kHeaderChecksumOffset);
  std::memcpy(b.data() + kHeaderChecksumOffset, &sum, 8);
}
}  // namespace

TEST_CASE("forged header counts and domains are refused, not read past the mapping") {
  Files f;
  const std::string good = f.path("good.params");
  save_params(key(), good);
  const auto bytes = slurp(good);

  SECTION("an H count raised by 2^61: its byte size wraps to the same payload size") {
    auto b = bytes;
    forge_u64(b, kNhOffset, get_u64(b, kNhOffset) + (uint64_t(1) << 61));
    spit(f.path("nh"), b);
    REQUIRE_THAT(load_error(f.path("nh")), Catch::Matchers::Contains("corrupt parameter file"));
  }
  SECTION("an L count raised by 2^61: the size check must not overflow") {
    auto b = bytes;
    forge_u64(b, kNlOffset, get_u64(b, kNlOffset) + (uint64_t(1) << 61));
    spit(f.path("nl"), b);
    REQUIRE_THAT(load_error(f.path("nl")), Catch::Matchers::Contains("payload size disagrees with the point counts"));
  }
  SECTION("a domain above 2^63") {
    auto b = bytes;
    forge_u64(b, kDomainOffset, (uint64_t(1) << 63) + 1);
    spit(f.path("dom"), b);
    REQUIRE_THAT(load_error(f.path("dom")), Catch::Matchers::Contains("domain size 9223372036854775809"));
  }
  SECTION("a domain that is not a power of two") {
    auto b = bytes;
    forge_u64(b, kDomainOffset, get_u64(b, kDomainOffset) + 1);
    spit(f.path("dom2"), b);
    REQUIRE_THAT(load_error(f.path("dom2")), Catch::Matchers::Contains("is not a power of two"));
  }
}

TEST_CASE("compute_h refuses a domain beyond Fr's 2-adicity instead of looping") {
  Witness w;
  REQUIRE_THROWS_AS(compute_h(HConvention::kBellman, w, (uint64_t(1) << 63) + 1), std::invalid_argument);
  REQUIRE_THROWS_AS(compute_h(HConvention::kBellman, w, 0), std::invalid_argument);
}
