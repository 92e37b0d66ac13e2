// Layout arithmetic, AxisInfo and AssignLayouts on tile IR text.
#include <gtest/gtest.h>

#include <set>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "lower/AssignLayouts.h"
#include "lower/AxisInfo.h"
#include "lower/Layouts.h"
#include "driver/Pipeline.h"

using namespace tk;

namespace {

std::unique_ptr<ir::Module> parse(const std::string &text) {
  std::string error;
  auto m = ir::parseModule(text, "t.tir", error);
  EXPECT_TRUE(m) << error;
  return m;
}

const char *kElementwise = R"(
kernel @k(%x: ptr<f32> {align = 16}, %out: ptr<f32> {align = 16}, %n: i32) {num_warps = 4} {
  %0 = program_id {axis = 0} : i32
  %1 = constant {value = 1024} : i32
  %2 = mul %0, %1 : i32
  %3 = arange {end = 1024, start = 0} : tile<1024xi32>
  %4 = splat %2 : tile<1024xi32>
  %5 = add %4, %3 : tile<1024xi32>
  %6 = splat %n : tile<1024xi32>
  %7 = cmp %5, %6 {predicate = "lt"} : tile<1024xi1>
  %8 = splat %x : tile<1024xptr<f32>>
  %9 = addptr %8, %5 : tile<1024xptr<f32>>
  %10 = load %9, %7 : tile<1024xf32>
  %11 = splat %out : tile<1024xptr<f32>>
  %12 = addptr %11, %5 : tile<1024xptr<f32>>
  store %12, %10, %7
  return
}
)";

}  // namespace

TEST(Layouts, DefaultBlockedCoversTheTileContiguously) {
  auto l = lower::defaultBlockedLayout({1024}, 4, 4, {0});
  EXPECT_EQ(l->str(), "#blocked<[4],[32],[4],[0]>");
  auto l2 = lower::defaultBlockedLayout({4, 256}, 4, 4, {1, 0});
  EXPECT_EQ(l2->str(), "#blocked<[1,4],[1,32],[4,1],[1,0]>");
  // Tiny tiles replicate instead of leaving lanes without a place.
  auto l3 = lower::defaultBlockedLayout({8}, 4, 4, {0});
  EXPECT_EQ(l3->threadsPerWarp[0] * l3->warpsPerCTA[0] * l3->sizePerThread[0] >= 8, true);
  EXPECT_EQ(l3->threadsPerWarp[0], 32);
}

TEST(Layouts, EveryElementHasExactlyOneOwner) {
  // Simulate the index formula for every thread and check coverage.
  for (auto [shape, vec] : std::vector<std::pair<std::vector<int64_t>, int>>{
           {{1024}, 4}, {{8}, 4}, {{4, 256}, 4}, {{64, 64}, 4}, {{2, 8}, 1}, {{1, 1}, 1}}) {
    std::vector<int> order;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) order.push_back(d);
    auto l = lower::defaultBlockedLayout(shape, 4, vec, order);
    lower::RegisterMap rm(l, shape);
    std::map<int64_t, int> owners;
    std::set<int64_t> seen;
    for (int tid = 0; tid < 128; ++tid) {
      int lane = tid % 32, warp = tid / 32;
      bool owner = true;
      std::vector<int64_t> part(shape.size());
      for (size_t d = 0; d < shape.size(); ++d) {
        int below = 1, wbelow = 1;
        for (int o : l->order) {
          if (o == static_cast<int>(d)) break;
          below *= l->threadsPerWarp[o];
          wbelow *= l->warpsPerCTA[o];
        }
        int laneC = (lane / below) % l->threadsPerWarp[d], warpC = (warp / wbelow) % l->warpsPerCTA[d];
        part[d] = int64_t(warpC) * l->threadsPerWarp[d] + laneC;
        if (part[d] * l->sizePerThread[d] >= shape[d]) owner = false;
      }
      for (int r = 0; r < rm.numRegisters(); ++r) {
        auto k = rm.coords(r);
        int64_t linear = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
          int64_t idx = (part[d] * l->sizePerThread[d] + rm.staticOffset(static_cast<int>(d), k[d])) % shape[d];
          linear = linear * shape[d] + idx;
        }
        seen.insert(linear);
        if (owner) owners[linear]++;
      }
    }
    int64_t total = 1;
    for (int64_t s : shape) total *= s;
    EXPECT_EQ(static_cast<int64_t>(seen.size()), total) << l->str();
    EXPECT_EQ(static_cast<int64_t>(owners.size()), total) << l->str();
    for (auto &[e, count] : owners) EXPECT_EQ(count, 1) << l->str() << " element " << e;
  }
}

