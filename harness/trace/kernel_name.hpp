// Kernel names as trace-diff matches them across traces (docs/trace-diff.md#names).
#pragma once
#include <string>

namespace cuzk::trace {

// The demangled form of a mangled C++ name ("_Z..."); any other name unchanged.
std::string demangle(const std::string& name);
// A kernel's name without what changes between builds of the same kernel: demangled, the return
// type and the parameter list dropped, every template argument list folded to "<...>":
// "void msm_sum<3, true>(const int*, unsigned long)" -> "msm_sum<...>".
std::string normalize_kernel_name(const std::string& name);

}  // namespace cuzk::trace
