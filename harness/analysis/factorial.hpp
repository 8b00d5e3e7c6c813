// The 2^k r factorial estimator behind `cuzk-bench matrix --factorial` (Jain, The Art of Computer
// Systems Performance Analysis, ch. 17-18): which compile flag changed a phase, by what ratio,
// with what confidence, and how the phase's variation divides among flags, interactions, rounds
// and noise.
//
// The matrix command builds every combination of k flags (2^k variants) and runs R rounds, each
// round every variant once in random order; it calls analyse() once per phase with one
// Observation per (variant, round). analyse() is a pure function of those numbers.
//
// Model, on y = ln(time) so that every effect is a ratio:
//   - ±1 coding: x_i = +1 when flag i is on, -1 when off;
//   - terms: intercept, every main effect, every interaction of every order 2..k (so that the
//     residual is pure replication error), and, with `blocks`, R-1 sum-to-zero round columns
//     (round r < R-1: +1 in round r, -1 in the last round), which soak up drift between rounds;
//   - least squares (Eigen); residual variance s_e^2 = SSE / (n - p); covariance of the
//     coefficients s_e^2 (X^T X)^-1. A variant missing in a round is fine as long as every
//     coefficient stays estimable.
// Reported ratios:
//   - main effect of flag i: exp(2 q_i), the factor by which turning flag i on multiplies the
//     time, averaged (geometrically) over the settings of the other flags;
//   - interaction of flags i and j: exp(4 q_ij), the extra factor when both are on beyond the
//     product of their separate effects; for k = 2 it is (g11 * g00) / (g10 * g01), g being the
//     geometric mean time of each variant.
// Confidence intervals are simultaneous over the m = k + k(k-1)/2 reported effects of a phase
// (Bonferroni: t quantile 1 - (1-level)/(2m), df = n - p); p-values are per effect, unadjusted.
#pragma once
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace cuzk::factorial {

// Bad input or a design that cannot be estimated; the message says what is missing.
class FactorialError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// 2^k builds: beyond 6 flags the matrix (64 builds per round) stops being practical.
constexpr int kMaxFlags = 6;
// Power at which the minimum detectable effects are quoted.
constexpr double kMdePower = 0.90;

struct Observation {
  uint32_t levels = 0;  // bit i set: flag i on
  int block = 0;        // round index (any integers; each distinct value is one round)
  double value = 0;     // the phase's time, > 0 (ns in cuzk-bench; the unit cancels in ratios)
};

struct Effect {
  std::vector<int> flags;  // 1 index (main) or 2 (interaction), ascending
  std::string name;        // "pinned" or "pinned x smallvec"
  int order = 1;
  double q = 0, se = 0;                 // coefficient on ln(value), ±1 coding, and its standard error
  double ratio = 1, low = 1, high = 1;  // exp(2q) or exp(4q) and its simultaneous CI
  double p = 1;                         // unadjusted two-sided t-test p-value
  bool significant = false;             // the simultaneous CI excludes 1
  double share = 0;                     // q^2 ||x column||^2 / SST
};

struct Analysis {
  int k = 0, n = 0, df = 0, rounds = 0;
  bool blocks = true;  // round columns were fitted (false when asked so or when R = 1)
  double level = 0.95;
  double s_e = 0;               // residual sd on the ln scale (~ the cv of one run)
  std::vector<Effect> effects;  // mains in flag order, then interactions (0,1),(0,2),...,(1,2),...
  // Allocation of variation (shares of SST = sum (y - mean y)^2): each effect's share above,
  // interactions of order >= 3 together, rounds (SSE without round columns - SSE with them),
  // and the residual. In a balanced design all of them add up to 1.
  double share_higher_order = 0, share_blocks = 0, share_noise = 0;
  // Smallest true ratio (>= 1; its inverse is as detectable) that the same simultaneous test
  // would find with power kMdePower, from the largest se among the terms of that order. NaN
  // where there is no such term (interactions with k = 1); 1 when s_e = 0.
  double mde_main_ratio = NAN, mde_interaction_ratio = NAN;
  std::string note;  // "" or why the numbers are degenerate (e.g. all observations equal)

  nlohmann::json to_json() const;
};

// Fits the model above to `obs` (flags[i] names bit i). Throws FactorialError for k outside
// 1..kMaxFlags, a value <= 0 or not finite, levels >= 2^k, level outside (0, 1), or too few
// observations to estimate every term with at least one residual degree of freedom.
Analysis analyse(const std::vector<std::string>& flags, const std::vector<Observation>& obs, double level = 0.95,
                 bool blocks = true);

// Planning (docs, `calibrate`): the minimum detectable ratio of one main effect (order 1) or
// two-flag interaction (order 2) for a balanced design of 2^k variants x `rounds` with residual
// sd `sigma_log` on the ln scale: se = sigma_log / sqrt(2^k rounds), df = n - 2^k (- (rounds-1)
// with blocks), the same simultaneous test as analyse(). NaN when df < 1.
double mde_ratio_planned(int k, int rounds, double sigma_log, int order, double level = 0.95, double power = kMdePower,
                         bool blocks = true);

// The fewest rounds in [2, 1000] whose planned minimum detectable ratio is <= target_ratio
// (a ratio below 1 is taken as its inverse); -1 if none.
int rounds_for_mde(int k, double sigma_log, double target_ratio, int order = 1, double level = 0.95,
                   double power = kMdePower, bool blocks = true);

}  // namespace cuzk::factorial
