# The public API end to end: stdlib and test kernels on the sim against CPU
# references, the launcher's argument checks, bundles.
tk_add_unit_test(runtime_kernels_test SOURCES unit/runtime_kernels_test.cpp LIBS tk)
tk_add_unit_test(runtime_api_test SOURCES unit/runtime_api_test.cpp LIBS tk)
tk_add_unit_test(runtime_docs_test SOURCES unit/runtime_docs_test.cpp LIBS tk)
