# tkc's launch description (tools/tkc: .npy, --arg/--grid/--seed) and `tkc
# run` end to end: the test runs the built tkc binary, so building it builds
# tkc too.
tk_add_unit_test(tkc_run_test SOURCES unit/tkc_run_test.cpp LIBS tkc_launch nlohmann_json::nlohmann_json)
# TK_CXX: a launcher generated from a hostile file name must still compile.
target_compile_definitions(tkc_run_test PRIVATE TKC_PATH="$<TARGET_FILE:tkc>" TK_CXX="${CMAKE_CXX_COMPILER}")
add_dependencies(tkc_run_test tkc)

# bench/stdlib_reports.sh (docs/perf-reports.md: the report of every stdlib kernel)
# still runs: every row reports, none fails.
add_test(NAME stdlib_reports
         COMMAND sh -c "\"${PROJECT_SOURCE_DIR}/bench/stdlib_reports.sh\" \"$<TARGET_FILE:tkc>\" | grep -c '^resources ' | grep -qx 16")
set_tests_properties(stdlib_reports PROPERTIES ENVIRONMENT "TK_CACHE_DIR=${PROJECT_BINARY_DIR}/test-cache"
                     LABELS "ptxas;slow" COST 40)
