# The autotuner: configs, the performance model, the caches, shards, parallel
# compiles and tuned launches on the sim.
tk_add_unit_test(tune_test SOURCES unit/tune_test.cpp LIBS tk LABEL sim)
tk_add_unit_test(tune_model_test SOURCES unit/tune_model_test.cpp LIBS tk LABEL sim)
