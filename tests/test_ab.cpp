// `cuzk-bench ab` with prebuilt binaries (--bin-a/--bin-b): it refuses a binary whose sources
// changed after it was built, refuses one built by another preset, and with a matching
// binary runs the quick suite interleaved and ends in the comparison table.
//
// The passing case needs this build's cuzk-bench to be fresh against CUZK_SOURCE_DIR (as
// after any build of the tree: the embedded source hash is recomputed at build time).
#include "catch.hpp"
#include "harness/measure/results.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;

namespace {

std::string source_dir() {
  const char* s = std::getenv("CUZK_SOURCE_DIR");
  return s && *s ? s : CUZK_SOURCE_DIR;
}

std::string bin() { return cuzk::test::bench(); }

}  // namespace

TEST_CASE("ab refuses a binary whose sources changed after it was built") {
  TempDir d;
  const std::string tree = d.file("tree");
  // A copy of the sources the hash covers, then one source file modified.
  const std::string src = source_dir();
  std::string cp = "mkdir -p '" + tree + "' && cd '" + src + "' && cp -r CMakeLists.txt CMakePresets.json prover harness daemon cmake suites '" +
                   tree + "/' && (test ! -d cuda || cp -r cuda '" + tree + "/')";
  REQUIRE(std::system(cp.c_str()) == 0);
  {
    std::ofstream f(tree + "/harness/suite/suite.cpp", std::ios::app);
    f << "\n// modified after the build\n";
  }
  auto r = cuzk::test::run_bench("ab --bin-a '" + bin() + "' --bin-b '" + bin() + "' --source-dir '" + tree +
                                     "' --suite quick --quick --rounds 1 --warmup 0 --out-dir ab",
                                 d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find(bin() + " is stale: built from sources ") != std::string::npos);
  CHECK(r.err.find(", the tree is now ") != std::string::npos);
  CHECK(!cuzk::test::exists(d.file("ab")));  // refused before running anything
}

TEST_CASE("ab refuses a binary built by another preset than the one asked for") {
  TempDir d;
  auto r = cuzk::test::run_bench("ab --a smallvec --b baseline --bin-a '" + bin() + "' --bin-b '" + bin() +
                                     "' --source-dir '" + source_dir() + "' --suite quick --rounds 1 --out-dir ab",
                                 d.path());
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  // Either stale (the tree moved on since this build) or the preset check: both refuse.
  const bool preset_refused = r.err.find("not 'smallvec' as asked") != std::string::npos;
  const bool stale = r.err.find("is stale") != std::string::npos;
  CHECK((preset_refused || stale));
  CHECK(!cuzk::test::exists(d.file("ab")));
}

TEST_CASE("ab refuses a --cmake-arg that is not -D or that overrides a variant's flag, before building") {
  TempDir d;
  struct Bad {
    std::string args, expect;
  };
  const std::string ab = "ab --a baseline --b pinned --source-dir '" + source_dir() + "' --suite quick --out-dir ab ";
  for (const Bad& c : {Bad{"--cmake-arg=-GNinja", "expected -DNAME=VALUE"},
                       Bad{"--cmake-arg=-DCUZK_PINNED_HOST=ON", "preset 'baseline' sets CUZK_PINNED_HOST itself"},
                       Bad{"--cmake-arg=-DCUZK_CUDA=OFF --no-build", "--cmake-arg applies to builds"}}) {
    auto r = cuzk::test::run_bench(ab + c.args, d.path());
    INFO(c.args << "\n" << r.out << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.expect) != std::string::npos);
    CHECK(!cuzk::test::exists(d.file("ab")));
  }
}

TEST_CASE("ab with a matching binary runs the quick suite interleaved and compares") {
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  auto r = cuzk::test::run_bench("ab --bin-a '" + bin() + "' --bin-b '" + bin() + "' --source-dir '" + source_dir() +
                                     "' --suite quick --quick --case porep-tiny --rounds 1 --warmup 1 --out-dir ab",
                                 d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("round 2/2 variant B") != std::string::npos);
  CHECK(r.out.find("proof") != std::string::npos);  // the comparison table's phase rows
  CHECK(r.out.find("results: ab") != std::string::npos);
  for (const char* v : {"a", "b"}) {
    auto f = cuzk::read_results(d.file(std::string("ab/") + v + ".jsonl"));
    REQUIRE(f.summary.has_value());
    size_t warm = 0, measured = 0;
    for (auto& s : f.samples) (s.value["warmup"].get<bool>() ? warm : measured)++;
    CHECK(warm > 0);
    CHECK(measured > 0);
    CHECK(warm == measured);  // one warm-up round, one measured round
  }
  CHECK(cuzk::test::exists(d.file("ab/rounds/a-0.jsonl")));
  CHECK(cuzk::test::exists(d.file("ab/rounds/b-1.jsonl")));
  CHECK(cuzk::test::exists(d.file("ab/ab.json")));
}
