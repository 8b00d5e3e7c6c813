# trace-diff's and the gate's [kernels] tests read the trace library and write synthetic nsys
# exports with SQLite; where the build has no SQLite they only check what needs no trace.
foreach(t test_trace_diff test_gate_kernels)
  if(TARGET ${t})
    target_link_libraries(${t} PRIVATE cuzk_trace)
    if(TARGET PkgConfig::SQLITE3)
      target_link_libraries(${t} PRIVATE PkgConfig::SQLITE3)
      target_compile_definitions(${t} PRIVATE CUZK_HAVE_SQLITE=1)
    endif()
  endif()
endforeach()
