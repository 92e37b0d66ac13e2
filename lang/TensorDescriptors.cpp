// Tensor descriptors, as Triton's tl.make_tensor_descriptor: a global tensor
// (base pointer, shape, strides) read and written a block at a time, with
// out-of-bounds elements of a block filled on load (zero, or NaN) and
// dropped on store:
//
//   let d = make_tensor_descriptor(x, shape: [M, K], strides: [K, 1], block_shape: [BM, BK]);
//   let t = load(d, [m0, k0]);          // [BM, BK], rows m0.., columns k0..
//   store(d, [m0, k0], t);
//
// A descriptor is a compile-time aggregate of the front end (TV::K::Desc):
// its load and store expand here into the ordinary tile IR a user would
// write by hand -- a pointer tile base + sum_i (o_i + arange(B_i)) * s_i in
// 64-bit offsets, and a mask 0 <= o_i + arange(B_i) < shape_i per dim -- so
// every arch and the sim run it with ordinary loads and stores. (Hopper's
// tensor-memory accelerator is the next step: the same source, lowered to
// cp.async.bulk.tensor.)
//
// make_tensor_descriptor(base, shape, strides, block_shape, padding: "zero")
//   positional or named (Triton's order and names; padding_option too).
#include "lang/IRGen.h"

#include <cmath>

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

namespace {
constexpr size_t kMaxRank = 5;  // TMA's limit, kept so a program ports to it unchanged
}  // namespace

// `x` as a `k` scalar (i32: a size or offset; i64: a stride): an integer
// scalar, i64 only where `k` is, a literal that fits; else an error naming
// `what` and an invalid TV.
TV IRGen::descriptorScalar(const ast::Expr &x, ScalarKind k, const std::string &what) {
  TV v = genValue(x);
  if (!v.ok()) return invalid();
  if (v.type.isTile() || !v.type.isInt() || v.type.isBool() || v.type.isPtr() ||
      (k == ScalarKind::I32 && !v.weak && v.type.elem.scalar == ScalarKind::I64)) {
    error(x.loc, what + " takes " + (k == ScalarKind::I32 ? "i32" : "integer") + " scalars, not " + typeName(v));
    return invalid();
  }
  if (v.weak && !checkWeakFits(v, k, x.loc)) return invalid();
  return value(coerce(v, Type::scalar(k), x.loc));
}

