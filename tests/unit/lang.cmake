# Front-end tests: lexer, parser, typing and IR generation, diagnostics
# (every tests/errors/*.tk), the stdlib kernels and the docs' code blocks.
file(GLOB TK_LANG_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/lang_*.cpp)
tk_add_unit_test(lang_tests SOURCES ${TK_LANG_TEST_SOURCES} LIBS tk_lang tk_ir)

# libFuzzer target for the front end; tests/fuzz/run.sh configures a clang
# build with TK_BUILD_FUZZERS=ON.
option(TK_BUILD_FUZZERS "Build the libFuzzer targets (clang only)" OFF)
if(TK_BUILD_FUZZERS)
  add_executable(frontend_fuzzer ${PROJECT_SOURCE_DIR}/tests/fuzz/frontend_fuzzer.cpp)
  target_link_libraries(frontend_fuzzer PRIVATE tk_lang tk_ir)
  target_link_options(frontend_fuzzer PRIVATE -fsanitize=fuzzer,address)
  target_compile_options(frontend_fuzzer PRIVATE -fsanitize=fuzzer,address)
endif()
