# cuzkd's tests (tests/daemon/): where the daemon is built, a real daemon per test case on a
# temporary unix socket, through the gRPC client.
if(TARGET cuzkd)
  add_executable(test_daemon ${CMAKE_CURRENT_SOURCE_DIR}/daemon/test_daemon.cpp)
  target_link_libraries(test_daemon PRIVATE cuzk_catch_main cuzk_harness cuzk_daemon_client)
  target_compile_options(test_daemon PRIVATE $<$<CONFIG:RelWithDebInfo>:-g1 -Og>)
  target_compile_definitions(test_daemon PRIVATE CUZK_SOURCE_DIR="${CMAKE_SOURCE_DIR}" CUZK_BUILD_DIR="${CMAKE_BINARY_DIR}")
  add_test(NAME daemon COMMAND test_daemon)
  set_tests_properties(daemon PROPERTIES
    ENVIRONMENT "${CUZK_TEST_ENV};CUZK_DAEMON=$<TARGET_FILE:cuzkd>"
    TIMEOUT ${CUZK_TEST_TIMEOUT} LABELS "slow;subprocess" COST 100)  # started first, as the other slow tests
endif()
