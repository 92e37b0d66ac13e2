// The built-in functions of the language (program_id, arange, zeros, load,
// store, where, cast, math, ...) lowered to tile IR, with their argument
// checks. Names the language reserves for later get a "not supported yet".
#include <algorithm>
#include <set>

#include "lang/IRGen.h"
#include "parser/TritonHints.h"
#include "tk/gpu.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {
constexpr int64_t kMaxTileElements = int64_t{1} << 20;
constexpr int64_t kMaxElementsPerThread = 2048;

// The math built-ins are the tile IR's math ops (ir/Ops.def), by mnemonic:
// exp ... ceil, erf, log1p, expm1 take one operand, pow and atan2 two.
const std::map<std::string, OpKind> &mathOps() {
  static const std::map<std::string, OpKind> ops = [] {
    std::map<std::string, OpKind> m;
    for (const ir::OpInfo &info : ir::allOps())
      if (info.traits & ir::OpTrait::Math) m[info.mnemonic] = info.kind;
    return m;
  }();
  return ops;
}

// Float classification: a bool of the operand's shape.
const std::map<std::string, OpKind> &classifyOps() {
  static const std::map<std::string, OpKind> ops = {
#define TK_BUILTIN_CLASSIFY(NAME, OPKIND) {NAME, OpKind::OPKIND},
#include "lang/BuiltinTable.def"
  };
  return ops;
}

// The built-ins a group's function generates, by name (BuiltinTable.def).
const std::map<std::string, BuiltinGroup> &groups() {
  static const std::map<std::string, BuiltinGroup> g = {
#define TK_BUILTIN(NAME, GROUP, USAGE) {NAME, BuiltinGroup::GROUP},
#include "lang/BuiltinTable.def"
  };
  return g;
}

struct Signature {
  size_t minPos, maxPos;
  std::set<std::string> named;
  const char *usage;
};

const std::map<std::string, Signature> &signatures() {
  static const std::map<std::string, Signature> sigs = {
#define TK_BUILTIN_CALL(NAME, MINPOS, MAXPOS, USAGE, ...) {NAME, {MINPOS, MAXPOS, {__VA_ARGS__}, USAGE}},
#include "lang/BuiltinTable.def"
  };
  return sigs;
}

}  // namespace

std::optional<BuiltinGroup> IRGen::builtinGroup(const std::string &name) {
  auto it = groups().find(name);
  if (it == groups().end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> IRGen::builtinNames() {
  std::vector<std::string> names;
  for (const auto &[n, op] : mathOps()) names.push_back(n);
  for (const auto &[n, op] : classifyOps()) names.push_back(n);
  for (const auto &[n, sig] : signatures())
    if (!mathOps().count(n)) names.push_back(n);
  // The groups in BuiltinTable.def's order (Later, Random, Shape, ...): what a
  // misspelt call is compared with, so compile-time-only names stay out.
#define TK_BUILTIN(NAME, GROUP, USAGE)                                                             \
  if (BuiltinGroup::GROUP != BuiltinGroup::StaticAssert && BuiltinGroup::GROUP != BuiltinGroup::StaticRange) \
    names.push_back(NAME);
#include "lang/BuiltinTable.def"
  return names;
}

bool IRGen::isBuiltinName(const std::string &name) {
  if (builtinGroup(name)) return true;
  static const std::set<std::string> names = [] {
    auto v = builtinNames();
    return std::set<std::string>(v.begin(), v.end());
  }();  // asked for every call to a name that is not a built-in group's
  return names.count(name) > 0;
}

std::optional<int64_t> IRGen::constInt(const ast::Expr &e, const TV &v, const std::string &what) {
  if (!v.ok()) return std::nullopt;
  if (!v.cst || v.type.isTile() || v.cst->isFloat || v.type.isBool()) {
    error(e.loc, what + " must be a compile-time integer constant (a literal or a const parameter)");
    return std::nullopt;
  }
  return v.cst->i;
}

bool IRGen::checkTileShape(const std::vector<int64_t> &shape, const ast::Loc &loc) {
  if (shape.size() > kMaxTileRank) {
    error(loc, "tiles of rank " + std::to_string(shape.size()) + " are not supported (the limit is " +
                   std::to_string(kMaxTileRank) + ")");
    return false;
  }
  // Any positive size: pad-tiles pads each dim to a power of two, which is
  // what registers hold, so the limits count the padded tile.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1) {
      error(loc, "tile dimensions must be positive, not " + std::to_string(d));
      return false;
    }
    const int64_t p = ir::paddedDim(d);
    if (p > kMaxTileElements || (n *= p) > kMaxTileElements) {
      error(loc, "a tile of shape " + shapeStr(shape) + " is too large (the limit is " +
                     std::to_string(kMaxTileElements) + " elements)");
      return false;
    }
  }
  // Each thread holds its share of a tile in registers; far past the
  // register file it spills, and compiles for minutes.
  const int64_t threads = kWarpSize * int64_t{numWarps_};
  if (n / threads > kMaxElementsPerThread) {
    error(loc, "a tile of shape " + shapeStr(shape) + " puts " + std::to_string(n / threads) +
                   " elements in each thread's registers (num_warps = " + std::to_string(numWarps_) +
                   "): the budget is " + std::to_string(kMaxElementsPerThread) +
                   " per thread (255 32-bit registers hold far fewer); use more warps or a smaller tile");
    return false;
  }
  return true;
}

