// The decisions of `cuzk-bench bisect` (harness/cli/cmd_bisect.cpp, docs/bisect.md), apart from
// git, builds and measuring, so tests can drive them with made-up verdicts:
//
// - classify(): whether one probe (a revision measured interleaved against the good one) looks
//   like the good side, like the bad side, or cannot be told yet (re-measure it);
// - Search: the binary search over the candidate revisions, with revisions that do not build
//   skipped as `git bisect skip` does, and an answer that names every candidate the first slower
//   commit may be when skips leave more than one.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cuzk::bisect {

enum class Verdict { kGood, kBad, kInconclusive };
const char* verdict_name(Verdict v);  // "good", "bad", "inconclusive"

// The ratio (probe / good) that separates the two sides for a threshold `t` (a fraction: 0.05
// for 5 %): 1 + t/2, halfway between "unchanged" and "slower by t".
double boundary(double threshold);
// bad: the CI of the ratio lies above the boundary (ci_low > 1 + t/2); good: below it
// (ci_high < 1 + t/2); inconclusive: the CI contains it.
Verdict classify(double ci_low, double ci_high, double threshold);

// True when `phase` is a slash path of non-empty names made of letters, digits, '_', '-' and
// '.' ("proof/synth"); the harness's phase names all are.
bool well_formed_phase(const std::string& phase);

// Binary search over candidates 0 .. n-1: the revisions after the good one, in history order,
// the last being the bad revision (known bad once measured). The good revision is "-1".
// Every candidate before a good one is taken as good and every one after a bad one as bad
// (one step from good to bad, as git bisect assumes).
class Search {
 public:
  enum class Mark { kUnknown, kGood, kBad, kSkipped };
  explicit Search(size_t n);  // n >= 1; candidate n-1 is marked bad

  void mark(size_t i, Mark m);
  Mark at(size_t i) const { return marks_[i]; }
  size_t size() const { return marks_.size(); }

  // The next candidate to probe, or nullopt when the search is over: the untested candidate
  // strictly between the last good and the first bad one nearest to the middle (ties: the later
  // one first), skipping the skipped ones.
  std::optional<size_t> next() const;

  // Once over: every candidate the first bad revision may be, in order: the skipped ones between
  // the last good and the first bad candidate, then the first bad one. One entry: found.
  std::vector<size_t> answer() const;
  // The first candidate known bad.
  size_t first_bad() const;

 private:
  long last_good() const;  // -1: the good revision itself
  std::vector<Mark> marks_;
};

}  // namespace cuzk::bisect
