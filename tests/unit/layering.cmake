# Every #include of the compiler's and runtime's sources stays within the
# layers its target links (tests/layering.py over the graph
# cmake/Layering.cmake writes at configure time).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME layering COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/layering.py ${PROJECT_SOURCE_DIR}
                               ${PROJECT_BINARY_DIR}/layering.txt)
