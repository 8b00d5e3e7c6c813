// Replays every input under tests/fixtures/fuzz/<target>/ (crashes scripts/fuzz.sh found, and
// hostile-size files) through the fuzz targets' entry points (tests/fuzz/entry_points.hpp): each must
// parse or be refused with its reader's error type, without one allocation out of proportion to
// its size. A crash, a hang (ctest's timeout) or any other exception fails the test.
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "catch.hpp"
#include "tests/fuzz/entry_points.hpp"

namespace fs = std::filesystem;

// The largest single allocation through operator new since the last reset. A reader that
// allocates what a header declares before checking the bytes that would hold it shows here,
// even where the allocation succeeds (fuzz_zkey found a 6 KB .zkey that made parse_zkey allocate
// 2 x 256 MiB of CSR row pointers for a row number the file only claimed).
namespace {
std::atomic<size_t> g_largest{0};
// A reader may allocate this much in one piece from an input of `bytes` bytes.
size_t allocation_allowance(size_t bytes) { return (size_t(64) << 20) + 64 * bytes; }
}  // namespace

void* operator new(size_t n) {
  for (size_t cur = g_largest.load(std::memory_order_relaxed); n > cur && !g_largest.compare_exchange_weak(cur, n);) {
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

TEST_CASE("fuzz regressions replay without a crash") {
  const fs::path root = fs::path(CUZK_SOURCE_DIR) / "tests" / "fixtures" / "fuzz";
  size_t replayed = 0;
  for (const auto& t : cuzk::fuzz::targets()) {
    const fs::path dir = root / std::string(t.name);
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      REQUIRE(in);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      INFO("target " << t.name << ", input " << e.path().string() << " (" << bytes.size() << " bytes)");
      g_largest = 0;
      REQUIRE_NOTHROW(t.run(bytes));
      INFO("largest single allocation " << g_largest.load() << " bytes");
      CHECK(g_largest.load() <= allocation_allowance(bytes.size()));
      ++replayed;
    }
  }
  // a directory named after no target would be silently skipped: every one must be a target
  for (const auto& e : fs::directory_iterator(root)) {
    bool known = false;
    for (const auto& t : cuzk::fuzz::targets()) known = known || e.path().filename() == std::string(t.name);
    INFO("tests/fixtures/fuzz/" << e.path().filename().string());
    CHECK(known);
  }
  CHECK(replayed > 0);
}

TEST_CASE("the committed seed corpora parse or are refused cleanly") {
  const fs::path root = fs::path(CUZK_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  for (const auto& t : cuzk::fuzz::targets()) {
    const fs::path dir = root / std::string(t.name);
    REQUIRE(fs::is_directory(dir));
    for (const auto& e : fs::directory_iterator(dir)) {
      std::ifstream in(e.path(), std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      INFO("target " << t.name << ", seed " << e.path().string() << " (" << bytes.size() << " bytes)");
      g_largest = 0;
      REQUIRE_NOTHROW(t.run(bytes));
      INFO("largest single allocation " << g_largest.load() << " bytes");
      CHECK(g_largest.load() <= allocation_allowance(bytes.size()));
    }
  }
}
