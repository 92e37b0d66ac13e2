// The tile IR: SSA values of scalar, pointer and tile type, ops declared in
// Ops.def, blocks and functions. Ops carry the source location they came from.
// Control flow is structured (ops may own regions); the text form is written
// by Printer.h and read back by Parser.h.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/Enums.h"
#include "ir/Layout.h"
#include "syntax/Location.h"

namespace tk::ir {

// ---------------------------------------------------------------- types

// F8E4M3 and F8E5M2 are the 8-bit floats of Hopper and Ada (include/tk/fp8.h):
// floats to the type rules, stored as bytes; the emulate-fp8 pass
// (ir/passes/EmulateFp8.cpp) widens every op that computes on them to f32, so
// the lowering meets them only in loads, stores, moves and conversions.
// I1, I8, I16, I32, I64, F16, BF16, F32, F64, F8E4M3, F8E5M2 (tk/dtype.def).
enum class ScalarKind : uint8_t {
#define TK_DTYPE(ID, IR_ID, ...) IR_ID,
#include "tk/dtype.def"
};
inline constexpr int kNumScalarKinds = 0
#define TK_DTYPE(...) +1
#include "tk/dtype.def"
    ;

bool isFloat(ScalarKind k);
inline bool isFp8(ScalarKind k) { return k == ScalarKind::F8E4M3 || k == ScalarKind::F8E5M2; }
bool isInt(ScalarKind k);  // i1 counts as an int (bool)
int bitWidth(ScalarKind k);
// A float converted to a float of fewer bits, fp8 aside (its casts go through
// their own rules): where a cast's `rounding` may choose toward zero.
inline bool isNarrowingFloatCast(ScalarKind from, ScalarKind to) {
  return isFloat(from) && isFloat(to) && !isFp8(to) && bitWidth(to) < bitWidth(from);
}
const char *scalarName(ScalarKind k);  // "i1", "f32", ...
std::optional<ScalarKind> scalarFromName(const std::string &name);

// The element of a tile or a scalar value: a number, or a pointer to one
// (global memory), or a pointer to such a pointer (a buffer of addresses,
// as Triton's grouped GEMM passes per-group matrices).
struct ElemType {
  ScalarKind scalar = ScalarKind::I32;
  // How many pointers lead to `scalar`: 0 a number, 1 `ptr<f32>`, 2
  // `ptr<ptr<f32>>`. Written `ElemType{k, true}` for a plain pointer.
  uint8_t ptrDepth = 0;

  bool isPtr() const { return ptrDepth > 0; }
  // What a pointer points to (a number or, from depth 2, a pointer).
  ElemType pointee() const { return ElemType{scalar, static_cast<uint8_t>(ptrDepth ? ptrDepth - 1 : 0)}; }
  // One more level of pointer: `ptr<this>`.
  ElemType pointer() const { return ElemType{scalar, static_cast<uint8_t>(ptrDepth + 1)}; }
  // Bytes in memory: 8 for a pointer (64-bit addresses), else the number's.
  int64_t bytes() const;

  bool operator==(const ElemType &o) const { return scalar == o.scalar && ptrDepth == o.ptrDepth; }
  bool operator!=(const ElemType &o) const { return !(*this == o); }
  std::string str() const;  // "f32", "ptr<f32>", "ptr<ptr<f32>>"
};
// The most levels of pointer a type may have (`**f32`): enough for buffers of
// addresses, bounded so that bad input cannot nest types without end.
constexpr int kMaxPtrDepth = 2;

// Whether `v` is a positive power of two (layout fields, vector widths,
// alignments, padded tile dims).
inline bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
// The size pad-tiles gives a tile dim of `d` (ir/passes/PadTiles.cpp): the
// smallest power of two at least `d` (2^62 for anything past it, which no
// tile limit admits), and a shape with every dim so padded.
inline int64_t paddedDim(int64_t d) {
  int64_t p = 1;
  while (p < d && p < (int64_t{1} << 62)) p <<= 1;
  return p;
}
inline std::vector<int64_t> paddedShape(const std::vector<int64_t> &shape) {
  std::vector<int64_t> out;
  for (int64_t d : shape) out.push_back(paddedDim(d));
  return out;
}

// A value's type: an element and a shape. An empty shape is a scalar (or a
// scalar pointer); otherwise a tile with static dims of any positive size,
// powers of two once pad-tiles has run (layouts hold powers of two only). A tile may
// carry a distributed layout once layouts are assigned (lower/AssignLayouts).
struct Type {
  ElemType elem;
  std::vector<int64_t> shape;  // empty: scalar
  LayoutRef layout;            // null until assigned; always null for scalars

