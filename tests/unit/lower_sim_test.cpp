// Lowering end to end: tile IR text -> pipeline -> LLVM IR through SimTarget
// -> the sim, checked against CPU references and the sim's counters.
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

struct Compiled {
  std::unique_ptr<sim::Program> program;
  int sharedBytes = 0;
  std::string tir;
};

Compiled compile(const std::string &text) {
  std::string error;
  auto m = ir::parseModule(text, "t.tir", error);
  if (!m) throw std::runtime_error(error);
  pipeline::tilePasses().run(*m);
  Compiled c;
  c.tir = ir::printFunction(*m->functions[0]);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  sim::SimTarget target;
  lower::LoweredKernel k = lower::lowerToLLVM(*m->functions[0], target, *ctx);
  c.sharedBytes = k.sharedBytes;
  c.program = sim::Program::compile(std::move(k.module), std::move(ctx));
  return c;
}

// out = x * 2 + y over n elements, BLOCK 1024, masked.
const char *kAxpy = R"(
kernel @axpy(%x: ptr<f32> {align = 16}, %y: ptr<f32> {align = 16}, %out: ptr<f32> {align = 16}, %n: i32) {num_warps = 4} {
  %pid = program_id {axis = 0} : i32
  %b = constant {value = 1024} : i32
  %base = mul %pid, %b : i32
  %r = arange {end = 1024, start = 0} : tile<1024xi32>
  %bs = splat %base : tile<1024xi32>
  %offs = add %bs, %r : tile<1024xi32>
  %ns = splat %n : tile<1024xi32>
  %m = cmp %offs, %ns {predicate = "lt"} : tile<1024xi1>
  %xs = splat %x : tile<1024xptr<f32>>
  %xp = addptr %xs, %offs : tile<1024xptr<f32>>
  %xv = load %xp, %m : tile<1024xf32>
  %ys = splat %y : tile<1024xptr<f32>>
  %yp = addptr %ys, %offs : tile<1024xptr<f32>>
  %yv = load %yp, %m : tile<1024xf32>
  %two = constant {value = 2.0} : tile<1024xf32>
  %t = mul %xv, %two : tile<1024xf32>
  %s = add %t, %yv : tile<1024xf32>
  %os = splat %out : tile<1024xptr<f32>>
  %op = addptr %os, %offs : tile<1024xptr<f32>>
  store %op, %s, %m
  return
}
)";

std::vector<float> randomVector(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> d(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float &f : v) f = d(rng);
  return v;
}

}  // namespace

TEST(LowerSim, MaskedElementwiseMatchesTheCpuAtEverySize) {
  Compiled c = compile(kAxpy);
  sim::Simulator simulator;
  std::mt19937 rng(tk::test::testSeed());
  for (int n : {1, 781, 1023, 1024, 98433}) {
    auto x = randomVector(n, rng), y = randomVector(n, rng);
    float *dx = static_cast<float *>(simulator.memory().allocate(n * 4));
    float *dy = static_cast<float *>(simulator.memory().allocate(n * 4));
    float *dout = static_cast<float *>(simulator.memory().allocate(n * 4));
    std::copy(x.begin(), x.end(), dx);
    std::copy(y.begin(), y.end(), dy);
    std::fill(dout, dout + n, NAN);
    sim::LaunchConfig cfg;
    cfg.grid[0] = (n + 1023) / 1024;
    cfg.blockThreads = 128;
    void *px = dx, *py = dy, *po = dout;
    int32_t nn = n;
    sim::Counters counters = simulator.launch(*c.program, "axpy", cfg, {&px, &py, &po, &nn});
    for (int i = 0; i < n; ++i) ASSERT_NEAR(dout[i], double(x[i]) * 2 + y[i], 1e-5 * (1 + std::fabs(dout[i]))) << "n=" << n << " i=" << i;
    EXPECT_EQ(counters.globalLoadBytes, uint64_t(n) * 8) << n;
    EXPECT_EQ(counters.globalStoreBytes, uint64_t(n) * 4) << n;
    if (n % 1024 == 0) {
      // Full blocks: every warp access is one 512-byte v4 request.
      EXPECT_EQ(counters.globalLoadSectors, counters.globalLoadRequests * 16);
      EXPECT_EQ(counters.globalStoreSectors, counters.globalStoreRequests * 16);
    }
    simulator.memory().release(dx);
    simulator.memory().release(dy);
    simulator.memory().release(dout);
  }
}

