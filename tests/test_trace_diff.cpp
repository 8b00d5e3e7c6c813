// trace-diff (harness/trace/, docs/trace-diff.md) on synthetic nsys exports
// (support/nsys_export_writer.hpp).
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "harness/trace/diff.hpp"
#include "harness/trace/diff_format.hpp"
#include "harness/trace/kernel_name.hpp"
#include "harness/trace/model.hpp"
#include "harness/trace/nsys_export.hpp"
#include "test_util.hpp"

#if CUZK_HAVE_SQLITE
#include "nsys_export_writer.hpp"
#include "synth_results.hpp"
#endif

using cuzk::test::TempDir;
namespace tr = cuzk::trace;

TEST_CASE("kernel names fold template arguments and drop parameters and return types", "[trace_diff]") {
  CHECK(tr::normalize_kernel_name("void msm_sum<3, true>(const int*, unsigned long)") == "msm_sum<...>");
  CHECK(tr::normalize_kernel_name("void msm_sum<4, true>(const int*, unsigned long)") == "msm_sum<...>");
  CHECK(tr::normalize_kernel_name("_Z7msm_sumILi3ELb1EEvPKim") == "msm_sum<...>");
  CHECK(tr::normalize_kernel_name("void ns::k<a<b, c>, 2>(int)") == "ns::k<...>");
  CHECK(tr::normalize_kernel_name("void (anonymous namespace)::fill(int*)") == "(anonymous namespace)::fill");
  CHECK(tr::normalize_kernel_name("sum_runs") == "sum_runs");
  CHECK(tr::demangle("_Z7msm_sumILi3ELb1EEvPKim") == "void msm_sum<3, true>(int const*, unsigned long)");
}

TEST_CASE("the U test needs 4 traces per side to reach alpha 0.05", "[trace_diff]") {
  // 2 / C(6, 3) = 0.1, 2 / C(8, 4) = 0.029.
  CHECK(tr::traces_for_alpha(0.05) == 4);
  CHECK(tr::traces_for_alpha(0.2) == 3);
}

#if CUZK_HAVE_SQLITE
using namespace cuzk::test::nsys;

namespace {

tr::TraceModel model_of(const std::string& path, bool normalize = true) {
  tr::ModelOptions o;
  o.normalize = normalize;
  return tr::build_model(tr::read_nsys_export(path), o);
}

std::vector<tr::TraceModel> side(const TempDir& d, const std::string& tag, int n, uint64_t seed, double sum_scale,
                                 int sum_launches = 3) {
  std::mt19937_64 rng(seed);
  std::vector<tr::TraceModel> out;
  for (int i = 0; i < n; ++i) {
    const std::string f = d.file(fmt::format("{}{}.sqlite", tag, i));
    write_trace(f, proof_trace(rng, sum_scale, 0.005, sum_launches));
    out.push_back(model_of(f));
  }
  return out;
}

const tr::PhaseDiff& phase(const tr::Diff& d, const std::string& name) {
  for (const auto& p : d.phases)
    if (p.phase == name) return p;
  FAIL("no phase " << name);
  throw;
}

const tr::ItemDiff& item(const tr::PhaseDiff& p, const std::string& name) {
  for (const auto& it : p.items)
    if (it.name == name) return it;
  FAIL("no item " << name << " in " << p.phase);
  throw;
}

}  // namespace

