// Internals shared by the pieces of the matrix attribution: the analysis (matrix.cpp), the summary
// paragraph (matrix_summary.cpp) and the outputs (matrix_format.cpp). Not for use elsewhere.
#pragma once
#include <string>

#include "harness/analysis/matrix.hpp"

namespace cuzk::matrix::detail {

// The paragraph that opens a case (the phases of `k` are complete; `a` has the run's metadata).
std::string summarize(const Attribution& a, const Input& in, const CaseAttribution& k);

// The case's end-to-end phase: its first phase without a '/', else its first phase ("" if none).
std::string root_phase(const CaseAttribution& k);
// A phase's path without the root's prefix ("proof/prove/pin_abc" -> "prove/pin_abc").
std::string short_phase(const std::string& phase, const std::string& root);
// "+6.4% [5.0%, 7.9%]"
std::string ratio_ci(double ratio, double low, double high);

}  // namespace cuzk::matrix::detail