TEST(LowerSim, TransposingStoreConvertsLayoutsThroughSharedMemory) {
  // out[c * 4 + r] = x[r * 256 + c] + r: the load is contiguous along dim 1,
  // the store along dim 0, so a convert_layout goes between them.
  Compiled c = compile(R"(
kernel @transpose(%x: ptr<f32> {align = 16}, %out: ptr<f32> {align = 16}) {num_warps = 4} {
  %r = arange {end = 4, start = 0} : tile<4xi32>
  %c = arange {end = 256, start = 0} : tile<256xi32>
  %r2 = expand_dims %r {axis = 1} : tile<4x1xi32>
  %rb = broadcast %r2 : tile<4x256xi32>
  %c2 = expand_dims %c {axis = 0} : tile<1x256xi32>
  %cb = broadcast %c2 : tile<4x256xi32>
  %k256 = constant {value = 256} : tile<4x256xi32>
  %k4 = constant {value = 4} : tile<4x256xi32>
  %ri = mul %rb, %k256 : tile<4x256xi32>
  %in = add %ri, %cb : tile<4x256xi32>
  %ci = mul %cb, %k4 : tile<4x256xi32>
  %on = add %ci, %rb : tile<4x256xi32>
  %xs = splat %x : tile<4x256xptr<f32>>
  %p = addptr %xs, %in : tile<4x256xptr<f32>>
  %v = load %p : tile<4x256xf32>
  %rf = cast %rb : tile<4x256xf32>
  %w = add %v, %rf : tile<4x256xf32>
  %os = splat %out : tile<4x256xptr<f32>>
  %q = addptr %os, %on : tile<4x256xptr<f32>>
  store %q, %w
  return
}
)");
  EXPECT_NE(c.tir.find("convert_layout"), std::string::npos) << c.tir;
  EXPECT_EQ(c.sharedBytes, 4 * (256 + 1) * 4);  // each row padded by a word: the transpose reads down columns
  sim::Simulator simulator;
  std::mt19937 rng(tk::test::testSeed());
  auto x = randomVector(1024, rng);
  float *dx = static_cast<float *>(simulator.memory().allocate(4096));
  float *dout = static_cast<float *>(simulator.memory().allocate(4096));
  std::copy(x.begin(), x.end(), dx);
  std::fill(dout, dout + 1024, NAN);
  sim::LaunchConfig cfg;
  cfg.blockThreads = 128;
  cfg.sharedBytes = static_cast<uint32_t>(c.sharedBytes);
  void *px = dx, *po = dout;
  sim::Counters counters = simulator.launch(*c.program, "transpose", cfg, {&px, &po});
  for (int r = 0; r < 4; ++r)
    for (int col = 0; col < 256; ++col) ASSERT_EQ(dout[col * 4 + r], x[r * 256 + col] + float(r)) << r << "," << col;
  EXPECT_EQ(counters.barriers, 2u);
  EXPECT_GT(counters.sharedRequests, 0u);
  simulator.memory().release(dx);
  simulator.memory().release(dout);
}

TEST(LowerSim, OutOfBoundsAccessNamesTheSourceLine) {
  // Without its mask the axpy kernel reads past n.
  std::string text = kAxpy;
  text.replace(text.find("%xv = load %xp, %m"), 18, "%xv = load %xp    ");
  std::string error;
  auto m = ir::parseModule(text, "t.tir", error);
  ASSERT_TRUE(m) << error;
  for (ir::Op *op : m->functions[0]->walk())
    if (op->is(ir::OpKind::Load)) op->setLoc(ir::Location{"axpy.tk", 7, 12});
  pipeline::tilePasses().run(*m);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  sim::SimTarget target;
  auto k = lower::lowerToLLVM(*m->functions[0], target, *ctx);
  auto program = sim::Program::compile(std::move(k.module), std::move(ctx));
  sim::Simulator simulator;
  const int n = 100;
  void *px = simulator.memory().allocate(n * 4), *py = simulator.memory().allocate(n * 4),
       *po = simulator.memory().allocate(n * 4);
  int32_t nn = n;
  sim::LaunchConfig cfg;
  cfg.blockThreads = 128;
  try {
    simulator.launch(*program, "axpy", cfg, {&px, &py, &po, &nn});
    FAIL() << "expected an out-of-bounds error";
  } catch (const sim::SimError &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("axpy"), std::string::npos) << msg;
    EXPECT_NE(msg.find("axpy.tk:7:12"), std::string::npos) << msg;
    EXPECT_NE(msg.find("out-of-bounds"), std::string::npos) << msg;
  }
}
