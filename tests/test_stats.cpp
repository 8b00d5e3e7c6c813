// Statistics of compare/gate (harness/analysis/stats.hpp) against independently computed values:
// scipy/numpy from Debian's python3-scipy at test time (/usr/bin/python3), and small
// hand-worked examples.
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/analysis/stats.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

using cuzk::test::TempDir;

namespace {

bool have_scipy() {
  static int ok = -1;
  if (ok < 0) ok = cuzk::testing::run_command("/usr/bin/python3 -c 'import scipy.stats, numpy' 2>&1").status == 0;
  return ok == 1;
}

// Runs `script` with /usr/bin/python3; the script reads JSON from the file named by argv[1]
// and prints one JSON value.
nlohmann::json python(const std::string& script, const nlohmann::json& input) {
  TempDir d;
  cuzk::test::spit(d.file("s.py"), script);
  cuzk::test::spit(d.file("in.json"), input.dump());
  auto r = cuzk::testing::run_command("/usr/bin/python3 '" + d.file("s.py") + "' '" + d.file("in.json") + "' 2>&1");
  INFO(r.output);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.output);
}

std::vector<double> lognormal(std::mt19937_64& rng, size_t n, double mu, double sigma, double round_to = 0) {
  std::normal_distribution<double> nd(0, sigma);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) {
    double x = mu * std::exp(nd(rng));
    if (round_to > 0) x = std::round(x / round_to) * round_to;
    v.push_back(x);
  }
  return v;
}

}  // namespace

TEST_CASE("order statistics: hand-worked examples") {
  // Median of an even count is the mean of the middle two.
  CHECK(cuzk::median({4, 1, 3, 2}) == Approx(2.5));
  CHECK(cuzk::median({5, 1, 3}) == Approx(3));
  // Wikipedia, "Median absolute deviation": {1, 1, 2, 2, 4, 6, 9} has median 2, absolute
  // deviations {1, 1, 0, 0, 2, 4, 7}, MAD = 1.
  CHECK(cuzk::mad({1, 1, 2, 2, 4, 6, 9}) == Approx(1));
  // Type-7 quantiles of 1..5: Q1 = 2, Q3 = 4, IQR = 2; of 1..4: Q1 = 1.75, Q3 = 3.25.
  CHECK(cuzk::iqr({5, 4, 3, 2, 1}) == Approx(2));
  CHECK(cuzk::iqr({1, 2, 3, 4}) == Approx(1.5));
  CHECK(std::isnan(cuzk::median({})));
  CHECK(cuzk::mean({1, 2, 3, 6}) == Approx(3));
  CHECK(std::isnan(cuzk::mean({})));
}

TEST_CASE("Mann-Whitney U: hand-worked exact examples") {
  // a entirely below b, sizes 3 and 3: U_a = 0; of the C(6,3) = 20 equally likely rank
  // arrangements only one has U = 0 (and one U = 9), so the two-sided p = 2/20 = 0.1.
  auto r = cuzk::mann_whitney_u({1, 2, 3}, {4, 5, 6});
  CHECK(r.exact);
  CHECK(r.u_a == 0);
  CHECK(r.p_value == Approx(0.1));
  // Sizes 2 and 3 fully separated: 2 / C(5,2) = 0.2.
  CHECK(cuzk::mann_whitney_u_p({10, 11}, {1, 2, 3}) == Approx(0.2));
  // Sizes 5 and 5 fully separated: 2 / C(10,5) = 2/252.
  CHECK(cuzk::mann_whitney_u_p({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}) == Approx(2.0 / 252));
  // a = {1, 4}, b = {2, 3}: U_a = 2 = mn/2, the centre: p = 1.
  CHECK(cuzk::mann_whitney_u_p({1, 4}, {2, 3}) == Approx(1.0));
  // Interleaved {1,3,5} vs {2,4,6}: U_a = 3, P(U <= 3) = (1+1+2+3)/20 = 7/20, p = 0.7.
  CHECK(cuzk::mann_whitney_u_p({1, 3, 5}, {2, 4, 6}) == Approx(0.7));
  // Empty side: no evidence.
  CHECK(cuzk::mann_whitney_u_p({}, {1, 2}) == 1.0);
}

