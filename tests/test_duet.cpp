// Duet runs (harness/measure/duet.hpp, docs/ab.md "Duet"): the CPU halves, `ab --duet` (both
// sides overlap in time, each on its assigned half, halves swapped between rounds, the relative
// note in every output), the refusal on one CPU, a failing partner that does not hang the other,
// and calibrate's draws (unpaired and paired side by side, and from a duet pool).
//
// Needs at least 2 CPUs for the runs; on fewer, those cases say so and check the refusal only.
// No timing assertion is tight: "overlap" means the two sides' sample intervals intersect.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "harness/measure/duet.hpp"
#include "harness/measure/results.hpp"
#include "prover/util/cpu_placement.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;
using nlohmann::json;

namespace {

std::string src_dir() {
  const char* s = std::getenv("CUZK_SOURCE_DIR");
  return s && *s ? s : CUZK_SOURCE_DIR;
}

bool two_cpus() { return cuzk::placement::allowed_cpus().size() >= 2; }

// selfmeasure's smallest run: no warm-up, 1 MiB touched, no spans.
const char* kTinyWorkload = " --warmup 0 --touch-mib 1 --no-spans";

}  // namespace

TEST_CASE("duet halves: equal, disjoint, within the CPU set, swapped every round", "[duet]") {
  using cuzk::duet::Halves;
  for (const std::vector<int>& cpus : {std::vector<int>{0, 1}, std::vector<int>{0, 1, 2}, std::vector<int>{0, 1, 2, 3}}) {
    const Halves h = cuzk::duet::split_halves(cpus);
    INFO(cuzk::placement::cpu_list(cpus));
    CHECK(!h.first.empty());
    CHECK(h.first.size() == h.second.size());
    std::vector<int> all = h.first;
    all.insert(all.end(), h.second.begin(), h.second.end());
    all.insert(all.end(), h.unused.begin(), h.unused.end());
    std::sort(all.begin(), all.end());
    CHECK(all == cpus);  // every CPU once: in a half or left over
    CHECK(&cuzk::duet::side_cpus(h, 0, 0) == &h.first);
    CHECK(&cuzk::duet::side_cpus(h, 0, 1) == &h.second);
    CHECK(&cuzk::duet::side_cpus(h, 1, 0) == &h.second);
    CHECK(&cuzk::duet::side_cpus(h, 1, 1) == &h.first);
  }
  CHECK_THROWS_AS(cuzk::duet::split_halves({3}), std::invalid_argument);
}

TEST_CASE("ab --duet on one CPU: one line, exit 2, nothing written", "[duet]") {
  TempDir d;
  auto r = cuzk::test::run_bench("ab --duet --bin-a '" + cuzk::test::bench() + "' --bin-b '" + cuzk::test::bench() +
                                     "' --source-dir '" + src_dir() + "' --suite quick --quick --rounds 1 --out-dir ab",
                                 d.path(), "taskset -c 0");
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(cuzk::test::lines_of(r.err).size() == 1);
  CHECK(r.err.find("cuzk-bench: error: --duet needs at least 2 CPUs") != std::string::npos);
  CHECK(!cuzk::test::exists(d.file("ab")));
  // --stable places threads over every CPU itself: refused with --duet, also before anything.
  auto s = cuzk::test::run_bench("ab --duet --stable --bin-a '" + cuzk::test::bench() + "' --bin-b '" +
                                     cuzk::test::bench() + "' --suite quick --out-dir ab",
                                 d.path());
  CHECK(s.code == 2);
  CHECK(s.err.find("--duet and --stable") != std::string::npos);
  CHECK(!cuzk::test::exists(d.file("ab")));
}

TEST_CASE("ab --duet: both sides overlap, each on its half, halves swapped between rounds", "[duet]") {
  if (!two_cpus()) {
    WARN("fewer than 2 CPUs here: ab --duet is refused (checked above)");
    return;
  }
  TempDir d;
  REQUIRE(cuzk::test::share_params_cache(d));
  auto r = cuzk::test::run_bench("ab --duet --bin-a '" + cuzk::test::bench() + "' --bin-b '" + cuzk::test::bench() +
                                     "' --source-dir '" + src_dir() +
                                     "' --suite quick --quick --case porep-tiny --rounds 2 --warmup 0 --reps 2 "
                                     "--out-dir ab",
                                 d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("relative question at half the cores") != std::string::npos);
  CHECK(cuzk::test::slurp(d.file("ab/comparison.md")).find("relative question at half the cores") != std::string::npos);
  const json meta = json::parse(cuzk::test::slurp(d.file("ab/ab.json")));
  REQUIRE(meta.contains("duet"));
  CHECK(meta["duet"]["note"].get<std::string>().find("half the cores") != std::string::npos);
  REQUIRE(meta["duet"]["rounds"].size() == 2);
  std::vector<int> a_cpus[2];
  for (int round = 0; round < 2; ++round) {
    const json& m = meta["duet"]["rounds"][round];
    auto fa = cuzk::read_results(d.file("ab/rounds/a-" + std::to_string(round) + ".jsonl"));
    auto fb = cuzk::read_results(d.file("ab/rounds/b-" + std::to_string(round) + ".jsonl"));
    // Each process ran on exactly the CPUs assigned to its side this round, and the sides' halves
    // do not overlap.
    const json& ha = fa.header.value["duet"];
    const json& hb = fb.header.value["duet"];
    CHECK(ha["side"] == "a");
    CHECK(hb["side"] == "b");
    CHECK(ha["cpus"] == ha["cpus_assigned"]);
    CHECK(hb["cpus"] == hb["cpus_assigned"]);
    CHECK(ha["cpus"] == m["a_cpus"]);
    CHECK(hb["cpus"] == m["b_cpus"]);
    for (int c : ha["cpus"].get<std::vector<int>>())
      CHECK(std::find(hb["cpus"].begin(), hb["cpus"].end(), c) == hb["cpus"].end());
    a_cpus[round] = ha["cpus"].get<std::vector<int>>();
    // Sample by sample (the barrier's sequence), the two sides' intervals intersect.
    std::map<int, json> a_by_seq;
    for (auto& s : fa.samples) a_by_seq[s.value["duet"]["sequence"].get<int>()] = s.value["duet"];
    int matched = 0;
    for (auto& s : fb.samples) {
      const json& db = s.value["duet"];
      CHECK(db["round"] == round);
      if (s.value.contains("round_id")) CHECK(s.value["round_id"] == round);
      auto it = a_by_seq.find(db["sequence"].get<int>());
      REQUIRE(it != a_by_seq.end());
      const json& da = it->second;
      CHECK(da["start_ns"].get<uint64_t>() < db["end_ns"].get<uint64_t>());
      CHECK(db["start_ns"].get<uint64_t>() < da["end_ns"].get<uint64_t>());
      ++matched;
    }
    CHECK(matched == 2);  // --reps 2, no warm-up: two simultaneous samples
  }
  CHECK(a_cpus[0] != a_cpus[1]);  // A moved to the other half in round 1
  // The merged files keep the per-sample duet record (compare pairs them by round_id).
  auto merged = cuzk::read_results(d.file("ab/a.jsonl"));
  CHECK(merged.samples.size() == 4);
}