// A shape: a list of constants [a, b] or a single constant.
std::optional<std::vector<int64_t>> IRGen::shapeArg(const ast::Expr &e, const std::string &what) {
  std::vector<const ast::Expr *> dims;
  if (e.kind == ast::ExprKind::List) {
    for (const ast::ExprPtr &d : e.args) dims.push_back(d.get());
    if (dims.empty()) {
      error(e.loc, what + " must not be empty");
      return std::nullopt;
    }
  } else {
    dims.push_back(&e);
  }
  std::vector<int64_t> shape;
  for (const ast::Expr *d : dims) {
    auto v = constInt(*d, genValue(*d), "a dimension of " + what);
    if (!v) return std::nullopt;
    shape.push_back(*v);
  }
  if (!checkTileShape(shape, e.loc)) return std::nullopt;
  return shape;
}

bool FnTable::visible(const std::string &fromFile, const std::string &fnFile) const {
  std::set<std::string> seen = {fromFile};
  std::vector<std::string> work = {fromFile};
  while (!work.empty()) {
    const std::string file = work.back();
    work.pop_back();
    if (file == fnFile) return true;
    if (auto it = imports.find(file); it != imports.end())
      for (const std::string &next : it->second)
        if (seen.insert(next).second) work.push_back(next);
  }
  return false;
}