TEST_CASE("Mann-Whitney U: branch selection") {
  std::vector<double> a20, b20, a21;
  for (int i = 0; i < 20; ++i) a20.push_back(i * 2.0), b20.push_back(i * 2.0 + 1);
  a21 = a20;
  a21.push_back(100.5);
  CHECK(cuzk::mann_whitney_u(a20, b20).exact);    // 20 and 20, no ties: exact
  CHECK_FALSE(cuzk::mann_whitney_u(a21, b20).exact);  // 21: normal
  auto tied = b20;
  tied[0] = a20[3];
  CHECK_FALSE(cuzk::mann_whitney_u(a20, tied).exact);  // a tie: normal with tie correction
}

TEST_CASE("Mann-Whitney U against scipy.stats.mannwhitneyu") {
  if (!have_scipy()) {
    WARN("SKIPPED: /usr/bin/python3 lacks scipy (install python3-scipy: scripts/setup.sh)");
    return;
  }
  std::mt19937_64 rng(20261129);
  struct Case {
    size_t m, n;
    double shift, round_to;
  };
  // exact branch (small, continuous), boundary 20x20, normal branch (large or tied).
  std::vector<Case> cases = {{4, 6, 1.0, 0},   {8, 9, 1.02, 0},  {10, 10, 1.01, 0}, {20, 20, 1.01, 0},
                             {20, 20, 1.0, 0}, {21, 15, 1.02, 0}, {12, 10, 1.01, 1}, {50, 60, 1.005, 0.5},
                             {30, 30, 1.0, 2},  {7, 5, 1.05, 3}};
  nlohmann::json in = nlohmann::json::array();
  std::vector<std::pair<std::vector<double>, std::vector<double>>> data;
  std::vector<cuzk::MannWhitneyResult> ours;
  for (const auto& c : cases) {
    auto a = lognormal(rng, c.m, 100, 0.02, c.round_to);
    auto b = lognormal(rng, c.n, 100 * c.shift, 0.02, c.round_to);
    auto r = cuzk::mann_whitney_u(a, b);
    ours.push_back(r);
    in.push_back({{"a", a}, {"b", b}, {"method", r.exact ? "exact" : "asymptotic"}});
    data.emplace_back(a, b);
  }
  auto out = python(R"(
import json, sys
from scipy.stats import mannwhitneyu
cases = json.load(open(sys.argv[1]))
res = []
for c in cases:
    r = mannwhitneyu(c["a"], c["b"], alternative="two-sided", method=c["method"], use_continuity=True)
    # forced branches too: the exact distribution and the asymptotic one on the same data
    ra = mannwhitneyu(c["a"], c["b"], alternative="two-sided", method="asymptotic", use_continuity=True)
    res.append({"u": float(r.statistic), "p": float(r.pvalue), "p_normal": float(ra.pvalue)})
print(json.dumps(res))
)",
                    in);
  REQUIRE(out.size() == cases.size());
  int exact_seen = 0, normal_seen = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i << " m=" << cases[i].m << " n=" << cases[i].n << " exact=" << ours[i].exact);
    CHECK(ours[i].u_a == Approx(out[i]["u"].get<double>()));
    CHECK(ours[i].p_value == Approx(out[i]["p"].get<double>()).epsilon(1e-9).margin(1e-15));
    CHECK(cuzk::mann_whitney_u_p_normal(data[i].first, data[i].second) ==
          Approx(out[i]["p_normal"].get<double>()).epsilon(1e-9).margin(1e-15));
    (ours[i].exact ? exact_seen : normal_seen)++;
  }
  CHECK(exact_seen >= 4);
  CHECK(normal_seen >= 4);
}

