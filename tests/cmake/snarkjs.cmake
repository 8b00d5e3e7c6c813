# snarkjs interoperability (tests/test_snarkjs_interop.cpp). The test drives the circom path of
# `cuzk-bench prove` through run_prove_circom (harness/cli/prove_circom.cpp, compiled in here
# too) and runs the cuzk-bench binary for `verify`. Its [npm] cases install snarkjs (version
# pinned in tests/interop/snarkjs/package.json) into ${CMAKE_BINARY_DIR}/snarkjs once per build
# tree; where node/npm or the registry is unavailable they print "SNARKJS-SKIPPED: <why>", which
# ctest reports as "Skipped" instead of a silent pass.
if(TARGET test_snarkjs_interop)
  target_sources(test_snarkjs_interop PRIVATE ${CMAKE_SOURCE_DIR}/harness/cli/prove_circom.cpp)
  target_link_libraries(test_snarkjs_interop PRIVATE CLI11::CLI11)
  add_dependencies(test_snarkjs_interop cuzk-bench)
endif()
if(TEST snarkjs_interop)
  set_tests_properties(snarkjs_interop PROPERTIES
    SKIP_REGULAR_EXPRESSION "SNARKJS-SKIPPED"
    TIMEOUT 600)
  # Appended: the test already carries labels of tests/CMakeLists.txt (subprocess, slow).
  set_property(TEST snarkjs_interop APPEND PROPERTY LABELS interop network)
endif()
