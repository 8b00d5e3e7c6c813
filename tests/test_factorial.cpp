// The 2^k r factorial estimator (harness/analysis/factorial.hpp): every number against numpy/scipy
// (tests/scripts/factorial_reference.py, run with Debian's /usr/bin/python3 at test time), planted
// effects recovered from near noise-free data, input errors, and the planning functions against
// the fit.
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "harness/analysis/factorial.hpp"
#include "subprocess.hpp"
#include "test_util.hpp"

using cuzk::factorial::analyse;
using cuzk::factorial::Analysis;
using cuzk::factorial::FactorialError;
using cuzk::factorial::Observation;
using cuzk::test::TempDir;

namespace {

const std::vector<std::string> kFlags3 = {"pinned", "smallvec", "presize"};

// Deterministic pseudo-noise in [-1, 1] for observation (variant, round): no RNG, so the Python
// side sees exactly the same values through the JSON file.
double wobble(uint32_t variant, int round) { return std::sin(12.9898 * (8.0 * round + variant) + 78.233); }

// k = 3, 4 rounds: pinned -8%, smallvec +3%, pinned x smallvec +2% (on the 0/1 scale), a drift of
// 0.4% per round, and noise of about 1%.
std::vector<Observation> planted3(int rounds) {
  std::vector<Observation> obs;
  for (int r = 0; r < rounds; ++r)
    for (uint32_t v = 0; v < 8; ++v) {
      const double x0 = v & 1, x1 = v >> 1 & 1, x2 = v >> 2 & 1;
      const double log_t = std::log(2.5e7) + std::log(0.92) * x0 + std::log(1.03) * x1 + std::log(1.02) * x0 * x1 +
                           0.001 * x2 + 0.004 * r + 0.01 * wobble(v, r);
      obs.push_back({v, r, std::exp(log_t)});
    }
  return obs;
}

nlohmann::json reference(const std::vector<std::string>& flags, const std::vector<Observation>& obs, bool blocks) {
  nlohmann::json in = {
      {"flags", flags}, {"level", 0.95}, {"blocks", blocks}, {"observations", nlohmann::json::array()}};
  for (const auto& o : obs)
    in["observations"].push_back({{"levels", o.levels}, {"block", o.block}, {"value", o.value}});
  TempDir d;
  // nlohmann/json writes doubles with round-trip precision: the script sees the same values.
  cuzk::test::spit(d.file("in.json"), in.dump());
  auto r = cuzk::testing::run_command("/usr/bin/python3 '" CUZK_SOURCE_DIR "/tests/scripts/factorial_reference.py' '" +
                                      d.file("in.json") + "' >'" + d.file("out.json") + "'");
  INFO(r.output);  // stderr only: warnings and tracebacks
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(cuzk::test::slurp(d.file("out.json")));
}

bool have_scipy() {
  static const bool ok =
      cuzk::testing::run_command("/usr/bin/python3 -c 'import scipy.stats, scipy.optimize, numpy'").status == 0;
  return ok;
}

// Relative agreement to 1e-6, with an absolute floor for quantities that are near 0.
void check_close(const char* what, double got, double want) {
  INFO(what << ": got " << got << ", reference " << want);
  CHECK(std::fabs(got - want) <= 1e-6 * std::fabs(want) + 1e-12);
}

void check_against_reference(const Analysis& a, const nlohmann::json& ref) {
  CHECK(a.n == ref["n"].get<int>());
  CHECK(a.df == ref["df"].get<int>());
  CHECK(a.rounds == ref["rounds"].get<int>());
  check_close("s_e", a.s_e, ref["s_e"]);
  REQUIRE(a.effects.size() == ref["effects"].size());
  for (size_t i = 0; i < a.effects.size(); ++i) {
    const auto& e = a.effects[i];
    const auto& r = ref["effects"][i];
    INFO("effect " << e.name);
    CHECK(e.flags == r["flags"].get<std::vector<int>>());
    check_close("q", e.q, r["q"]);
    check_close("se", e.se, r["se"]);
    check_close("ratio", e.ratio, r["ratio"]);
    check_close("low", e.low, r["low"]);
    check_close("high", e.high, r["high"]);
    check_close("p", e.p, r["p"]);
    check_close("share", e.share, r["share"]);
    CHECK(e.significant == r["significant"].get<bool>());
  }
  check_close("share_higher_order", a.share_higher_order, ref["share_higher_order"]);
  check_close("share_blocks", a.share_blocks, ref["share_blocks"]);
  check_close("share_noise", a.share_noise, ref["share_noise"]);
  check_close("mde_main_ratio", a.mde_main_ratio, ref["mde_main_ratio"]);
  check_close("mde_interaction_ratio", a.mde_interaction_ratio, ref["mde_interaction_ratio"]);
}

// The FactorialError message of f(), or "" when it does not throw one.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const FactorialError& e) {
    return e.what();
  }
  return "";
}

