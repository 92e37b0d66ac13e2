# Every #include of the compiler's and runtime's sources stays within the
# layers its target links (tests/layering.py over the graph
# cmake/Layering.cmake writes at configure time).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME layering COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/layering.py ${PROJECT_SOURCE_DIR}
                               ${PROJECT_BINARY_DIR}/layering.txt)

# Files under 600 lines and functions under 150 (STYLE.md, issue 22):
# scripts/longest.py exits 1 naming whatever grows past them.
add_test(NAME size_limits COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/longest.py --files-over 600
                                  --functions-over 150)
set_tests_properties(size_limits PROPERTIES LABELS unit)