  static Type scalar(ScalarKind k) { return Type{ElemType{k, false}, {}, nullptr}; }
  static Type ptr(ScalarKind k) { return Type{ElemType{k, true}, {}, nullptr}; }
  static Type tile(ElemType e, std::vector<int64_t> shape, LayoutRef layout = nullptr) {
    return Type{e, std::move(shape), std::move(layout)};
  }

  bool isTile() const { return !shape.empty(); }
  bool isScalar() const { return shape.empty(); }
  bool isPtr() const { return elem.isPtr(); }
  bool isFloat() const { return !elem.isPtr() && ir::isFloat(elem.scalar); }
  bool isInt() const { return !elem.isPtr() && ir::isInt(elem.scalar); }
  bool isBool() const { return !elem.isPtr() && elem.scalar == ScalarKind::I1; }
  int64_t numElements() const;
  int rank() const { return static_cast<int>(shape.size()); }
  Type withElem(ElemType e) const { return Type{e, shape, layout}; }
  Type withScalar(ScalarKind k) const { return Type{ElemType{k, false}, shape, layout}; }
  Type withLayout(LayoutRef l) const { return Type{elem, shape, std::move(l)}; }
  Type withShape(std::vector<int64_t> s) const { return Type{elem, std::move(s), nullptr}; }

  // Equal element, shape and layout (layouts compared structurally).
  bool operator==(const Type &o) const;
  bool operator!=(const Type &o) const { return !(*this == o); }
  // "i32", "ptr<f32>", "tile<64x128xf32>", "tile<128xptr<f16>, #blocked<...>>"
  std::string str() const;
};

// ---------------------------------------------------------------- ops

enum class OpKind : uint8_t {
#define TK_OP(E, M, MIN, MAX, RES, TRAITS, DOC) E,
#include "ir/Ops.def"
};

namespace OpTrait {
enum : unsigned { Pure = 1, Elementwise = 2, Terminator = 4, Math = 8 };
}

struct OpInfo {
  OpKind kind;
  const char *mnemonic;
  int minOperands, maxOperands;  // maxOperands -1: variadic
  int numResults;                // 0, 1, or -1: any number (for, if)
  unsigned traits;
  const char *doc;
};
const OpInfo &opInfo(OpKind k);
std::optional<OpKind> opFromMnemonic(const std::string &m);
const std::vector<OpInfo> &allOps();

// Ops carry the source location they came from (syntax/Location.h).
using Location = tk::Location;

// Attribute values: integers, floats, strings, integer lists.
using Attr = std::variant<int64_t, double, std::string, std::vector<int64_t>>;
std::string attrStr(const Attr &a);
// An enum value as the attribute that spells it: {"predicate", attrOf(CmpPredicate::Lt)}.
template <class E>
Attr attrOf(E v) {
  return std::string(enumName(v));
}

class Op;
class Block;
class Value;

// One operand slot of an op, linked into the use-list of the value it holds,
// so that a value's uses are found and replaced in time proportional to
// their number (not to the size of the function).
struct Use {
  Op *user = nullptr;
  size_t index = 0;  // the operand's position in user->operands()
  Value *value = nullptr;
  Use *prev = nullptr, *next = nullptr;
};

// An SSA value: the result of an op or an argument of a block.
class Value {
 public:
  Value(Type type, Op *def, Block *owner, int index)
      : type_(std::move(type)), def_(def), owner_(owner), index_(index) {}
  // A value destroyed while still used leaves its users with a null operand
  // (which the verifier reports) rather than a dangling pointer.
  ~Value();
  Value(const Value &) = delete;
  Value &operator=(const Value &) = delete;
  const Type &type() const { return type_; }
  void setType(Type t) { type_ = std::move(t); }
  Op *definingOp() const { return def_; }  // null for block arguments
  Block *ownerBlock() const { return owner_; }  // for block arguments
  int argIndex() const { return def_ ? -1 : index_; }     // -1 for op results
  int resultIndex() const { return def_ ? index_ : -1; }  // -1 for block arguments
  // A name hint from the source (`let x = ...` gives "x"); printed as a comment.
  const std::string &nameHint() const { return name_; }
  void setNameHint(std::string n) { name_ = std::move(n); }

