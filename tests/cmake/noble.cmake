# The @noble/curves cross-check (tests/test_noble_crosscheck.cpp) installs the package with npm
# into ${CMAKE_BINARY_DIR}/noble. Where node/npm or the registry is unavailable it prints
# "NOBLE-SKIPPED: <why>", which ctest reports as "Skipped" instead of a silent pass.
if(TEST noble_crosscheck)
  set_tests_properties(noble_crosscheck PROPERTIES
    SKIP_REGULAR_EXPRESSION "NOBLE-SKIPPED"
    TIMEOUT 600)
  # Appended: the test already carries labels of tests/CMakeLists.txt (subprocess, slow).
  set_property(TEST noble_crosscheck APPEND PROPERTY LABELS interop network)
endif()
