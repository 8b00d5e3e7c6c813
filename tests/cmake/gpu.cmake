# The GPU test binary (tests/gpu/): built wherever the CUDA backend is, labelled "gpu", and
# reported as skipped by ctest where no GPU is found (it exits 77).
if(TARGET cuzk_cuda)
  # One source file per topic (test_gpu_arith, _ntt, _msm, _stage, _profiling, _keygen, _sector), one binary.
  add_executable(test_gpu ${CMAKE_CURRENT_SOURCE_DIR}/gpu/gpu_main.cpp ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_arith.cpp
                          ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_ntt.cpp ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_msm.cpp
                          ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_stage.cpp ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_profiling.cpp
                          ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_keygen.cpp ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu_sector.cpp)
  # gpu_main.cpp: the device check before the tests (cuzk::test_preamble), as the tests' -Og.
  target_link_libraries(test_gpu PRIVATE cuzk_catch_main cuzk_cuda cuzk_harness)
  target_compile_options(test_gpu PRIVATE "$<$<CONFIG:RelWithDebInfo>:-g1;-Og>")
  if(TARGET cuzk_gpu_counters)
    target_link_libraries(test_gpu PRIVATE cuzk_gpu_counters)
    target_compile_definitions(test_gpu PRIVATE CUZK_HAVE_GPU_COUNTERS=1)
  endif()
  if(TARGET cuzk_gpu_activity)
    target_link_libraries(test_gpu PRIVATE cuzk_gpu_activity)
    target_compile_definitions(test_gpu PRIVATE CUZK_HAVE_GPU_ACTIVITY=1)
  endif()
  target_compile_definitions(test_gpu PRIVATE CUZK_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME gpu COMMAND test_gpu)
  set_tests_properties(gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 1800 ENVIRONMENT "${CUZK_TEST_ENV}")
  # The stage's option checks, which come before any device is touched: a plain test, run
  # everywhere (CI has no GPU).
  add_executable(test_stage_options ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_stage_options.cpp)
  target_link_libraries(test_stage_options PRIVATE cuzk_catch_main cuzk_cuda cuzk_harness)
  add_test(NAME stage_options COMMAND test_stage_options)
  set_tests_properties(stage_options PROPERTIES ENVIRONMENT "${CUZK_TEST_ENV}" TIMEOUT ${CUZK_TEST_TIMEOUT})
  # The assignment's window rule (host code in the CUDA library): a plain test too.
  add_executable(test_window_rule ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_window_rule.cpp)
  target_link_libraries(test_window_rule PRIVATE cuzk_catch_main cuzk_cuda cuzk_harness)
  add_test(NAME window_rule COMMAND test_window_rule)
  set_tests_properties(window_rule PROPERTIES ENVIRONMENT "${CUZK_TEST_ENV}" TIMEOUT ${CUZK_TEST_TIMEOUT})
endif()
