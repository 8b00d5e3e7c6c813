// The 2^k r factorial estimator (harness/analysis/factorial.hpp): design matrix, least-squares
// fit, simultaneous intervals, allocation of variation and minimum detectable effects.
#include "harness/analysis/factorial.hpp"

#include <fmt/core.h>

#include <Eigen/Dense>
#include <algorithm>
#include <bitset>
#include "harness/analysis/math_policy.hpp"
#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/tools/roots.hpp>
#include <cstdint>
#include <map>

namespace cuzk::factorial {
namespace {

using json = nlohmann::json;

// One column of the ±1 design: the product of the x_i of the flags in `mask`.
struct Term {
  uint32_t mask = 0;
  std::vector<int> flags;  // ascending
};

// Every non-empty subset of k flags, by order and then lexicographically: the mains in flag
// order, then (0,1), (0,2), ..., (1,2), ..., then the higher orders. The reported effects are a
// prefix of this list.
std::vector<Term> terms_of(int k) {
  std::vector<Term> out;
  for (uint32_t mask = 1; mask < (1u << k); ++mask) {
    Term t;
    t.mask = mask;
    for (int f = 0; f < k; ++f)
      if (mask & (1u << f)) t.flags.push_back(f);
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const Term& x, const Term& y) {
    return x.flags.size() != y.flags.size() ? x.flags.size() < y.flags.size() : x.flags < y.flags;
  });
  return out;
}

// x_S for a variant: -1 for every flag of S that is off.
double column_value(uint32_t levels, uint32_t mask) { return std::bitset<32>(mask & ~levels).count() % 2 ? -1.0 : 1.0; }

std::string variant_name(const std::vector<std::string>& flags, uint32_t levels) {
  std::string s;
  for (size_t i = 0; i < flags.size(); ++i)
    if (levels & (1u << i)) s += (s.empty() ? "" : "+") + flags[i];
  return s.empty() ? "(all off)" : s;
}

// A ratio's exponent per unit of q: the ±1 coding spans 2 per flag, and an interaction's
// column moves by 4 across the 2 x 2 contrast.
double ratio_scale(int order) { return order == 1 ? 2.0 : 4.0; }

// Number of reported effects: k mains and k(k-1)/2 two-flag interactions.
int reported_count(int k) { return k + k * (k - 1) / 2; }

double bonferroni_t(double level, int m, int df) {
  return boost::math::quantile(boost::math::students_t(df), 1 - (1 - level) / (2.0 * m));
}

// Noncentrality (true effect / se) at which the two-sided test |T| > t_crit with df degrees of
// freedom has the given power: P(T' > t_crit) + P(T' < -t_crit) = power, T' noncentral t.
double noncentrality_for_power(int df, double t_crit, double power) {
  auto power_minus_target = [&](double lambda) {
    const boost::math::non_central_t d(df, lambda);
    return boost::math::cdf(boost::math::complement(d, t_crit)) + boost::math::cdf(d, -t_crit) - power;
  };
  // With no effect the test fires at its size; asking for less power than that needs no effect.
  if (power_minus_target(0) >= 0) return 0;
  // Power rises with lambda; the normal approximation t_crit + z_power is a close first guess.
  const double guess = t_crit + 1.2815515655446004;  // z quantile of 0.90
  boost::math::tools::eps_tolerance<double> tol(40);
  std::uintmax_t iterations = 200;
  const auto [a, b] = boost::math::tools::bracket_and_solve_root(power_minus_target, guess, 2.0, true, tol, iterations);
  return (a + b) / 2;
}

// Minimum detectable ratio from the se of one term: exp(scale * se * lambda).
double mde_ratio(double se, int df, double t_crit, double power, int order) {
  if (se == 0) return 1;
  return std::exp(ratio_scale(order) * se * noncentrality_for_power(df, t_crit, power));
}

void check_level(double level, const char* what) {
  if (!(level > 0 && level < 1))
    throw FactorialError(fmt::format("{} must lie strictly between 0 and 1 (got {})", what, level));
}

void check_flag_count(int k) {
  if (k < 1) throw FactorialError("a factorial design needs at least 1 flag");
  if (k > kMaxFlags)
    throw FactorialError(
        fmt::format("at most {} flags: 2^k builds per round, and {} flags would be {} builds; "
                    "split the flags into groups of at most {}",
                    kMaxFlags, k, 1u << k, kMaxFlags));
}

}  // namespace