TEST_CASE("work belongs to the innermost range on the launching thread where its call started", "[trace_diff]") {
  TempDir d;
  TraceSpec t;
  t.ranges = {{"proof/prove", 0, 100000 * kUs}, {"proof/prove/msm_h", 10000 * kUs, 50000 * kUs}};
  // Called inside msm_h but run after it ended: still msm_h's.
  t.launches.push_back({"void k1(int)", 20000 * kUs, 70000 * kUs, 100 * kUs});
  t.launches.push_back({"void k2(int)", 60000 * kUs, 60000 * kUs, 200 * kUs});
  // Another thread, no range there.
  t.launches.push_back({"void k3(int)", 20000 * kUs, 80000 * kUs, 300 * kUs, 7, kTid + 1});
  // A pageable and a pinned upload in proof/prove.
  t.launches.push_back({"", 61000 * kUs, 61000 * kUs, 50 * kUs, 7, kTid, tr::kCopyHtoD, tr::kMemPageable, tr::kMemDevice});
  t.launches.push_back({"", 62000 * kUs, 62000 * kUs, 40 * kUs, 7, kTid, tr::kCopyHtoD, tr::kMemPinned, tr::kMemDevice});
  write_trace(d.file("t.sqlite"), t);
  const auto m = model_of(d.file("t.sqlite"));
  REQUIRE(m.phases.count("proof/prove/msm_h"));
  CHECK(m.phases.at("proof/prove/msm_h").items.count("k1"));
  CHECK(m.phases.at("proof/prove/msm_h").launches == 1);
  const auto& prove = m.phases.at("proof/prove");
  CHECK(prove.items.count("k2"));
  CHECK(prove.items.at("memcpy HtoD pageable").total_ns == 50 * kUs);
  CHECK(prove.items.at("memcpy HtoD pinned").total_ns == 40 * kUs);
  CHECK(prove.copy_ns == 90 * kUs);
  REQUIRE(m.phases.count(tr::kNoPhase));
  CHECK(m.phases.at(tr::kNoPhase).items.count("k3"));
  // busy: 200 + 50 + 40 us of disjoint work; idle: the span 61.04 ms - 60 ms less busy.
  CHECK(prove.busy_ns == 290 * kUs);
  CHECK(prove.idle_ns == (62040 - 60000 - 290) * kUs);
}

TEST_CASE("a kernel overlapped by another stream is hidden for the overlap", "[trace_diff]") {
  TempDir d;
  TraceSpec t;
  t.ranges = {{"p", 0, 100000 * kUs}};
  t.launches.push_back({"void a(int)", 1000 * kUs, 1000 * kUs, 1000 * kUs, 1});
  t.launches.push_back({"void b(int)", 1001 * kUs, 1200 * kUs, 300 * kUs, 2});  // inside a
  t.launches.push_back({"void c(int)", 1002 * kUs, 1900 * kUs, 300 * kUs, 2});  // 100 us inside a
  write_trace(d.file("t.sqlite"), t);
  const auto& p = model_of(d.file("t.sqlite")).phases.at("p");
  CHECK(p.items.at("b").exposed_ns == 0);
  CHECK(p.items.at("c").exposed_ns == 200 * kUs);
  CHECK(p.items.at("a").exposed_ns == 600 * kUs);
  CHECK(p.busy_ns == 1200 * kUs);
}

TEST_CASE("a kernel 10% slower in one phase is found, with ~100% of the phase's change", "[trace_diff]") {
  TempDir d;
  const auto a = side(d, "a", 5, 11, 1.0), b = side(d, "b", 5, 12, 1.1);
  const auto diff = tr::diff_traces(a, b, {});
  const auto& msm = phase(diff, "proof/prove/msm_h");
  CHECK(msm.busy.verdict == "slower");
  const auto& sum = item(msm, "sum_runs<...>");
  CHECK(sum.total.verdict == "slower");
  CHECK(sum.total.ratio == Approx(1.1).epsilon(0.02));
  CHECK(sum.where == "exposed");
  CHECK(sum.share == Approx(1.0).margin(0.1));
  CHECK(msm.items.front().name == "sum_runs<...>");  // the largest change first
  CHECK(item(msm, "msm_sum<...>").total.verdict == "unchanged");
  CHECK(phase(diff, "proof/prove/ntt_h").busy.verdict == "unchanged");
  CHECK(diff.notes.empty());
}

TEST_CASE("a kernel made slower behind a longer kernel on another stream is hidden; the phase unchanged",
          "[trace_diff]") {
  TempDir d;
  auto make = [&](const std::string& tag, uint64_t seed, double k_us) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.995, 1.005);
    std::vector<tr::TraceModel> out;
    for (int i = 0; i < 5; ++i) {
      TraceSpec t;
      t.ranges = {{"proof/prove/msm_b_g1", 0, 10000 * kUs}};
      t.launches.push_back({"void long_k(int)", 100 * kUs, 200 * kUs, static_cast<int64_t>(2000 * u(rng)) * kUs, 1});
      t.launches.push_back({"void short_k(int)", 110 * kUs, 300 * kUs, static_cast<int64_t>(k_us * u(rng)) * kUs, 2});
      const std::string f = d.file(fmt::format("{}{}.sqlite", tag, i));
      write_trace(f, t);
      out.push_back(model_of(f));
    }
    return out;
  };
  const auto diff = tr::diff_traces(make("a", 1, 300), make("b", 2, 330), {});
  const auto& p = phase(diff, "proof/prove/msm_b_g1");
  CHECK(p.busy.verdict == "unchanged");
  const auto& k = item(p, "short_k");
  CHECK(k.total.verdict == "slower");
  CHECK(k.where == "hidden");
  CHECK(k.exposed.change() == 0);
}