namespace {
// The element (one index per dim of `shape`) that thread `tid` holds in
// register `r` of a tile in `layout`: the index formula of Layouts.h on the
// root blocked layout, restricted to the dims a slice keeps.
std::vector<int64_t> elementOf(const ir::LayoutRef &layout, const std::vector<int64_t> &shape, int tid, int r) {
  lower::RegisterMap rm(layout, shape);
  const lower::RootView &root = rm.root();
  const ir::Layout &l = *root.blocked;
  const int lane = tid % 32, warp = tid / 32;
  auto k = rm.coords(r);
  std::vector<int64_t> rootIdx(root.shape.size());
  for (size_t d = 0; d < root.shape.size(); ++d) {
    int below = 1, wbelow = 1;
    for (int o : l.order) {
      if (o == static_cast<int>(d)) break;
      below *= l.threadsPerWarp[o];
      wbelow *= l.warpsPerCTA[o];
    }
    const int64_t part =
        int64_t((warp / wbelow) % l.warpsPerCTA[d]) * l.threadsPerWarp[d] + (lane / below) % l.threadsPerWarp[d];
    rootIdx[d] = (part * l.sizePerThread[d] + rm.staticOffset(static_cast<int>(d), k[d])) % root.shape[d];
  }
  std::vector<int64_t> idx;
  for (int kept : root.kept) idx.push_back(rootIdx[kept]);
  return idx;
}
}  // namespace

// trans/permute move no data: for any result layout (blocked or a slice),
// the operand layout permutedLayout gives holds, in every thread's register
// r, the operand element the result's register r holds.
TEST(Layouts, PermutedLayoutKeepsEveryRegistersElement) {
  const std::vector<int64_t> resultShape = {4, 8, 16};
  const std::vector<ir::LayoutRef> layouts = {
      lower::defaultBlockedLayout(resultShape, 4, 4, {2, 1, 0}),
      lower::defaultBlockedLayout(resultShape, 4, 2, {0, 2, 1}),
      ir::Layout::slice(1, lower::defaultBlockedLayout({4, 1, 8, 16}, 4, 4, {3, 2, 1, 0})),
      ir::Layout::slice(3, ir::Layout::blocked({1, 2, 1, 1}, {2, 4, 4, 1}, {1, 2, 2, 1}, {1, 2, 0, 3}))};
  for (const ir::LayoutRef &l : layouts)
    for (std::vector<int> order : {std::vector<int>{2, 0, 1}, {0, 2, 1}, {1, 0, 2}, {2, 1, 0}}) {
      SCOPED_TRACE(l->str());
      std::vector<int64_t> operandShape(3);
      for (int i = 0; i < 3; ++i) operandShape[order[i]] = resultShape[i];
      ir::LayoutRef operand = lower::permutedLayout(l, order);
      ASSERT_TRUE(operand);
      EXPECT_EQ(operand->rank(), 3);
      lower::RegisterMap rm(l, resultShape), om(operand, operandShape);
      ASSERT_EQ(rm.numRegisters(), om.numRegisters()) << operand->str();
      for (int tid = 0; tid < 128; ++tid)
        for (int r = 0; r < rm.numRegisters(); ++r) {
          auto res = elementOf(l, resultShape, tid, r), op = elementOf(operand, operandShape, tid, r);
          for (int i = 0; i < 3; ++i)
            ASSERT_EQ(op[order[i]], res[i]) << operand->str() << " thread " << tid << " register " << r;
        }
      // The inverse permutation undoes it.
      EXPECT_TRUE(ir::sameLayout(lower::permutedLayout(operand, lower::inversePermutation(order)), l));
    }
}

TEST(AxisInfo, ContiguousOffsetsFromAligned16BytePointersVectoriseBy4) {
  auto m = parse(kElementwise);
  ir::Function &fn = *m->functions[0];
  lower::AxisInfoAnalysis axis(fn);
  auto ops = fn.walk();
  const ir::Value *ptrs = ops[9]->result();  // %9 = addptr
  EXPECT_EQ(axis.get(ptrs).contiguity[0], 1024);
  EXPECT_EQ(axis.get(ptrs).divisibility[0], 16);
  EXPECT_EQ(axis.vectorWidth(ptrs, 0), 4);
}

