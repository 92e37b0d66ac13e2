// instrumentMemoryAccesses as text in, text out: marked accesses are routed
// through the runtime hooks with one site each; unmarked ones are untouched;
// located shuffles get a site too.
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "backend/sim/InstrumentMemory.h"
#include "backend/sim/Simulator.h"

namespace tk::sim::test {
namespace {

const char *kInput = R"(
define void @k(ptr %g, ptr %s, <4 x i1> %m) {
  %a = load <4 x float>, ptr %g, align 16, !tk.loc !0
  store float 1.0, ptr %s, align 4, !tk.shared !1
  %local = alloca i32
  store i32 3, ptr %local
  %old = atomicrmw add ptr %g, i32 1 monotonic, !tk.loc !2
  %v = call <4 x float> @llvm.masked.load.v4f32.p0(ptr %g, i32 4, <4 x i1> %m, <4 x float> zeroinitializer), !tk.loc !2
  call void @__tk_sim_barrier(), !tk.loc !3
  call void @__tk_sim_barrier()
  ret void
}
declare void @__tk_sim_barrier()
declare <4 x float> @llvm.masked.load.v4f32.p0(ptr, i32, <4 x i1>, <4 x float>)
!0 = !{!"a.tk:1:2"}
!1 = !{}
!2 = !{!"a.tk:3:4"}
!3 = !{!"a.tk:5:6"}
)";

// `ir` parsed and instrumented: the module, its text and the sites.
struct Instrumented {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module;
  SiteTable sites;
  size_t count = 0;  // what instrumentMemoryAccesses returned
  std::string text;

  explicit Instrumented(const char *ir) {
    llvm::SMDiagnostic err;
    module = llvm::parseAssemblyString(ir, err, ctx);
    if (!module) {
      text = "parse error: " + err.getMessage().str();
      return;
    }
    count = instrumentMemoryAccesses(*module, sites);
    llvm::raw_string_ostream os(text);
    module->print(os, nullptr);
  }
  void expectLine(const std::string &s) const { EXPECT_NE(text.find(s), std::string::npos) << s << "\n" << text; }
};

TEST(SimInstrument, RoutesMarkedAccessesOnly) {
  Instrumented in(kInput);
  ASSERT_TRUE(in.module) << in.text;
  EXPECT_EQ(in.count, 5u);
  auto expectLine = [&](const std::string &s) { in.expectLine(s); };
  const SiteTable &sites = in.sites;
  expectLine("%1 = call ptr @__tk_sim_global_access(ptr %g, i32 0)");
  expectLine("load <4 x float>, ptr %1, align 16");
  expectLine("%2 = call ptr @__tk_sim_shared_access(ptr %s, i32 1)");
  expectLine("store float 1.000000e+00, ptr %2, align 4");
  expectLine("store i32 3, ptr %local");  // the stack is left alone
  expectLine("%3 = call ptr @__tk_sim_global_access(ptr %g, i32 2)");
  expectLine("atomicrmw add ptr %3, i32 1 monotonic");
  expectLine("@__tk_sim_global_access_masked(ptr %g, i32 3, i64 %");
  expectLine("call void @__tk_sim_barrier_at(i32 4)");
  expectLine("call void @__tk_sim_barrier()\n");  // an unlocated barrier stays as it is

  ASSERT_EQ(sites.sites.size(), 5u);
  EXPECT_EQ(sites.sites[0].kind, SiteKind::GlobalLoad);
  EXPECT_EQ(sites.sites[0].bytes, 16u);
  EXPECT_EQ(sites.sites[0].loc, "a.tk:1:2");
  EXPECT_EQ(sites.sites[1].kind, SiteKind::SharedStore);
  EXPECT_EQ(sites.sites[1].loc, "");
  EXPECT_EQ(sites.sites[2].kind, SiteKind::GlobalAtomic);
  EXPECT_EQ(sites.sites[2].bytes, 4u);
  EXPECT_TRUE(sites.sites[3].masked);
  EXPECT_EQ(sites.sites[3].elemBytes, 4u);
  EXPECT_EQ(sites.sites[3].bytes, 16u);
  EXPECT_EQ(sites.sites[4].kind, SiteKind::Barrier);
  EXPECT_EQ(sites.sites[4].loc, "a.tk:5:6");
}

// The lowering may tag a shared access with both !tk.shared and !tk.loc: it
// is a shared access (shared hook, shared site kind) whose site has the line.
// A located shuffle becomes its `_at` form so a missing lane names the line.
const char *kSharedAndLoc = R"(
define void @k(ptr %s, i32 %v) {
  store i32 %v, ptr %s, align 4, !tk.shared !0, !tk.loc !1
  %x = load i32, ptr %s, align 4, !tk.loc !2, !tk.shared !0
  %y = call i32 @__tk_sim_shfl_xor_i32(i32 %x, i32 1), !tk.loc !3
  %f = bitcast i32 %y to float
  %z = call float @__tk_sim_shfl_xor_f32(float %f, i32 2), !tk.loc !3
  %w = call float @__tk_sim_shfl_xor_f32(float %z, i32 4)
  store float %w, ptr %s, align 4, !tk.shared !0
  ret void
}
declare i32 @__tk_sim_shfl_xor_i32(i32, i32) convergent nounwind
declare float @__tk_sim_shfl_xor_f32(float, i32) convergent nounwind
!0 = !{}
!1 = !{!"s.tk:1:2"}
!2 = !{!"s.tk:3:4"}
!3 = !{!"s.tk:5:6"}
)";

