// Elements reordered, picked and concatenated, with Triton's names:
// `gather(src, index, axis)` (torch.gather inside a tile), `flip(x, dim)`,
// `sort(x, dim, descending)` (x a tile, or a tuple of tiles sorted by the
// first), `topk(x, k, dim)`, `interleave(a, b)` and `cat(a, b, dim)`. gather
// and sort are tile IR ops; the rest are built from them and from join,
// permute and reshape.
#include "lang/IRGen.h"

namespace tk::lang {

using ir::OpKind;
using ir::ScalarKind;
using ir::Type;

// A compile-time dim of a rank-`rank` tile (negative counts from the end);
// the last when `e` is null.
std::optional<int> IRGen::dimArg(const ast::Expr *e, int rank, const std::string &what) {
  if (!e) return rank - 1;
  auto d = constInt(*e, genValue(*e), what);
  if (!d) return std::nullopt;
  if (*d < -rank || *d >= rank) {
    error(e->loc, what + " " + std::to_string(*d) + " is out of range for a tile of rank " + std::to_string(rank));
    return std::nullopt;
  }
  return static_cast<int>(*d < 0 ? *d + rank : *d);
}

// The 1-D i32 tile `line` laid along `axis` of a tile of `shape`.
ir::Value *IRGen::alongAxis(ir::Value *line, const std::vector<int64_t> &shape, int axis, const ast::Loc &loc) {
  ir::Value *v = line;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d == axis) continue;
    std::vector<int64_t> s = v->type().shape;
    s.insert(s.begin() + d, 1);
    v = emit(OpKind::ExpandDims, {v}, v->type().withShape(s), loc, {{"axis", int64_t(d)}});
  }
  if (v->type().shape != shape) v = emit(OpKind::Broadcast, {v}, v->type().withShape(shape), loc);
  return v;
}

