// Build provenance: the source hash follows the sources, and the binary under test embeds
// the hash of the tree it was built from (the guard against measuring a stale binary).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "catch.hpp"
#include "harness/measure/provenance.hpp"
#include "subprocess.hpp"

namespace fs = std::filesystem;
using cuzk::testing::run_command;

static std::string src_dir() { return cuzk::testing::env_or("CUZK_SOURCE_DIR", CUZK_SOURCE_DIR); }

static std::string hash_of_tree(const std::string& dir) {
  auto r = run_command("cmake -DSRC_DIR=" + dir + " -DPRINT_HASH=1 -P " + src_dir() + "/cmake/provenance_gen.cmake");
  REQUIRE(r.status == 0);
  std::string h = r.output.substr(0, r.output.find_first_of("\r\n"));
  REQUIRE(std::regex_match(h, std::regex("[0-9a-f]{64}")));
  return h;
}

static fs::path fresh_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("cuzk-prov-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST_CASE("the embedded source hash is the hash of the tree this binary was built from") {
  const auto& p = cuzk::build_provenance();
  INFO("rebuild if this fails: the binary is stale against the sources");
  REQUIRE(std::string(p.source_hash) == hash_of_tree(src_dir()));
  REQUIRE(p.source_files > 0);
}

TEST_CASE("a relative source folder hashes the same tree; a folder without sources is an error") {
  const fs::path src = fs::canonical(src_dir());
  const std::string script = (src / "cmake" / "provenance_gen.cmake").string();
  const std::string absolute = hash_of_tree(src.string());
  auto rel = run_command("cd " + src.parent_path().string() + " && cmake -DSRC_DIR=" + src.filename().string() +
                         " -DPRINT_HASH=1 -P " + script);
  REQUIRE(rel.status == 0);
  CHECK(rel.output.substr(0, 64) == absolute);
  auto dot = run_command("cd " + src.string() + " && cmake -DSRC_DIR=. -DPRINT_HASH=1 -P " + script);
  REQUIRE(dot.status == 0);
  CHECK(dot.output.substr(0, 64) == absolute);
  const fs::path empty = fresh_dir("empty");
  std::ofstream(empty / "CMakeLists.txt") << "# not a cuzk tree\n";
  auto none = run_command("cmake -DSRC_DIR=" + empty.string() + " -DPRINT_HASH=1 -P " + script);
  CHECK(none.status != 0);
  CHECK(none.output.find("not a cuzk tree") != std::string::npos);
  fs::remove_all(empty);
}

TEST_CASE("provenance records every variant flag") {
  auto flags = cuzk::provenance_flags(cuzk::build_provenance());
  for (const char* f : {"CUZK_PINNED_HOST", "CUZK_SMALLVEC", "CUZK_PRESIZE", "CUZK_GPU_SPARE_CORE", "CUZK_GPU_G2",
                        "CUZK_GPU_OVERLAP", "CUZK_CUDA", "CUZK_PAPI", "CUZK_NVTX"}) {
    INFO(f);
    REQUIRE(flags.count(f) == 1);
  }
}

TEST_CASE("changing a source file and rebuilding changes the source hash; docs do not") {
  // A copy of the tree configured and built for just the provenance library: the real
  // build-time path (cmake -P at every build, copy_if_different), not a re-implementation.
  fs::path copy = fresh_dir("tree");
  for (const char* d : {"prover", "harness", "daemon", "cmake", "cuda", "tests", "suites"}) {
    if (fs::exists(fs::path(src_dir()) / d))
      fs::copy(fs::path(src_dir()) / d, copy / d, fs::copy_options::recursive);
  }
  fs::copy_file(fs::path(src_dir()) / "CMakeLists.txt", copy / "CMakeLists.txt");
  fs::path build = copy / "build";
  auto cfg = run_command("cmake -S " + copy.string() + " -B " + build.string() +
                         " -G Ninja -DCUZK_CUDA=OFF -DCUZK_PAPI=OFF -DBUILD_TESTING=OFF");
  INFO(cfg.output);
  REQUIRE(cfg.status == 0);
  auto built_hash = [&] {
    auto b = run_command("cmake --build " + build.string() + " --target cuzk_provenance");
    INFO(b.output);
    REQUIRE(b.status == 0);
    std::ifstream in(build / "generated" / "provenance.cpp");
    std::string text((std::istreambuf_iterator<char>(in)), {});
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex("\"([0-9a-f]{64})\"")));
    return m[1].str();
  };
  const std::string h0 = built_hash();
  REQUIRE(h0 == hash_of_tree(copy.string()));
  REQUIRE(built_hash() == h0);  // rebuilding an unchanged tree keeps the hash

  { std::ofstream(copy / "prover" / "instr" / "phase.cpp", std::ios::app) << "\n// touched\n"; }
  const std::string h1 = built_hash();
  REQUIRE(h1 != h0);

  { std::ofstream(copy / "prover" / "NOTES.md") << "documentation only\n"; }
  REQUIRE(built_hash() == h1);
  fs::remove_all(copy);
}

TEST_CASE("cuzk-bench info --json reports provenance, machine and counters") {
  std::string bench = cuzk::testing::env_or("CUZK_BENCH", std::string(CUZK_BUILD_DIR) + "/harness/cuzk-bench");
  auto r = run_command(bench + " info --json 2>/dev/null");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.output);
  REQUIRE(j["provenance"]["source_hash"] == cuzk::build_provenance().source_hash);
  REQUIRE(j["provenance"]["flags"].contains("CUZK_SMALLVEC"));
  REQUIRE(j["machine"]["logical_cpus"].get<int>() > 0);
  REQUIRE(j["machine"]["memory_bytes"].get<uint64_t>() > 0);
  REQUIRE(j["counters"].is_array());
  for (auto& c : j["counters"]) {
    INFO(c.dump());
    // an unavailable counter always says why
    REQUIRE((c["available"].get<bool>() || !c["reason"].get<std::string>().empty()));
  }
}

TEST_CASE("cuzk-bench rejects an unknown subcommand and an unknown flag with exit 2") {
  std::string bench = cuzk::testing::env_or("CUZK_BENCH", std::string(CUZK_BUILD_DIR) + "/harness/cuzk-bench");
  auto a = run_command(bench + " no-such-command");
  REQUIRE(a.status == 2);
  auto b = run_command(bench + " info --no-such-flag");
  REQUIRE(b.status == 2);
  REQUIRE(b.output.find("no-such-flag") != std::string::npos);
}
