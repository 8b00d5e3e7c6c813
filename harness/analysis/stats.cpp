// Statistics for compare/gate (docs/compare.md).
#include "harness/analysis/stats.hpp"

#include "harness/analysis/math_policy.hpp"
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/hypergeometric.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <utility>

namespace cuzk {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  q = std::clamp(q, 0.0, 1.0);
  double pos = q * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

double median(const std::vector<double>& v) { return quantile(v, 0.5); }

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : s / static_cast<double>(v.size());
}

double mad(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double m = median(v);
  std::vector<double> d;
  d.reserve(v.size());
  for (double x : v) d.push_back(std::fabs(x - m));
  return median(d);
}

double iqr(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  return quantile(v, 0.75) - quantile(v, 0.25);
}

QuantileCI quantile_ci(std::vector<double> v, double q, double level) {
  QuantileCI ci;
  const int64_t n = int64_t(v.size());
  if (n == 0) return {std::nan(""), std::nan(""), true, true, 0};
  std::sort(v.begin(), v.end());
  const boost::math::binomial_distribution<double> B(double(n), q);
  // P(x_(l) <= Q < x_(u)) = F(u - 1) - F(l - 1) for 1-based ranks l < u; rank 0 is -inf and
  // rank n + 1 is +inf. Start at the ranks around n q and widen the side that adds more.
  auto F = [&](int64_t k) { return k < 0 ? 0.0 : k >= n ? 1.0 : boost::math::cdf(B, double(k)); };
  int64_t l = std::clamp<int64_t>(int64_t(std::floor(q * double(n))), 0, n);
  int64_t u = l + 1;
  while (F(u - 1) - F(l - 1) < level && (l > 0 || u < n + 1)) {
    const double gain_lo = l > 0 ? F(l - 1) - F(l - 2) : -1;
    const double gain_hi = u < n + 1 ? F(u) - F(u - 1) : -1;
    if (gain_lo >= gain_hi) --l; else ++u;
  }
  ci.coverage = F(u - 1) - F(l - 1);
  ci.lo_open = l == 0;
  ci.hi_open = u == n + 1;
  ci.lo = ci.lo_open ? -std::numeric_limits<double>::infinity() : v[size_t(l - 1)];
  ci.hi = ci.hi_open ? std::numeric_limits<double>::infinity() : v[size_t(u - 1)];
  return ci;
}

namespace {

// U of a: number of pairs with a > b, ties counted 1/2 (equivalently R_a - n_a(n_a+1)/2).
double u_statistic(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a)
    for (double y : b) u += x > y ? 1.0 : (x == y ? 0.5 : 0.0);
  return u;
}

bool has_ties(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  return std::adjacent_find(all.begin(), all.end()) != all.end();
}

// Number of arrangements of m a's and n b's with U_a = u, for u = 0..m*n.
// f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u): the largest value is an a (it beats all n b's)
// or a b. Computed in doubles (exact up to 2^53; C(40,20) ~ 1.4e11).
std::vector<double> u_counts(size_t m, size_t n) {
  // table[i][j] is the distribution for (i, j); rolled over i.
  std::vector<std::vector<double>> prev(n + 1), cur(n + 1);
  for (size_t j = 0; j <= n; ++j) prev[j] = {1.0};  // i = 0: U = 0 only
  for (size_t i = 1; i <= m; ++i) {
    cur[0] = {1.0};  // j = 0: U = 0 only
    for (size_t j = 1; j <= n; ++j) {
      std::vector<double> f(i * j + 1, 0.0);
      const auto& left = prev[j];      // (i-1, j), shifted by j
      const auto& down = cur[j - 1];   // (i, j-1)
      for (size_t u = 0; u < left.size(); ++u) f[u + j] += left[u];
      for (size_t u = 0; u < down.size(); ++u) f[u] += down[u];
      cur[j] = std::move(f);
    }
    std::swap(prev, cur);
  }
  return prev[n];
}

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

double mann_whitney_u_p_exact(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1.0;
  size_t m = a.size(), n = b.size();
  double u = u_statistic(a, b);
  double umax = std::max(u, static_cast<double>(m * n) - u);
  auto f = u_counts(m, n);
  double total = 0, upper = 0;
  for (size_t k = 0; k < f.size(); ++k) {
    total += f[k];
    if (static_cast<double>(k) >= umax - 1e-9) upper += f[k];
  }
  return std::min(1.0, 2.0 * upper / total);
}

