# test_fuzz_regressions replays tests/fixtures/fuzz/<target>/* through the fuzz targets'
# entry points (tests/fuzz/entry_points.hpp).
if(TARGET test_fuzz_regressions)
  target_link_libraries(test_fuzz_regressions PRIVATE cuzk_fuzz_entry)
endif()