  // The ops that use this value, one entry per operand slot (an op using
  // it twice appears twice), most recent first.
  bool hasUses() const { return firstUse_ != nullptr; }
  size_t numUses() const;
  std::vector<std::pair<Op *, size_t>> uses() const;
  // Every use of this value now uses `to` (which must have the same type).
  void replaceAllUsesWith(Value *to);

 private:
  friend void linkUse(Use &u);
  friend void unlinkUse(Use &u);
  Type type_;
  Op *def_;
  Block *owner_;
  int index_;
  std::string name_;
  Use *firstUse_ = nullptr;
};

class Op {
 public:
  Op(OpKind kind, std::vector<Value *> operands, std::optional<Type> resultType, Location loc);
  ~Op();
  Op(const Op &) = delete;
  Op &operator=(const Op &) = delete;
  OpKind kind() const { return kind_; }
  const OpInfo &info() const { return opInfo(kind_); }
  bool is(OpKind k) const { return kind_ == k; }
  bool hasTrait(unsigned t) const { return (info().traits & t) != 0; }

  const std::vector<Value *> &operands() const { return operands_; }
  Value *operand(size_t i) const { return operands_.at(i); }
  size_t numOperands() const { return operands_.size(); }
  void setOperand(size_t i, Value *v);
  void setOperands(std::vector<Value *> ops);
  // Unlinks this op's operands, and those of the ops in its regions, from
  // their values' use-lists (before a block is destroyed as a whole).
  void dropAllReferences();

  // The first result (null when the op has none): most ops have at most one.
  Value *result() const { return results_.empty() ? nullptr : results_[0].get(); }
  Value *result(size_t i) const { return results_.at(i).get(); }
  size_t numResults() const { return results_.size(); }
  std::vector<Value *> results() const;
  Value *addResult(Type t);

  const Location &loc() const { return loc_; }
  void setLoc(Location l) { loc_ = std::move(l); }

  std::map<std::string, Attr> &attrs() { return attrs_; }
  const std::map<std::string, Attr> &attrs() const { return attrs_; }
  bool hasAttr(const std::string &k) const { return attrs_.count(k) != 0; }
  int64_t intAttr(const std::string &k) const;      // throws tk::InternalError if absent
  double floatAttr(const std::string &k) const;     // accepts an int attr too
  const std::vector<int64_t> &intListAttr(const std::string &k) const;  // throws if absent
  const std::string &strAttr(const std::string &k) const;
  void setAttr(const std::string &k, Attr v) { attrs_[k] = std::move(v); }
  // An enum-valued attribute (ir/Enums.def) as its enum; throws
  // tk::InternalError where it is absent or not a spelling, which the
  // verifier rules out for a declared attribute (Ops.def's TK_OP_ATTR).
  template <class E>
  E enumAttr(const std::string &k) const {
    if (std::optional<E> v = parseEnum<E>(strAttr(k))) return *v;
    badEnumAttr(k, EnumInfo<E>::what);
  }
  // The same where the attribute is optional: nullopt when absent.
  template <class E>
  std::optional<E> optionalEnumAttr(const std::string &k) const {
    if (!hasAttr(k)) return std::nullopt;
    return enumAttr<E>(k);
  }

  // Regions (structured control flow): `for` has its body, `if` its two
  // branches; each ends with a `yield`.
  std::vector<std::unique_ptr<Block>> &regions() { return regions_; }
  const std::vector<std::unique_ptr<Block>> &regions() const { return regions_; }

  Block *parentBlock() const { return parent_; }
  void setParentBlock(Block *b) { parent_ = b; }

 private:
  friend class Value;
  [[noreturn]] void badEnumAttr(const std::string &k, const char *what) const;
  void linkOperands();
  void unlinkOperands();

  OpKind kind_;
  std::vector<Value *> operands_;
  std::unique_ptr<Use[]> uses_;  // parallel to operands_
  std::vector<std::unique_ptr<Value>> results_;
  Location loc_;
  std::map<std::string, Attr> attrs_;
  std::vector<std::unique_ptr<Block>> regions_;
  Block *parent_ = nullptr;
};

// A list of ops with arguments. Ops are owned by the block.
class Block {
 public:
  using OpList = std::list<std::unique_ptr<Op>>;
  using iterator = OpList::iterator;

  Block() = default;
  // Drops every reference first: ops die in list order, users after the
  // values they use.
  ~Block();
  Block(const Block &) = delete;
  Block &operator=(const Block &) = delete;

  Value *addArgument(Type t);
  const std::vector<std::unique_ptr<Value>> &arguments() const { return args_; }
  Value *argument(size_t i) const { return args_.at(i).get(); }

