// The diagnosis sentence of a noise row (noise_detail.hpp).
#include <fmt/core.h>

#include <cmath>

#include "harness/analysis/noise_detail.hpp"
#include "harness/analysis/output/format.hpp"
#include "harness/measure/clock.hpp"

namespace cuzk::noise::detail {

std::string diagnose(const PhaseNoise& r, double alpha) {
  std::vector<std::string> parts;
  const Anova& a = r.anova;
  if (a.why.empty()) {
    if (a.p < alpha && a.between_share >= 0.5)
      parts.push_back(fmt::format("between-process noise dominates (sd {}%, {}% of the variance; F p {})",
                                  output::pct_digits(a.sd_between), output::pct_digits(a.between_share), output::pval(a.p)));
    else if (a.p < alpha)
      parts.push_back(fmt::format(
          "within-process noise dominates (sd {}%, {}% of the variance), with a significant between-process part "
          "(sd {}%; F p {})",
          output::pct_digits(a.sd_within), output::pct_digits(1 - a.between_share), output::pct_digits(a.sd_between), output::pval(a.p)));
    else if (a.between_share < 0.5)
      parts.push_back(
          fmt::format("within-process noise dominates (sd {}%); no significant difference between processes (F p {})",
                      output::pct_digits(a.sd_within), output::pval(a.p)));
    else
      parts.push_back(fmt::format(
          "within-process sd {}%; processes do not differ significantly (F p {}) although the estimated between "
          "share is {}%: run more processes to tell",
          output::pct_digits(a.sd_within), output::pval(a.p), output::pct_digits(a.between_share)));
  }
  const FirstRep& f = r.first;
  if (f.why.empty()) {
    if (f.p < alpha)
      parts.push_back(fmt::format("first repetition {}% (slower in {} of {} processes, p {})",
                                  output::signed_pct_digits(f.median_effect), f.slower, f.processes, output::pval(f.p)));
    else
      parts.push_back(fmt::format("no significant first-repetition effect (median {}%, p {})",
                                  output::signed_pct_digits(f.median_effect), output::pval(f.p)));
  }
  const Trend& t = r.trend;
  if (t.why.empty()) {
    if (t.ci_low > 0 || t.ci_high < 0)
      parts.push_back(fmt::format("{} {}% per repetition (95% CI {} to {})",
                                  t.slope > 0 ? "slows down by" : "speeds up by", output::pct_digits(std::fabs(t.slope)),
                                  output::signed_pct_digits(t.ci_low), output::signed_pct_digits(t.ci_high)));
    else
      parts.push_back("no significant trend");
  }
  if (!r.env.empty()) {
    const EnvCorrelation& e = r.env.front();
    if (e.p_adjusted < alpha)
      parts.push_back(fmt::format("slower when {} is {} (rho {:+.2f}, p {})", e.name, e.rho > 0 ? "high" : "low", e.rho,
                                  output::pval(e.p_adjusted)));
    else
      parts.push_back(fmt::format("no significant environment correlate ({} reading{} tested)", r.env.size(),
                                  r.env.size() == 1 ? "" : "s"));
  }
  if (parts.empty())  // nothing could be computed: say why (the ANOVA's reason covers the others)
    parts.push_back(fmt::format("median {}; {}", fmt_ns(r.median_ns), a.why));
  std::string s = r.label + ": ";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s;
}

}  // namespace cuzk::noise::detail
