# Interop with the programs tk serves (issue 27): memory and streams they own
# (Device::borrow, borrowStream, the generated launchers' CUstream overloads,
# the C API's tk_buffer_borrow / tk_stream_borrow), typed buffers, and the
# launch templates' compile-time check of scalar types. Included after
# runtime.cmake and aot.cmake (tests/CMakeLists.txt globs in name order).
target_sources(runtime_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/runtime_interop_test.cpp)

# The generated launchers' CUstream overloads on borrowed memory (sim only, no compiler).
tk_add_unit_test(aot_interop_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/aot_interop_test.cpp LIBS tk_runtime tk_sim_device)
target_include_directories(aot_interop_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
tk_add_kernels(aot_interop_test SOURCES ${PROJECT_SOURCE_DIR}/stdlib/elementwise.tk KERNELS complex_activation
               DEFINES BLOCK=256 SPECIALISE none)

# tk_buffer_borrow / tk_stream_borrow from C.
add_executable(aot_interop_c_test ${CMAKE_CURRENT_LIST_DIR}/aot_interop_c_test.c)
tk_add_kernels(aot_interop_c_test SOURCES ${PROJECT_SOURCE_DIR}/stdlib/elementwise.tk KERNELS complex_activation
               DEFINES BLOCK=128 SPECIALISE none)
target_link_libraries(aot_interop_c_test PRIVATE tk_sim_device m)
set_target_properties(aot_interop_c_test PROPERTIES LINKER_LANGUAGE CXX)
add_test(NAME aot_interop_c COMMAND aot_interop_c_test)
set_tests_properties(aot_interop_c PROPERTIES ENVIRONMENT "TK_CACHE_DIR=${TK_TEST_CACHE_DIR}" LABELS sim)

# A size_t for an i32 parameter: one static_assert naming the problem (not
# std::variant's page of candidates), from Device::operator() and JitKernel.
add_test(NAME launch_scalar_type_is_a_compile_error
  COMMAND sh -c "out=$(\"$0\" -std=c++20 -fsyntax-only -I\"$1\" \"$2\" 2>&1) && { echo 'compiled, but must not'; exit 1; }; \
echo \"$out\"; echo \"$out\" | grep -q 'tk: a kernel argument must be a tk::Buffer, a tk::TensorDescriptor or a scalar of its parameter.s exact type' \
|| exit 1; test \"$(echo \"$out\" | grep -c 'error:')\" -eq 1"
          ${CMAKE_CXX_COMPILER} ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_LIST_DIR}/compile_fail/launch_size_t.cpp)
set_tests_properties(launch_scalar_type_is_a_compile_error PROPERTIES LABELS unit)

# examples/interop: a program's own memory and stream through Device::wrap,
# Device::adoptStream, Device::launch and a generated launcher (the sim here).
add_test(NAME interop_example COMMAND interop)
set_tests_properties(interop_example PROPERTIES LABELS sim PASS_REGULAR_EXPRESSION "^ok: memory and a stream"
  ENVIRONMENT "TK_DEVICE=sim;TK_CACHE_DIR=${TK_TEST_CACHE_DIR}")
