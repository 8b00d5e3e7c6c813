# tests/test_bisect.cpp times each probe's phase as the real command does: run it alone, so that
# the other tests of `ctest -j2` do not blur plain against plain (a fresh-clone run beside them
# once left a plain probe inconclusive after 12 rounds).
if(TEST bisect)
  set_tests_properties(bisect PROPERTIES RUN_SERIAL TRUE)
endif()
