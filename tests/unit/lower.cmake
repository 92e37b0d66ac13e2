# lower/: layout arithmetic, axis analysis, layout assignment, and lowering
# run end to end on the sim.
tk_add_unit_test(lower_tests SOURCES unit/lower_layouts_test.cpp unit/lower_scan_test.cpp
                 LIBS tk_lower tk_sim tk_compiler)
tk_add_unit_test(lower_sim_test SOURCES unit/lower_sim_test.cpp unit/lower_licm_sim_test.cpp
                 LIBS tk_lower tk_sim tk_compiler LABEL sim)