TV IRGen::genCall(const ast::Expr &e) {
  const std::string &name = e.text;
  // A user's fn wins over a built-in of its name where the file defining it
  // is seen (docs/language.md, "Names"): adding a built-in never breaks a
  // program that already has a fn of that name.
  if (fnTable_)
    if (auto fn = fnTable_->fns.find(name);
        fn != fnTable_->fns.end() && fnTable_->visible(e.loc.file, fn->second->loc.file))
      return fnCall(e, *fn->second);
  // load(d, [offsets]) and store(d, [offsets], v): a list second is a
  // descriptor's block offsets (a list is otherwise only a shape).
  if ((name == "load" || name == "store") && !e.args.empty()) {
    const Binding *first = e.args[0]->kind == ast::ExprKind::Name ? lookup(e.args[0]->text) : nullptr;
    if ((e.args.size() >= 2 && e.argNames[1].empty() && e.args[1]->kind == ast::ExprKind::List) ||
        (first && first->value.k == TV::K::Desc))
      return descriptorAccess(e);
  }
  bool twoPositional = e.args.size() == 2 && e.argNames[0].empty() && e.argNames[1].empty();
  if ((name == "min" || name == "max") && twoPositional) return minMaxOfTwo(e);
  const std::optional<BuiltinGroup> group = builtinGroup(name);
  if (group) switch (*group) {
      case BuiltinGroup::Reduce: return reduceCall(e);
      case BuiltinGroup::Scan: return scanCall(e);
      case BuiltinGroup::Combine: return combineCall(e);
      case BuiltinGroup::Select: return selectCall(e);
      case BuiltinGroup::Dot: return dotCall(e);
      case BuiltinGroup::Atomic: return atomicCall(e);
      case BuiltinGroup::StaticAssert: return staticAssert(e);
      case BuiltinGroup::Debug: return debugCall(e);
      case BuiltinGroup::Random: return randomCall(e);
      case BuiltinGroup::Shape: return shapeCall(e);
      case BuiltinGroup::Descriptor: return makeTensorDescriptor(e);
      case BuiltinGroup::Later: case BuiltinGroup::StaticRange: break;
    }
  // A fn of a file the call does not see, named like no built-in (a built-in
  // of its name has been taken above only where the fn is visible).
  if (fnTable_ && !isBuiltinName(name))
    if (auto fn = fnTable_->fns.find(name); fn != fnTable_->fns.end()) return fnCall(e, *fn->second);
  if (group == BuiltinGroup::Later) {
    error(e.loc, quoted(name) + " is not supported yet");
    return invalid();
  }
  auto mathIt = mathOps().find(name);
  auto classIt = classifyOps().find(name);
  auto sigIt = signatures().find(name);
  size_t arity = mathIt != mathOps().end() ? size_t(ir::opInfo(mathIt->second).minOperands) : 1;
  std::string mathUsage = name + (arity == 2 ? "(x, y)" : "(x)");
  Signature mathSig{arity, arity, {}, mathUsage.c_str()};
  // A math op with named arguments (fdiv's ieee_rounding) has a signature
  // in BuiltinTable.def, which wins.
  const Signature *sig = sigIt != signatures().end()                                 ? &sigIt->second
                         : mathIt != mathOps().end() || classIt != classifyOps().end() ? &mathSig
                                                                                       : nullptr;
  if (!sig) return unknownCall(e);
  std::string usage = sig->usage ? sig->usage : name + "(x)";
  // Arguments: positional first, then named ones from the signature.
  std::vector<const ast::Expr *> posExprs;
  std::map<std::string, const ast::Expr *> namedExprs;
  bool bad = false;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &an = e.argNames[i];
    if (an.empty()) {
      if (!namedExprs.empty()) {
        error(e.args[i]->loc, "a positional argument cannot follow a named one");
        bad = true;
      }
      posExprs.push_back(e.args[i].get());
    } else if (!sig->named.count(an)) {
      error(e.args[i]->loc, quoted(name) + " has no argument named " + quoted(an) + " (usage: " + usage + ")");
      bad = true;
    } else if (namedExprs.count(an)) {
      error(e.args[i]->loc, "argument " + quoted(an) + " given twice");
      bad = true;
    } else {
      namedExprs[an] = e.args[i].get();
    }
  }
  if (bad) return invalid();
  if (posExprs.size() < sig->minPos || posExprs.size() > sig->maxPos) {
    error(e.loc, quoted(name) + " takes " +
                     (sig->minPos == sig->maxPos ? std::to_string(sig->minPos)
                                                 : std::to_string(sig->minPos) + " or " + std::to_string(sig->maxPos)) +
                     " argument" + (sig->maxPos == 1 ? "" : "s") + ", not " + std::to_string(posExprs.size()) +
                     " (usage: " + usage + ")");
    return invalid();
  }

  // Shapes and types are not values: handle the calls that take them first.
  if (name == "zeros" || name == "full") {
    auto shape = shapeArg(*posExprs[0], "the shape");
    const ast::Expr &dt = *posExprs.back();
    TV dtype = genExpr(dt);
    TV fill = name == "full" ? genValue(*posExprs[1]) : constant(ConstValue::ofInt(0), ScalarKind::I32, true);
    if (!shape || !dtype.ok() || !fill.ok()) return invalid();
    if (dtype.k != TV::K::TypeArg) {
      error(dt.loc, "the last argument of " + quoted(name) + " must be a type such as f32");
      return invalid();
    }
    if (fill.type.isTile() || fill.type.isPtr()) {
      error(posExprs[1]->loc, "the fill value of 'full' must be a scalar number, not " + typeName(fill));
      return invalid();
    }
    if (!checkWeakFits(fill, dtype.typeArg, posExprs[1]->loc)) return invalid();
    return value(coerce(fill, Type::scalar(dtype.typeArg).withShape(*shape), e.loc));
  }
  if (name == "multiple_of" || name == "max_contiguous" || name == "max_constancy")
    return axisHintCall(e, *posExprs[0], *posExprs[1]);
  if (name == "cast" || name == "bitcast") return typedCastCall(e, *posExprs[0], *posExprs[1], name == "bitcast");

  std::map<std::string, ir::Attr> hints;
  if (name == "load" || name == "store") {
    auto h = memoryHints(name, namedExprs);
    if (!h) return invalid();
    hints = std::move(*h);
  }
  std::vector<TV> pos;
  std::map<std::string, TV> named;
  for (const ast::Expr *a : posExprs) pos.push_back(genValue(*a));
  for (auto &[k, a] : namedExprs) named[k] = genValue(*a);
  for (const TV &v : pos)
    if (!v.ok()) return invalid();
  for (auto &[k, v] : named)
    if (!v.ok()) return invalid();

  return valueCall(e, posExprs, pos, named, namedExprs, std::move(hints));
}