TEST_CASE("quantiles against numpy.percentile") {
  if (!have_scipy()) {
    WARN("SKIPPED: /usr/bin/python3 lacks numpy/scipy");
    return;
  }
  std::mt19937_64 rng(7);
  auto v = lognormal(rng, 37, 1000, 0.3);
  auto out = python(R"(
import json, sys, numpy as np
v = np.array(json.load(open(sys.argv[1])))
q = [float(np.percentile(v, p)) for p in (0, 10, 25, 50, 75, 97.5, 100)]
mad = float(np.median(np.abs(v - np.median(v))))
print(json.dumps({"q": q, "mad": mad}))
)",
                    v);
  std::vector<double> ps = {0, 0.10, 0.25, 0.5, 0.75, 0.975, 1.0};
  for (size_t i = 0; i < ps.size(); ++i) CHECK(cuzk::quantile(v, ps[i]) == Approx(out["q"][i].get<double>()));
  CHECK(cuzk::mad(v) == Approx(out["mad"].get<double>()));
}

TEST_CASE("bootstrap CI of the ratio of medians: deterministic and consistent with numpy") {
  std::mt19937_64 rng(11);
  auto a = lognormal(rng, 31, 100, 0.03);
  auto b = lognormal(rng, 31, 110, 0.03);
  auto c1 = cuzk::bootstrap_ratio_ci(a, b, 2000, 1, 0.95);
  auto c2 = cuzk::bootstrap_ratio_ci(a, b, 2000, 1, 0.95);
  CHECK(c1.low == c2.low);
  CHECK(c1.high == c2.high);
  double point = cuzk::median(b) / cuzk::median(a);
  CHECK(c1.low < point);
  CHECK(c1.high > point);
  CHECK(c1.low > 1.0);  // a 10% shift with 3% noise and 31 samples is clearly detected
  // Identical samples: every resample of each side gives the same median only if constant.
  auto k = cuzk::bootstrap_ratio_ci({5, 5, 5}, {10, 10, 10}, 500, 3, 0.95);
  CHECK(k.low == Approx(2.0));
  CHECK(k.high == Approx(2.0));
  CHECK(std::isnan(cuzk::bootstrap_ratio_ci({}, {1}, 100, 1, 0.95).low));

  if (!have_scipy()) {
    WARN("SKIPPED: numpy cross-check (/usr/bin/python3 lacks numpy/scipy)");
    return;
  }
  // The same percentile bootstrap in numpy with its own generator: with 40000 resamples each,
  // both estimate the same bootstrap distribution's 2.5% and 97.5% quantiles; Monte Carlo error
  // is far below the tolerance, an implementation error (wrong statistic, one side
  // not resampled, wrong quantile) is far above it.
  auto ours = cuzk::bootstrap_ratio_ci(a, b, 40000, 5, 0.95);
  auto out = python(R"(
import json, sys, numpy as np
d = json.load(open(sys.argv[1]))
a, b = np.array(d["a"]), np.array(d["b"])
rng = np.random.default_rng(12345)
B = 40000
ia = rng.integers(0, len(a), size=(B, len(a)))
ib = rng.integers(0, len(b), size=(B, len(b)))
r = np.median(b[ib], axis=1) / np.median(a[ia], axis=1)
print(json.dumps({"low": float(np.percentile(r, 2.5)), "high": float(np.percentile(r, 97.5)),
                  "one_side_low": float(np.percentile(np.median(b[ib], axis=1) / np.median(a), 2.5))}))
)",
                    {{"a", a}, {"b", b}});
  double width = out["high"].get<double>() - out["low"].get<double>();
  INFO("ours [" << ours.low << ", " << ours.high << "] numpy [" << out["low"] << ", " << out["high"] << "]");
  CHECK(std::fabs(ours.low - out["low"].get<double>()) < 0.05 * width);
  CHECK(std::fabs(ours.high - out["high"].get<double>()) < 0.05 * width);
  // Sanity of the tolerance: resampling only one side gives a clearly different lower end.
  CHECK(std::fabs(out["one_side_low"].get<double>() - out["low"].get<double>()) > 0.05 * width);
}

