// Loop-invariant code motion end to end: a row-sum loop kernel through the
// tile pipeline (licm included) on the sim, against a double-precision CPU
// reference; an invariant division by zero hoisted out of a loop that runs
// zero times must not trap.
#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <random>

#include "backend/sim/SimTarget.h"
#include "backend/sim/Simulator.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "lower/LowerToLLVM.h"
#include "driver/Pipeline.h"
#include "TestSeed.h"

using namespace tk;

namespace {

// out[row] = sum over j < cols of x[row * cols + j] * scale, 64 columns per
// iteration. Everything but the column offsets, the mask, the load and the
// sum is invariant, the division %cols / %d included (d = 0 when cols = 0).
const char *kRowSum = R"(
kernel @rowsum(%x: ptr<f32>, %out: ptr<f32>, %cols: i32, %scale: f32, %d: i32) {num_warps = 4} {
  %c0 = constant {value = 0} : i32
  %c64 = constant {value = 64} : i32
  %zeros = constant {value = 0.0} : tile<64xf32>
  %sum = for %c0, %cols, %c64, %zeros ({
  ^(%j: i32, %acc: tile<64xf32>):
    %row = program_id {axis = 0} : i32
    %base = mul %row, %cols : i32
    %r = arange {end = 64, start = 0} : tile<64xi32>
    %js = splat %j : tile<64xi32>
    %cs = add %js, %r : tile<64xi32>
    %q = div %cols, %d : i32
    %qs = splat %q : tile<64xi32>
    %m = cmp %cs, %qs {predicate = "lt"} : tile<64xi1>
    %bs = splat %base : tile<64xi32>
    %offs = add %bs, %cs : tile<64xi32>
    %xs = splat %x : tile<64xptr<f32>>
    %p = addptr %xs, %offs : tile<64xptr<f32>>
    %z = constant {value = 0.0} : tile<64xf32>
    %v = load %p, %m, %z : tile<64xf32>
    %ss = splat %scale : tile<64xf32>
    %sv = mul %v, %ss : tile<64xf32>
    %next = add %acc, %sv : tile<64xf32>
    yield %next
  }) : tile<64xf32>
  %total = reduce %sum {axis = 0, kind = "sum"} : f32
  %pid = program_id {axis = 0} : i32
  %o = addptr %out, %pid : ptr<f32>
  store %o, %total
  return
}
)";

int opsInLoopBody(ir::Function &fn, ir::OpKind kind) {
  int n = 0;
  for (ir::Op *op : fn.walk())
    if (op->is(ir::OpKind::For))
      for (auto &inner : op->regions()[0]->ops()) n += inner->is(kind);
  return n;
}

}  // namespace

TEST(LowerLicm, HoistedLoopMatchesTheCpuAndZeroTripDivisionIsSafe) {
  std::string error;
  auto m = ir::parseModule(kRowSum, "rowsum.tir", error);
  ASSERT_TRUE(m) << error;
  pipeline::tilePasses().run(*m);
  ir::Function &fn = *m->functions[0];
  // The invariant ops left the loop; the load and what uses the iv stayed.
  for (ir::OpKind k : {ir::OpKind::Div, ir::OpKind::Arange, ir::OpKind::ProgramId, ir::OpKind::Mul})
    EXPECT_EQ(opsInLoopBody(fn, k), k == ir::OpKind::Mul ? 1 : 0) << ir::printFunction(fn);
  EXPECT_EQ(opsInLoopBody(fn, ir::OpKind::Load), 1);

  auto ctx = std::make_unique<llvm::LLVMContext>();
  sim::SimTarget target;
  lower::LoweredKernel k = lower::lowerToLLVM(fn, target, *ctx);
  const auto sharedBytes = static_cast<uint32_t>(k.sharedBytes);  // the reduce's scratch
  auto program = sim::Program::compile(std::move(k.module), std::move(ctx));

  sim::Simulator simulator;
  std::mt19937 rng(tk::test::testSeed());
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  const int rows = 3;
  for (int cols : {0, 1, 63, 64, 781, 1023}) {
    std::vector<float> x(size_t(rows) * cols);
    for (float &f : x) f = dist(rng);
    float scale = dist(rng);
    float *dx = static_cast<float *>(simulator.memory().allocate(std::max<size_t>(x.size(), 1) * 4));
    float *dout = static_cast<float *>(simulator.memory().allocate(rows * 4));
    std::copy(x.begin(), x.end(), dx);
    std::fill(dout, dout + rows, NAN);
    sim::LaunchConfig cfg;
    cfg.grid[0] = rows;
    cfg.blockThreads = 128;
    cfg.sharedBytes = sharedBytes;
    void *px = dx, *po = dout;
    int32_t nc = cols, d = cols == 0 ? 0 : 1;  // 0 / 0 only where the loop never runs
    simulator.launch(*program, "rowsum", cfg, {&px, &po, &nc, &scale, &d});
    for (int r = 0; r < rows; ++r) {
      double want = 0;
      for (int j = 0; j < cols; ++j) want += double(x[size_t(r) * cols + j]) * scale;
      EXPECT_NEAR(dout[r], want, 1e-4 * (1 + std::fabs(want))) << "cols=" << cols << " row=" << r;
    }
    simulator.memory().release(dx);
    simulator.memory().release(dout);
  }
}
