// AST -> tile IR for one specialised kernel, type-checking as it goes:
// every expression becomes a typed value (or a folded constant), with the
// casts, splats and broadcasts that make each op's operands identical in
// type spelled out. Internal to lang/; the API is lang/Frontend.h.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"
#include "syntax/AST.h"
#include "syntax/Diagnostics.h"
#include "lang/Typing.h"

namespace tk::lang {

// A const parameter with its specialised value. Of sort Type, `kind` is the
// type it names; of sort Str, `value.s` is the string.
struct ConstBinding {
  std::string name;
  ir::ScalarKind kind;
  ConstValue value;
  ConstSort sort = ConstSort::Scalar;
};

// The value as a define would write it ("1024", "relu", "f16").
inline std::string bindingText(const ConstBinding &b) {
  return b.sort == ConstSort::Scalar ? constText(b.value, b.kind) : b.value.s;
}

// Tiles have up to this many dims (batched per-head work needs 4; lowering
// and layouts take any rank, this bounds register maps and error cases).
constexpr int kMaxTileRank = 4;

// The result of lowering an expression.
struct TV {
  enum class K { Invalid, Value, Void, TypeArg, Str, Tuple, Desc } k = K::Invalid;
  ir::Type type;                  // Value: its type (a weak literal: the type it takes alone)
  bool weak = false;              // an untyped literal (always a scalar constant)
  std::optional<ConstValue> cst;  // scalars known at compile time
  ir::Value *v = nullptr;         // the IR value; null while only `cst` is known
  ir::ScalarKind typeArg = ir::ScalarKind::I32;  // TypeArg: a type written as an argument
  std::string str;                               // Str: a string literal or string const
  std::vector<TV> elems;                         // Tuple: its elements (flattened away before the IR)
  // Desc, a tensor descriptor (TensorDescriptors.cpp): elems are the base
  // pointer, then the shape's and the strides' scalars; `block` the block
  // shape, `str` the padding ("zero" or "nan"). A compile-time aggregate:
  // nothing of it reaches the IR but its loads and stores.
  std::vector<int64_t> block;
  // Desc: a host descriptor parameter (DescriptorParams.cpp), whose loads
  // are desc_load ops: on sm_90a the tensor memory accelerator may move them.
  bool onHost = false;

  bool ok() const { return k != K::Invalid; }
  ElemInfo elem() const { return {type.elem.scalar, weak}; }
};

// Tuples held in vars (Tuples.cpp): each leaf (a value that is not a
// tuple) by its index path, nested tuples walked, one empty path for a
// single value; whether two values nest alike; the element at a path, null
// where the value does not nest so.
std::vector<std::vector<size_t>> tupleLeaves(const TV &v);
std::string elementLabel(const std::string &name, const std::vector<size_t> &path);  // "t[1][0]"
bool sameNesting(const TV &a, const TV &b);
TV *elementAt(TV &v, const std::vector<size_t> &path);

// The binding of a fn's result while its body is inlined: `return VALUE`
// assigns it like a var (no identifier can name it).
inline const std::string kResultVar = "return";
// A fn whose result is a tuple has one such var per element instead,
// "return.0", "return.1.0", ... (Tuples.cpp), carried and merged like any var.
inline bool isResultVar(const std::string &name) {
  return name.compare(0, kResultVar.size(), kResultVar) == 0 &&
         (name.size() == kResultVar.size() || name[kResultVar.size()] == '.');
}

// A region of `op` with `argTypes` arguments, appended to it.
ir::Block *addRegion(ir::Op *op, const std::vector<ir::Type> &argTypes);

// The fn helpers every kernel of a load can call (the main file's and those
// of its imports), by name. `bad`: fns whose signature has errors (already
// reported), so calls to them stay quiet.
// How genCall generates a built-in of lang/BuiltinTable.def's TK_BUILTIN entries.
enum class BuiltinGroup {
  Later, Random, Shape, Reduce, Scan, Combine, Select, Dot, Atomic, Debug, StaticAssert, StaticRange, Descriptor
};

struct FnTable {
  std::map<std::string, const ast::Decl *> fns;
  std::set<const ast::Decl *> bad;
  mutable std::set<const ast::Decl *> used;  // inlined by some kernel (Frontend::checkUnusedFns)
  // Each loaded file's direct imports (by the file names locations carry).
  std::map<std::string, std::set<std::string>> imports;
  // Whether a call in `fromFile` sees the fns of `fnFile`: its own, and
  // those of every file it imports, directly or not. A visible fn named like
  // a built-in shadows it there (and only there: a stdlib file calling
  // `exp` still gets the built-in when the user's file defines an `exp`).
  bool visible(const std::string &fromFile, const std::string &fnFile) const;
};

class IRGen {
 public:
  IRGen(DiagnosticEngine &diags, const std::string &file) : diags_(diags), file_(file) {}

