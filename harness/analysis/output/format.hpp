// Numbers as the analyses print them: percentages, changes of a ratio, three significant digits
// and p-values. One function per form, so a table and the sentence beside it read alike.
#pragma once
#include <string>

namespace cuzk::output {

// Three significant digits, never in exponent form: 0.0123 -> "0.0123", 12.34 -> "12.3", 1234 -> "1234".
std::string sig3(double v);
// A fraction as a percentage with one decimal: 0.123 -> "12.3%".
std::string pct(double fraction);
// A fraction as a percentage in its shortest form: 0.05 -> "5%", 0.025 -> "2.5%".
std::string pct_short(double fraction);
// A fraction as the digits of a percentage, three significant, without the sign: 0.0123 -> "1.23".
std::string pct_digits(double fraction);
// The same with a "+" before a positive value: 0.0123 -> "+1.23", -0.0123 -> "-1.23".
std::string signed_pct_digits(double fraction);
// The change a ratio of B to A stands for: 1.052 -> "+5.2%", 0.9 -> "-10.0%".
std::string change_pct(double ratio);
// A p-value: three decimals down to 0.001, then exponent form: 0.0004 -> "4.0e-04".
std::string pval(double p);
// A stretch of time as a person reads it, rounded: 42.4 -> "42 s", 734 -> "12 min", 4020 -> "1 h 07 min".
std::string duration(double seconds);

}  // namespace cuzk::output