// grammar (a call): 'gather' '(' src ',' index ',' axis ')' | 'flip' '(' x [',' dim] ')'
//   | 'sort' '(' x [',' dim] [',' descending] ')' | 'topk' '(' x ',' k [',' dim] ')'
//   | 'interleave' '(' a ',' b ')' | 'cat' '(' a ',' b [',' dim] [',' can_reorder] ')'
// (each argument positional or by name)
TV IRGen::selectCall(const ast::Expr &e) {
  const std::string &name = e.text;
  static const std::map<std::string, std::vector<std::string>> params = {
      {"gather", {"src", "index", "axis"}},      {"flip", {"x", "dim"}},
      {"sort", {"x", "dim", "descending"}},      {"topk", {"x", "k", "dim"}},
      {"interleave", {"a", "b"}},                {"cat", {"input", "other", "dim", "can_reorder"}},
      {"histogram", {"input", "num_bins", "mask"}}};
  const std::vector<std::string> &names = params.at(name);
  std::string usage = name + "(";
  for (size_t i = 0; i < names.size(); ++i) usage += (i ? ", " : "") + names[i];
  usage += ")";
  std::vector<const ast::Expr *> slot;
  if (!namedArgs(e, names, usage, slot)) return invalid();
  const size_t required = name == "flip" || name == "sort" ? 1 : name == "gather" ? 3 : 2;
  for (size_t i = 0; i < required; ++i)
    if (!slot[i]) {
      error(e.loc, quoted(name) + " needs its argument " + quoted(names[i]) + ": " + usage);
      return invalid();
    }

  if (name == "histogram") return histogramCall(e, slot);
  // The tiles: sort and topk take a tuple of tiles too (sorted by the first).
  TV x = genExpr(*slot[0]);
  if (x.k != TV::K::Tuple) x = asValue(x, *slot[0]);
  if (!x.ok()) return invalid();
  const bool tuple = x.k == TV::K::Tuple;
  if (tuple && name != "sort" && name != "topk") {
    error(slot[0]->loc, quoted(name) + " takes a tile, not a tuple");
    return invalid();
  }
  std::vector<ir::Value *> tiles;
  for (const TV &t : tuple ? x.elems : std::vector<TV>{x}) {
    if (t.k == TV::K::Tuple || !t.type.isTile() || (t.type.isPtr() && (name == "sort" || name == "topk"))) {
      error(slot[0]->loc, quoted(name) + " takes " + (name == "sort" || name == "topk" ? "tiles of numbers" : "a tile") +
                              ", not " + (t.k == TV::K::Tuple ? std::string("a nested tuple") : typeName(t)));
      return invalid();
    }
    if (!tiles.empty() && t.type.shape != tiles[0]->type().shape) {
      error(slot[0]->loc, "the tiles " + quoted(name) + " sorts together must have one shape");
      return invalid();
    }
    tiles.push_back(coerce(t, t.type, e.loc));
  }
  const Type &xt = tiles[0]->type();
  const int rank = xt.rank();
  auto arange = [&](int64_t n) {
    return emit(OpKind::Arange, {}, Type::tile({ScalarKind::I32, false}, {n}), e.loc,
                {{"start", int64_t{0}}, {"end", n}});
  };
  auto gather = [&](ir::Value *src, ir::Value *index, int axis) {
    return emit(OpKind::Gather, {src, index}, Type{src->type().elem, index->type().shape, nullptr}, e.loc,
                {{"axis", int64_t(axis)}});
  };
  auto result = [&](const std::vector<ir::Value *> &vs) {
    if (!tuple) return value(vs[0]);
    TV t;
    t.k = TV::K::Tuple;
    for (ir::Value *v : vs) t.elems.push_back(value(v));
    return t;
  };

  if (name == "gather") {
    TV index = genValue(*slot[1]);
    if (!index.ok()) return invalid();
    if (!index.type.isTile() || !index.type.isInt() || index.type.isBool() || index.type.rank() != rank) {
      error(slot[1]->loc, "the index of 'gather' must be a tile of integers of rank " + std::to_string(rank) + ", not " +
                              typeName(index));
      return invalid();
    }
    auto axis = dimArg(slot[2], rank, "the axis of 'gather'");
    if (!axis) return invalid();
    for (int d = 0; d < rank; ++d)
      if (d != *axis && index.type.shape[d] != xt.shape[d]) {
        error(slot[1]->loc, "the index of 'gather' must have the tile's size in every dim but the axis (" + typeName(x) +
                                ", index " + typeName(index) + ")");
        return invalid();
      }
    return value(gather(tiles[0], coerce(index, index.type, e.loc), *axis));
  }
  if (name == "flip") {
    auto dim = dimArg(slot[1], rank, "the dim of 'flip'");
    if (!dim) return invalid();
    const int64_t n = xt.shape[*dim];
    ir::Value *last = emit(OpKind::Constant, {}, Type::tile({ScalarKind::I32, false}, {n}), e.loc, {{"value", n - 1}});
    ir::Value *rev = emit(OpKind::Sub, {last, arange(n)}, last->type(), e.loc);
    return value(gather(tiles[0], alongAxis(rev, xt.shape, *dim, e.loc), *dim));
  }
  if (name == "sort" || name == "topk") {
    auto dim = dimArg(name == "sort" ? slot[1] : slot[2], rank, "the dim of " + quoted(name));
    if (!dim) return invalid();
    std::optional<bool> descending = true;
    if (name == "sort") descending = constBool(slot[2], "descending");
    if (!descending) return invalid();
    builder_->setLoc(irLoc(e.loc));
    ir::Op *op = builder_->create(OpKind::Sort, tiles, std::nullopt,
                                  {{"axis", int64_t(*dim)}, {"descending", int64_t(*descending)}});
    for (ir::Value *t : tiles) op->addResult(Type{t->type().elem, t->type().shape, nullptr});
    std::vector<ir::Value *> sorted = op->results();
    if (name == "sort") return result(sorted);
    auto k = constInt(*slot[1], genValue(*slot[1]), "k of 'topk'");
    if (!k) return invalid();
    if (*k < 1 || *k > xt.shape[*dim]) {
      error(slot[1]->loc, "k of 'topk' must be in [1, " + std::to_string(xt.shape[*dim]) + "], not " + std::to_string(*k));
      return invalid();
    }
    std::vector<int64_t> shape = xt.shape;
    shape[*dim] = *k;
    if (!checkTileShape(shape, slot[1]->loc)) return invalid();
    ir::Value *first = alongAxis(arange(*k), shape, *dim, e.loc);
    for (ir::Value *&v : sorted) v = gather(v, first, *dim);
    return result(sorted);
  }

  // interleave and cat: two tiles of one shape and element.
  TV y = genValue(*slot[1]);
  if (!y.ok()) return invalid();
  if (!y.type.isTile() || y.type.shape != xt.shape || y.type.elem != xt.elem) {
    error(slot[1]->loc, quoted(name) + " needs two tiles of one shape and element, not " + typeName(x) + " and " +
                            typeName(y));
    return invalid();
  }
  std::vector<int64_t> shape = xt.shape;
  int dim = rank - 1;
  if (name == "cat") {
    auto d = dimArg(slot[2], rank, "the dim of 'cat'");
    if (!d) return invalid();
    dim = slot[2] ? *d : 0;
    if (slot[3] && !constBool(slot[3], "can_reorder")) return invalid();  // cat keeps the order either way
  }
  shape[dim] *= 2;
  if (!checkTileShape(shape, e.loc)) return invalid();
  TV joined = joinCall(e, x, y);  // [..., 2]: element (.., i, s) is a's (s = 0) or b's
  if (!joined.ok()) return invalid();
  ir::Value *v = joined.v;
  if (name == "cat") {
    // The pair axis just before `dim`, then merged with it row-major: a's
    // elements first, then b's.
    std::vector<int64_t> order, permuted;
    for (int d = 0; d < rank; ++d) {
      if (d == dim) order.push_back(rank);
      order.push_back(d);
    }
    for (int64_t o : order) permuted.push_back(v->type().shape[o]);
    v = emit(OpKind::Trans, {v}, v->type().withShape(permuted), e.loc, {{"order", order}});
  }
  return value(emit(OpKind::Reshape, {v}, v->type().withShape(shape), e.loc));
}

