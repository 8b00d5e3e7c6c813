// One small matrix folder and the states a matrix that did not complete leaves, for the tests of
// `matrix --from` and `matrix --resume` on such folders (tests/test_matrix_partial.cpp,
// tests/test_matrix_resume.cpp). The matrix is run once per test binary (3 variants, 1 warm-up
// and 3 measured rounds, one binary: --bin); each case copies its folder and puts it in the state
// an interruption leaves, as the matrix writes it (the round files after the stop deleted or cut
// short, the manifest's status set, no merged results or attribution), so that nothing depends on
// timing.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_util.hpp"

namespace cuzk::test::matrix_folders {

using nlohmann::json;

struct Finished {
  std::string dir, out;  // the matrix folder, and what the run printed
};

// The finished matrix every case starts from, run once: rounds 0 (warm-up) and 1-3 (measured).
inline const Finished& finished_matrix() {
  static TempDir d;
  static const Finished f = [] {
    REQUIRE(share_params_cache(d));
    auto r = run_bench("matrix --variants baseline,pinned,smallvec --bin '" + bench() +
                           "' --allow-dirty --suite quick --case porep-tiny --quick --rounds 3 --warmup 1 --reps 1 --seed 5"
                           " --out-dir m",
                       d.path());
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    return Finished{d.file("m"), r.out};
  }();
  return f;
}

inline json manifest_of(const std::string& dir) { return json::parse(slurp(dir + "/manifest.json")); }
inline void write_manifest(const std::string& dir, const json& m) { spit(dir + "/manifest.json", m.dump(2) + "\n"); }

inline std::vector<std::string> variant_names(const json& m) {
  std::vector<std::string> out;
  for (const auto& v : m.at("variants")) out.push_back(v.at("name"));
  return out;
}

inline std::string round_file(const std::string& dir, const std::string& v, int round) {
  return dir + "/rounds/" + v + "-" + std::to_string(round) + ".jsonl";
}

// A copy of the finished matrix in `d`/m, stopped at the run in position `pos` of round `round`:
// the round files of every later run deleted (that run's own file kept), no merged results and no
// attribution, the manifest's status `status` (the completion fields removed). Returns the folder.
inline std::string stopped_copy(const TempDir& d, int round, size_t pos, const std::string& status) {
  const std::string dir = d.file("m");
  REQUIRE(std::system(("cp -r '" + finished_matrix().dir + "' '" + dir + "'").c_str()) == 0);
  json m = manifest_of(dir);
  REQUIRE(m.at("status") == "complete");
  const json& order = m.at("order");
  for (size_t r = 0; r < order.size(); ++r)
    for (size_t p = 0; p < order[r].size(); ++p)
      if (int(r) > round || (int(r) == round && p > pos)) REQUIRE(std::remove(round_file(dir, order[r][p], int(r)).c_str()) == 0);
  REQUIRE(std::system(("rm -r '" + dir + "/variants' '" + dir + "/attribution.json' '" + dir + "/attribution.md' && mkdir '" +
                       dir + "/variants'")
                          .c_str()) == 0);
  m["status"] = status;
  for (const char* k : {"finished", "elapsed_s", "runs", "runs_ok"}) m.erase(k);
  write_manifest(dir, m);
  return dir;
}

// The variant in position `pos` of round `round`.
inline std::string at(const std::string& dir, int round, size_t pos) { return manifest_of(dir).at("order").at(round).at(pos); }

// The position of variant `v` in round `round`.
inline size_t position(const std::string& dir, int round, const std::string& v) {
  const json o = manifest_of(dir).at("order").at(round);
  return size_t(std::find(o.begin(), o.end(), v) - o.begin());
}

// The rounds ("round_id") of the samples of the merged results of `v`: measured or warm-up.
inline std::set<int> merged_rounds(const std::string& dir, const std::string& v, bool warmup) {
  std::set<int> out;
  for (const auto& line : lines_of(slurp(dir + "/variants/" + v + ".jsonl"))) {
    const json s = json::parse(line);
    if (s.at("type") == "sample" && s.at("warmup") == warmup) out.insert(s.at("round_id").get<int>());
  }
  return out;
}

}  // namespace cuzk::test::matrix_folders