TEST(SimInstrument, SharedAccessWithLocationAndLocatedShuffles) {
  Instrumented in(kSharedAndLoc);
  ASSERT_TRUE(in.module) << in.text;
  EXPECT_EQ(in.count, 5u);
  auto expectLine = [&](const std::string &s) { in.expectLine(s); };
  const SiteTable &sites = in.sites;
  const std::string &text = in.text;
  expectLine("%1 = call ptr @__tk_sim_shared_access(ptr %s, i32 0)");
  expectLine("store i32 %v, ptr %1, align 4");
  expectLine("%2 = call ptr @__tk_sim_shared_access(ptr %s, i32 1)");
  expectLine("%x = load i32, ptr %2, align 4");
  expectLine("%y = call i32 @__tk_sim_shfl_xor_i32_at(i32 %x, i32 1, i32 2), !tk.loc !3");
  expectLine("%z = call float @__tk_sim_shfl_xor_f32_at(float %f, i32 2, i32 3), !tk.loc !3");
  expectLine("%w = call float @__tk_sim_shfl_xor_f32(float %z, i32 4)");  // unlocated: unchanged
  EXPECT_EQ(text.find("call ptr @__tk_sim_global_access"), std::string::npos) << text;
  EXPECT_EQ(text.find("call i32 @__tk_sim_shfl_xor_i32("), std::string::npos) << text;
  EXPECT_TRUE(in.module->getFunction("__tk_sim_shfl_xor_i32_at")->isConvergent());

  ASSERT_EQ(sites.sites.size(), 5u);
  EXPECT_EQ(sites.sites[0].kind, SiteKind::SharedStore);
  EXPECT_EQ(sites.sites[0].loc, "s.tk:1:2");
  EXPECT_EQ(sites.sites[1].kind, SiteKind::SharedLoad);
  EXPECT_EQ(sites.sites[1].loc, "s.tk:3:4");
  EXPECT_EQ(sites.sites[2].kind, SiteKind::Shuffle);
  EXPECT_EQ(sites.sites[2].loc, "s.tk:5:6");
  EXPECT_EQ(sites.sites[3].kind, SiteKind::Shuffle);
  EXPECT_EQ(sites.sites[4].kind, SiteKind::SharedStore);
  EXPECT_EQ(sites.sites[4].loc, "");
}

}  // namespace
}  // namespace tk::sim::test