Analysis analyse(const std::vector<std::string>& flags, const std::vector<Observation>& obs, double level,
                 bool blocks) {
  const int k = int(flags.size());
  check_flag_count(k);
  check_level(level, "the confidence level");
  const uint32_t variants = 1u << k;

  std::map<int, int> round_index;  // block id -> 0..R-1, in ascending id order
  std::vector<int> per_variant(variants, 0);
  for (size_t i = 0; i < obs.size(); ++i) {
    const Observation& o = obs[i];
    if (o.levels >= variants)
      throw FactorialError(fmt::format("observation {} has levels {:#x}, but {} flag(s) allow only 0..{:#x}", i,
                                       o.levels, k, variants - 1));
    if (!std::isfinite(o.value) || o.value <= 0)
      throw FactorialError(
          fmt::format("observation {} (variant {}, round {}) has value {}: times must be finite "
                      "and > 0",
                      i, variant_name(flags, o.levels), o.block, o.value));
    round_index.emplace(o.block, 0);
    ++per_variant[o.levels];
  }
  int rounds = 0;
  for (auto& [id, index] : round_index) index = rounds++;

  Analysis a;
  a.k = k;
  a.n = int(obs.size());
  a.rounds = rounds;
  a.level = level;
  a.blocks = blocks && rounds > 1;

  std::string missing;
  for (uint32_t v = 0; v < variants; ++v)
    if (per_variant[v] == 0) missing += (missing.empty() ? "" : ", ") + variant_name(flags, v);
  if (!missing.empty())
    throw FactorialError(
        fmt::format("no observation of variant(s) {}: every one of the {} variants needs some, "
                    "at least 2 rounds of every variant",
                    missing, variants));

  const std::vector<Term> terms = terms_of(k);
  const int effect_cols = int(variants);  // intercept + 2^k - 1 terms
  const int p = effect_cols + (a.blocks ? rounds - 1 : 0);
  if (a.n <= p)
    throw FactorialError(
        fmt::format("{} observations for {} parameters ({} variants{}): need more than {}, "
                    "at least 2 rounds of every variant",
                    a.n, p, variants, a.blocks ? fmt::format(" + {} rounds - 1", rounds) : "", p));

  Eigen::MatrixXd X(a.n, p);
  Eigen::VectorXd y(a.n);
  for (int r = 0; r < a.n; ++r) {
    const Observation& o = obs[size_t(r)];
    y(r) = std::log(o.value);
    X(r, 0) = 1;
    for (size_t t = 0; t < terms.size(); ++t) X(r, int(t) + 1) = column_value(o.levels, terms[t].mask);
    if (a.blocks) {
      // Sum-to-zero (effect) coding: the last round is -1 in every round column.
      const int round = round_index.at(o.block);
      for (int b = 0; b < rounds - 1; ++b)
        X(r, effect_cols + b) = round == rounds - 1 ? -1.0 : (round == b ? 1.0 : 0.0);
    }
  }

  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(X);
  if (qr.rank() < p)
    throw FactorialError(
        fmt::format("the design cannot separate every term (rank {} of {} columns): some round "
                    "or variant holds too few observations; run at least 2 complete rounds",
                    qr.rank(), p));
  const Eigen::VectorXd beta = qr.solve(y);
  const double sse = (y - X * beta).squaredNorm();
  const double sst = (y.array() - y.mean()).matrix().squaredNorm();
  a.df = a.n - p;
  const bool constant = sst == 0;
  if (constant) a.note = "all observations are equal: no variation to allocate or test";
  const double s2 = constant ? 0.0 : sse / a.df;
  a.s_e = std::sqrt(s2);
  const Eigen::MatrixXd xtx_inv = (X.transpose() * X).ldlt().solve(Eigen::MatrixXd::Identity(p, p));

  const int m = reported_count(k);
  const double t_crit = bonferroni_t(level, m, a.df);
  const boost::math::students_t t_dist(a.df);
  double max_se[3] = {0, 0, 0};  // by order 1, 2
  for (size_t t = 0; t < terms.size(); ++t) {
    const int col = int(t) + 1;
    const int order = int(terms[t].flags.size());
    const double q = constant ? 0.0 : beta(col);
    const double ss_share = constant ? 0.0 : q * q * X.col(col).squaredNorm() / sst;
    if (order >= 3) {
      a.share_higher_order += ss_share;
      continue;
    }
    Effect e;
    e.flags = terms[t].flags;
    e.order = order;
    for (int f : e.flags) e.name += (e.name.empty() ? "" : " x ") + flags[size_t(f)];
    e.q = q;
    e.se = std::sqrt(s2 * xtx_inv(col, col));
    const double scale = ratio_scale(order);
    e.ratio = std::exp(scale * q);
    e.low = std::exp(scale * (q - t_crit * e.se));
    e.high = std::exp(scale * (q + t_crit * e.se));
    if (e.se > 0) {
      e.p = 2 * boost::math::cdf(boost::math::complement(t_dist, std::fabs(q) / e.se));
      e.significant = std::fabs(q) > t_crit * e.se;
    } else {  // a noise-free fit: any non-zero effect is certain
      e.p = q != 0 ? 0.0 : 1.0;
      e.significant = q != 0;
    }
    e.share = ss_share;
    max_se[order] = std::max(max_se[order], e.se);
    a.effects.push_back(std::move(e));
  }

  if (!constant) {
    a.share_noise = sse / sst;
    if (a.blocks) {
      const Eigen::MatrixXd X0 = X.leftCols(effect_cols);
      const Eigen::VectorXd beta0 = X0.colPivHouseholderQr().solve(y);
      const double sse0 = (y - X0 * beta0).squaredNorm();
      a.share_blocks = std::max(0.0, (sse0 - sse) / sst);  // >= 0 up to rounding: nested models
    }
  }

  a.mde_main_ratio = mde_ratio(max_se[1], a.df, t_crit, kMdePower, 1);
  if (k >= 2) a.mde_interaction_ratio = mde_ratio(max_se[2], a.df, t_crit, kMdePower, 2);
  return a;
}

