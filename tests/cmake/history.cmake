# The history's tests need its library (harness/history), which the other tests do not.
target_link_libraries(test_history PRIVATE cuzk_history)
target_link_libraries(test_change_points PRIVATE cuzk_history)
