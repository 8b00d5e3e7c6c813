// The analysis flags that compare, gate, ab and calibrate share (harness/analysis/compare.hpp,
// AnalysisChoices): --metric, --blocks, --drop-disturbed, --max-other-load. One definition, so
// that the four subcommands spell, explain and validate them alike.
#pragma once
#include <CLI/CLI.hpp>

#include "harness/analysis/compare.hpp"

namespace cuzk::cli {

// Declares the flags on `sub`, writing into `a` (which must outlive parsing).
void add_analysis_options(CLI::App* sub, AnalysisChoices& a);
// Throws Error for a value outside its domain (called by the runners before any work).
void check_analysis_options(const AnalysisChoices& a);
// --allow-injected (CompareOptions::allow_injected, GateOptions::allow_injected): compare, gate,
// ab and report refuse a file written under $CUZK_INJECT_SLOWDOWN beside a plain one without it.
void add_allow_injected_flag(CLI::App* sub, bool& allow);

}  // namespace cuzk::cli