json Analysis::to_json() const {
  json effects_json = json::array();
  for (const Effect& e : effects)
    effects_json.push_back({{"flags", e.flags},
                            {"name", e.name},
                            {"order", e.order},
                            {"q", e.q},
                            {"se", e.se},
                            {"ratio", e.ratio},
                            {"low", e.low},
                            {"high", e.high},
                            {"p", e.p},
                            {"significant", e.significant},
                            {"share", e.share}});
  // NaN (no interaction term) is written as null.
  auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {{"k", k},
          {"n", n},
          {"df", df},
          {"rounds", rounds},
          {"blocks", blocks},
          {"level", level},
          {"s_e", s_e},
          {"effects", effects_json},
          {"share_higher_order", share_higher_order},
          {"share_blocks", share_blocks},
          {"share_noise", share_noise},
          {"mde_power", kMdePower},
          {"mde_main_ratio", number(mde_main_ratio)},
          {"mde_interaction_ratio", number(mde_interaction_ratio)},
          {"note", note}};
}

double mde_ratio_planned(int k, int rounds, double sigma_log, int order, double level, double power, bool blocks) {
  check_flag_count(k);
  check_level(level, "the confidence level");
  check_level(power, "the power");
  if (order != 1 && order != 2)
    throw FactorialError(fmt::format("order must be 1 (main) or 2 (interaction), got {}", order));
  if (order == 2 && k < 2) throw FactorialError("a two-flag interaction needs at least 2 flags");
  if (rounds < 1) throw FactorialError(fmt::format("rounds must be at least 1 (got {})", rounds));
  if (!(sigma_log >= 0) || !std::isfinite(sigma_log))
    throw FactorialError(fmt::format("the residual sd must be finite and >= 0 (got {})", sigma_log));
  const int variants = 1 << k;
  const int n = variants * rounds;
  const int df = n - variants - (blocks && rounds > 1 ? rounds - 1 : 0);
  if (df < 1) return NAN;
  // Every ±1 column of a balanced design has squared norm n, orthogonal to the others.
  const double se = sigma_log / std::sqrt(double(n));
  return mde_ratio(se, df, bonferroni_t(level, reported_count(k), df), power, order);
}

int rounds_for_mde(int k, double sigma_log, double target_ratio, int order, double level, double power, bool blocks) {
  if (!(target_ratio > 0) || !std::isfinite(target_ratio))
    throw FactorialError(fmt::format("the target ratio must be finite and > 0 (got {})", target_ratio));
  const double target = std::max(target_ratio, 1 / target_ratio);
  constexpr int kMinRounds = 2, kMaxRounds = 1000;
  auto enough = [&](int r) {
    const double mde = mde_ratio_planned(k, r, sigma_log, order, level, power, blocks);
    return std::isfinite(mde) && mde <= target;
  };
  // The planned MDE falls as rounds grow (smaller se, more df), so bisect on the first round
  // count that is enough.
  if (!enough(kMaxRounds)) return -1;
  int lo = kMinRounds, hi = kMaxRounds;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (enough(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

}  // namespace cuzk::factorial