double mann_whitney_u_p_normal(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1.0;
  double m = static_cast<double>(a.size()), n = static_cast<double>(b.size());
  double u = u_statistic(a, b);
  double umax = std::max(u, m * n - u);
  std::map<double, double> tie;
  for (double x : a) tie[x] += 1;
  for (double x : b) tie[x] += 1;
  double t = 0;
  for (auto& [v, c] : tie) t += c * c * c - c;
  double N = m + n;
  double var = m * n / 12.0 * ((N + 1) - t / (N * (N - 1)));
  if (var <= 0) return 1.0;
  double z = (umax - m * n / 2.0 - 0.5) / std::sqrt(var);
  return std::min(1.0, 2.0 * normal_sf(z));
}

MannWhitneyResult mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitneyResult r;
  if (a.empty() || b.empty()) return r;
  r.u_a = u_statistic(a, b);
  r.exact = a.size() <= kMannWhitneyExactMax && b.size() <= kMannWhitneyExactMax && !has_ties(a, b);
  r.p_value = r.exact ? mann_whitney_u_p_exact(a, b) : mann_whitney_u_p_normal(a, b);
  return r;
}

double mann_whitney_u_p(const std::vector<double>& a, const std::vector<double>& b) {
  return mann_whitney_u(a, b).p_value;
}

namespace {

// Percentile bootstrap of stat(median(a*), median(b*)) over resamples a*, b* of each side drawn
// with replacement (std::mt19937_64 seeded with `seed`, so results are reproducible). `stat`
// returns NaN to abandon the interval (e.g. a zero median under a ratio).
template <class Stat>
std::pair<double, double> bootstrap_medians(const std::vector<double>& a, const std::vector<double>& b, int resamples,
                                            uint64_t seed, double level, Stat stat) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (a.empty() || b.empty() || resamples <= 0) return {nan, nan};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pa(0, a.size() - 1), pb(0, b.size() - 1);
  std::vector<double> values;
  values.reserve(static_cast<size_t>(resamples));
  std::vector<double> ra(a.size()), rb(b.size());
  for (int i = 0; i < resamples; ++i) {
    for (auto& x : ra) x = a[pa(rng)];
    for (auto& x : rb) x = b[pb(rng)];
    const double v = stat(median(ra), median(rb));
    if (std::isnan(v)) return {nan, nan};
    values.push_back(v);
  }
  const double tail = (1.0 - level) / 2.0;
  return {quantile(values, tail), quantile(values, 1.0 - tail)};
}

}  // namespace

RatioCI bootstrap_ratio_ci(const std::vector<double>& a, const std::vector<double>& b, int resamples,
                           uint64_t seed, double level) {
  auto [lo, hi] = bootstrap_medians(a, b, resamples, seed, level, [](double ma, double mb) {
    return ma == 0 ? std::numeric_limits<double>::quiet_NaN() : mb / ma;
  });
  return {lo, hi};
}

DiffCI bootstrap_diff_ci(const std::vector<double>& a, const std::vector<double>& b, int resamples, uint64_t seed,
                         double level) {
  auto [lo, hi] = bootstrap_medians(a, b, resamples, seed, level, [](double ma, double mb) { return mb - ma; });
  return {lo, hi};
}

// ---------------------------------------------------------------- paired samples

namespace {

// Mid-ranks (1-based) of v, and the sizes of its groups of equal values.
std::vector<double> mid_ranks(const std::vector<double>& v, std::vector<double>* tie_sizes = nullptr) {
  std::vector<size_t> idx(v.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return v[x] < v[y]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double mid = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = mid;
    if (tie_sizes && j > i) tie_sizes->push_back(static_cast<double>(j - i + 1));
    i = j + 1;
  }
  return r;
}

struct SignedRanks {
  double r_plus = 0, r_minus = 0;
  size_t n = 0;
  bool ties = false;
  std::vector<double> tie_sizes;
};

SignedRanks signed_ranks(const std::vector<double>& d) {
  SignedRanks s;
  std::vector<double> nz, abs_nz;
  for (double x : d)
    if (x != 0) {
      nz.push_back(x);
      abs_nz.push_back(std::fabs(x));
    }
  s.n = nz.size();
  const std::vector<double> r = mid_ranks(abs_nz, &s.tie_sizes);
  s.ties = !s.tie_sizes.empty();
  for (size_t i = 0; i < nz.size(); ++i) (nz[i] > 0 ? s.r_plus : s.r_minus) += r[i];
  return s;
}

}  // namespace