// min(a, b) and max(a, b), two positional arguments, are minimum and
// maximum; with one tile (and `axis:`) they reduce. A tile and a
// compile-time integer is Triton's `tl.max(x, 1)`, a reduction along axis
// 1, or tk's elementwise max(x, 1): neither is guessed, the error gives
// both spellings (sum(x, 1) has only the one meaning, an axis).
TV IRGen::minMaxOfTwo(const ast::Expr &e) {
  const std::string &name = e.text;
  TV a = genValue(*e.args[0]), b = genValue(*e.args[1]);
  if (!a.ok() || !b.ok()) return invalid();
  if (a.type.isTile() && b.cst && !b.type.isTile() && b.type.isInt() && !b.type.isBool()) {
    const std::string k = std::to_string(b.cst->i), full = name == "max" ? "maximum" : "minimum";
    error(e.loc, quoted(name + "(x, " + k + ")") + " of a tile and an integer is ambiguous: write " + name +
                     "(x, axis: " + k + ") for Triton's tl." + name + "(x, " + k + ") (a reduction), or " + full +
                     "(x, " + k + ") for the elementwise " + full);
    return invalid();
  }
  return binaryOp(name, a, b, e.loc);
}

// The built-ins whose arguments are all values, evaluated (`pos`, `named`):
// ids, arange, load/store, where, and the math.
TV IRGen::valueCall(const ast::Expr &e, const std::vector<const ast::Expr *> &posExprs, std::vector<TV> &pos,
                    std::map<std::string, TV> &named, std::map<std::string, const ast::Expr *> &namedExprs,
                    std::map<std::string, ir::Attr> hints) {
  const std::string &name = e.text;
  auto mathIt = mathOps().find(name);
  auto classIt = classifyOps().find(name);
  if (name == "program_id" || name == "num_programs") {
    auto axis = constInt(*posExprs[0], pos[0], "the axis");
    if (!axis) return invalid();
    if (*axis < 0 || *axis > 2) {
      error(posExprs[0]->loc, "the axis of " + quoted(name) + " must be 0, 1 or 2, not " + std::to_string(*axis));
      return invalid();
    }
    return value(emit(name == "program_id" ? OpKind::ProgramId : OpKind::NumPrograms, {},
                      Type::scalar(ScalarKind::I32), e.loc, {{"axis", *axis}}));
  }
  if (name == "arange") {
    auto a = constInt(*posExprs[0], pos[0], "the bound of 'arange'");
    std::optional<int64_t> b;
    if (pos.size() == 2) b = constInt(*posExprs[1], pos[1], "the end of 'arange'");
    if (!a || (pos.size() == 2 && !b)) return invalid();
    int64_t start = pos.size() == 2 ? *a : 0, end = pos.size() == 2 ? *b : *a;
    // pad-tiles moves the end to start + the padded size: that must fit too.
    if (!fitsIn(start, ScalarKind::I32) || !fitsIn(end, ScalarKind::I32) || end <= start ||
        !fitsIn(start + ir::paddedDim(end - start), ScalarKind::I32)) {
      error(e.loc, "'arange' needs start < end within i32, not [" + std::to_string(start) + ", " +
                       std::to_string(end) + ")");
      return invalid();
    }
    if (!checkTileShape({end - start}, e.loc)) return invalid();
    return value(emit(OpKind::Arange, {}, Type::tile({ScalarKind::I32, false}, {end - start}), e.loc,
                      {{"start", start}, {"end", end}}));
  }
  if (name == "load") return loadCall(e, pos, named, std::move(hints));
  if (name == "store") return storeCall(e, pos, named, std::move(hints));
  if (name == "where") return whereCall(e, pos[0], pos[1], pos[2]);
  if (name == "maximum" || name == "minimum") return binaryOp(name == "maximum" ? "max" : "min", pos[0], pos[1], e.loc);

  for (const TV &v : pos) {
    if (v.type.isPtr() || v.type.isBool()) {
      error(e.loc, quoted(name) + " needs numbers, not " + typeName(v));
      return invalid();
    }
  }
  if (name == "umulhi") return umulhiCall(e, pos[0], pos[1]);
  if (name == "fdiv") {
    // Triton's tl.fdiv(x, y, ieee_rounding=False): the fast division, or
    // with ieee_rounding div_rn.
    bool ieee = false;
    if (auto it = named.find("ieee_rounding"); it != named.end()) {
      const TV &r = it->second;
      if (!r.cst || !r.type.isBool() || r.type.isTile()) {
        error(namedExprs["ieee_rounding"]->loc, "'ieee_rounding' of 'fdiv' must be a compile-time bool, not " + typeName(r));
        return invalid();
      }
      ieee = r.cst->i != 0;
    }
    return mathCall(e, pos, ieee ? OpKind::DivRn : OpKind::Fdiv);
  }
  if (mathIt != mathOps().end()) return mathCall(e, pos, mathIt->second);
  if (classIt != classifyOps().end()) {
    TV x = pos[0];
    Type t = x.type.isFloat() && !x.weak ? x.type : x.type.withScalar(ScalarKind::F32);
    return value(emit(classIt->second, {coerce(x, t, e.loc)}, t.withScalar(ScalarKind::I1), e.loc));
  }
  if (name == "cdiv") return cdivCall(e, pos[0], pos[1]);
  if (name == "clamp") {
    // minimum(maximum(x, lo), hi): the typing of two binary operators.
    TV lo = binaryOp("max", pos[0], pos[1], e.loc);
    if (!lo.ok()) return invalid();
    return binaryOp("min", lo, pos[2], e.loc);
  }
  if (name == "sigmoid") return sigmoid(e, pos[0]);
  if (name == "abs") {
    TV x = pos[0];
    Type t = x.weak ? Type::scalar(x.type.elem.scalar) : x.type;
    return value(emit(OpKind::Abs, {coerce(x, t, e.loc)}, t, e.loc));
  }
  if (name == "relu") {
    TV x = pos[0];
    if (x.weak) x = value(coerce(x, x.type, e.loc));
    return binaryOp("max", x, constant(ConstValue::ofInt(0), ScalarKind::I32, true), e.loc);
  }
  // fma: one float type for all three.
  ElemInfo el = commonElem(commonElem(pos[0].elem(), pos[1].elem()), pos[2].elem());
  ScalarKind k = ir::isFloat(el.kind) && !el.weak ? el.kind : ScalarKind::F32;
  auto shape = broadcast({&pos[0], &pos[1], &pos[2]}, e.loc);
  if (!shape) return invalid();
  Type t = Type::scalar(k).withShape(*shape);
  return value(emit(OpKind::Fma, {coerce(pos[0], t, e.loc), coerce(pos[1], t, e.loc), coerce(pos[2], t, e.loc)}, t,
                    e.loc));
}