TV IRGen::makeTensorDescriptor(const ast::Expr &e) {
  const std::string usage =
      "make_tensor_descriptor(base, shape: [..], strides: [..], block_shape: [..], padding: \"zero\" or \"nan\")";
  const char *names[] = {"base", "shape", "strides", "block_shape"};
  const ast::Expr *slot[4] = {}, *paddingE = nullptr;
  size_t positional = 0;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const std::string &n = e.argNames[i];
    const ast::Expr *arg = e.args[i].get();
    const ast::Expr **to = nullptr;
    if (n.empty()) {
      to = positional < 4 ? &slot[positional++] : nullptr;
    } else if (n == "padding" || n == "padding_option") {
      to = &paddingE;
    } else {
      for (size_t k = 0; k < 4; ++k)
        if (n == names[k]) to = &slot[k];
    }
    if (!to) {
      error(arg->loc, (n.empty() ? std::string("too many arguments to 'make_tensor_descriptor'")
                                 : "'make_tensor_descriptor' has no argument named " + quoted(n)) +
                          ": " + usage);
      return invalid();
    }
    if (*to) {
      error(arg->loc, "argument " + quoted(n.empty() ? "base" : n) + " of 'make_tensor_descriptor' given twice");
      return invalid();
    }
    *to = arg;
  }
  for (size_t k = 0; k < 4; ++k)
    if (!slot[k]) {
      error(e.loc, std::string("'make_tensor_descriptor' needs its ") + names[k] + ": " + usage);
      return invalid();
    }

  TV base = genValue(*slot[0]);
  if (!base.ok()) return invalid();
  if (!base.type.isPtr() || base.type.isTile() || base.type.elem.pointee().isPtr()) {
    error(slot[0]->loc, "the base of a tensor descriptor must be a pointer to numbers, not " + typeName(base));
    return invalid();
  }
  // The shape's and the strides' scalars: lists of one length, 1 to 5.
  auto list = [&](const ast::Expr &l, const char *what) -> std::optional<std::vector<const ast::Expr *>> {
    if (l.kind != ast::ExprKind::List || l.args.empty() || l.args.size() > kMaxRank) {
      error(l.loc, std::string("the ") + what + " of a tensor descriptor must be a list of 1 to " +
                       std::to_string(kMaxRank) + " values, as in [M, K]");
      return std::nullopt;
    }
    std::vector<const ast::Expr *> out;
    for (const ast::ExprPtr &x : l.args) out.push_back(x.get());
    return out;
  };
  auto shapeE = list(*slot[1], "shape"), strideE = list(*slot[2], "strides"), blockE = list(*slot[3], "block_shape");
  if (!shapeE || !strideE || !blockE) return invalid();
  const size_t rank = shapeE->size();
  if (strideE->size() != rank || blockE->size() != rank) {
    error(e.loc, "a tensor descriptor's shape, strides and block_shape need one length each, not " +
                     std::to_string(rank) + ", " + std::to_string(strideE->size()) + " and " +
                     std::to_string(blockE->size()));
    return invalid();
  }
  TV d;
  d.k = TV::K::Desc;
  d.elems.push_back(base);
  // Sizes in i32 (an index tile's type), strides in i64 (their products
  // with an index pass 2^31 in large tensors).
  for (auto [exprs, k, what] : {std::tuple{&*shapeE, ScalarKind::I32, "shape"},
                                std::tuple{&*strideE, ScalarKind::I64, "strides"}})
    for (const ast::Expr *x : *exprs) {
      TV v = descriptorScalar(*x, k, std::string("the ") + what + " of a tensor descriptor");
      if (!v.ok()) return invalid();
      d.elems.push_back(v);
    }
  for (const ast::Expr *x : *blockE) {
    auto b = constInt(*x, genValue(*x), "a dimension of a descriptor's block_shape");
    if (!b) return invalid();
    d.block.push_back(*b);
  }
  if (!checkTileShape(d.block, slot[3]->loc)) return invalid();
  d.str = "zero";
  if (paddingE) {
    const bool isFloat = Type::scalar(base.type.elem.pointee().scalar).isFloat();
    if (paddingE->kind != ast::ExprKind::String || (paddingE->text != "zero" && paddingE->text != "nan")) {
      error(paddingE->loc, "the padding of a tensor descriptor is \"zero\" or \"nan\"");
      return invalid();
    }
    if (paddingE->text == "nan" && !isFloat) {
      error(paddingE->loc, "padding \"nan\" needs a float tensor, not " + base.type.elem.pointee().str());
      return invalid();
    }
    d.str = paddingE->text;
  }
  return d;
}

