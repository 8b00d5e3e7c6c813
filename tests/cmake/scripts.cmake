# Tests of the analysis scripts in scripts/ that run on a trace copied back from the GPU machine:
# each builds its own small input, so they run in CI without a GPU or Nsight Systems.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME nsys_timeline COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/scripts/test_nsys_timeline.py
                                    ${CMAKE_SOURCE_DIR}/scripts/nsys-timeline.py)
set_tests_properties(nsys_timeline PROPERTIES TIMEOUT 120)
add_test(NAME nsys_gpu_time COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/scripts/test_nsys_gpu_time.py
                                    ${CMAKE_SOURCE_DIR}/scripts/nsys-gpu-time.py)
set_tests_properties(nsys_gpu_time PROPERTIES TIMEOUT 120)
