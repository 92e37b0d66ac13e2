# The public API end to end: stdlib and test kernels on the sim against CPU
# references, the launcher's argument checks, bundles.
tk_add_unit_test(runtime_kernels_test SOURCES unit/runtime_kernels_test.cpp LIBS tk)
tk_add_unit_test(runtime_api_test SOURCES unit/runtime_api_test.cpp LIBS tk)
# The tk::Error hierarchy (tk/error.h): the class each representative failure throws.
tk_add_unit_test(runtime_errors_test SOURCES unit/runtime_errors_test.cpp LIBS tk)
# The one pass registry and pipeline order (runtime/Pipeline.cpp), and docs/ir.md's table of it.
tk_add_unit_test(pipeline_test SOURCES unit/pipeline_test.cpp LIBS tk)
# Streams and events (Device::createStream), on the sim and on a GPU when present.
tk_add_unit_test(runtime_stream_test SOURCES unit/runtime_stream_test.cpp LIBS tk)
tk_add_unit_test(runtime_docs_test SOURCES unit/runtime_docs_test.cpp LIBS tk)
tk_add_unit_test(runtime_ptxas_test SOURCES unit/runtime_ptxas_test.cpp LIBS tk tk_nvptx)

# The example and the demo, run as users run them (on the sim, at sizes that
# keep the suite quick; `make demo` runs the demo at 2^22).
add_test(NAME example_complex_activation COMMAND complex_activation 98433)
add_test(NAME demo_small COMMAND tk-demo --log2n 16 --report ${PROJECT_BINARY_DIR}/demo-report-test.json)
set_tests_properties(example_complex_activation demo_small PROPERTIES ENVIRONMENT "TK_DEVICE=sim;TK_CACHE_DIR=${TK_TEST_CACHE_DIR}" TIMEOUT 300)
tk_add_unit_test(runtime_reduce_test SOURCES unit/runtime_reduce_test.cpp LIBS tk)
tk_add_unit_test(runtime_normalization_test SOURCES unit/runtime_normalization_test.cpp LIBS tk)
tk_add_unit_test(runtime_atomics_test SOURCES unit/runtime_atomics_test.cpp LIBS tk)
# Every atomic op on every type, under contention and alone (tests/kernels/atomics.tk's rmw).
tk_add_unit_test(runtime_atomic_ops_test SOURCES unit/runtime_atomic_ops_test.cpp LIBS tk)
# Triton's tutorial 05 layer-norm backward, its spin lock included (tests/kernels/layer_norm_bwd.tk).
tk_add_unit_test(runtime_layer_norm_bwd_test SOURCES unit/runtime_layer_norm_bwd_test.cpp LIBS tk)
# Every atomic op, type, sem and scope through ptxas for sm_80 and sm_90.
tk_add_unit_test(runtime_atomics_ptxas_test SOURCES unit/runtime_atomics_ptxas_test.cpp LIBS tk tk_nvptx)
tk_add_unit_test(runtime_scan_test SOURCES unit/runtime_scan_test.cpp LIBS tk tk_nvptx)
tk_add_unit_test(runtime_debug_test SOURCES unit/runtime_debug_test.cpp LIBS tk tk_nvptx)
tk_add_unit_test(runtime_dot_test SOURCES unit/runtime_dot_test.cpp LIBS tk tk_nvptx)
tk_add_unit_test(runtime_control_flow_test SOURCES unit/runtime_control_flow_test.cpp LIBS tk)
tk_add_unit_test(runtime_similarity_test SOURCES unit/runtime_similarity_test.cpp LIBS tk)
tk_add_unit_test(runtime_mma_test SOURCES unit/runtime_mma_test.cpp LIBS tk tk_nvptx)
tk_add_unit_test(runtime_mma_precision_test SOURCES unit/runtime_mma_precision_test.cpp LIBS tk tk_nvptx)
tk_add_unit_test(runtime_matmul_test SOURCES unit/runtime_matmul_test.cpp LIBS tk)
tk_add_unit_test(runtime_attention_test SOURCES unit/runtime_attention_test.cpp LIBS tk)
# Per-site counters (LaunchOptions::perSite), the data behind `tkc report`.
tk_add_unit_test(runtime_report_test SOURCES unit/runtime_report_test.cpp LIBS tk)
tk_add_unit_test(runtime_trans_test SOURCES unit/runtime_trans_test.cpp LIBS tk)
tk_add_unit_test(runtime_assume_test SOURCES unit/runtime_assume_test.cpp LIBS tk)
# inf/nan, min/max/cdiv/clamp and the math built-ins (tests/kernels/builtins.tk).
tk_add_unit_test(runtime_builtins_test SOURCES unit/runtime_builtins_test.cpp LIBS tk tk_nvptx)
# Type and string consts (tests/kernels/generic.tk), f16/bf16 scalar
# arguments, Device::fill/zero, the sim's LaunchStats::ms.
tk_add_unit_test(runtime_generic_test SOURCES unit/runtime_generic_test.cpp LIBS tk)
tk_add_unit_test(runtime_files_test SOURCES unit/runtime_files_test.cpp LIBS tk)
# rand/randn/randint (tests/kernels/random.tk) against a C++ Philox and
# Random123's vectors.
tk_add_unit_test(runtime_random_test SOURCES unit/runtime_random_test.cpp LIBS tk tk_nvptx)
# The stdlib's dropout, swiglu and cross_entropy.
tk_add_unit_test(runtime_llm_kernels_test SOURCES unit/runtime_llm_kernels_test.cpp LIBS tk)
# Tiles of rank 3 and 4, expand_dims/broadcast_to/permute/reshape/join, and
# the stdlib's rope (tests/kernels/rank3.tk, stdlib/rope.tk).
tk_add_unit_test(runtime_rank3_test SOURCES unit/runtime_rank3_test.cpp LIBS tk)
# Hints (cache operators, eviction policies, volatile; multiple_of, max_contiguous): same values as without.
tk_add_unit_test(runtime_hints_test SOURCES unit/runtime_hints_test.cpp LIBS tk)
# tan ... fmod, div_rn, sqrt_rn, fdiv and umulhi (tests/kernels/math.tk) in
# every float type, tutorial 07's asin_kernel, and ptxas on all of them.
tk_add_unit_test(runtime_math_test SOURCES unit/runtime_math_test.cpp LIBS tk tk_nvptx)
