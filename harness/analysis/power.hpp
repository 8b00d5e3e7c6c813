// Power analysis: how many runs (or paired rounds) a comparison needs to call a change of a given
// size, by normal approximations to the tests `compare` uses. `calibrate` plans with these and
// `compare`'s summary suggests a number of rounds with them.
#pragma once

namespace cuzk::power {

// Standard normal quantile (inverse CDF), p in (0, 1).
double normal_quantile(double p);
// The exact Mann-Whitney test's smallest two-sided p with n runs a side: 2 / C(2n, n) (0.10 at 3).
double rank_test_smallest_p(int n);
// The fewest runs per side at which the exact Mann-Whitney test's two-sided p can fall below
// alpha (its smallest p is 2 / C(2n, n)): 4 at alpha 0.05. With fewer, no spread is small
// enough for a change to be called significant.
int min_runs_rank_test(double alpha);
// The exact signed-rank test's smallest two-sided p over n rounds: 2 / 2^n (0.0625 at 5).
double signed_rank_smallest_p(int n);
// The same for the exact signed-rank test over rounds (smallest p 2 / 2^n): 6 at alpha 0.05.
int min_rounds_signed_rank(double alpha);
// Runs per side to detect a relative shift `effect` (fraction) of a quantity with relative
// spread cv, two-sided level alpha, given power, by the Mann-Whitney test, with the verdict's
// noise threshold `threshold` (fraction):
//   n1 = (pi/3) * 2 (z_{1-alpha/2} + z_power)^2 cv^2 / effect^2   (significance; pi/3 = 1/ARE of U vs t)
//   n2 = (pi/2) * 2 z_power^2 cv^2 / (effect - threshold)^2         (median ratio beyond the threshold)
// returns max(n1, n2) rounded up, at least min_runs_rank_test(alpha) (the normal approximation
// knows no floor, the exact test does); -1 when effect <= threshold (never "slower").
int runs_needed(double effect, double cv, double alpha, double power, double threshold);
// Runs per side for a change of `effect` (fraction, below the threshold) to be called
// "unchanged": the CI of the ratio must fall within 1 +- threshold, which with the given power
// needs (z_{1-alpha/2} + z_power) sigma / sqrt(n) <= threshold - effect, sigma^2 = (pi/2) 2 cv^2
// (the variance of a difference of two medians of log time):
//   n = (pi/2) * 2 (z_{1-alpha/2} + z_power)^2 cv^2 / (threshold - effect)^2
// rounded up, at least 2; -1 when effect >= threshold.
int runs_to_rule_out(double effect, double cv, double alpha, double power, double threshold);

// Rounds for the paired design, from s, the sd of the per-round log ratios, with the change
// e = |ln r| and the threshold t as log ratios (lt = ln(1 + t)):
//   beyond the threshold: max((pi/3) (z_{1-alpha/2} + z_power)^2 s^2 / e^2,   significance (signed-rank:
//                             z_power^2 s^2 / (e - lt)^2)                    pi/3 = 1/ARE vs t)
//   within it:            (z_{1-alpha/2} + z_power)^2 s^2 / (lt - e)^2      (t CI inside 1 +- t)
// rounded up, at least 2 (beyond the threshold, at least min_rounds_signed_rank(alpha)); -1 when
// e sits at the threshold. The same shape as runs_needed and
// runs_to_rule_out for unpaired sides, without the factor 2 (one difference per round, not two
// medians) and with the sd of the log ratio in place of the coefficient of variation.
int paired_rounds_needed(double ratio, double s, double alpha, double power, double threshold);

}  // namespace cuzk::power
