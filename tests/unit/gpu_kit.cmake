# The GPU kit (docs/gpu.md, tools/gpu-kit), built by the default build: run
# on the sim and against a kit with a wrong and a corrupted kernel
# (tests/gpu-kit).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME gpu_kit_sim
         COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/gpu-kit/gpu_kit_test.py ${TK_GPU_KIT_DIR}
                 ${PROJECT_BINARY_DIR} ${PROJECT_BINARY_DIR}/tests/gpu-kit-test)
set_tests_properties(gpu_kit_sim PROPERTIES REQUIRED_FILES ${TK_GPU_KIT_DIR}/manifest.json TIMEOUT 900
                     LABELS "sim;slow" COST 90 ENVIRONMENT "TK_CACHE_DIR=${TK_TEST_CACHE_DIR}")
