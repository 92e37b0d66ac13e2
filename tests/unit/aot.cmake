# Generated launchers (tkc --emit cpp through tk_add_kernels), linked against
# the runtime and the sim only: no compiler, no LLVM outside the sim.
tk_add_unit_test(aot_launch_test SOURCES unit/aot_launch_test.cpp LIBS tk_runtime tk_sim_device)
target_include_directories(aot_launch_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
tk_add_kernels(aot_launch_test
  SOURCES ${PROJECT_SOURCE_DIR}/stdlib/elementwise.tk ${CMAKE_CURRENT_SOURCE_DIR}/kernels/aot_rows.tk
  KERNELS complex_activation silu_rows
  DEFINES BLOCK=128 BLOCK=256)
# Tensor descriptor parameters: the C++ launchers take tk::TensorDescriptor,
# and each variant (BM = 32, 64) gets the descriptors with its own block.
tk_add_kernels(aot_launch_test
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/kernels/descriptor_params.tk
  KERNELS matmul_host_desc
  DEFINES BM=32 BM=64
  SPECIALISE none)
# Tuned configs chosen by the key value n (hand-written `tkc tune --json` reports).
tk_add_kernels(aot_launch_test
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/kernels/aot_tuned.tk
  TUNE_TABLES ${CMAKE_CURRENT_SOURCE_DIR}/kernels/aot_tables/axpy_n1024.json
              ${CMAKE_CURRENT_SOURCE_DIR}/kernels/aot_tables/axpy_n1048576.json
  SPECIALISE none)

# An installed tk used by a separate project: install into a fresh prefix,
# configure and build examples/consumer against it, run it on the sim, then
# edit a file its kernel imports and check the build re-runs tkc.
add_test(NAME aot_consumer_project
  COMMAND ${CMAKE_COMMAND} -DTK_BINARY_DIR=${PROJECT_BINARY_DIR} -DTK_SOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DWORK_DIR=${PROJECT_BINARY_DIR}/consumer-test -DGENERATOR=${CMAKE_GENERATOR}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer_test.cmake)
set_tests_properties(aot_consumer_project PROPERTIES TIMEOUT 900 LABELS "sim;slow" COST 50
  ENVIRONMENT "TK_DEVICE=sim;TK_CACHE_DIR=${TK_TEST_CACHE_DIR}")

# The runtime-only program: runs on a GPU; without one it must say that the
# sim is not linked (it is not), and it must carry no LLVM.
add_test(NAME aot_runtime_only COMMAND aot_runtime_only 781)
set_tests_properties(aot_runtime_only PROPERTIES
  PASS_REGULAR_EXPRESSION "^ok: 781 values|no device: .*the sim is not linked into this program")
add_test(NAME aot_runtime_only_links_no_llvm
  COMMAND sh -c "ldd \"$0\" | grep -i -e llvm -e boost && exit 1; nm -C \"$0\" | grep -q 'llvm::' && exit 1; exit 0"
          $<TARGET_FILE:aot_runtime_only>)

# The C launchers from a C program.
add_executable(aot_c_test unit/aot_c_test.c)
tk_add_kernels(aot_c_test SOURCES ${PROJECT_SOURCE_DIR}/stdlib/elementwise.tk KERNELS complex_activation
               DEFINES BLOCK=128 SPECIALISE none)
tk_add_kernels(aot_c_test SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/kernels/descriptor_params.tk KERNELS affine_1d
               SPECIALISE none)
target_link_libraries(aot_c_test PRIVATE tk_sim_device m)
set_target_properties(aot_c_test PROPERTIES LINKER_LANGUAGE CXX)
add_test(NAME aot_c_launchers COMMAND aot_c_test)
set_tests_properties(aot_c_launchers PROPERTIES ENVIRONMENT "TK_CACHE_DIR=${TK_TEST_CACHE_DIR}")