TEST(AxisInfo, UnalignedPointersOrOffsetsDoNotVectorise) {
  std::string text = kElementwise;
  text.replace(text.find("%x: ptr<f32> {align = 16}"), 25, "%x: ptr<f32> {align = 4}");
  auto m = parse(text);
  lower::AxisInfoAnalysis axis(*m->functions[0]);
  EXPECT_EQ(axis.vectorWidth(m->functions[0]->walk()[9]->result(), 0), 1);

  // offs = pid * 1024 + arange + 1: runs no longer start 16-byte aligned.
  std::string shifted = kElementwise;
  shifted.replace(shifted.find("start = 0"), 9, "start = 1");
  shifted.replace(shifted.find("{end = 1024"), 11, "{end = 1025");
  auto m2 = parse(shifted);
  lower::AxisInfoAnalysis axis2(*m2->functions[0]);
  EXPECT_EQ(axis2.vectorWidth(m2->functions[0]->walk()[9]->result(), 0), 1);
}

TEST(AssignLayouts, AnchorsLoadsAndStoresWithVectorLayouts) {
  auto m = parse(kElementwise);
  ir::Function &fn = *m->functions[0];
  pipeline::tilePasses().run(*m);
  std::string error;
  ASSERT_TRUE(ir::verifyFunction(fn, error)) << error << ir::printFunction(fn);
  for (ir::Op *op : fn.walk()) {
    if (op->result() && op->result()->type().isTile()) {
      EXPECT_EQ(op->result()->type().layout->str(), "#blocked<[4],[32],[4],[0]>") << ir::printFunction(fn);
    }
    if (op->is(ir::OpKind::Load) || op->is(ir::OpKind::Store)) {
      EXPECT_EQ(op->intAttr("vec"), 4);
    }
    EXPECT_FALSE(op->is(ir::OpKind::ConvertLayout));
  }
}

TEST(AssignLayouts, BroadcastRowsGetSliceLayoutsAndRematerialise) {
  // r is used both as r[:, None] (a slice of the 2-D layout) and in a 1-D store.
  auto m = parse(R"(
kernel @k(%x: ptr<f32> {align = 16}, %out: ptr<f32> {align = 16}) {num_warps = 4} {
  %r = arange {end = 4, start = 0} : tile<4xi32>
  %c = arange {end = 256, start = 0} : tile<256xi32>
  %r2 = expand_dims %r {axis = 1} : tile<4x1xi32>
  %d = constant {value = 256} : tile<4x1xi32>
  %rd = mul %r2, %d : tile<4x1xi32>
  %rb = broadcast %rd : tile<4x256xi32>
  %c2 = expand_dims %c {axis = 0} : tile<1x256xi32>
  %cb = broadcast %c2 : tile<4x256xi32>
  %offs = add %rb, %cb : tile<4x256xi32>
  %xs = splat %x : tile<4x256xptr<f32>>
  %p = addptr %xs, %offs : tile<4x256xptr<f32>>
  %v = load %p : tile<4x256xf32>
  %os = splat %out : tile<4x256xptr<f32>>
  %op = addptr %os, %offs : tile<4x256xptr<f32>>
  store %op, %v
  %o1 = splat %out : tile<4xptr<f32>>
  %q = addptr %o1, %r : tile<4xptr<f32>>
  %rf = cast %r : tile<4xf32>
  store %q, %rf
  return
}
)");
  ir::Function &fn = *m->functions[0];
  pipeline::tilePasses().run(*m);
  std::string error;
  ASSERT_TRUE(ir::verifyFunction(fn, error)) << error << ir::printFunction(fn);
  int aranges4 = 0;
  for (ir::Op *op : fn.walk()) {
    if (op->is(ir::OpKind::Arange) && op->result()->type().shape[0] == 4) ++aranges4;
    if (op->is(ir::OpKind::Load)) {
      EXPECT_EQ(op->intAttr("vec"), 4);
      EXPECT_EQ(op->result()->type().layout->str(), "#blocked<[1,4],[1,32],[4,1],[1,0]>");
    }
  }
  EXPECT_EQ(aranges4, 2) << "the row index is rematerialised per layout\n" << ir::printFunction(fn);
}