double shares_total(const Analysis& a) {
  double s = a.share_higher_order + a.share_blocks + a.share_noise;
  for (const auto& e : a.effects) s += e.share;
  return s;
}

}  // namespace

TEST_CASE("factorial fit matches numpy/scipy: balanced, unbalanced, without blocks") {
  if (!have_scipy()) {
    WARN("SKIPPED: /usr/bin/python3 lacks numpy/scipy (install python3-scipy: scripts/setup.sh)");
    return;
  }
  const auto balanced = planted3(4);
  auto unbalanced = balanced;
  unbalanced.erase(unbalanced.begin() + 13);  // round 1, variant 5 (pinned+presize)

  SECTION("balanced, with round blocks") {
    const Analysis a = analyse(kFlags3, balanced);
    CHECK(a.blocks);
    CHECK(a.effects.size() == 6);     // 3 mains + 3 two-flag interactions
    CHECK(a.effects[0].significant);  // the planted -8% of "pinned" is found
    check_against_reference(a, reference(kFlags3, balanced, true));
    CHECK(shares_total(a) == Approx(1).margin(1e-9));
  }
  SECTION("unbalanced: one observation missing") {
    const Analysis a = analyse(kFlags3, unbalanced);
    CHECK(a.n == 31);
    check_against_reference(a, reference(kFlags3, unbalanced, true));
  }
  SECTION("balanced, no block columns") {
    const Analysis a = analyse(kFlags3, balanced, 0.95, false);
    CHECK_FALSE(a.blocks);
    CHECK(a.share_blocks == 0);
    check_against_reference(a, reference(kFlags3, balanced, false));
  }
}

TEST_CASE("factorial recovers planted ratios in near noise-free data (k = 2)") {
  // time = base * 1.10^x1 * 1.05^x2 * 1.08^(x1 x2), x in {0, 1}, 5 rounds, noise ~1e-7.
  std::vector<Observation> obs;
  for (int r = 0; r < 5; ++r)
    for (uint32_t v = 0; v < 4; ++v) {
      const double x1 = v & 1, x2 = v >> 1 & 1;
      const double t =
          1e6 * std::pow(1.10, x1) * std::pow(1.05, x2) * std::pow(1.08, x1 * x2) * std::exp(1e-7 * wobble(v, r));
      obs.push_back({v, r, t});
    }
  const Analysis a = analyse({"pinned", "smallvec"}, obs);
  REQUIRE(a.effects.size() == 3);
  CHECK(a.effects[0].name == "pinned");
  CHECK(a.effects[2].name == "pinned x smallvec");
  CHECK(a.effects[2].order == 2);
  // Main effects average over the other flag: flag 1's ratio is 1.10 when flag 2 is off and
  // 1.10 * 1.08 when it is on, geometric mean 1.10 * sqrt(1.08).
  CHECK(a.effects[0].ratio == Approx(1.10 * std::sqrt(1.08)).epsilon(1e-6));
  CHECK(a.effects[1].ratio == Approx(1.05 * std::sqrt(1.08)).epsilon(1e-6));
  CHECK(a.effects[2].ratio == Approx(1.08).epsilon(1e-6));
  for (const auto& e : a.effects) {
    CHECK(e.significant);
    CHECK(e.low < e.ratio);
    CHECK(e.ratio < e.high);
    CHECK(e.high / e.low < 1 + 1e-5);
  }
  CHECK(a.share_higher_order == 0);  // k = 2 has no order-3 terms
  CHECK(a.share_noise < 1e-9);
  CHECK(shares_total(a) == Approx(1).margin(1e-9));
}

TEST_CASE("factorial with one flag: one main effect, no interactions") {
  std::vector<Observation> obs;
  for (int r = 0; r < 6; ++r) {
    obs.push_back({0, r, 100 * std::exp(0.01 * wobble(0, r))});
    obs.push_back({1, r, 130 * std::exp(0.01 * wobble(1, r))});
  }
  const Analysis a = analyse({"pinned"}, obs);
  REQUIRE(a.effects.size() == 1);
  CHECK(a.effects[0].ratio == Approx(1.3).epsilon(0.02));
  CHECK(a.effects[0].significant);
  CHECK(a.df == 12 - 2 - 5);
  CHECK(std::isfinite(a.mde_main_ratio));
  CHECK(std::isnan(a.mde_interaction_ratio));
  CHECK(a.to_json()["mde_interaction_ratio"].is_null());
  CHECK(shares_total(a) == Approx(1).margin(1e-9));
}

