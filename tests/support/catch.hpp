// Catch2 v2 / v3 compatibility: tests include "catch.hpp" and use the common macros.
#pragma once
#if defined(CUZK_CATCH3)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
// v2's Contains is ContainsSubstring in v3.
namespace Catch::Matchers {
inline auto Contains(const std::string& s) { return ContainsSubstring(s); }
}  // namespace Catch::Matchers
#else
#include <catch2/catch.hpp>
#endif