// histogram(input, num_bins, mask: m): Triton's tl.histogram, with bins of
// width 1 from 0; values outside them and masked-off elements count nowhere.
TV IRGen::histogramCall(const ast::Expr &e, const std::vector<const ast::Expr *> &slot) {
  TV x = genValue(*slot[0]);
  if (!x.ok()) return invalid();
  if (!x.type.isTile() || x.type.rank() != 1 || !x.type.isInt() || x.type.isBool() || x.type.isPtr()) {
    error(slot[0]->loc, "'histogram' counts a 1-D tile of integers, not " + typeName(x));
    return invalid();
  }
  auto bins = constInt(*slot[1], genValue(*slot[1]), "num_bins of 'histogram'");
  if (!bins) return invalid();
  if (*bins < 1 || !checkTileShape({*bins}, slot[1]->loc)) {
    if (*bins < 1) error(slot[1]->loc, "num_bins of 'histogram' must be at least 1, not " + std::to_string(*bins));
    return invalid();
  }
  std::vector<ir::Value *> operands = {coerce(x, x.type, e.loc)};
  if (slot[2]) {
    TV m = genValue(*slot[2]);
    if (!m.ok()) return invalid();
    if (!m.type.isBool() || (m.type.isTile() && m.type.shape != x.type.shape)) {
      error(slot[2]->loc, "the mask of 'histogram' must be a bool or a tile of bools of the input's shape, not " +
                              typeName(m));
      return invalid();
    }
    operands.push_back(coerce(m, x.type.withScalar(ScalarKind::I1), e.loc));
  }
  return value(emit(OpKind::Histogram, operands, Type::tile({ScalarKind::I32, false}, {*bins}), e.loc,
                    {{"bins", *bins}}));
}

}  // namespace tk::lang
