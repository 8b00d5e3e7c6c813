// The gate's [kernels."phase"] table (harness/trace/gate_kernels.hpp, docs/gating.md) on
// synthetic nsys exports (support/nsys_export_writer.hpp): a kernel's or the idle time's ratio
// B/A against its limit, and fail-closed errors for what the traces lack.
#include <fmt/core.h>

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <utility>

#include "catch.hpp"
#include "harness/analysis/gate.hpp"
#include "harness/trace/gate_kernels.hpp"
#include "test_util.hpp"

#if CUZK_HAVE_SQLITE
#include "nsys_export_writer.hpp"
#endif

using cuzk::test::TempDir;

namespace {

const std::string kDefault = "[default]\nmax_slowdown = 0.05\n";

cuzk::GateResult passed(const std::string& toml) {
  cuzk::GateResult g;
  g.thresholds = cuzk::parse_thresholds(kDefault + toml, "t.toml");
  cuzk::set_result(g);
  return g;
}

bool has(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("gate: [kernels] limits are ratios above 0 in one table per phase") {
  const auto t = cuzk::parse_thresholds(kDefault + "[kernels.\"proof/prove/msm_h\"]\n\"sum_runs<...>\" = 1.10\nidle = 2\n", "t");
  CHECK(t.kernel_limits.at("proof/prove/msm_h").at("sum_runs<...>") == Approx(1.10));
  CHECK(t.kernel_limits.at("proof/prove/msm_h").at("idle") == Approx(2.0));
  for (const char* bad : {"[kernels]\n", "[kernels.\"p\"]\n", "[kernels.\"p\"]\nk = 0\n", "[kernels.\"p\"]\nk = -1.5\n",
                          "[kernels.\"p\"]\nk = inf\n", "[kernels.\"p\"]\nk = nan\n", "[kernels.\"p\"]\nk = \"1.1\"\n",
                          "kernels = 3\n", "[kernels]\nk = 1.1\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(cuzk::parse_thresholds(kDefault + bad, "t"), cuzk::GateError);
  }
}

TEST_CASE("gate: [kernels] without traces, and traces without [kernels], are errors") {
  auto gate = [](const std::string& toml, const std::string& a, const std::string& b) {
    auto g = passed(toml);
    cuzk::trace::gate_traces(g, a, b);
    return g;
  };
  const std::string idle = "[kernels.\"proof/prove/msm_h\"]\nidle = 1.25\n";
  for (const auto& [g, why] : {std::pair{gate(idle, "", ""), "--traces-a DIR --traces-b DIR"},
                               std::pair{gate("", "a", "b"), "no [kernels.\"phase\"] table"},
                               std::pair{gate(idle, "a", ""), "give both folders"}}) {
    INFO(why);
    CHECK(g.exit_code == 2);
    CHECK(has(g.errors, why));
  }
  CHECK(gate("", "", "").exit_code == 0);
}

#if CUZK_HAVE_SQLITE
namespace {

using namespace cuzk::test::nsys;

// n traces per side of proof_trace: B's sum_runs scaled by `scale`; `edit` changes B's specs.
struct Sides {
  TempDir d;
  std::string a, b;
  Sides(int n, double scale, const std::function<void(TraceSpec&)>& edit = {}) : a(d.file("a")), b(d.file("b")) {
    std::filesystem::create_directories(a);
    std::filesystem::create_directories(b);
    std::mt19937_64 rng(7);
    for (int i = 0; i < n; ++i) {
      write_trace(fmt::format("{}/{}.sqlite", a, i), proof_trace(rng, 1.0, 0.005));
      TraceSpec t = proof_trace(rng, scale, 0.005);
      if (edit) edit(t);
      write_trace(fmt::format("{}/{}.sqlite", b, i), t);
    }
  }
  cuzk::GateResult gate(const std::string& toml) const {
    auto g = passed(toml);
    cuzk::trace::gate_traces(g, a, b);
    return g;
  }
};

}  // namespace

TEST_CASE("gate: a kernel 10% slower fails a limit of 1.05 and passes one of 1.20") {
  const Sides s(5, 1.10);
  const auto g = s.gate("[kernels.\"proof/prove/msm_h\"]\n\"sum_runs<...>\" = 1.05\n");
  CHECK(g.exit_code == 1);
  REQUIRE(g.alarms.size() == 1);
  CHECK(g.alarms[0].kind == "kernel");
  CHECK(g.alarms[0].metric == "sum_runs<...>");
  CHECK(g.alarms[0].text.find("proof/prove/msm_h kernel sum_runs<...>: ") == 0);
  CHECK(g.alarms[0].text.find(" ms -> ") != std::string::npos);
  CHECK(g.alarms[0].text.find("exceeds max ratio 1.05") != std::string::npos);
  CHECK(g.family_summary.find("own family of 1 kernel limit") != std::string::npos);
  const auto j = cuzk::to_json(g);
  CHECK(j["alarms"][0]["kind"] == "kernel");
  CHECK(j["thresholds"]["kernels"]["proof/prove/msm_h"]["sum_runs<...>"] == Approx(1.05));
  CHECK(cuzk::alarmed_cases(g).empty());  // a kernel alarm names no case to re-measure

  const auto loose = s.gate("[kernels.\"proof/prove/msm_h\"]\n\"sum_runs<...>\" = 1.20\n\"msm_sum<...>\" = 1.05\n");
  CHECK(loose.exit_code == 0);
  CHECK(loose.alarms.empty());
}

TEST_CASE("gate: a phase's GPU idle time against its [kernels] idle limit") {
  // B's msm_sum starts 500 us later: msm_h's idle time grows from about 30 us to 530 us.
  const Sides s(5, 1.0, [](TraceSpec& t) { t.launches.at(3).start += 500 * kUs; });
  const auto g = s.gate("[kernels.\"proof/prove/msm_h\"]\nidle = 1.25\n\"sum_runs<...>\" = 1.05\n");
  CHECK(g.exit_code == 1);
  REQUIRE(g.alarms.size() == 1);
  CHECK(g.alarms[0].text.find("proof/prove/msm_h idle:") == 0);
  CHECK(s.gate("[kernels.\"proof/prove/msm_h\"]\nidle = 50\n").exit_code == 0);
}

TEST_CASE("gate: a [kernels] name the traces lack is an error; a kernel only in B is reported") {
  const Sides s(4, 1.0, [](TraceSpec& t) { t.launches.push_back({"void extra(int)", 1300 * kUs, 40000 * kUs, 100 * kUs}); });
  for (const auto& [table, why] : {std::pair{"[kernels.\"proof/prove/msm_h\"]\n\"nope<...>\" = 1.1\n",
                                             "kernel nope<...> of phase proof/prove/msm_h"},
                                   std::pair{"[kernels.\"proof/prove/msm_h\"]\nextra = 1.1\n", "not in the baseline's traces"},
                                   std::pair{"[kernels.\"proof/nowhere\"]\nidle = 1.1\n", "phase proof/nowhere"}}) {
    INFO(table);
    const auto g = s.gate(table);
    CHECK(g.exit_code == 2);
    CHECK(has(g.errors, why));
  }
  const auto seen = s.gate("[kernels.\"proof/prove/msm_h\"]\n\"sum_runs<...>\" = 1.1\n");
  CHECK(seen.exit_code == 0);
  CHECK(has(seen.warnings, "proof/prove/msm_h kernel extra: only in the candidate's traces"));
}

TEST_CASE("gate: [kernels] with one trace a side, or a folder without traces, is an error") {
  const Sides s(1, 1.0);
  const auto g = s.gate("[kernels.\"proof/prove/msm_h\"]\nidle = 1.1\n");
  CHECK(g.exit_code == 2);
  CHECK(has(g.errors, "at least 2 traces a side"));
  TempDir empty;
  auto h = passed("[kernels.\"proof/prove/msm_h\"]\nidle = 1.1\n");
  cuzk::trace::gate_traces(h, empty.path(), s.b);
  CHECK(h.exit_code == 2);
  CHECK(has(h.errors, "--traces-a"));
}
#endif