TEST_CASE("Wilcoxon signed-rank and the t interval against scipy.stats at test time") {
  if (!have_scipy()) {
    WARN("SKIPPED: /usr/bin/python3 lacks scipy (install python3-scipy: scripts/setup.sh)");
    return;
  }
  std::mt19937_64 rng(20261201);
  std::normal_distribution<double> nd(0.01, 0.02);
  // Exact branch (n <= 25, continuous), the boundary, the normal branch (n > 25), ties and zeros.
  std::vector<std::vector<double>> cases;
  for (size_t n : {3, 6, 10, 25, 26, 40}) {
    std::vector<double> d;
    for (size_t i = 0; i < n; ++i) d.push_back(nd(rng));
    cases.push_back(d);
  }
  cases.push_back({0.01, 0.01, -0.02, 0.03, 0, 0.02, 0.01, -0.01, 0.04, 0.02, 0.03, 0});
  nlohmann::json in = nlohmann::json::array();
  std::vector<cuzk::WilcoxonResult> ours;
  for (const auto& d : cases) {
    ours.push_back(cuzk::wilcoxon_signed_rank(d));
    in.push_back({{"d", d}, {"method", ours.back().exact ? "exact" : "approx"}});
  }
  auto out = python(R"(
import json, sys, warnings
import numpy as np
from scipy.stats import wilcoxon, t
warnings.simplefilter("ignore")
res = []
for c in json.load(open(sys.argv[1])):
    d = np.array(c["d"])
    r = wilcoxon(d, alternative="two-sided", zero_method="wilcox", correction=False, method=c["method"])
    ra = wilcoxon(d, alternative="two-sided", zero_method="wilcox", correction=False, method="approx")
    lo, hi = t.interval(0.95, len(d) - 1, loc=d.mean(), scale=d.std(ddof=1) / np.sqrt(len(d)))
    res.append({"stat": float(r.statistic), "p": float(r.pvalue), "p_normal": float(ra.pvalue), "lo": lo, "hi": hi})
print(json.dumps(res))
)",
                    in);
  REQUIRE(out.size() == cases.size());
  int exact_seen = 0, normal_seen = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i << " n=" << cases[i].size() << " exact=" << ours[i].exact);
    CHECK(ours[i].statistic == Approx(out[i]["stat"].get<double>()));
    CHECK(ours[i].p_value == Approx(out[i]["p"].get<double>()).epsilon(1e-9).margin(1e-15));
    CHECK(cuzk::wilcoxon_p_normal(cases[i]) == Approx(out[i]["p_normal"].get<double>()).epsilon(1e-9).margin(1e-15));
    const cuzk::MeanCI ci = cuzk::t_interval(cases[i], 0.95);
    CHECK(ci.low == Approx(out[i]["lo"].get<double>()).epsilon(1e-7));
    CHECK(ci.high == Approx(out[i]["hi"].get<double>()).epsilon(1e-7));
    (ours[i].exact ? exact_seen : normal_seen)++;
  }
  CHECK(exact_seen >= 4);
  CHECK(normal_seen >= 3);
}