  // Lowers `kernel` with its const params bound to `consts` and its integer
  // arguments specialised on `facts` (Frontend::lowerKernel): 1 makes the
  // argument the IR constant 1, N >= 2 marks it a multiple of N. Null on error.
  std::unique_ptr<ir::Function> lowerKernel(const ast::Decl &kernel, const std::vector<ConstBinding> &consts,
                                            int numWarps, const std::map<std::string, int64_t> &facts = {});
  // Evaluates a const parameter's default value with `consts` in scope.
  // Reports an error and returns nullopt unless it is a compile-time
  // constant convertible to `kind`.
  std::optional<ConstValue> evalConst(const ast::Expr &e, const std::string &param, ir::ScalarKind kind,
                                      const std::vector<ConstBinding> &consts,
                                      const std::vector<std::string> &runtimeParams = {},
                                      ConstSort sort = ConstSort::Scalar);

  // A `desc<T, [B0, ..]>` parameter's block shape with `consts` in scope
  // (DescriptorParams.cpp): compile-time sizes within TMA's box
  // rules. Reports an error and returns nullopt otherwise.
  std::optional<std::vector<int64_t>> evalDescriptorBlock(const ast::Param &p, ir::ScalarKind elem,
                                                          const std::vector<ConstBinding> &consts,
                                                          const std::vector<std::string> &runtimeParams);
  // The block shapes of the kernel's descriptor parameters, by name, as
  // evalDescriptorBlock gave them: lowerKernel binds each parameter so.
  void setDescriptorBlocks(std::map<std::string, std::vector<int64_t>> blocks) { descBlocks_ = std::move(blocks); }

  // The scalar kind a written type names; nullopt for unknown names.
  static std::optional<ir::ScalarKind> scalarKind(const std::string &name);
  // The same, where a name may also be a type const of `consts` (`x: *T`).
  static std::optional<ir::ScalarKind> resolveType(const std::string &name, const std::vector<ConstBinding> &consts);
  // A fn's type variable: one capital letter (`fn f(x: T) -> T`).
  static bool isTypeVariable(const std::string &name) { return name.size() == 1 && name[0] >= 'A' && name[0] <= 'Z'; }

  // Type-checks `fn`'s body alone, its params bound to values of their
  // types (tiles of `tileSize` elements, or scalars for 0).
  // Checks a fn no kernel calls, on scalars (tileSize 0) or tiles of
  // tileSize, its type variables (a generic fn's T) all set to typeVarKind.
  void checkFnAlone(const ast::Decl &fn, int64_t tileSize, ir::ScalarKind typeVarKind);

  // The fns calls may inline (none when unset).
  void setFns(const FnTable *fns) { fnTable_ = fns; }
  // True for names the language reserves for built-ins (a fn may not take them).
  static bool isBuiltinName(const std::string &name);
  // Every built-in a call may name (the math ops, lang/BuiltinTable.def's
  // entries but the compile-time-only ones), for suggestions and tests.
  static std::vector<std::string> builtinNames();
  // The group of a TK_BUILTIN entry of lang/BuiltinTable.def, if `name` is one.
  static std::optional<BuiltinGroup> builtinGroup(const std::string &name);

 private:
  // Statements (IRGenStmt.cpp).
  void genStmts(const std::vector<ast::StmtPtr> &body, size_t from = 0);
  void genStmt(const ast::Stmt &s);
  void genAssign(const ast::Stmt &s);
  void assignName(const ast::Expr &target, const ast::Stmt &s, TV rhs);
  void genFor(const ast::Stmt &s);
  bool rangeArgs(const ast::Expr &r, std::vector<TV> &out, bool *warpSpecialize = nullptr);
  void genIf(const ast::Stmt &s);
  TV condition(const ast::Expr &e, const std::string &what);
  void unroll(const ast::Stmt &s, int64_t start, int64_t step, __int128 from, __int128 trips, int errorsBefore);

