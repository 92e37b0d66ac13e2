# The GPU kit (docs/gpu.md, tools/gpu-kit): built by the test run, since
# `make gpu-kit` is not part of the default build, then run on the sim and
# against a kit with a wrong and a corrupted kernel (tests/gpu-kit).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME gpu_kit_build COMMAND ${CMAKE_COMMAND} --build ${PROJECT_BINARY_DIR} --target gpu-kit)
set_tests_properties(gpu_kit_build PROPERTIES FIXTURES_SETUP gpu_kit TIMEOUT 1200
                     ENVIRONMENT "TK_CACHE_DIR=${TK_TEST_CACHE_DIR}")
add_test(NAME gpu_kit_sim
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/gpu-kit/gpu_kit_test.py ${TK_GPU_KIT_DIR}
                 ${PROJECT_BINARY_DIR} ${PROJECT_BINARY_DIR}/tests/gpu-kit-test)
set_tests_properties(gpu_kit_sim PROPERTIES FIXTURES_REQUIRED gpu_kit TIMEOUT 900
                     ENVIRONMENT "TK_CACHE_DIR=${TK_TEST_CACHE_DIR}")
