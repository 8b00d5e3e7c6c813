// Boost.Math in double precision only: the harness's statistics (Student's t, F, non-central t)
// evaluate in double, never promoted to long double.
//
// Why: Boost.Math's default policy promotes double arguments to long double internally, and its
// special functions run static initializers for the promoted type at start-up. Valgrind computes
// long double at double precision, so those initializers overflow there (erfc_inv<long double>)
// and cuzk-bench aborted before main under `--counters sim`. Every target that links the harness
// gets BOOST_MATH_PROMOTE_DOUBLE_POLICY=false (harness/CMakeLists.txt); this check makes a file
// that uses Boost.Math without it fail to build instead of failing under Valgrind.
#pragma once
#include <boost/math/policies/policy.hpp>

static_assert(!boost::math::policies::policy<>::promote_double_type::value,
              "Boost.Math must not promote double to long double: build with BOOST_MATH_PROMOTE_DOUBLE_POLICY=false "
              "(harness/CMakeLists.txt)");
