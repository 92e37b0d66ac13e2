// instrumentMemoryAccesses: route every global and shared memory access the
// lowering marked (!tk.loc, !tk.shared) through the sim runtime, which checks
// bounds and counts requests before the access happens.
#pragma once

#include "backend/sim/SiteTable.h"

namespace llvm {
class Module;
}

namespace tk::sim {

// Runtime hooks the instrumented code calls (backend/sim/Runtime.cpp):
//   ptr __tk_sim_global_access(ptr p, i32 site)   -> p, or a zeroed scratch buffer when the access is bad
//   ptr __tk_sim_shared_access(ptr p, i32 site)
//   ptr __tk_sim_global_access_masked(ptr p, i32 site, i64 laneMask)   (llvm.masked.load/store)
//   ptr __tk_sim_shared_access_masked(ptr p, i32 site, i64 laneMask)
//   ptr __tk_sim_global_access_rooted(ptr p, i32 site, ptr root)   (an address from a root pointer, Site::root)
//   ptr __tk_sim_global_access_masked_rooted(ptr p, i32 site, i64 laneMask, ptr root)
//   void __tk_sim_barrier_at(i32 site)             (a barrier call that carries !tk.loc)
//   i32 __tk_sim_shfl_xor_i32_at(i32 v, i32 mask, i32 site), and _f32_at   (a shuffle call that carries !tk.loc)
//   <4 x i32> __tk_sim_ldmatrix_at(ptr row, i32 num, i32 trans, i32 site)   (every ldmatrix call)
//   <4 x float> __tk_sim_mma_at(i32 a0..a3, i32 b0, i32 b1, float c0..c3, i32 bf16, i32 site)   (every mma call)
inline constexpr const char *kFnGlobalAccess = "__tk_sim_global_access";
inline constexpr const char *kFnSharedAccess = "__tk_sim_shared_access";
inline constexpr const char *kFnGlobalAccessMasked = "__tk_sim_global_access_masked";
inline constexpr const char *kFnSharedAccessMasked = "__tk_sim_shared_access_masked";
inline constexpr const char *kFnGlobalAccessRooted = "__tk_sim_global_access_rooted";
inline constexpr const char *kFnGlobalAccessMaskedRooted = "__tk_sim_global_access_masked_rooted";
inline constexpr const char *kFnBarrierAt = "__tk_sim_barrier_at";
inline constexpr const char *kFnShflI32At = "__tk_sim_shfl_xor_i32_at";
inline constexpr const char *kFnShflF32At = "__tk_sim_shfl_xor_f32_at";
inline constexpr const char *kFnLdmatrixAt = "__tk_sim_ldmatrix_at";
inline constexpr const char *kFnMmaAt = "__tk_sim_mma_at";
inline constexpr const char *kFnWgmmaAt = "__tk_sim_wgmma_at";  // (i64, i64, ptr, i32, i32, i32 site): every wgmma call

// void __tk_sim_cp_async_at(ptr dst, ptr src, i32 bytes, i32 srcBytes, i32 globalSite, i32 sharedSite)
// (every cp.async call): its global read, counted at issue, and its shared
// write, counted when a wait_group completes it.
inline constexpr const char *kFnCpAsyncAt = "__tk_sim_cp_async_at";

// The mbarrier operations with their site appended, when they carry !tk.loc:
// void __tk_sim_mbarrier_init_at(ptr bar, i32 count, i32 site), _inval_at(ptr, i32 site),
// _arrive_expect_tx_at(ptr, i32 bytes, i32 site), _arrive_at(ptr, i32 site),
// _wait_at(ptr, i32 parity, i32 site); void __tk_sim_named_barrier_at(i32 id,
// i32 threads, i32 site);
// and every tma_load: void __tk_sim_tma_load_at(ptr dst, ptr map, ptr bar, i32 rank,
// i32 c0, .., i32 c4, i32 site), whose site is a GlobalLoad rooted at the map's base;
// and every tma_store: void __tk_sim_tma_store_at(ptr src, ptr map, i32 rank,
// i32 c0, .., i32 c4, i32 site), a GlobalStore rooted at the map's base.
inline constexpr const char *kFnMbarrierInitAt = "__tk_sim_mbarrier_init_at";
inline constexpr const char *kFnMbarrierInvalAt = "__tk_sim_mbarrier_inval_at";
inline constexpr const char *kFnMbarrierArriveExpectTxAt = "__tk_sim_mbarrier_arrive_expect_tx_at";
inline constexpr const char *kFnMbarrierWaitAt = "__tk_sim_mbarrier_wait_at";
inline constexpr const char *kFnMbarrierArriveAt = "__tk_sim_mbarrier_arrive_at";
inline constexpr const char *kFnNamedBarrierAt = "__tk_sim_named_barrier_at";
inline constexpr const char *kFnTmaLoadAt = "__tk_sim_tma_load_at";
inline constexpr const char *kFnTmaStoreAt = "__tk_sim_tma_store_at";

// The metadata the lowering attaches (!tk.loc, !tk.shared) is declared in
// lower/LocMetadata.h, with the functions that write and read it.

// Rewrites the module in place and appends one site per rewritten operation to
// `sites`. Loads, stores, atomicrmw, cmpxchg and llvm.masked.load/store of any
// width are handled; unmarked accesses (registers, stack) are left alone.
// Every ldmatrix, mma, cp.async, tma_load and tma_store call gets a site (two for cp.async), marked or not: the race
// check and the runtime's errors name an ldmatrix by it.
// Returns the number of sites added. Throws SimError for a marked access
// outside address space 0.
unsigned instrumentMemoryAccesses(llvm::Module &m, SiteTable &sites);

}  // namespace tk::sim