TEST_CASE("duet: a partner that fails does not hang the other", "[duet]") {
  if (!two_cpus()) {
    WARN("fewer than 2 CPUs here: no duet to run");
    return;
  }
  TempDir d;
  const cuzk::duet::Halves h = cuzk::duet::split_halves(cuzk::placement::allowed_cpus());
  // Side a fails before its first barrier; side b is a measured process that reaches it.
  const std::string b = "'" + cuzk::test::bench() + "' selfmeasure --reps 3" + kTinyWorkload + " --out '" +
                        d.file("b.jsonl") + "' >/dev/null 2>'" + d.file("b.err") + "'";
  const cuzk::duet::PairResult p =
      cuzk::duet::run_pair(d.file("barrier"), {cuzk::duet::PairSide{"exit 3", h.first}, cuzk::duet::PairSide{b, h.second}},
                           0, 0);
  CHECK(p.child[0].code == 3);
  CHECK(p.child[1].code != 0);  // told its partner ended, it stopped instead of waiting
  CHECK(p.released == 0);
  CHECK(p.abort_reason.find("side a") != std::string::npos);
  const std::string err = cuzk::test::slurp(d.file("b.err"));
  INFO(err);
  CHECK(err.find("partner (side a) ended (exit 3)") != std::string::npos);
  CHECK(!cuzk::test::exists(d.file("barrier")));  // the barrier folder is cleaned up
}

TEST_CASE("calibrate: unpaired and paired draws side by side, and a duet pool", "[duet][calibrate]") {
  TempDir d;
  const std::string common =
      "calibrate --workload selfmeasure --trials 2 --runs 2 --pool-a 4 --pool-b 2 --slowdowns 60 --target-effect 10 "
      "--workload-arg=--warmup --workload-arg=0 --workload-arg=--touch-mib --workload-arg=1 --workload-arg=--no-spans";
  auto r = cuzk::test::run_bench(common + " --draw both --out-dir both", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  json j = json::parse(cuzk::test::slurp(d.file("both/calibration.json")));
  REQUIRE(j["draws"].size() == 2);
  CHECK(j["draws"][0]["draw"] == "unpaired");
  CHECK(j["draws"][1]["draw"] == "paired");
  CHECK(j["draws"][1]["phases"][0]["levels"][0]["trials"] == 2);
  CHECK(j["pool_rounds"] == 2);
  CHECK(r.out.find("paired draws:") != std::string::npos);
  CHECK(cuzk::test::slurp(d.file("both/calibration.md")).find("detected, paired") != std::string::npos);
  // Every round holds two plain runs (A and A') beside the level's run.
  CHECK(cuzk::test::exists(d.file("both/pool/a-001.jsonl")));
  CHECK(cuzk::test::exists(d.file("both/pool/a2-001.jsonl")));
  CHECK(cuzk::test::exists(d.file("both/pool/s60-001.jsonl")));

  auto bad = cuzk::test::run_bench(common + " --draw unpaired --design paired --out-dir bad", d.path());
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--design paired needs") != std::string::npos);

  if (!two_cpus()) {
    auto one = cuzk::test::run_bench(common + " --duet --out-dir duet", d.path());
    CHECK(one.code == 2);
    CHECK(!cuzk::test::exists(d.file("duet")));
    return;
  }
  auto du = cuzk::test::run_bench(common + " --duet --out-dir duet", d.path());
  INFO(du.out << du.err);
  REQUIRE(du.code == 0);
  json k = json::parse(cuzk::test::slurp(d.file("duet/calibration.json")));
  CHECK(k["options"]["duet"] == true);
  CHECK(k["options"]["draw"] == "paired");  // a duet pool is analysed paired by round
  CHECK(k["duet"]["note"].get<std::string>().find("half the cores") != std::string::npos);
  // The level's run and the plain run beside it ran together, on different halves.
  auto lv = cuzk::read_results(d.file("duet/pool/s60-000.jsonl"));
  auto pa = cuzk::read_results(d.file("duet/pool/a-beside-s60-000.jsonl"));
  CHECK(lv.header.value["duet"]["side"] == "b");
  CHECK(pa.header.value["duet"]["side"] == "a");
  CHECK(lv.header.value["duet"]["cpus"] != pa.header.value["duet"]["cpus"]);
}
