# The planted-effect run of tests/test_matrix.cpp times proofs: run it alone, so that the other
# tests of `ctest -j2` do not add noise of their own to its timings.
if(TEST matrix)
  set_tests_properties(matrix PROPERTIES RUN_SERIAL TRUE)
endif()