// Math on ints (and on literals) computes in f32; f16/bf16 keep their type
// (the lowering computes them in f32). pow and atan2 take their operands'
// common float type, as fma does.
TV IRGen::mathCall(const ast::Expr &e, const std::vector<TV> &x, OpKind op) {
  if (x.size() == 1) {
    Type t = x[0].type.isFloat() && !x[0].weak ? x[0].type : x[0].type.withScalar(ScalarKind::F32);
    return value(emit(op, {coerce(x[0], t, e.loc)}, t, e.loc));
  }
  ElemInfo el = commonElem(x[0].elem(), x[1].elem());
  ScalarKind k = ir::isFloat(el.kind) && !el.weak ? el.kind : ScalarKind::F32;
  auto shape = broadcast({&x[0], &x[1]}, e.loc);
  if (!shape) return invalid();
  Type t = Type::scalar(k).withShape(*shape);
  return value(emit(op, {coerce(x[0], t, e.loc), coerce(x[1], t, e.loc)}, t, e.loc));
}

// umulhi(a, b), Triton's tl.umulhi: the high half of the double-width
// product of two i32 (or two i64) read as unsigned, in their common type (a
// literal takes the other operand's; two give i32). Narrower integers are
// an error, as in Triton, rather than a silent widening.
TV IRGen::umulhiCall(const ast::Expr &e, TV a, TV b) {
  if (a.type.isFloat() || b.type.isFloat()) {
    error(e.loc, "'umulhi' needs i32 or i64 integers, not " + typeName(a) + " and " + typeName(b));
    return invalid();
  }
  ElemInfo el = commonElem(a.elem(), b.elem());
  ScalarKind k = el.weak ? ScalarKind::I32 : el.kind;
  if (k != ScalarKind::I32 && k != ScalarKind::I64) {
    error(e.loc, "'umulhi' needs i32 or i64 integers, not " + typeName(a) + " and " + typeName(b));
    return invalid();
  }
  auto shape = broadcast({&a, &b}, e.loc);
  if (!shape) return invalid();
  Type t = Type::scalar(k).withShape(*shape);
  return value(emit(OpKind::UMulHi, {coerce(a, t, e.loc), coerce(b, t, e.loc)}, t, e.loc));
}