  // Runtime control flow (ControlFlow.cpp).
  // A `var` a loop or branch assigns, its value before, its scope. A tuple
  // var is carried one element at a time: `path` indexes into it (nested
  // tuples included), empty for a var that is one value.
  struct Carried {
    std::string name;
    TV before;
    size_t depth = 0;  // index in scopes_
    std::vector<size_t> path;
    std::string label() const;  // "t", or "t[1]" for an element of tuple t
  };
  struct RangeBounds {  // of `range(...)`, converted to `type`
    ir::Type type;
    ir::Value *lb = nullptr, *ub = nullptr, *step = nullptr;
    int stepSign = 0;  // 1 or -1 when known while compiling
    bool warpSpecialize = false;  // `warp_specialize: true`
  };
  void genRuntimeFor(const ast::Stmt &s);
  bool rangeBounds(const ast::Stmt &s, RangeBounds &out);
  void genWhile(const ast::Stmt &s);
  void genLoop(const ast::Stmt &s, const RangeBounds *range);
  ir::Value *rangeCondition(ir::Value *iv, const RangeBounds &range, const ast::Loc &loc);
  ir::Value *loopCondition(const ast::Expr &e);
  void genRuntimeIf(const ast::Stmt &s, ir::Value *cond);
  std::vector<Carried> carriedVars(const std::vector<const std::vector<ast::StmtPtr> *> &bodies);
  std::vector<Carried> carriedVars(const std::vector<ast::StmtPtr> &body, size_t from);
  std::vector<Carried> carriedNamed(const std::vector<std::string> &names);
  std::vector<ir::Value *> currentValues(const std::vector<Carried> &carried, const ast::Loc &loc, bool keepType = true);
  void bindResults(ir::Op *op, const std::vector<Carried> &carried, const std::vector<ir::Value *> &yielded);

  // Jumps (Jumps.cpp): the flags of the `return`, `break` and `continue` the
  // path being generated may have taken since the statement it started at.
  // Each is invalid (not taken), a constant true (taken) or a runtime i1.
  struct Jumps {
    TV ret, brk, cont;
  };
  // Names in scope (IRGenStmt.cpp): `let` and `var` bindings, innermost first.
  struct Binding {
    TV value;
    bool isVar = false;
    bool isConstParam = false;  // a kernel's `const` parameter: never assignable
    // Not usable after a runtime `if` (bound on some of its paths only, or a
    // tuple its branches bound): the error a use reports. Its value is invalid.
    std::string useError;
  };
  using Scope = std::unordered_map<std::string, Binding>;
  struct BranchEnd {  // a region of an `if` before its yield
    std::unique_ptr<ir::Builder> builder;
    std::vector<ir::Value *> vals;
    Jumps jumps;
    Scope names;        // what the region bound at its top level
    std::string label;  // "the 'if' branch at 3:5", for diagnostics elsewhere
    std::string what;   // "the 'if' branch", for diagnostics at the `if`
  };
  // A runtime loop, branch or guard being generated: the scopes from
  // `scopeStart` on are inside it. A var bound outside a loop keeps its type
  // in it (it is carried around the back edge); names bound at the top of a
  // branch (or of a guard whose names are merged) are merged after it.
  struct Region {
    size_t scopeStart = 0;
    bool loop = false;
    bool mergesNames = false;
    ast::Loc loc;
    std::string what;  // "the 'for' loop"
  };
  bool mayHaveJumped() const;
  bool surelyJumped() const;
  TV jumped() const;
  static bool mayJump(const std::vector<ast::StmtPtr> &body, ast::StmtKind kind, bool nestedLoop = false);
  ir::Value *flagValue(const TV &f, const ast::Loc &loc);
  ir::Value *skipCondition(const ast::Loc &loc);
  void guardRest(const std::vector<ast::StmtPtr> &body, size_t from);
  void guard(std::vector<Carried> &carried, const ast::Loc &loc, const std::function<void()> &rest);
  void mergeBranches(ir::Op *branch, std::vector<Carried> &carried, std::vector<BranchEnd> &ends, const ast::Loc &loc);
  void genLoopJump(const ast::Stmt &s);

