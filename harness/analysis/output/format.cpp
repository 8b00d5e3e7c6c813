#include "harness/analysis/output/format.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace cuzk::output {

std::string sig3(double v) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  const int decimals = std::clamp(2 - int(std::floor(std::log10(a))), 0, 4);
  return fmt::format("{:.{}f}", v, decimals);
}

std::string pct(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string pct_short(double fraction) { return fmt::format("{:g}%", fraction * 100); }

std::string pct_digits(double fraction) { return sig3(100 * fraction); }

std::string signed_pct_digits(double fraction) { return (fraction >= 0 ? "+" : "") + sig3(100 * fraction); }

std::string change_pct(double ratio) {
  const double d = (ratio - 1.0) * 100.0;
  return fmt::format("{}{:.1f}%", d >= 0 ? "+" : "", d);
}

std::string pval(double p) {
  if (p >= 0.001) return fmt::format("{:.3f}", p);
  if (p <= 0) return "0";
  return fmt::format("{:.1e}", p);
}

std::string duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  const long minutes = std::lround(seconds / 60);
  if (minutes < 60) return fmt::format("{} min", minutes);
  return fmt::format("{} h {:02} min", minutes / 60, minutes % 60);
}

}  // namespace cuzk::output
