# trace-diff's tests read the trace library and write synthetic nsys exports with SQLite; where
# the build has no SQLite they only check that the command says so.
if(TARGET test_trace_diff)
  target_link_libraries(test_trace_diff PRIVATE cuzk_trace)
  if(TARGET PkgConfig::SQLITE3)
    target_link_libraries(test_trace_diff PRIVATE PkgConfig::SQLITE3)
    target_compile_definitions(test_trace_diff PRIVATE CUZK_HAVE_SQLITE=1)
  endif()
endif()