TEST_CASE("factorial rejects bad input with a message that says what is wrong") {
  const auto good = planted3(2);
  CHECK(error_of([&] { analyse(std::vector<std::string>(7, "f"), good); }).find("at most 6 flags") !=
        std::string::npos);
  CHECK(error_of([&] { analyse({}, good); }).find("at least 1 flag") != std::string::npos);

  auto zero = good;
  zero[3].value = 0;
  CHECK(error_of([&] { analyse(kFlags3, zero); }).find("observation 3") != std::string::npos);
  auto nan = good;
  nan[5].value = NAN;
  CHECK(error_of([&] { analyse(kFlags3, nan); }).find("observation 5") != std::string::npos);
  auto out_of_range = good;
  out_of_range[0].levels = 8;
  CHECK(error_of([&] { analyse(kFlags3, out_of_range); }).find("levels") != std::string::npos);

  // One round: 8 observations for 8 parameters, no residual degree of freedom.
  const std::string one_round = error_of([&] { analyse(kFlags3, planted3(1)); });
  CHECK(one_round.find("8 observations for 8 parameters") != std::string::npos);
  CHECK(one_round.find("at least 2 rounds") != std::string::npos);
  // A variant never observed cannot be estimated.
  auto missing = good;
  missing.erase(missing.begin() + 8 + 7);
  missing.erase(missing.begin() + 7);
  CHECK(error_of([&] { analyse(kFlags3, missing); }).find("pinned+smallvec+presize") != std::string::npos);
  CHECK(error_of([&] { analyse(kFlags3, good, 1.0); }).find("confidence level") != std::string::npos);
  CHECK(error_of([&] { analyse(kFlags3, good); }).empty());
}

TEST_CASE("factorial on constant data: zero shares, a note, no NaN") {
  std::vector<Observation> obs;
  for (int r = 0; r < 3; ++r)
    for (uint32_t v = 0; v < 4; ++v) obs.push_back({v, r, 4242});
  const Analysis a = analyse({"pinned", "smallvec"}, obs);
  CHECK_FALSE(a.note.empty());
  CHECK(a.s_e == 0);
  CHECK(a.share_noise == 0);
  CHECK(a.share_blocks == 0);
  for (const auto& e : a.effects) {
    CHECK(e.ratio == 1);
    CHECK(e.share == 0);
    CHECK(e.p == 1);
    CHECK_FALSE(e.significant);
  }
  CHECK(a.to_json().dump().find("null") == std::string::npos);
}

TEST_CASE("planned minimum detectable effect: monotone rounds, agrees with the fit") {
  using cuzk::factorial::mde_ratio_planned;
  using cuzk::factorial::rounds_for_mde;
  const double sigma = 0.02;
  // More rounds detect smaller effects.
  double previous = INFINITY;
  for (int r = 2; r <= 40; ++r) {
    const double mde = mde_ratio_planned(3, r, sigma, 1);
    CHECK(mde < previous);
    previous = mde;
  }
  int previous_rounds = 1;
  for (double target : {1.05, 1.03, 1.02, 1.01, 1.005}) {
    const int r = rounds_for_mde(3, sigma, target);
    INFO("target " << target << ": " << r << " rounds");
    REQUIRE(r >= previous_rounds);
    CHECK(mde_ratio_planned(3, r, sigma, 1) <= target);
    if (r > 2) CHECK(mde_ratio_planned(3, r - 1, sigma, 1) > target);  // the fewest
    previous_rounds = r;
  }
  CHECK(rounds_for_mde(3, sigma, 1.0 / 1.01) == rounds_for_mde(3, sigma, 1.01));
  // An interaction's ratio is exp(4q) against a main's exp(2q) at the same se: it takes more rounds.
  CHECK(rounds_for_mde(3, sigma, 1.01, 2) > rounds_for_mde(3, sigma, 1.01, 1));
  CHECK(rounds_for_mde(3, 0.5, 1.0001) == -1);
  CHECK(rounds_for_mde(3, 2 * sigma, 1.01) > rounds_for_mde(3, sigma, 1.01));

  // A balanced simulated matrix with lognormal noise of sd sigma: the fit's MDE is the planned
  // one at the fitted s_e, and close to the planned one at the true sigma.
  const int rounds = 50;
  std::mt19937_64 rng(20240611);
  std::normal_distribution<double> noise(0, sigma);
  std::vector<Observation> obs;
  for (int r = 0; r < rounds; ++r)
    for (uint32_t v = 0; v < 8; ++v) obs.push_back({v, r, 1e6 * std::exp(0.03 * (v & 1) + noise(rng))});
  const Analysis a = analyse(kFlags3, obs);
  CHECK(a.mde_main_ratio == Approx(mde_ratio_planned(3, rounds, a.s_e, 1)).epsilon(1e-9));
  CHECK(a.mde_interaction_ratio == Approx(mde_ratio_planned(3, rounds, a.s_e, 2)).epsilon(1e-9));
  const double planned = mde_ratio_planned(3, rounds, sigma, 1);
  INFO("fitted s_e " << a.s_e << ", MDE " << a.mde_main_ratio << ", planned at sigma " << planned);
  CHECK(std::log(a.mde_main_ratio) == Approx(std::log(planned)).epsilon(0.05));
  CHECK(std::isnan(mde_ratio_planned(3, 1, sigma, 1)));  // one round with blocks: no df
}