TEST_CASE("k-th launches align across traces when B adds one launch", "[trace_diff]") {
  TempDir d;
  const auto a = side(d, "a", 3, 21, 1.0, 3), b = side(d, "b", 3, 22, 1.0, 4);
  const auto diff = tr::diff_traces(a, b, {});
  const auto& msm = phase(diff, "proof/prove/msm_h");
  int same = 0, extra = 0;
  for (const auto& l : msm.launches_by_k) {
    if (l.name != "sum_runs<...>") continue;
    if (l.k <= 3) same += l.duration.verdict == "unchanged" && std::fabs(l.duration.ratio - 1) < 0.02;
    if (l.k == 4) extra += l.duration.verdict == "only in B";
  }
  CHECK(same == 3);
  CHECK(extra == 1);
  // In the printed table the launch B added is a note, not a row of dashes.
  const auto table = tr::launch_table(msm, 0.03);
  CHECK(std::find(table.notes.begin(), table.notes.end(), "sum_runs<...> #4: only in B") != table.notes.end());
  CHECK(item(msm, "sum_runs<...>").launches_a == 3);
  CHECK(item(msm, "sum_runs<...>").launches_b == 4);
}

TEST_CASE("k-th launches: many that changed are capped at the largest, with the count and the chance level",
          "[trace_diff]") {
  TempDir d;
  const auto a = side(d, "a", 4, 51, 1.0, 20), b = side(d, "b", 4, 52, 1.1, 26);
  const auto diff = tr::diff_traces(a, b, {});
  const auto table = tr::launch_table(phase(diff, "proof/prove/msm_h"), 0.03);
  size_t rows = 0;
  for (const auto& r : table.rows) rows += r[0].text.rfind("sum_runs<...> #", 0) == 0;
  CHECK(rows == tr::kLaunchRowsPerItem);
  bool counted = false, run = false;
  for (const auto& n : table.notes) {
    counted |= n.rfind("sum_runs<...>: 20 of its 20 compared launches differ; the 6 largest changes are listed", 0) == 0;
    run |= n == "sum_runs<...> #21-#26 (6 launches): only in B";
  }
  CHECK(counted);
  CHECK(run);
}

TEST_CASE("a phase whose GPU waited longer, with the same kernels, is named in the idle section", "[trace_diff]") {
  TempDir d;
  std::mt19937_64 rng(61);
  std::vector<tr::TraceModel> a, b;
  for (int i = 0; i < 4; ++i) {
    for (int side = 0; side < 2; ++side) {
      auto t = proof_trace(rng, 1.0, 0.005);
      if (side == 1)
        for (auto& l : t.launches)
          if (l.name.find("msm_sum") != std::string::npos) l.start += 2000 * kUs;  // waits 2 ms first
      const std::string f = d.file(fmt::format("{}{}.sqlite", side ? "b" : "a", i));
      write_trace(f, t);
      (side ? b : a).push_back(model_of(f));
    }
  }
  const auto diff = tr::diff_traces(a, b, {});
  CHECK(phase(diff, "proof/prove/msm_h").busy.verdict == "unchanged");
  const auto summary = tr::diff_summary(diff);
  const cuzk::output::Section* idle = nullptr;
  for (const auto& sec : summary.sections)
    if (sec.title == tr::kIdleSection) idle = &sec;
  REQUIRE(idle != nullptr);
  REQUIRE(idle->items.size() == 1);
  CHECK(idle->items[0].rfind("proof/prove/msm_h: idle ", 0) == 0);
  CHECK(idle->items[0].find("slower") != std::string::npos);
  CHECK(idle->items[0].find("the GPU waited inside the phase; its work did not change") != std::string::npos);
}

