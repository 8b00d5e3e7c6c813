# The "micro" suite kind runs the Google Benchmark binaries of suites/micro/ found next to
# cuzk-bench (<build>/suites): building test_suite builds the ones its micro test runs.
if(TARGET test_suite)
  add_dependencies(test_suite cuzk-bench bench_ff bench_ec)
endif()