double wilcoxon_p_exact(const std::vector<double>& d) {
  const SignedRanks s = signed_ranks(d);
  if (s.n == 0) return 1.0;
  // pmf of R+ over the 2^n equally likely sign patterns: adding rank k shifts half the mass by k.
  std::vector<double> pmf(1, 1.0);
  for (size_t k = 1; k <= s.n; ++k) {
    std::vector<double> next(pmf.size() + k, 0.0);
    for (size_t w = 0; w < pmf.size(); ++w) {
      next[w] += 0.5 * pmf[w];
      next[w + k] += 0.5 * pmf[w];
    }
    pmf = std::move(next);
  }
  const size_t r = static_cast<size_t>(s.r_plus);  // an integer when there are no ties
  if (r == (pmf.size() - 1) / 2) return 1.0;
  double less = 0, greater = 0;
  for (size_t w = 0; w < pmf.size(); ++w) {
    if (w <= r) less += pmf[w];
    if (w >= r) greater += pmf[w];
  }
  return std::clamp(2.0 * std::min(less, greater), 0.0, 1.0);
}

double wilcoxon_p_normal(const std::vector<double>& d) {
  const SignedRanks s = signed_ranks(d);
  if (s.n == 0) return 1.0;
  const double n = static_cast<double>(s.n);
  const double t = std::min(s.r_plus, s.r_minus);
  const double mean = n * (n + 1) / 4;
  double var = n * (n + 1) * (2 * n + 1);
  for (double g : s.tie_sizes) var -= 0.5 * g * (g * g - 1);
  if (var <= 0) return 1.0;
  const double z = (t - mean) / std::sqrt(var / 24);
  return std::min(1.0, 2.0 * normal_sf(std::fabs(z)));
}

WilcoxonResult wilcoxon_signed_rank(const std::vector<double>& d) {
  WilcoxonResult w;
  const SignedRanks s = signed_ranks(d);
  w.n = s.n;
  w.statistic = std::min(s.r_plus, s.r_minus);
  if (s.n == 0) return w;
  w.exact = s.n == d.size() && !s.ties && s.n <= kWilcoxonExactMax;
  w.p_value = w.exact ? wilcoxon_p_exact(d) : wilcoxon_p_normal(d);
  return w;
}

double student_t_cdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(t)) return t > 0 ? 1.0 : 0.0;
  return boost::math::cdf(boost::math::students_t(df), t);
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return std::numeric_limits<double>::quiet_NaN();
  return boost::math::quantile(boost::math::students_t(df), p);
}

MeanCI t_interval(const std::vector<double>& d, double level) {
  MeanCI r;
  r.n = d.size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (d.empty()) {
    r.mean = r.sd = r.low = r.high = nan;
    return r;
  }
  double sum = 0;
  for (double x : d) sum += x;
  r.mean = sum / static_cast<double>(d.size());
  if (d.size() < 2) {
    r.sd = r.low = r.high = nan;
    return r;
  }
  double ss = 0;
  for (double x : d) ss += (x - r.mean) * (x - r.mean);
  r.sd = std::sqrt(ss / static_cast<double>(d.size() - 1));
  const double half = student_t_quantile((1 + level) / 2, static_cast<double>(d.size() - 1)) * r.sd /
                      std::sqrt(static_cast<double>(d.size()));
  r.low = r.mean - half;
  r.high = r.mean + half;
  return r;
}

DiffCI bootstrap_mean_ci(const std::vector<double>& d, int resamples, uint64_t seed, double level) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (d.empty() || resamples <= 0) return {nan, nan};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, d.size() - 1);
  std::vector<double> means;
  means.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    double sum = 0;
    for (size_t k = 0; k < d.size(); ++k) sum += d[pick(rng)];
    means.push_back(sum / static_cast<double>(d.size()));
  }
  const double tail = (1.0 - level) / 2.0;
  return {quantile(means, tail), quantile(means, 1.0 - tail)};
}

double hodges_lehmann(const std::vector<double>& d) {
  std::vector<double> walsh;
  walsh.reserve(d.size() * (d.size() + 1) / 2);
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t j = i; j < d.size(); ++j) walsh.push_back((d[i] + d[j]) / 2);
  return median(walsh);
}

// ---- between and within processes

namespace {
// Two-sided p-value of a Student t statistic.
double t_two_sided(double t, double df) {
  if (std::isinf(t)) return 0;
  return 2 * boost::math::cdf(boost::math::complement(boost::math::students_t(df), std::fabs(t)));
}

}  // namespace