// cdiv(a, b): the ceiling of a / b for integers of any sign (as the host
// expressions' cdiv), q + (r != 0 && (r < 0) == (b < 0)) with q and r the
// truncating quotient and remainder; folded when both are constants.
TV IRGen::cdivCall(const ast::Expr &e, TV a, TV b) {
  if (a.type.isFloat() || b.type.isFloat()) {
    error(e.loc, "'cdiv' needs integers, not " + typeName(a) + " and " + typeName(b));
    return invalid();
  }
  TV q = binaryOp("/", a, b, e.loc);
  if (!q.ok()) return invalid();
  TV r = binaryOp("%", a, b, e.loc);
  if (!r.ok()) return invalid();
  TV zero = constant(ConstValue::ofInt(0), ScalarKind::I32, true);
  TV inexact = binaryOp("!=", r, zero, e.loc);
  TV sameSign = binaryOp("==", binaryOp("<", r, zero, e.loc), binaryOp("<", b, zero, e.loc), e.loc);
  TV up = binaryOp("&&", inexact, sameSign, e.loc);
  if (!up.ok()) return invalid();
  // A constant carry is a literal, so cdiv of literals stays a literal.
  TV carry = up.cst && !up.type.isTile() ? constant(ConstValue::ofInt(up.cst->i), ScalarKind::I32, true)
                                         : convert(up, q.type.elem.scalar, e.loc);
  return binaryOp("+", q, carry, e.loc);
}

// sigmoid(x) = 1 / (1 + exp(-x)), built from ops.
TV IRGen::sigmoid(const ast::Expr &e, TV x) {
  Type t = x.type.isFloat() && !x.weak ? x.type : x.type.withScalar(ScalarKind::F32);
  ir::Value *v = coerce(x, t, e.loc);
  ir::Value *neg = emit(OpKind::Neg, {v}, t, e.loc);
  ir::Value *ex = emit(OpKind::Exp, {neg}, t, e.loc);
  ir::Value *one = emitConst(ConstValue::ofFloat(1.0), t, e.loc);
  ir::Value *den = emit(OpKind::Add, {one, ex}, t, e.loc);
  ir::Value *one2 = emitConst(ConstValue::ofFloat(1.0), t, e.loc);
  return value(emit(OpKind::Div, {one2, den}, t, e.loc));
}

// load(ptr, mask: m, other: v): every operand takes the common shape; the
// masked-off lanes read `other`, 0 when it is not given.
TV IRGen::loadCall(const ast::Expr &e, const std::vector<TV> &pos, const std::map<std::string, TV> &named,
                   std::map<std::string, ir::Attr> hints) {
  const TV &ptr = pos[0];
  if (!ptr.type.isPtr()) {
    error(e.args[0]->loc, "'load' needs a pointer, not " + typeName(ptr));
    return invalid();
  }
  auto mIt = named.find("mask"), oIt = named.find("other");
  std::vector<const TV *> all = {&ptr};
  if (mIt != named.end()) {
    if (!mIt->second.type.isBool()) {
      error(e.loc, "the mask of 'load' must be bool, not " + typeName(mIt->second));
      return invalid();
    }
    all.push_back(&mIt->second);
  }
  const ir::ElemType elem = ptr.type.elem.pointee();  // a number, or a pointer loaded from a `**T` buffer
  ScalarKind pointee = elem.scalar;
  if (oIt != named.end()) {
    const TV &o = oIt->second;
    if (mIt == named.end()) {
      error(e.loc, "'other' of 'load' needs a 'mask'");
      return invalid();
    }
    if (elem.isPtr() ? o.type.elem != elem : o.type.isPtr() || (o.type.isBool() != (pointee == ScalarKind::I1))) {
      error(e.loc, "'other' of 'load' must be a value of the pointee type " +
                       (pointee == ScalarKind::I1 ? std::string("bool") : elem.str()) + ", not " + typeName(o));
      return invalid();
    }
    if (!elem.isPtr() && !checkWeakFits(o, pointee, e.loc)) return invalid();
    all.push_back(&o);
  }
  auto shape = broadcast(all, e.loc);
  if (!shape) return invalid();
  Type pt = ptr.type.withShape(*shape);
  Type vt{elem, *shape, nullptr};
  std::vector<ir::Value *> ops = {coerce(ptr, pt, e.loc)};
  if (mIt != named.end()) {
    ops.push_back(coerce(mIt->second, vt.withScalar(ScalarKind::I1), e.loc));
    if (oIt != named.end()) ops.push_back(coerce(oIt->second, vt, e.loc));
    else ops.push_back(zeroOf(vt, e.loc));
  }
  return value(emit(OpKind::Load, ops, vt, e.loc, std::move(hints)));
}

