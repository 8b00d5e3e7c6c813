#include "harness/analysis/power.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace cuzk::power {

namespace {
constexpr double pi = std::numbers::pi;
}  // namespace

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal_quantile: p must be in (0, 1)");
  // Bisection on the CDF Phi(x) = erfc(-x / sqrt 2) / 2: slow but exact to double precision.
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

double rank_test_smallest_p(int n) {
  double c = 1;  // C(2n, n)
  for (int i = 1; i <= n; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
  return 2.0 / c;
}

int min_runs_rank_test(double alpha) {
  // C(2n, n) grows past 2 / alpha quickly: n = 4 at alpha 0.05, 5 at 0.01.
  for (int n = 1; n < 64; ++n)
    if (rank_test_smallest_p(n) < alpha) return n;
  return 64;
}

double signed_rank_smallest_p(int n) { return std::ldexp(2.0, -std::min(n, 1000)); }

int min_rounds_signed_rank(double alpha) {
  for (int n = 1; n < 64; ++n)
    if (signed_rank_smallest_p(n) < alpha) return n;
  return 64;
}

int runs_needed(double effect, double cv, double alpha, double power, double threshold) {
  if (!(effect > threshold)) return -1;
  const double za = normal_quantile(1 - alpha / 2), zb = normal_quantile(power);
  const double n1 = (pi / 3) * 2 * (za + zb) * (za + zb) * cv * cv / (effect * effect);
  const double d = effect - threshold;
  const double n2 = (pi / 2) * 2 * zb * zb * cv * cv / (d * d);
  return std::max(min_runs_rank_test(alpha), static_cast<int>(std::ceil(std::max(n1, n2))));
}

int runs_to_rule_out(double effect, double cv, double alpha, double power, double threshold) {
  effect = std::fabs(effect);
  if (!(effect < threshold)) return -1;
  const double z = normal_quantile(1 - alpha / 2) + normal_quantile(power);
  const double d = threshold - effect;
  return std::max(2, static_cast<int>(std::ceil((pi / 2) * 2 * z * z * cv * cv / (d * d))));
}

int paired_rounds_needed(double ratio, double s, double alpha, double power, double threshold) {
  const double za = normal_quantile(1 - alpha / 2), zb = normal_quantile(power);
  const double e = std::fabs(std::log(ratio)), lt = std::log1p(threshold);
  auto rounds = [](double n) { return std::max(2, static_cast<int>(std::ceil(n))); };
  if (e > lt) {
    const double n1 = (pi / 3) * (za + zb) * (za + zb) * s * s / (e * e);
    const double n2 = zb * zb * s * s / ((e - lt) * (e - lt));
    return std::max(min_rounds_signed_rank(alpha), rounds(std::max(n1, n2)));
  }
  if (e < lt) return rounds((za + zb) * (za + zb) * s * s / ((lt - e) * (lt - e)));
  return -1;
}

}  // namespace cuzk::power