TEST_CASE("kernel names match across a template argument change unless --no-normalize", "[trace_diff]") {
  TempDir d;
  auto one = [&](const std::string& f, const std::string& name) {
    TraceSpec t;
    t.ranges = {{"p", 0, 10000 * kUs}};
    t.launches.push_back({name, 100 * kUs, 200 * kUs, 500 * kUs});
    write_trace(d.file(f), t);
  };
  one("a.sqlite", "void msm_sum<3, true>(const int*, unsigned long)");
  one("b.sqlite", "void msm_sum<4, true>(const int*, unsigned long)");
  const auto folded = tr::diff_traces({model_of(d.file("a.sqlite"))}, {model_of(d.file("b.sqlite"))}, {});
  REQUIRE(folded.phases.size() == 1);
  REQUIRE(folded.phases[0].items.size() == 1);
  CHECK(folded.phases[0].items[0].name == "msm_sum<...>");
  CHECK(folded.phases[0].items[0].total.verdict == "n/a");  // one trace a side: no statistics
  CHECK(folded.notes.size() == 1);
  const auto whole = tr::diff_traces({model_of(d.file("a.sqlite"), false)}, {model_of(d.file("b.sqlite"), false)}, {});
  REQUIRE(whole.phases[0].items.size() == 2);
  CHECK(item(whole.phases[0], "void msm_sum<3, true>(const int*, unsigned long)").total.verdict == "only in A");
  CHECK(item(whole.phases[0], "void msm_sum<4, true>(const int*, unsigned long)").total.verdict == "only in B");
}

TEST_CASE("trace-diff prints the explaining kernel first, as JSON and text", "[trace_diff]") {
  TempDir d;
  side(d, "a", 4, 31, 1.0);
  side(d, "b", 4, 32, 1.1);
  auto r = cuzk::test::run_bench("trace-diff --json a0.sqlite a1.sqlite a2.sqlite a3.sqlite -- b0.sqlite b1.sqlite "
                                 "b2.sqlite b3.sqlite",
                                 d.path());
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["schema"] == "cuzk.trace-diff");
  bool found = false;
  for (const auto& [title, items] : j["summary"]["sections"].items())
    if (title.rfind("proof/prove/msm_h:", 0) == 0) found = items[0].get<std::string>().rfind("sum_runs<...> (kernel)", 0) == 0;
  CHECK(found);
  std::filesystem::create_directories(d.file("A"));
  std::filesystem::create_directories(d.file("B"));
  for (int i = 0; i < 4; ++i) {
    std::filesystem::rename(d.file(fmt::format("a{}.sqlite", i)), d.file(fmt::format("A/{}.sqlite", i)));
    std::filesystem::rename(d.file(fmt::format("b{}.sqlite", i)), d.file(fmt::format("B/{}.sqlite", i)));
  }
  r = cuzk::test::run_bench("trace-diff --a A --b B --phase proof/prove/msm_h", d.path());
  REQUIRE(r.code == 0);
  CHECK(r.out.find("sum_runs<...>") != std::string::npos);
  CHECK(r.out.find("ntt_h") == std::string::npos);
}

