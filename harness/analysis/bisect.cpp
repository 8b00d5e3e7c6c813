// Classification and search of `cuzk-bench bisect` (bisect.hpp).
#include "harness/analysis/bisect.hpp"

#include <cctype>
#include <stdexcept>

namespace cuzk::bisect {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kGood:
      return "good";
    case Verdict::kBad:
      return "bad";
    case Verdict::kInconclusive:
      break;
  }
  return "inconclusive";
}

double boundary(double threshold) { return 1 + threshold / 2; }

Verdict classify(double ci_low, double ci_high, double threshold) {
  const double b = boundary(threshold);
  if (ci_low > b) return Verdict::kBad;
  if (ci_high < b) return Verdict::kGood;
  return Verdict::kInconclusive;
}

bool well_formed_phase(const std::string& phase) {
  if (phase.empty() || phase.front() == '/' || phase.back() == '/') return false;
  char prev = '/';
  for (char c : phase) {
    const bool name_char = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    if (!name_char && c != '/') return false;
    if (c == '/' && prev == '/') return false;
    prev = c;
  }
  return true;
}

Search::Search(size_t n) : marks_(n, Mark::kUnknown) {
  if (n == 0) throw std::invalid_argument("bisect::Search: no candidates");
  marks_.back() = Mark::kBad;
}

void Search::mark(size_t i, Mark m) { marks_.at(i) = m; }

long Search::last_good() const {
  long lo = -1;
  for (size_t i = 0; i < marks_.size(); ++i)
    if (marks_[i] == Mark::kGood) lo = long(i);
  return lo;
}

size_t Search::first_bad() const {
  for (size_t i = 0; i < marks_.size(); ++i)
    if (marks_[i] == Mark::kBad) return i;
  return marks_.size() - 1;  // unreachable: the last candidate is bad from the start
}

std::optional<size_t> Search::next() const {
  const long lo = last_good(), hi = long(first_bad());
  if (hi - lo < 2) return std::nullopt;
  const long mid = lo + (hi - lo) / 2;
  // mid, mid+1, mid-1, mid+2, mid-2, ... within (lo, hi)
  for (long d = 0; d < hi - lo; ++d) {
    for (long c : {mid + d, mid - d}) {
      if (c <= lo || c >= hi) continue;
      if (marks_[size_t(c)] == Mark::kUnknown) return size_t(c);
    }
  }
  return std::nullopt;
}

std::vector<size_t> Search::answer() const {
  const long lo = last_good();
  const size_t hi = first_bad();
  std::vector<size_t> out;
  for (size_t i = size_t(lo + 1); i < hi; ++i)
    if (marks_[i] == Mark::kSkipped) out.push_back(i);
  out.push_back(hi);
  return out;
}

}  // namespace cuzk::bisect
