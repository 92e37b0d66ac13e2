# The autotuner: configs, the performance model, the caches, shards, parallel
# compiles and tuned launches on the sim.
# They link what runtime_tests links, so they are part of it (one 190 MB
# executable, not three).
target_sources(runtime_tests PRIVATE unit/tune_test.cpp unit/tune_model_test.cpp)
