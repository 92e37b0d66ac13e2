# tk sim: memory, JIT, launch, collectives, counters, errors, conversions, race check,
# index overflow (sim:overflow), instruction counts, sampled launches, tensor-core instructions (ldmatrix, mma), cp.async,
# mbarriers and bulk tensor copies, warp specialisation.
tk_add_unit_test(sim_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sim_launch_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_collective_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_error_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_provenance_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_overflow_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_numeric_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_instrument_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_race_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_global_race_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_count_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_sample_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_mma_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_async_copy_test.cpp
          # mma.sync m16n8k8 (tf32) and m16n8k32 (s8), cvt.rna.tf32.f32; wgmma and its operand layouts.
          ${CMAKE_CURRENT_LIST_DIR}/sim_mma_shapes_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_wgmma_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/sim_wgmma_layout_test.cpp
          # mbarriers and cp.async.bulk.tensor (sm_90a's tensor memory accelerator).
          ${CMAKE_CURRENT_LIST_DIR}/sim_tma_test.cpp
          # TMA stores: cp.async.bulk.tensor from shared to global, bulk groups.
          ${CMAKE_CURRENT_LIST_DIR}/sim_tma_store_test.cpp
          # Warp specialisation: mbarrier.arrive, named barriers, setmaxnreg.
          ${CMAKE_CURRENT_LIST_DIR}/sim_warp_specialize_test.cpp
  LIBS tk_sim tk_llvm LABEL sim)
# Instruction counts and sampled launches through the public launcher API.
# Part of runtime_tests, which links the same libraries.
target_sources(runtime_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/sim_device_test.cpp)
