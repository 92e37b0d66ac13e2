// Lowering of `print` and `assert`: each tile element is printed or checked
// by the one thread that owns it (replicated copies stay quiet), scalars by
// the program's thread 0; the Target turns the line into vprintf or a call
// into the sim runtime.
#include <stdexcept>

#include "lower/FunctionLowering.h"

namespace tk::lower {

namespace {

// The printf conversion of an element type, and its value promoted the way
// C varargs (and CUDA's vprintf) pass it.
const char *conversion(const ir::ElemType &e) {
  if (e.isPtr()) return "0x%llx";
  if (ir::isFloat(e.scalar)) return "%f";
  return e.scalar == ir::ScalarKind::I64 ? "%lld" : "%d";
}

llvm::Value *promote(llvm::IRBuilderBase &b, llvm::Value *v, const ir::ElemType &e) {
  if (e.isPtr()) return b.CreatePtrToInt(v, b.getInt64Ty());
  if (ir::isFloat(e.scalar)) return e.scalar == ir::ScalarKind::F64 ? v : b.CreateFPExt(v, b.getDoubleTy());
  if (e.scalar == ir::ScalarKind::I1) return b.CreateZExt(v, b.getInt32Ty());
  return e.scalar == ir::ScalarKind::I64 ? v : b.CreateSExt(v, b.getInt32Ty());
}

// The user's text inside a printf format: '%' must be doubled.
std::string escapePercent(const std::string &s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

}  // namespace

// One line per element: `pid (x, y, z) idx (i, j) prefix value`, with
// `(operand k)` after the prefix when the op prints several values; a scalar
// (or a bare prefix) prints once per program: `pid (x, y, z) prefix value`.
void FunctionLowering::lowerPrint(ir::Op &op) {
  const std::string prefix = escapePercent(op.strAttr("prefix"));
  std::vector<llvm::Value *> pid;
  for (int axis = 0; axis < 3; ++axis) pid.push_back(target_.blockId(b_, axis));
  const std::string head = "pid (%d, %d, %d)";
  llvm::Value *first = b_.CreateICmpEQ(tid_, b_.getInt32(0));
  if (op.numOperands() == 0) {
    target_.beginPrintGroup(b_);
    const std::string format = head + (prefix.empty() ? "" : " " + prefix) + "\n";
    ifThen(first, [&] { target_.print(b_, format, pid, b_.getInt32(0)); }, "print");
    return;
  }
  // pad-tiles' `extent`: each tile operand's shape as written, in order; its
  // padding prints nothing.
  std::vector<int64_t> extent;
  if (op.hasAttr("extent")) extent = std::get<std::vector<int64_t>>(op.attrs().at("extent"));
  size_t extentAt = 0;
  for (size_t k = 0; k < op.numOperands(); ++k) {
    const ir::Type &t = op.operand(k)->type();
    const Regs &vals = regs(op.operand(k));
    target_.beginPrintGroup(b_);
    std::string label = prefix;
    if (op.numOperands() > 1) label += (label.empty() ? "(operand " : " (operand ") + std::to_string(k) + ")";
    const std::string tail = (label.empty() ? "" : " " + label) + " " + conversion(t.elem) + "\n";
    if (t.isScalar()) {
      ifThen(first, [&] {
        std::vector<llvm::Value *> args = pid;
        args.push_back(promote(b_, vals[0], t.elem));
        target_.print(b_, head + tail, args, b_.getInt32(0));
      }, "print");
      continue;
    }
    std::string index = " idx (";
    for (int d = 0; d < t.rank(); ++d) index += d ? ", %d" : "%d";
    const std::string format = head + index + ")" + tail;
    std::vector<int64_t> real = t.shape;
    if (!extent.empty()) {
      real.assign(extent.begin() + extentAt, extent.begin() + extentAt + t.rank());
      extentAt += t.rank();
    }
    RegisterMap rm(t.layout, t.shape);
    llvm::Value *owner = rm.replicated() ? ownerPredicate(t, rm) : nullptr;
    for (int r = 0; r < rm.numRegisters(); ++r) {
      std::vector<llvm::Value *> idx = elementIndex(t, rm, r);
      llvm::Value *shown = owner;
      for (int d = 0; d < t.rank(); ++d) {
        if (real[d] == t.shape[d]) continue;
        llvm::Value *in = b_.CreateICmpULT(idx[d], b_.getInt32(uint32_t(real[d])));
        shown = shown ? b_.CreateAnd(shown, in) : in;
      }
      ifThen(shown, [&] {
        std::vector<llvm::Value *> args = pid;
        llvm::Value *element = b_.getInt32(0);
        for (int d = 0; d < t.rank(); ++d) {
          args.push_back(idx[d]);
          element = b_.CreateAdd(b_.CreateMul(element, b_.getInt32(uint32_t(real[d]))), idx[d]);
        }
        args.push_back(promote(b_, vals[r], t.elem));
        target_.print(b_, format, args, element);
      }, "print");
    }
  }
}

// The thread fails when an element it owns is false (for a scalar: thread 0).
void FunctionLowering::lowerAssert(ir::Op &op) {
  const ir::Type &t = op.operand(0)->type();
  const Regs &cond = regs(op.operand(0));
  llvm::Value *bad = nullptr;
  for (llvm::Value *c : cond) bad = bad ? b_.CreateOr(bad, b_.CreateNot(c)) : b_.CreateNot(c);
  llvm::Value *owner = b_.CreateICmpEQ(tid_, b_.getInt32(0));
  if (t.isTile()) {
    RegisterMap rm(t.layout, t.shape);
    owner = rm.replicated() ? ownerPredicate(t, rm) : nullptr;
  }
  if (owner) bad = b_.CreateAnd(bad, owner);
  const ir::Location &loc = op.loc();
  ifThen(bad, [&] {
    target_.assertFail(b_, op.strAttr("message"), loc.file.empty() ? "<unknown>" : loc.file, loc.line, loc.col,
                       fn_.name);
  }, "assert.fail");
}

}  // namespace tk::lower