// load(d, [o0, o1, ..]) and store(d, [o0, o1, ..], value): the block whose
// first element is at (o0, o1, ..), elements outside [0, shape) filled with
// the padding on load and left alone on store.
TV IRGen::descriptorAccess(const ast::Expr &e) {
  const std::string &name = e.text;
  const bool store = name == "store";
  const size_t want = store ? 3 : 2;
  const std::string usage = store ? "store(d, [offsets], value)" : "load(d, [offsets])";
  bool named = false;
  for (const std::string &n : e.argNames) named = named || !n.empty();
  if (e.args.size() != want || named) {
    error(e.loc, quoted(name) + " through a tensor descriptor takes " + usage +
                     " (the descriptor masks the block's edges itself: no mask or other)");
    return invalid();
  }
  TV d = genExpr(*e.args[0]);
  if (!d.ok()) return invalid();
  if (d.k != TV::K::Desc) {
    error(e.args[0]->loc, quoted(name) + " with a list of offsets needs a tensor descriptor (make_tensor_descriptor), "
                                         "not " + typeName(d));
    return invalid();
  }
  const ast::Expr &offs = *e.args[1];
  const size_t rank = d.block.size();
  if (offs.kind != ast::ExprKind::List) {
    error(offs.loc, quoted(name) + " through a tensor descriptor takes its block's offsets as a list, as in " +
                        (store ? "store(d, [m0, n0], t)" : "load(d, [m0, n0])"));
    return invalid();
  }
  if (offs.args.size() != rank) {
    error(offs.loc, "a descriptor of rank " + std::to_string(rank) + " takes " + std::to_string(rank) +
                        " offsets, not " + std::to_string(offs.args.size()));
    return invalid();
  }
  const ast::Loc &loc = e.loc;
  // A store's value: a tile of the block's shape, or a scalar.
  TV v;
  if (store) {
    v = genValue(*e.args[2]);
    if (!v.ok()) return invalid();
    if (v.type.isPtr() || (v.type.isTile() && v.type.shape != d.block)) {
      error(e.args[2]->loc, "'store' through " + typeName(d) + " needs a tile of that shape (or a scalar), not " +
                                typeName(v));
      return invalid();
    }
  }
  if (d.onHost) {
    // One op the passes see whole: expand-descriptor-loads turns it into
    // the masked load or store below unless the tensor memory accelerator
    // takes it.
    std::vector<ir::Value *> operands;
    for (size_t i = 0; i < d.elems.size(); ++i) {
      const TV &x = d.elems[i];
      operands.push_back(coerce(x, i == 0 ? x.type : Type::scalar(i <= rank ? ScalarKind::I32 : ScalarKind::I64), loc));
    }
    for (size_t i = 0; i < rank; ++i) {
      TV o = descriptorScalar(*offs.args[i], ScalarKind::I32, "a descriptor's offset");
      if (!o.ok()) return invalid();
      operands.push_back(coerce(o, Type::scalar(ScalarKind::I32), loc));
    }
    const ScalarKind elem = d.elems[0].type.elem.pointee().scalar;
    const Type block = Type::tile({elem, false}, d.block);
    if (!store) return value(emit(OpKind::DescLoad, operands, block, loc));
    if (!checkWeakFits(v, elem, e.loc)) return invalid();
    operands.push_back(coerce(v, block, loc));
    builder_->setLoc(loc);
    builder_->create(OpKind::DescStore, operands, std::nullopt);
    TV none;
    none.k = TV::K::Void;
    return none;
  }
  TV offset, mask;
  for (size_t i = 0; i < rank; ++i) {
    TV o = descriptorScalar(*offs.args[i], ScalarKind::I32, "a descriptor's offset");
    if (!o.ok()) return invalid();
    // The block's indices along dim i, shaped [1, .., B_i, .., 1].
    ir::Value *range = emit(OpKind::Arange, {}, Type::tile({ScalarKind::I32, false}, {d.block[i]}), loc,
                            {{"start", int64_t{0}}, {"end", d.block[i]}});
    for (size_t j = 0; j < rank; ++j) {
      if (j == i) continue;
      std::vector<int64_t> s = range->type().shape;
      s.insert(s.begin() + int64_t(j), 1);
      range = emit(OpKind::ExpandDims, {range}, range->type().withShape(s), loc, {{"axis", int64_t(j)}});
    }
    TV index = binaryOp("+", o, value(range), loc);
    TV wide = value(coerce(index, index.type.withScalar(ScalarKind::I64), loc));
    TV term = binaryOp("*", wide, d.elems[1 + rank + i], loc);
    TV inside = binaryOp("&&", binaryOp(">=", index, constant(ConstValue::ofInt(0), ScalarKind::I32, true), loc),
                         binaryOp("<", index, d.elems[1 + i], loc), loc);
    offset = i ? binaryOp("+", offset, term, loc) : term;
    mask = i ? binaryOp("&&", mask, inside, loc) : inside;
    if (!offset.ok() || !mask.ok()) return invalid();
  }
  TV ptr = binaryOp("+", d.elems[0], offset, loc);
  if (!ptr.ok()) return invalid();
  if (!store) {
    const ScalarKind elem = d.elems[0].type.elem.pointee().scalar;
    TV other = d.str == "nan" ? constant(ConstValue::ofFloat(std::nan("")), elem, false)
                              : constant(ConstValue::ofInt(0), ScalarKind::I32, true);
    return loadCall(e, {ptr}, {{"mask", mask}, {"other", other}}, {});
  }
  return storeCall(e, {ptr, v}, {{"mask", mask}}, {});
}

}  // namespace tk::lang