// store(ptr, value, mask: m): value and mask must broadcast to the pointer's
// shape; the value converts to the pointee type.
TV IRGen::storeCall(const ast::Expr &e, const std::vector<TV> &pos, const std::map<std::string, TV> &named,
                    std::map<std::string, ir::Attr> hints) {
  const TV &ptr = pos[0];
  const TV &val = pos[1];
  if (!ptr.type.isPtr()) {
    error(e.args[0]->loc, "'store' needs a pointer, not " + typeName(ptr));
    return invalid();
  }
  const ir::ElemType elem = ptr.type.elem.pointee();
  ScalarKind pointee = elem.scalar;
  if (val.type.isPtr() != elem.isPtr() || (elem.isPtr() && val.type.elem != elem)) {
    error(e.loc, "'store' through " + typeName(ptr) + " needs a value of type " + elem.str() + ", not " + typeName(val));
    return invalid();
  }
  if (!elem.isPtr() && !checkWeakFits(val, pointee, e.loc)) return invalid();
  auto mIt = named.find("mask");
  std::vector<const TV *> all = {&ptr, &val};
  if (mIt != named.end()) {
    if (!mIt->second.type.isBool()) {
      error(e.loc, "the mask of 'store' must be bool, not " + typeName(mIt->second));
      return invalid();
    }
    all.push_back(&mIt->second);
  }
  auto shape = broadcast(all, e.loc);
  if (!shape) return invalid();
  if (*shape != ptr.type.shape) {
    error(e.loc, "'store' of a value of shape " + shapeStr(*shape) + " through pointers of shape " +
                     shapeStr(ptr.type.shape) + "; the value and mask must fit the pointers' shape");
    return invalid();
  }
  Type vt{elem, *shape, nullptr};
  std::vector<ir::Value *> ops = {ptr.v, coerce(val, vt, e.loc)};
  if (mIt != named.end()) ops.push_back(coerce(mIt->second, vt.withScalar(ScalarKind::I1), e.loc));
  builder_->setLoc(e.loc);
  builder_->create(OpKind::Store, ops, std::nullopt, std::move(hints));
  TV v;
  v.k = TV::K::Void;
  return v;
}

TV IRGen::whereCall(const ast::Expr &e, TV c, TV a, TV b) {
  if (!c.type.isBool()) {
    error(e.args[0]->loc, "the condition of 'where' must be bool, not " + typeName(c));
    return invalid();
  }
  if (a.type.isPtr() || b.type.isPtr() || a.type.isBool() != b.type.isBool()) {
    error(e.loc, "'where' cannot choose between " + typeName(a) + " and " + typeName(b));
    return invalid();
  }
  ElemInfo el = commonElem(a.elem(), b.elem());
  ScalarKind k = el.weak ? (ir::isFloat(el.kind) ? ScalarKind::F32 : ScalarKind::I32) : el.kind;
  if (!checkWeakFits(a, k, e.loc) || !checkWeakFits(b, k, e.loc)) return invalid();
  auto shape = broadcast({&c, &a, &b}, e.loc);
  if (!shape) return invalid();
  Type t = Type::scalar(k).withShape(*shape);
  return value(emit(OpKind::Select, {coerce(c, t.withScalar(ScalarKind::I1), e.loc), coerce(a, t, e.loc),
                                     coerce(b, t, e.loc)},
                    t, e.loc));
}

}  // namespace tk::lang