Anova one_way_anova(const std::vector<std::vector<double>>& groups) {
  Anova a;
  std::vector<const std::vector<double>*> g;
  for (const auto& x : groups)
    if (!x.empty()) g.push_back(&x);
  a.groups = g.size();
  double sum = 0, sum_n2 = 0;
  for (const auto* x : g) {
    a.n += x->size();
    sum += std::accumulate(x->begin(), x->end(), 0.0);
    sum_n2 += double(x->size()) * double(x->size());
  }
  if (a.groups < 2) {
    a.why = "fewer than 2 processes have a repetition after the first";
    return a;
  }
  if (a.n <= a.groups) {
    a.why = "1 repetition per process after the first: no within-process spread";
    return a;
  }
  const double N = double(a.n), k = double(a.groups), grand = sum / N;
  double ssb = 0, ssw = 0;
  for (const auto* x : g) {
    const double m = mean(*x);
    ssb += double(x->size()) * (m - grand) * (m - grand);
    for (double y : *x) ssw += (y - m) * (y - m);
  }
  a.df_between = k - 1;
  a.df_within = N - k;
  a.ms_between = ssb / a.df_between;
  a.ms_within = ssw / a.df_within;
  a.n0 = (N - sum_n2 / N) / (k - 1);
  if (!(a.ms_within > 0)) {
    a.why = "every repetition identical within each process: F undefined";
    return a;
  }
  const double var_between = std::max(0.0, (a.ms_between - a.ms_within) / a.n0);
  a.sd_within = std::sqrt(a.ms_within);
  a.sd_between = std::sqrt(var_between);
  a.between_share = var_between / (var_between + a.ms_within);
  a.f = a.ms_between / a.ms_within;
  a.p = boost::math::cdf(boost::math::complement(boost::math::fisher_f(a.df_between, a.df_within), a.f));
  return a;
}

FirstRep first_repetition(const std::vector<std::vector<double>>& series) {
  FirstRep f;
  std::vector<double> effects, d;
  for (const auto& s : series) {
    if (s.size() < 2) continue;
    const std::vector<double> later(s.begin() + 1, s.end());
    const double med = median(later);
    effects.push_back(s[0] / med - 1);
    f.slower += s[0] > med;
    double mean_log_later = 0;
    for (double t : later) mean_log_later += std::log(t);
    d.push_back(std::log(s[0]) - mean_log_later / double(later.size()));
  }
  f.processes = effects.size();
  if (f.processes < 2) {
    f.why = "fewer than 2 processes have a repetition after the first";
    return f;
  }
  f.median_effect = median(effects);
  const double m = mean(d);
  double ss = 0;
  for (double x : d) ss += (x - m) * (x - m);
  const double se = std::sqrt(ss / double(d.size() - 1) / double(d.size()));
  if (se > 0) {
    f.t = m / se;
    f.p = t_two_sided(f.t, double(d.size() - 1));
  } else {  // every process moved its first repetition by exactly the same ratio
    f.t = m == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), m);
    f.p = m == 0 ? 1 : 0;
  }
  return f;
}

Trend pooled_trend(const std::vector<std::vector<std::pair<double, double>>>& groups) {
  Trend t;
  double sxx = 0, sxy = 0;
  size_t k = 0;
  std::vector<std::vector<std::pair<double, double>>> centred;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    ++k;
    double xm = 0, ym = 0;
    for (auto [x, y] : g) xm += x, ym += y;
    xm /= double(g.size());
    ym /= double(g.size());
    auto& c = centred.emplace_back();
    for (auto [x, y] : g) {
      c.emplace_back(x - xm, y - ym);
      sxx += (x - xm) * (x - xm);
      sxy += (x - xm) * (y - ym);
    }
    t.n += g.size();
  }
  if (!(sxx > 0)) {
    t.why = "fewer than 2 repetitions per process after the first: no trend";
    return t;
  }
  t.df = double(t.n) - double(k) - 1;
  if (t.df < 1) {
    t.why = "too few repetitions after the first to estimate the trend's error";
    return t;
  }
  t.slope = sxy / sxx;
  double rss = 0;
  for (const auto& c : centred)
    for (auto [x, y] : c) rss += (y - t.slope * x) * (y - t.slope * x);
  t.se = std::sqrt(rss / t.df / sxx);
  const double q = boost::math::quantile(boost::math::students_t(t.df), 0.975);
  t.ci_low = t.slope - q * t.se;
  t.ci_high = t.slope + q * t.se;
  return t;
}

