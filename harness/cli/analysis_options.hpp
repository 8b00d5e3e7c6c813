// The analysis flags that compare, gate, ab and calibrate share (harness/analysis/compare.hpp,
// AnalysisChoices): --metric, --design (and its older spelling --blocks), --paired-ci,
// --drop-disturbed, --max-other-load. One definition, so
// that the four subcommands spell, explain and validate them alike.
#pragma once
#include <CLI/CLI.hpp>

#include "harness/analysis/compare.hpp"

namespace cuzk::cli {

// Declares the flags on `sub`, writing into `a` (which must outlive parsing).
void add_analysis_options(CLI::App* sub, AnalysisChoices& a);
// Throws Error for a value outside its domain (called by the runners before any work).
void check_analysis_options(const AnalysisChoices& a);
// A CLI11 check: a finite number in [lo, hi], or (lo, hi) where open. CLI::Range lets NaN
// through (every comparison with NaN is false), and "nan" parses as a double.
CLI::Validator finite_in(double lo, double hi, bool open_lo = false, bool open_hi = false);

// --resamples (bootstrap resamples, at least 100) and --seed (bootstrap seed), as compare and
// gate spell and check them; a bad value is a parse error (exit 2, one line).
void add_bootstrap_options(CLI::App* sub, int& resamples, uint64_t& seed);

// --allow-injected (CompareOptions::allow_injected, GateOptions::allow_injected): compare, gate,
// ab and report refuse a file written under $CUZK_INJECT_SLOWDOWN beside a plain one without it.
void add_allow_injected_flag(CLI::App* sub, bool& allow);

}  // namespace cuzk::cli
