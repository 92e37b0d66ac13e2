# The public API end to end, in one executable (runtime_tests; one process
# a test under ctest, so tests stay isolated): stdlib and test kernels on
# the sim against CPU references, the launcher's argument checks, bundles,
# the pass registry, the tuner. What each file covers, where it needs saying:
set(TK_RUNTIME_TEST_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/runtime_kernels_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_api_test.cpp
  # The tk::Error hierarchy (tk/error.h): the class each representative failure throws.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_errors_test.cpp
  # tk::SourceFile: one parse answering kernels, signatures, bundles and padded tiles; compiles from several threads.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_source_file_test.cpp
  # The one pass registry and pipeline order (driver/Pipeline.cpp), and docs/ir.md's table of it.
  ${CMAKE_CURRENT_LIST_DIR}/pipeline_test.cpp
  # Streams and events (Device::createStream), on the sim and on a GPU when present.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_stream_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_docs_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_ptxas_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_reduce_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_normalization_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_atomics_test.cpp
  # Every atomic op on every type, under contention and alone (tests/kernels/atomics.tk's rmw).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_atomic_ops_test.cpp
  # Triton's tutorial 08 grouped GEMM: pointers from i64 addresses and `**f16` (tests/kernels/grouped_gemm.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_grouped_gemm_test.cpp
  # Triton's tutorial 05 layer-norm backward, its spin lock included (tests/kernels/layer_norm_bwd.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_layer_norm_bwd_test.cpp
  # Every atomic op, type, sem and scope through ptxas for sm_80 and sm_90.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_atomics_ptxas_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_scan_test.cpp
  # reduce and associative_scan with combine functions (tests/kernels/combine.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_combine_test.cpp
  # gather flip sort topk interleave cat (tests/kernels/selection.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_selection_test.cpp
  # Tiles whose dims are not powers of two, every kind of op (tests/kernels/any_size.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_any_size_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_descriptor_test.cpp
  # desc<T, [..]> parameters and tk::TensorDescriptor (tests/kernels/descriptor_params.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_descriptor_params_test.cpp
  # Tensor maps at launch (Bundle::tensorMaps): the JSON and its checks, the sim's encoding, the values launches pass.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_tensor_maps_test.cpp
  # The tensor memory accelerator on sm_90a: a persistent matmul through host descriptors (tests/kernels/tma.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_tma_test.cpp
  # f8e4m3/f8e5m2: conversions against tk/fp8.h bit for bit, arithmetic (tests/kernels/fp8.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_fp8_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_debug_test.cpp
  # The sim as a sanitizer: provenance of global accesses, the global race check (tests/kernels/sanitizer.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_sanitizer_test.cpp
  # Bundles' tile IR verified before lowering: edited vec, layouts, tile sizes.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_verified_inputs_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_dot_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_control_flow_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_similarity_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_mma_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_mma_precision_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_matmul_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_attention_test.cpp
  # attention_fwd's lse and the backward's three kernels against double gradients.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_attention_bwd_test.cpp
  # Per-site counters (LaunchOptions::perSite), the data behind `tkc report`.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_report_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_trans_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_assume_test.cpp
  # inf/nan, min/max/cdiv/clamp and the math built-ins (tests/kernels/builtins.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_builtins_test.cpp
  # Triton and Liger-Kernel kernels ported as written: scoping, tuples, ported kernels (tests/kernels/ports).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_ports_test.cpp
  # Type and string consts (tests/kernels/generic.tk), f16/bf16 scalar
  # arguments, Device::fill/zero, the sim's LaunchStats::ms.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_generic_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/runtime_files_test.cpp
  # rand/randn/randint (tests/kernels/random.tk) against a C++ Philox and
  # Random123's vectors.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_random_test.cpp
  # The stdlib's dropout, swiglu and cross_entropy.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_llm_kernels_test.cpp
  # Tiles of rank 3 and 4, expand_dims/broadcast_to/permute/reshape/join, and
  # the stdlib's rope (tests/kernels/rank3.tk, stdlib/rope.tk).
  ${CMAKE_CURRENT_LIST_DIR}/runtime_rank3_test.cpp
  # Hints (cache operators, eviction policies, volatile; multiple_of, max_contiguous): same values as without.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_hints_test.cpp
  # tan ... fmod, div_rn, sqrt_rn, fdiv and umulhi (tests/kernels/math.tk) in
  # every float type, tutorial 07's asin_kernel, and ptxas on all of them.
  ${CMAKE_CURRENT_LIST_DIR}/runtime_math_test.cpp
)
tk_add_unit_test(runtime_tests SOURCES ${TK_RUNTIME_TEST_SOURCES} LIBS tk tk_nvptx LABEL sim)

# The example and the demo, run as users run them (on the sim, at sizes that
# keep the suite quick; `make demo` runs the demo at 2^22).
add_test(NAME example_complex_activation COMMAND complex_activation 98433)
add_test(NAME demo_small COMMAND tk-demo --log2n 16 --report ${PROJECT_BINARY_DIR}/demo-report-test.json)
set_tests_properties(example_complex_activation demo_small PROPERTIES ENVIRONMENT "TK_DEVICE=sim;TK_CACHE_DIR=${TK_TEST_CACHE_DIR}" TIMEOUT 300 LABELS sim)
set_tests_properties(demo_small PROPERTIES LABELS "sim;slow" COST 60)
