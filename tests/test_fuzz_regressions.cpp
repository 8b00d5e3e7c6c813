// Replays every input under tests/fixtures/fuzz/<target>/ (crashes scripts/fuzz.sh found, and
// hostile-size files) through the fuzz targets' entry points (tests/fuzz/entry_points.hpp): each must
// parse or be refused with its reader's error type. A crash, a hang (ctest's timeout) or any
// other exception fails the test.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "catch.hpp"
#include "tests/fuzz/entry_points.hpp"

namespace fs = std::filesystem;

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
      INFO("target " << t.name << ", input " << e.path().string());
      REQUIRE_NOTHROW(t.run(bytes));
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
      INFO("target " << t.name << ", seed " << e.path().string());
      REQUIRE_NOTHROW(t.run(bytes));
    }
  }
}