TEST_CASE("report: an A/B folder's trace A/B gets a section and a waterfall of the changed phase's kernels",
          "[trace_diff][report]") {
  TempDir d;
  std::filesystem::create_directories(d.file("ab"));
  cuzk::test::SynthSpec sa, sb;
  sa.seed = 1;
  sb.seed = 2;
  cuzk::test::write_synth(d.file("ab/a.jsonl"), sa);
  cuzk::test::write_synth(d.file("ab/b.jsonl"), sb);
  side(d, "a", 4, 41, 1.0);
  side(d, "b", 4, 42, 1.1);
  REQUIRE(std::system(("cd '" + d.path() + "' && '" + cuzk::test::bench() +
                       "' trace-diff --json a0.sqlite a1.sqlite a2.sqlite a3.sqlite -- b0.sqlite b1.sqlite b2.sqlite "
                       "b3.sqlite > ab/trace-diff.json")
                          .c_str()) == 0);
  auto r = cuzk::test::run_bench("report ab --python none", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const std::string html = cuzk::test::slurp(d.file("ab/report.html")), md = cuzk::test::slurp(d.file("ab/report.md"));
  CHECK(md.find("## Trace A/B") != std::string::npos);
  CHECK(md.find("trace-diff: 1 of ") != std::string::npos);
  CHECK(md.find("sum_runs<...> (kernel)") != std::string::npos);
  // After the comparison: the summary, then one waterfall for msm_h, its slower kernel the first term.
  const size_t section = html.find("<h2>Trace A/B</h2>");
  REQUIRE(section != std::string::npos);
  CHECK(html.find("<h2>Comparison</h2>") < section);
  const size_t chart = html.find("proof/prove/msm_h: +", section);
  REQUIRE(chart != std::string::npos);
  CHECK(html.find("(GPU busy time, change of medians B - A)", chart) != std::string::npos);
  const size_t first_term = html.find("text-anchor=\"end\">", chart);
  CHECK(html.compare(first_term + 18, 13, "sum_runs&lt;.") == 0);
  CHECK(html.find("overlap across streams", chart) != std::string::npos);
  CHECK(html.find("proof/prove/ntt_h: ", section) == std::string::npos);  // unchanged phases are not drawn

  SECTION("a trace-diff.json that is not one is an error, and the reports stay as they were") {
    cuzk::test::spit(d.file("ab/trace-diff.json"), "{\"schema\": \"something-else\"}\n");
    auto bad = cuzk::test::run_bench("report ab --python none", d.path());
    CHECK(bad.code == 2);
    CHECK(bad.err.find("trace-diff.json: not a trace A/B") != std::string::npos);
    CHECK(cuzk::test::slurp(d.file("ab/report.html")) == html);
  }
}

TEST_CASE("real exports: an A/A of four H100 captures, CUB's ranges not taken for phases", "[trace_diff]") {
#if CUZK_HAVE_SQLITE
  // tests/fixtures/nsys/README.md: one build captured four times, Nsight Systems 2025.3.2.
  const std::string fx = std::string(CUZK_SOURCE_DIR) + "/tests/fixtures/nsys";
  TempDir d;
  const auto r = cuzk::test::run_bench("trace-diff --a '" + fx + "/a' --b '" + fx + "/b'", d.path());
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("trace-diff: 0 of ") != std::string::npos);  // one build on both sides
  // The sort inside msm_h opens a CUB range (domain CCCL): its kernels stay msm_h's.
  CHECK(r.out.find("cub::DeviceRadixSort ") == std::string::npos);
  const auto msm_h = r.out.find("\nproof/prove/msm_h\n");
  REQUIRE(msm_h != std::string::npos);
  CHECK(r.out.find("DeviceRadixSortOnesweepKernel", msm_h) != std::string::npos);
  CHECK(r.out.find("launched no GPU work on either side") != std::string::npos);
  const auto e = tr::read_nsys_export(fx + "/a/cpu-small-1.sqlite");
  CHECK(e.schema_version == "3.20.3");
  CHECK(e.nvtx_domain == "cuzk");
#endif
}

namespace {

// Exit 2 and exactly one line on stderr holding `words`.
void check_refused(const std::string& args, const std::string& dir, const std::string& words) {
  const auto r = cuzk::test::run_bench(args, dir);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(cuzk::test::lines_of(r.err).size() == 1);
  CHECK(r.err.find(words) != std::string::npos);
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("bad traces are one line and exit 2", "[trace_diff]") {
  TempDir d;
  std::mt19937_64 rng(5);
  write_trace(d.file("ok.sqlite"), proof_trace(rng, 1, 0));
  TraceSpec v4 = proof_trace(rng, 1, 0);
  v4.version = "4.0.0";
  write_trace(d.file("v4.sqlite"), v4);
  check_refused("trace-diff ok.sqlite -- v4.sqlite", d.path(), "export schema version 4.0.0 is not one this reader knows (3.x");

  TraceSpec bare = proof_trace(rng, 1, 0);
  bare.ranges.clear();
  write_trace(d.file("bare.sqlite"), bare);
  check_refused("trace-diff bare.sqlite -- ok.sqlite", d.path(), "bare.sqlite: no NVTX ranges");

  const std::string whole = cuzk::test::slurp(d.file("ok.sqlite"));
  cuzk::test::spit(d.file("cut.sqlite"), whole.substr(0, whole.size() / 2));
  check_refused("trace-diff ok.sqlite -- cut.sqlite", d.path(), "cut.sqlite: truncated");

  cuzk::test::spit(d.file("text.sqlite"), std::string(4096, 'x'));
  check_refused("trace-diff text.sqlite -- ok.sqlite", d.path(), "text.sqlite: not an SQLite file");

  check_refused("trace-diff ok.sqlite -- missing.sqlite", d.path(), "missing.sqlite: no such file");
  check_refused("trace-diff ok.sqlite ok.sqlite", d.path(), "give A's traces, then --");
  check_refused("trace-diff --phase nope ok.sqlite -- ok.sqlite", d.path(), "--phase nope: no such phase");
}
#else
TEST_CASE("without SQLite trace-diff says which library the build lacks", "[trace_diff]") {
  TempDir d;
  cuzk::test::spit(d.file("a.sqlite"), "x");
  const auto r = cuzk::test::run_bench("trace-diff a.sqlite -- a.sqlite", d.path());
  CHECK(r.code == 2);
  CHECK(r.err.find("without SQLite") != std::string::npos);
}
#endif