  OpList &ops() { return ops_; }
  const OpList &ops() const { return ops_; }
  iterator insert(iterator pos, std::unique_ptr<Op> op);
  void push_back(std::unique_ptr<Op> op) { insert(ops_.end(), std::move(op)); }
  // Removes `op` (which must have no remaining uses) and destroys it.
  iterator erase(iterator pos) { return ops_.erase(pos); }
  iterator find(const Op *op);

  Op *parentOp() const { return parentOp_; }
  void setParentOp(Op *p) { parentOp_ = p; }

 private:
  std::vector<std::unique_ptr<Value>> args_;
  OpList ops_;
  Op *parentOp_ = nullptr;
};

// A kernel parameter: the block argument of the body plus its name and the
// facts the launcher checks (alignment for pointers).
struct Param {
  std::string name;
  int64_t align = 0;         // pointers: bytes the kernel assumes the address is a multiple of
  int64_t divisibility = 0;  // integers: what the kernel assumes the value is a multiple of (0: nothing)
};

// One specialised kernel.
class Function {
 public:
  std::string name;
  std::vector<Param> params;  // params[i] describes body.argument(i)
  Block body;
  std::map<std::string, Attr> attrs;  // num_warps, source file, const values...
  Location loc;

  // The kernel attributes Ops.def declares (TK_KERNEL_ATTR), typed.
  int numWarps() const;   // num_warps, default 4
  int numStages() const;  // num_stages, default 1
  bool wgmma() const;     // an arch compiled for runs wgmma (the driver's)
  bool tma() const;       // every arch compiled for has TMA (the driver's)
  bool rowWarps() const;  // dots take warps [numWarps, 1] (assign-layouts')
  void setFlag(const std::string &name, bool on) { attrs[name] = int64_t{on}; }
  Value *addParam(const std::string &name, Type t, int64_t align = 0);
  // Every op, nested regions included, in program order.
  std::vector<Op *> walk();
};

class Module {
 public:
  std::vector<std::unique_ptr<Function>> functions;
  Function *lookup(const std::string &name) const;
};

// ---------------------------------------------------------------- helpers

// The element a reduction of `in` gives: sums of bool, i8 and i16 accumulate
// in i32 and of f16/bf16/fp8 in f32; arg-reductions give i32 indices; max,
// min and xor_sum keep the element. A scan's element is its sum's.
ScalarKind reduceResultElem(ReduceKind kind, ScalarKind in);

// The permutation a `trans` op applies: result dim i is operand dim
// order[i]. Its `order` attribute, else the operand's dims reversed (the
// 2-D transpose). Empty when `order` is not a list.
std::vector<int> transOrder(const Op &trans);

// Replaces every use of `from` by `to` (both must have equal types); `fn`
// is the function both belong to. O(uses of `from`).
void replaceAllUses(Function &fn, Value *from, Value *to);
// Uses of each value in `fn`, in program order: op and operand index.
std::map<const Value *, std::vector<std::pair<Op *, size_t>>> computeUses(Function &fn);

// Inserts ops at a point in a block; the op factory of the IR.
class Builder {
 public:
  explicit Builder(Block *block) : block_(block), pos_(block->ops().end()) {}
  Builder(Block *block, Block::iterator pos) : block_(block), pos_(pos) {}
  void setInsertionPoint(Block *block, Block::iterator pos) { block_ = block; pos_ = pos; }
  void setInsertionPointToEnd(Block *block) { block_ = block; pos_ = block->ops().end(); }
  void setLoc(Location l) { loc_ = std::move(l); }
  const Location &loc() const { return loc_; }

  // Creates an op at the insertion point; returns it. The result type must be
  // given for ops with a result.
  Op *create(OpKind kind, std::vector<Value *> operands, std::optional<Type> resultType,
             std::map<std::string, Attr> attrs = {});
  // Same, returning the result value.
  Value *value(OpKind kind, std::vector<Value *> operands, Type resultType,
               std::map<std::string, Attr> attrs = {}) {
    return create(kind, std::move(operands), std::move(resultType), std::move(attrs))->result();
  }

  Value *constInt(int64_t v, Type t) { return value(OpKind::Constant, {}, std::move(t), {{"value", v}}); }
  Value *constFloat(double v, Type t) { return value(OpKind::Constant, {}, std::move(t), {{"value", v}}); }

 private:
  Block *block_;
  Block::iterator pos_;
  Location loc_;
};

}  // namespace tk::ir