  // Where a runtime `if`'s paths meet (Merge.cpp).
  struct MergeSlot;
  void mergeNames(std::vector<BranchEnd> &ends, std::vector<MergeSlot> &slots,
                  const std::function<bool(size_t, const std::string &)> &dead);
  static void labelBranch(BranchEnd &end, const ast::Stmt &s, int region);
  Binding *lookup(const std::string &name);
  std::optional<size_t> scopeOf(const std::string &name) const;
  Binding *binding(const Carried &c);
  TV carriedValue(const Carried &c);                  // its value now
  void setCarried(const Carried &c, const TV &value);  // binds it (the element, for a tuple's)
  void bind(const std::string &name, TV v, bool isVar = false);
  std::vector<std::string> namesInScope() const;
  void resetScopes() {
    scopes_.assign(1, {});
    regions_.clear();
  }

  // Expressions (IRGen.cpp).
  TV genExpr(const ast::Expr &e);
  TV genValue(const ast::Expr &e);  // genExpr, rejecting types, void and tuples
  TV asValue(TV v, const ast::Expr &e);
  // Tuples (Tuples.cpp): `(a, b)`, `t[0]`, `let (a, b) = t`, `a, b = t`,
  // and tuple-typed fn params and results. No tuple reaches the tile IR.
  TV genTuple(const ast::Expr &e);
  TV tupleIndex(const ast::Expr &e, const TV &t);
  bool destructureTuple(const ast::Stmt &s, const TV &t);
  void assignTuple(const ast::Stmt &s);
  TV tupleAs(const TV &v, const ast::TypeRef &t, const ast::Expr &at, const std::string &what,
             const std::function<TV(const TV &, const ast::TypeRef &)> &element);
  bool carriesTuple(const std::string &name, const TV &old, const TV &v, const ast::Loc &loc);
  bool keepCarriedType(const std::string &what, size_t depth, const TV &old, TV &next, const ast::Loc &loc);
  void bindResultVars(const ast::TypeRef &result, const std::string &prefix = kResultVar);
  TV resultValue(const ast::TypeRef &result, const std::string &prefix = kResultVar);
  void returnTuple(const ast::Stmt &s, const TV &v, const std::string &prefix = kResultVar);
  TV genName(const ast::Expr &e);
  TV genUnary(const ast::Expr &e);
  TV genBinary(const ast::Expr &e);
  TV compareAtCompileTime(const ast::Expr &e, const TV &a, const TV &b);
  TV binaryOp(const std::string &op, TV a, TV b, const ast::Loc &loc);
  TV pointerArith(const std::string &op, TV a, TV b, const ast::Loc &loc);
  TV genIndex(const ast::Expr &e);
  TV convert(TV x, ir::ScalarKind to, const ast::Loc &loc);  // explicit cast
  TV constBinding(const ConstBinding &c) const;
  std::optional<ir::ScalarKind> namedType(const ast::TypeRef &t);
  // Pointer casts and bitcast (PointerCasts.cpp).
  std::optional<ir::ElemType> namedElemType(const ast::TypeRef &t);
  TV castExpr(const ast::Expr &e);
  TV castTo(TV x, const ast::TypeRef &t, const ast::Loc &loc);
  TV castTowardZero(TV x, const ast::TypeRef &t, const ast::Loc &loc);
  TV bitcastTo(TV x, const ast::TypeRef &t, const ast::Loc &loc);
  TV typedCastCall(const ast::Expr &e, const ast::Expr &x, const ast::Expr &type, bool bits);
  ir::Value *zeroOf(const ir::Type &t, const ast::Loc &loc);

