# Tile IR tests: GoogleTest units (text form, verifier, passes, docs) and the
# lit suite under tests/lit (tk-opt + FileCheck). ctest does not build: run
# `ninja` (all targets, tk-opt included) before `ctest`.
file(GLOB TK_IR_UNIT_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/ir_*.cpp)
tk_add_unit_test(ir_tests SOURCES ${TK_IR_UNIT_SOURCES} LIBS tk_ir)

# lit: configure the site file into the build tree and run the whole suite as
# one ctest test. It needs tk-opt built (REQUIRED_FILES makes ctest say so
# instead of failing obscurely).
get_filename_component(TK_LIT_SOURCE_ROOT ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
set(TK_LLVM_TOOLS_DIR /usr/lib/llvm-19/bin)
set(TK_LIT /usr/lib/llvm-19/build/utils/lit/lit.py)
find_package(Python3 COMPONENTS Interpreter REQUIRED)
configure_file(${CMAKE_CURRENT_LIST_DIR}/../lit/lit.site.cfg.py.in ${PROJECT_BINARY_DIR}/tests/lit/lit.site.cfg.py @ONLY)
add_test(NAME lit COMMAND ${Python3_EXECUTABLE} ${TK_LIT} -sv ${PROJECT_BINARY_DIR}/tests/lit)
set_tests_properties(lit PROPERTIES REQUIRED_FILES $<TARGET_FILE:tk-opt> TIMEOUT 600 LABELS lit COST 40)
