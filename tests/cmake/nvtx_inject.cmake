# NVTX injection library for test_nvtx: NVTX loads it from NVTX_INJECTION64_PATH and routes
# the domain range calls to recorders the test can read (tests/nvtx_inject/nvtx_inject.cpp).
if(CUZK_NVTX_ENABLED AND TARGET test_nvtx)
  add_library(cuzk_nvtx_inject SHARED ${CMAKE_CURRENT_SOURCE_DIR}/nvtx_inject/nvtx_inject.cpp)
  target_link_libraries(cuzk_nvtx_inject PRIVATE cuzk_nvtx)
  add_dependencies(test_nvtx cuzk_nvtx_inject)
  target_compile_definitions(test_nvtx PRIVATE CUZK_NVTX_INJECT_LIB="$<TARGET_FILE:cuzk_nvtx_inject>")
  set_tests_properties(nvtx PROPERTIES ENVIRONMENT
    "${CUZK_TEST_ENV};NVTX_INJECTION64_PATH=$<TARGET_FILE:cuzk_nvtx_inject>")
endif()
