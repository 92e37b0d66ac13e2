# backend/nvptx (PTX codegen, ptxas) and backend/cuda (Driver API) tests.
# Tests needing ptxas, libdevice or a GPU skip with the reason when absent.
set(TK_NVPTX_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/unit)
tk_add_unit_test(nvptx_tests
  SOURCES ${TK_NVPTX_TEST_DIR}/nvptx_codegen_test.cpp ${TK_NVPTX_TEST_DIR}/nvptx_toolkit_test.cpp
          ${TK_NVPTX_TEST_DIR}/nvptx_mma_test.cpp ${TK_NVPTX_TEST_DIR}/nvptx_warp_specialize_test.cpp
          ${TK_NVPTX_TEST_DIR}/nvptx_tma_store_test.cpp
  LIBS tk_nvptx tk_cuda tk_llvm LABEL ptxas)
tk_add_unit_test(cuda_tests SOURCES ${TK_NVPTX_TEST_DIR}/cuda_driver_test.cpp LIBS tk_cuda)
# The docs test compiles docs/backends.md's C++ examples with the same compiler.
target_compile_definitions(nvptx_tests PRIVATE TK_CXX="${CMAKE_CXX_COMPILER}")
