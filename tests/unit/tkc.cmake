# tkc's launch description (tools/tkc: .npy, --arg/--grid/--seed) and `tkc
# run` end to end: the test runs the built tkc binary, so building it builds
# tkc too.
tk_add_unit_test(tkc_run_test SOURCES unit/tkc_run_test.cpp LIBS tkc_launch nlohmann_json::nlohmann_json)
target_compile_definitions(tkc_run_test PRIVATE TKC_PATH="$<TARGET_FILE:tkc>")
add_dependencies(tkc_run_test tkc)
