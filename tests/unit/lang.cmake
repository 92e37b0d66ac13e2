# Front-end tests: lexer, parser, typing and IR generation, diagnostics
# (every tests/errors/*.tk), the stdlib kernels, the docs' code blocks, host
# expressions and @tune spaces (lang_tune_test.cpp).
file(GLOB TK_LANG_TEST_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/lang_*.cpp)
tk_add_unit_test(lang_tests SOURCES ${TK_LANG_TEST_SOURCES} LIBS tk_lang tk_ir)

# The libFuzzer target has its own standalone build: tests/fuzz/run.sh.