Spearman spearman(const std::vector<double>& x, const std::vector<double>& y) {
  Spearman s;
  s.n = std::min(x.size(), y.size());
  if (s.n < 3) {
    s.why = "fewer than 3 samples";
    return s;
  }
  const std::vector<double> rx = mid_ranks(x), ry = mid_ranks(y);
  const double mx = mean(rx), my = mean(ry);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < s.n; ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (!(sxx > 0 && syy > 0)) {
    s.why = "one side is constant";
    return s;
  }
  s.rho = std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
  const double df = double(s.n) - 2;
  s.p = std::fabs(s.rho) >= 1 ? 0 : t_two_sided(s.rho * std::sqrt(df / ((1 + s.rho) * (1 - s.rho))), df);
  return s;
}

double fisher_exact_p(size_t a, size_t b, size_t c, size_t d) {
  const size_t n = a + b + c + d, row = a + b, col = a + c;
  if (n == 0 || row == 0 || row == n || col == 0 || col == n) return 1;
  // The first cell given the margins: `row` draws from n items of which `col` are marked.
  const boost::math::hypergeometric_distribution<double> h(static_cast<unsigned>(col), static_cast<unsigned>(row),
                                                          static_cast<unsigned>(n));
  const double observed = boost::math::pdf(h, static_cast<unsigned>(a));
  const size_t lo = row + col > n ? row + col - n : 0, hi = std::min(row, col);
  double p = 0;
  for (size_t k = lo; k <= hi; ++k) {
    const double pk = boost::math::pdf(h, static_cast<unsigned>(k));
    if (pk <= observed * (1 + 1e-7)) p += pk;
  }
  return std::min(1.0, p);
}

MoodResult mood_quantile_test(const std::vector<double>& a, const std::vector<double>& b, double q) {
  MoodResult m;
  m.n_a = a.size();
  m.n_b = b.size();
  if (a.empty() || b.empty()) {
    m.pooled = std::numeric_limits<double>::quiet_NaN();
    return m;
  }
  std::vector<double> all(a);
  all.insert(all.end(), b.begin(), b.end());
  m.pooled = quantile(std::move(all), q);
  for (double x : a) m.above_a += x > m.pooled;
  for (double x : b) m.above_b += x > m.pooled;
  m.p_value = fisher_exact_p(m.above_a, m.n_a - m.above_a, m.above_b, m.n_b - m.above_b);
  return m;
}

namespace {

// The test of an estimate with standard error se and df degrees of freedom.
TTest t_test(double estimate, double se, double df, double level) {
  TTest t;
  t.estimate = estimate;
  t.df = df;
  if (se > 0) {
    const double half = student_t_quantile((1 + level) / 2, df) * se;
    t.low = estimate - half;
    t.high = estimate + half;
    t.p_value = t_two_sided(estimate / se, df);
  } else {  // every value the same: the estimate is exact
    t.low = t.high = estimate;
    t.p_value = estimate == 0 ? 1 : 0;
  }
  return t;
}

double sample_variance(const std::vector<double>& v, double m) {
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return ss / static_cast<double>(v.size() - 1);
}

TTest untestable(double estimate) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {estimate, nan, nan, 1, 0};
}

}  // namespace

TTest paired_t_test(const std::vector<double>& d, double level) {
  if (d.size() < 2) return untestable(d.empty() ? std::numeric_limits<double>::quiet_NaN() : d[0]);
  const double m = mean(d), n = static_cast<double>(d.size());
  return t_test(m, std::sqrt(sample_variance(d, m) / n), n - 1, level);
}

TTest welch_t_test(const std::vector<double>& x, const std::vector<double>& y, double level) {
  if (x.size() < 2 || y.size() < 2)
    return untestable(x.empty() || y.empty() ? std::numeric_limits<double>::quiet_NaN() : mean(x) - mean(y));
  const double mx = mean(x), my = mean(y), nx = static_cast<double>(x.size()), ny = static_cast<double>(y.size());
  const double vx = sample_variance(x, mx) / nx, vy = sample_variance(y, my) / ny;
  const double se2 = vx + vy;
  // Welch-Satterthwaite; with both variances 0 the df does not matter (se = 0).
  const double df = se2 > 0 ? se2 * se2 / (vx * vx / (nx - 1) + vy * vy / (ny - 1)) : nx + ny - 2;
  return t_test(mx - my, std::sqrt(se2), df, level);
}

}  // namespace cuzk
