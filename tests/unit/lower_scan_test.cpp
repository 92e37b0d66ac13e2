// Lowering of `scan` over layouts written out by hand (the front end's
// default layouts reach only some of them): several registers per thread
// along the axis, lane groups of fewer than 32 lanes at a stride, warps and
// repetitions along the axis, dim order either way, and replication. Tile IR
// text -> lowerToLLVM through SimTarget -> the sim (with its race check),
// against a double-precision prefix sum.
#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <random>

#include "backend/sim/SimTarget.h"
#include "backend/sim/Simulator.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "lower/LowerToLLVM.h"
#include "TestSeed.h"

using namespace tk;

namespace {

struct Case {
  int rows, cols;  // rows 0: a 1-D tile of `cols`
  std::string layout;
  int numWarps, axis;
};

std::string str(const Case &c) {
  return (c.rows ? std::to_string(c.rows) + "x" : "") + std::to_string(c.cols) + " " + c.layout + " warps " +
         std::to_string(c.numWarps) + " axis " + std::to_string(c.axis);
}

// out[i] = cumsum(x)[i] over one tile in layout c.layout, elements row-major.
std::string kernelText(const Case &c, const std::string &elem) {
  const std::string L = c.layout, R = std::to_string(c.rows), C = std::to_string(c.cols);
  const std::string shape = c.rows ? R + "x" + C : C;
  auto tile = [&](const std::string &e) { return "tile<" + shape + "x" + e + ", " + L + ">"; };
  std::string t = "kernel @scan(%x: ptr<" + elem + "> {align = 16}, %out: ptr<" + elem + "> {align = 16}) {num_warps = " +
                  std::to_string(c.numWarps) + "} {\n";
  if (c.rows) {
    t += "  %r = arange {end = " + R + ", start = 0} : tile<" + R + "xi32, #slice<1, " + L + ">>\n";
    t += "  %c = arange {end = " + C + ", start = 0} : tile<" + C + "xi32, #slice<0, " + L + ">>\n";
    t += "  %r2 = expand_dims %r {axis = 1} : tile<" + R + "x1xi32, " + L + ">\n";
    t += "  %rb = broadcast %r2 : " + tile("i32") + "\n";
    t += "  %c2 = expand_dims %c {axis = 0} : tile<1x" + C + "xi32, " + L + ">\n";
    t += "  %cb = broadcast %c2 : " + tile("i32") + "\n";
    t += "  %kc = constant {value = " + C + "} : " + tile("i32") + "\n";
    t += "  %ri = mul %rb, %kc : " + tile("i32") + "\n";
    t += "  %offs = add %ri, %cb : " + tile("i32") + "\n";
  } else {
    t += "  %offs = arange {end = " + C + ", start = 0} : " + tile("i32") + "\n";
  }
  t += "  %xs = splat %x : " + tile("ptr<" + elem + ">") + "\n";
  t += "  %p = addptr %xs, %offs : " + tile("ptr<" + elem + ">") + "\n";
  t += "  %v = load %p : " + tile(elem) + "\n";
  t += "  %s = scan %v {axis = " + std::to_string(c.axis) + ", kind = \"sum\"} : " + tile(elem) + "\n";
  t += "  %os = splat %out : " + tile("ptr<" + elem + ">") + "\n";
  t += "  %q = addptr %os, %offs : " + tile("ptr<" + elem + ">") + "\n";
  t += "  store %q, %s\n  return\n}\n";
  return t;
}

template <typename T>
void run(const Case &c) {
  const bool isFloat = std::is_floating_point_v<T>;
  const std::string text = kernelText(c, isFloat ? "f32" : "i32");
  std::string error;
  auto m = ir::parseModule(text, "scan.tir", error);
  ASSERT_TRUE(m) << error << "\n" << text;
  ASSERT_TRUE(ir::verifyModule(*m, error)) << error << "\n" << text;
  auto ctx = std::make_unique<llvm::LLVMContext>();
  sim::SimTarget target;
  lower::LoweredKernel k = lower::lowerToLLVM(*m->functions[0], target, *ctx);
  auto program = sim::Program::compile(std::move(k.module), std::move(ctx));

  const int rows = c.rows ? c.rows : 1, cols = c.cols, n = rows * cols;
  static std::mt19937 rng(tk::test::testSeed());
  sim::Simulator simulator(1);
  T *dx = static_cast<T *>(simulator.memory().allocate(n * sizeof(T)));
  T *dout = static_cast<T *>(simulator.memory().allocate(n * sizeof(T)));
  for (int i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) dx[i] = std::uniform_real_distribution<float>(-1, 1)(rng), dout[i] = NAN;
    else dx[i] = std::uniform_int_distribution<int32_t>(-1000, 1000)(rng), dout[i] = INT32_MIN;
  }
  sim::LaunchConfig cfg;
  cfg.blockThreads = c.numWarps * 32;
  cfg.sharedBytes = k.sharedBytes;
  cfg.raceCheck = true;
  void *px = dx, *po = dout;
  simulator.launch(*program, "scan", cfg, {&px, &po});
  for (int r = 0; r < rows; ++r)
    for (int col = 0; col < cols; ++col) {
      double sum = 0, mag = 0;
      const bool alongRows = c.rows && c.axis == 0;
      for (int j = 0; j <= (alongRows ? r : col); ++j) {
        double v = alongRows ? dx[j * cols + col] : dx[r * cols + j];
        sum += v, mag += std::fabs(v);
      }
      if constexpr (std::is_floating_point_v<T>)
        ASSERT_NEAR(dout[r * cols + col], sum, 2e-5 * mag + 1e-6) << str(c) << " at " << r << "," << col;
      else
        ASSERT_EQ(dout[r * cols + col], T(sum)) << str(c) << " at " << r << "," << col;
    }
  simulator.memory().release(dx);
  simulator.memory().release(dout);
}