  // Built-in calls (Builtins.cpp).
  TV genCall(const ast::Expr &e);
  TV minMaxOfTwo(const ast::Expr &e);
  TV unknownCall(const ast::Expr &e);
  TV valueCall(const ast::Expr &e, const std::vector<const ast::Expr *> &posExprs, std::vector<TV> &pos,
               std::map<std::string, TV> &named, std::map<std::string, const ast::Expr *> &namedExprs,
               std::map<std::string, ir::Attr> hints);
  TV mathCall(const ast::Expr &e, const std::vector<TV> &x, ir::OpKind op);
  TV cdivCall(const ast::Expr &e, TV a, TV b);
  TV umulhiCall(const ast::Expr &e, TV a, TV b);
  TV sigmoid(const ast::Expr &e, TV x);
  TV loadCall(const ast::Expr &e, const std::vector<TV> &pos, const std::map<std::string, TV> &named,
              std::map<std::string, ir::Attr> hints);
  TV storeCall(const ast::Expr &e, const std::vector<TV> &pos, const std::map<std::string, TV> &named,
               std::map<std::string, ir::Attr> hints);
  // multiple_of max_contiguous max_constancy: `x` with the facts (Hints.cpp).
  TV axisHintCall(const ast::Expr &e, const ast::Expr &x, const ast::Expr &values);
  // cache_modifier eviction_policy volatile of a load or store, taken out of
  // `named` as the op's attributes; nullopt after an error (MemoryHints.cpp).
  std::optional<std::map<std::string, ir::Attr>> memoryHints(const std::string &call,
                                                              std::map<std::string, const ast::Expr *> &named);
  TV whereCall(const ast::Expr &e, TV c, TV a, TV b);
  // sum max min argmax argmin (Reductions.cpp).
  TV reduceCall(const ast::Expr &e);
  struct TileAxisArgs {
    TV x;
    std::optional<int> axis;
    std::map<std::string, const ast::Expr *> named;
  };
  bool tileAxisArgs(const ast::Expr &e, const std::string &verb, const std::string &usage,
                    const std::vector<std::string> &extra, TileAxisArgs &out);
  TV scanCall(const ast::Expr &e);  // cumsum (Scans.cpp)
  std::optional<bool> constBool(const ast::Expr *e, const std::string &what);
  ir::Value *keepDims(ir::Value *v, std::vector<int> axes, const ast::Loc &loc);
  // Arguments bound to `names` by position or name, each at most once;
  // slot[i] is null where not given (Combine.cpp).
  bool namedArgs(const ast::Expr &e, const std::vector<std::string> &names, const std::string &usage,
                 std::vector<const ast::Expr *> &slot);
  // gather flip sort topk interleave cat (Selection.cpp).
  TV selectCall(const ast::Expr &e);
  TV histogramCall(const ast::Expr &e, const std::vector<const ast::Expr *> &slot);
  ir::Value *alongAxis(ir::Value *line, const std::vector<int64_t> &shape, int axis, const ast::Loc &loc);
  std::optional<int> dimArg(const ast::Expr *e, int rank, const std::string &what);
  // reduce and associative_scan with a combine_fn (Combine.cpp).
  TV combineCall(const ast::Expr &e);
  bool combineRegion(const ast::Expr &at, const ast::Decl &fn, ir::Op *op);
  // trans permute expand_dims broadcast_to reshape join split (Shapes.cpp).
  TV shapeCall(const ast::Expr &e);
  TV joinCall(const ast::Expr &e, TV a, TV b);
  // `let a, b = split(t)`: the halves of t's last axis of 2, bound to the names.
  void genDestructure(const ast::Stmt &s);
  std::optional<std::array<TV, 2>> splitHalves(const ast::Expr &e, TV x);
  TV dotCall(const ast::Expr &e);   // dot (Dot.cpp)
  // atomic_add max min xchg and or xor, atomic_cas (Atomics.cpp).
  TV atomicCall(const ast::Expr &e);
  // rand randn randint: Triton's Philox 4x32 stream (Random.cpp).
  TV randomCall(const ast::Expr &e);
  // TensorDescriptors.cpp: make_tensor_descriptor, and load(d, [offsets])
  // / store(d, [offsets], value) through one.
  TV makeTensorDescriptor(const ast::Expr &e);
  TV descriptorAccess(const ast::Expr &e);
  TV descriptorScalar(const ast::Expr &x, ir::ScalarKind k, const std::string &what);
  void bindDescriptorParam(const ast::Param &p, ir::ScalarKind elem);  // DescriptorParams.cpp
  // A compile-time expression outside any kernel (a const's default, a
  // descriptor's block) is generated into `scratch` with `consts` bound; a
  // use of a run-time parameter is an error that starts with `context`.
  void beginConstEval(ir::Function &scratch, const std::vector<ConstBinding> &consts,
                      const std::vector<std::string> &runtimeParams, std::string context);
  void endConstEval();
  std::array<ir::Value *, 4> philox(ir::Value *seed, ir::Value *counter, int64_t rounds, const ast::Loc &loc);
  // print and assert (Debug.cpp).
  TV debugCall(const ast::Expr &e);
  TV printCall(const ast::Expr &e);
  TV assertCall(const ast::Expr &e);
  TV barrierCall(const ast::Expr &e);
  std::optional<int64_t> constInt(const ast::Expr &e, const TV &v, const std::string &what);
  std::optional<std::vector<int64_t>> shapeArg(const ast::Expr &e, const std::string &what);
  bool checkTileShape(const std::vector<int64_t> &shape, const ast::Loc &loc);