// Ranks and coverages from scipy.stats.binom (the interval's definition: P(l <= K <= u - 1)
// for K ~ Binomial(n, q), 1-based order statistics).
TEST_CASE("quantile_ci: order-statistic intervals of a quantile") {
  std::vector<double> v20, v100;
  for (int i = 1; i <= 20; ++i) v20.push_back(i * 10.0);  // x_(k) = 10 k
  for (int i = 1; i <= 100; ++i) v100.push_back(double(101 - i));  // unsorted on purpose: x_(k) = k
  const auto med = cuzk::quantile_ci(v20, 0.5);
  CHECK(med.lo == 60.0);
  CHECK(med.hi == 150.0);
  CHECK(med.coverage == Approx(0.9586105346679688));
  CHECK_FALSE(med.lo_open);
  const auto p99 = cuzk::quantile_ci(v20, 0.99);  // 20 samples cannot bound a p99 above
  CHECK(p99.hi_open);
  CHECK(std::isinf(p99.hi));
  CHECK(p99.lo == 190.0);
  const auto p90 = cuzk::quantile_ci(v100, 0.9);
  CHECK(p90.lo == 84.0);
  CHECK(p90.hi == 96.0);
  CHECK(p90.coverage == Approx(0.955690107191223));
  for (size_t n : {1u, 2u, 7u, 33u, 150u})
    for (double q : {0.1, 0.5, 0.9, 0.99}) {
      std::vector<double> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = double(i);
      CHECK(cuzk::quantile_ci(v, q).coverage >= 0.95);
    }
  CHECK(std::isnan(cuzk::quantile_ci({}, 0.5).lo));
}

TEST_CASE("fisher_exact_p: a table computed by hand, and one from scipy") {
  // [[3, 1], [1, 3]]: margins 4 and 4 of 8; P(first cell = k) = C(4,k) C(4,4-k) / C(8,4) =
  // 1, 16, 36, 16, 1 over 70. The observed k = 3 (16/70) and every table no more likely: 34/70.
  CHECK(cuzk::fisher_exact_p(3, 1, 1, 3) == Approx(34.0 / 70.0).epsilon(1e-12));
  // scipy.stats.fisher_exact([[1, 9], [11, 3]]).pvalue
  CHECK(cuzk::fisher_exact_p(1, 9, 11, 3) == Approx(0.0027594561852200836).epsilon(1e-9));
  // The tables as likely as the observed one count: a symmetric table's p is 1.
  CHECK(cuzk::fisher_exact_p(2, 2, 2, 2) == Approx(1.0));
  CHECK(cuzk::fisher_exact_p(0, 0, 0, 0) == 1.0);
}

TEST_CASE("mood_quantile_test: separated samples at the median, counts above the pooled quantile") {
  std::vector<double> a, b;
  for (int i = 1; i <= 10; ++i) a.push_back(i);
  for (int i = 11; i <= 20; ++i) b.push_back(i);
  const cuzk::MoodResult m = cuzk::mood_quantile_test(a, b, 0.5);
  CHECK(m.pooled == Approx(10.5));
  CHECK(m.above_a == 0);
  CHECK(m.above_b == 10);
  // [[0, 10], [10, 0]]: the two extreme tables, each 1 / C(20, 10).
  CHECK(m.p_value == Approx(2.0 / 184756.0).epsilon(1e-9));
  CHECK(cuzk::mood_quantile_test(a, a, 0.9).p_value == Approx(1.0));
  CHECK(cuzk::mood_quantile_test(a, {}, 0.9).p_value == 1.0);
}

TEST_CASE("t tests: paired and Welch against scipy") {
  // scipy.stats.ttest_1samp([0.1, 0.2, 0.15, 0.3], 0)
  const cuzk::TTest p = cuzk::paired_t_test({0.1, 0.2, 0.15, 0.3});
  CHECK(p.estimate == Approx(0.1875));
  CHECK(p.p_value == Approx(0.02187539878275781).epsilon(1e-6));
  // scipy.stats.ttest_ind([1, 2, 3, 4], [2, 4, 6, 8, 10], equal_var=False)
  const cuzk::TTest w = cuzk::welch_t_test({1, 2, 3, 4}, {2, 4, 6, 8, 10});
  CHECK(w.estimate == Approx(-3.5));
  CHECK(w.p_value == Approx(0.06913359319239236).epsilon(1e-6));
  CHECK(w.df == Approx(5.520787746170677).epsilon(1e-6));
  CHECK(std::isnan(cuzk::paired_t_test({0.1}).low));
  CHECK(cuzk::paired_t_test({0.1}).p_value == 1.0);
}