const std::vector<Case> kCases = {
    // 1-D: 4 registers x 32 lanes x 4 warps x 2 repetitions.
    {0, 1024, "#blocked<[4],[32],[4],[0]>", 4, 0},
    {0, 64, "#blocked<[2],[32],[1],[0]>", 1, 0},
    // Replicated: 2 lanes hold the 8 elements; 4 registers hold all of 2.
    {0, 8, "#blocked<[4],[32],[4],[0]>", 4, 0},
    {0, 2, "#blocked<[4],[32],[1],[0]>", 1, 0},
    {0, 256, "#blocked<[1],[32],[8],[0]>", 8, 0},
    // 2-D, row-major: along dim 0, 2 registers x lane groups of 4 at stride 8
    // x 2 warps; along dim 1, 4 registers x 8 lanes x 2 warps.
    {16, 64, "#blocked<[2,4],[4,8],[2,2],[1,0]>", 4, 0},
    {16, 64, "#blocked<[2,4],[4,8],[2,2],[1,0]>", 4, 1},
    // Column-major order; along dim 1, warps replicate (footprint 16 > 8).
    {32, 8, "#blocked<[4,1],[8,4],[1,4],[0,1]>", 4, 0},
    {32, 8, "#blocked<[4,1],[8,4],[1,4],[0,1]>", 4, 1},
    // 4 repetitions along dim 1, 2 registers each; copies along dim 0.
    {4, 128, "#blocked<[1,2],[2,16],[4,1],[1,0]>", 4, 1},
    {4, 128, "#blocked<[1,2],[2,16],[4,1],[1,0]>", 4, 0},
    {64, 64, "#blocked<[1,1],[32,1],[2,4],[1,0]>", 8, 0},
};

}  // namespace

TEST(LowerScan, EveryLayoutShapeF32) {
  for (const Case &c : kCases) run<float>(c);
}

TEST(LowerScan, EveryLayoutShapeI32) {
  for (const Case &c : kCases) run<int32_t>(c);
}