  // fn helpers inlined at each call, and static_assert (Fns.cpp).
  TV fnCall(const ast::Expr &e, const ast::Decl &fn);
  bool canInline(const ast::Expr &e, const ast::Decl &fn);
  TV inlineFn(const ast::Loc &callLoc, const ast::Decl &fn, const std::vector<TV> &args,
              const std::map<std::string, ir::ScalarKind> &typeVars);
  bool bindFnArgs(const ast::Expr &e, const ast::Decl &fn, std::vector<TV> &args,
                  std::map<std::string, ir::ScalarKind> &typeVars);
  TV fnArg(const ast::Expr &arg, TV v, const ast::Decl &fn, const ast::Param &p,
           std::map<std::string, ir::ScalarKind> &typeVars);
  TV fnResult(const ast::Stmt &ret, const ast::Decl &fn);
  TV staticAssert(const ast::Expr &e);
  void genReturn(const ast::Stmt &s);

  // Materialisation (IRGen.cpp).
  Location irLoc(const ast::Loc &l) const { return l; }
  ir::Value *emitConst(ConstValue c, const ir::Type &t, const ast::Loc &loc);
  // `x` as type `t`: constants emitted in `t`, then cast, expand_dims/splat and broadcast.
  ir::Value *coerce(const TV &x, const ir::Type &t, const ast::Loc &loc);
  ir::Value *emit(ir::OpKind k, std::vector<ir::Value *> operands, ir::Type t, const ast::Loc &loc,
                  std::map<std::string, ir::Attr> attrs = {});
  TV value(ir::Value *v) const;
  TV constant(ConstValue c, ir::ScalarKind k, bool weak) const;
  // A weak int/float literal coerced to `k`; errors when an int does not fit.
  bool checkWeakFits(const TV &x, ir::ScalarKind k, const ast::Loc &loc);
  std::optional<std::vector<int64_t>> broadcast(const std::vector<const TV *> &vals, const ast::Loc &loc);
  std::string typeName(const TV &x) const;
  TV invalid() const { return TV{}; }
  static std::string closest(const std::string &name, const std::vector<std::string> &candidates);
  void error(const ast::Loc &loc, std::string msg) { diags_.error(loc, std::move(msg)); }

  DiagnosticEngine &diags_;
  std::string file_;
  ir::Function *fn_ = nullptr;
  std::unique_ptr<ir::Builder> builder_;
  std::vector<Scope> scopes_;
  std::vector<Region> regions_;  // runtime loops, branches and guards being generated, outermost first
  int unrolledIterations_ = 0;  // static_range iterations so far in this kernel
  // While evaluating a const default: the kernel's other parameters, which
  // are known only at run time.
  std::vector<std::string> runtimeNames_;
  std::string constContext_;  // "the default value of const parameter 'N'"
  std::map<std::string, std::vector<int64_t>> descBlocks_;
  // fn inlining (Fns.cpp): the fns being inlined, innermost last; fns whose
  // body had errors in this kernel (later calls stay quiet); the calls
  // inlined so far. `quietFailure_`: a call failed without a new error.
  const FnTable *fnTable_ = nullptr;
  std::vector<const ast::Decl *> inlineStack_;
  std::set<const ast::Decl *> failedFns_;
  int inlinedCalls_ = 0;
  bool quietFailure_ = false;
  Jumps jumps_;
  int numWarps_ = 4;    // of the kernel being lowered: the threads a tile spreads over
  int loopDepth_ = 0;   // loop bodies being generated in this kernel or fn (what `break` may leave)
  int guardDepth_ = 0;  // statement lists nested under a possible jump
};

}  // namespace tk::lang
