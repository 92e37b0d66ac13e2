// Tensor descriptors passed from the host, as Triton's host-side
// TensorDescriptor: a kernel parameter `a: desc<f16, [BM, BK]>` takes a
// tk::TensorDescriptor (base buffer, shape, strides, block shape) and is used
// as a descriptor made in the kernel is (`load(a, [m0, k0])`).
//
// The block shape is part of the type because a load's tile shape must be
// known when the kernel compiles (Triton reads it from the host object when
// it JIT-specialises); `desc<T, N>` (the rank alone) is refused with that
// spelling. The block follows TMA's box rules, so the same kernel moves
// through the tensor-memory accelerator unchanged when tk lowers it so: each
// dim at most 256, the inner dim a multiple of 16 bytes.
//
// At the ABI a descriptor is 2N scalars (docs/api.md): the base pointer
// (16-byte aligned), the N sizes as i32, and the strides of the outer N-1
// dims as i64 in elements, each a multiple of 16 bytes; the inner stride is
// 1 (TMA's rule), a literal here, so the block's rows are contiguous and
// wide without any --assume. The launcher checks every one of these rules.
#include "lang/DescriptorParams.h"

#include "lang/IRGen.h"

namespace tk::lang {

using ir::ScalarKind;
using ir::Type;

namespace {
constexpr size_t kMaxRank = 5;       // TMA's tensor rank limit
constexpr int64_t kMaxBoxDim = 256;  // TMA's box dimension limit
constexpr int64_t kInnerBytes = 16;

// An expression as the user wrote it, near enough for a signature: names,
// literals and arithmetic; anything else is "...".
std::string exprText(const ast::Expr &e) {
  switch (e.kind) {
    case ast::ExprKind::Int: return std::to_string(e.intValue);
    case ast::ExprKind::Name: return e.text;
    case ast::ExprKind::Binary: return exprText(*e.args[0]) + " " + e.text + " " + exprText(*e.args[1]);
    default: return "...";
  }
}

void namesIn(const ast::Expr &e, std::vector<std::string> &out) {
  if (e.kind == ast::ExprKind::Name) out.push_back(e.text);
  for (const ast::ExprPtr &a : e.args)
    if (a) namesIn(*a, out);
}
}  // namespace

std::string descriptorTypeText(const std::string &elem, const std::vector<std::string> &block) {
  std::string s = "desc<" + elem + ",[";
  for (size_t i = 0; i < block.size(); ++i) s += (i ? "," : "") + block[i];
  return s + "]>";
}

bool checkDescriptorDecl(const ast::Param &p, const std::set<std::string> &typeConsts, ParamSig &ps,
                         DiagnosticEngine &diags) {
  bool ok = true;
  auto fail = [&](const Location &l, const std::string &m) { diags.error(l, m); ok = false; };
  const std::string elem = p.type.str();
  std::vector<std::string> written;
  for (const ast::ExprPtr &b : p.descBlock) written.push_back(exprText(*b));
  ps.type = descriptorTypeText(elem, written);
  if (p.descBlock.empty()) {
    std::string dims;
    for (int64_t i = 0; i < std::min<int64_t>(std::max<int64_t>(p.descRank, 1), int64_t(kMaxRank)); ++i)
      dims += (i ? ", B" : "B") + std::to_string(i);
    fail(p.descLoc, "a descriptor parameter names its block shape, as in desc<" + elem + ", [" + dims +
                        "]>: the tiles its loads make have that shape, which the kernel needs when it compiles "
                        "(the host's tk::TensorDescriptor must give the same one)");
  } else if (p.descBlock.size() > kMaxRank) {
    fail(p.descLoc, "a tensor descriptor has 1 to " + std::to_string(kMaxRank) + " dims, not " +
                        std::to_string(p.descBlock.size()));
  }
  const auto kind = IRGen::scalarKind(p.type.name);
  if (p.type.isTuple() || p.type.ptrDepth || (!kind && !typeConsts.count(p.type.name)))
    fail(p.type.loc, "a descriptor's element type is a number type such as f16, or a type const, not '" + elem + "'");
  else if (kind && *kind == ScalarKind::I1)
    fail(p.type.loc, "a descriptor's element type is a number type such as f16, not bool (use i8)");
  if (p.defaultValue) fail(p.defaultValue->loc, "only const parameters can have a default value");
  return ok;
}

std::optional<std::vector<int64_t>> resolveDescriptorParam(const ast::Param &p,
                                                           const std::vector<ConstBinding> &consts,
                                                           const std::vector<std::string> &runtime, bool quietIfUnbound,
                                                           ParamSig &ps, DiagnosticEngine &diags,
                                                           const std::string &file, const FnTable *fns) {
  auto kind = IRGen::resolveType(p.type.name, consts);
  if (!kind) return std::nullopt;  // a type const without a value: the type stays as written
  std::vector<std::string> names;
  for (const ast::ExprPtr &b : p.descBlock) namesIn(*b, names);
  if (quietIfUnbound)
    for (const std::string &n : names) {
      bool bound = false, isRuntime = false;
      for (const ConstBinding &c : consts) bound = bound || c.name == n;
      for (const std::string &r : runtime) isRuntime = isRuntime || r == n;
      if (!bound && !isRuntime) return std::nullopt;  // a const with no default yet
    }
  IRGen gen(diags, file);
  gen.setFns(fns);
  auto block = gen.evalDescriptorBlock(p, *kind, consts, runtime);
  if (!block) return std::nullopt;
  std::vector<std::string> dims;
  for (int64_t b : *block) dims.push_back(std::to_string(b));
  ps.type = descriptorTypeText(typeText(*kind), dims);
  return block;
}

bool resolveDescriptorBlocks(const ast::Decl &d, const std::vector<ConstBinding> &consts, std::vector<ParamSig> &params,
                             DiagnosticEngine &diags, const std::string &file, const FnTable *fns,
                             std::map<std::string, std::vector<int64_t>> &blocks) {
  std::vector<std::string> runtime;
  for (const ast::Param &p : d.params)
    if (!p.isConst) runtime.push_back(p.name);
  for (size_t i = 0; i < d.params.size(); ++i) {
    if (!d.params[i].isDescriptor) continue;
    auto block = resolveDescriptorParam(d.params[i], consts, runtime, /*quietIfUnbound=*/false, params[i], diags, file,
                                        fns);
    if (!block) return false;
    blocks[d.params[i].name] = *block;
  }
  return true;
}

std::optional<std::vector<int64_t>> IRGen::evalDescriptorBlock(const ast::Param &p, ScalarKind elem,
                                                               const std::vector<ConstBinding> &consts,
                                                               const std::vector<std::string> &runtimeParams) {
  ir::Function scratch;
  beginConstEval(scratch, consts, runtimeParams, "the block shape of descriptor " + quoted(p.name));
  std::vector<int64_t> block;
  bool ok = true;
  for (const ast::ExprPtr &x : p.descBlock) {
    auto b = constInt(*x, genValue(*x), "a dimension of a descriptor's block shape");
    if (b && *b < 1) {
      error(x->loc, "a descriptor's block dims are at least 1, not " + std::to_string(*b));
      b.reset();
    }
    if (!b) {
      ok = false;
      break;
    }
    if (*b > kMaxBoxDim) {
      error(x->loc, "a descriptor's block dims are at most " + std::to_string(kMaxBoxDim) + " (TMA's box limit), not " +
                        std::to_string(*b));
      ok = false;
      break;
    }
    block.push_back(*b);
  }
  ok = ok && checkTileShape(block, p.descLoc);
  const int64_t bytes = Type::scalar(elem).elem.bytes();
  if (ok && (block.back() * bytes) % kInnerBytes != 0) {
    error(p.descBlock.back()->loc, "a descriptor's inner block dim spans a multiple of " + std::to_string(kInnerBytes) +
                                       " bytes (TMA's rule): a multiple of " + std::to_string(kInnerBytes / bytes) +
                                       " " + typeText(elem) + " elements, not " + std::to_string(block.back()));
    ok = false;
  }
  endConstEval();
  if (!ok) return std::nullopt;
  return block;
}

// The parameter's 2N ABI scalars (see the top of the file), bound to `p`'s
// name as a descriptor that load/store(d, [offsets]) take.
void IRGen::bindDescriptorParam(const ast::Param &p, ScalarKind elem) {
  const std::vector<int64_t> &block = descBlocks_.at(p.name);
  const size_t rank = block.size();
  const int64_t bytes = Type::scalar(elem).elem.bytes();
  TV d;
  d.k = TV::K::Desc;
  d.block = block;
  d.str = "zero";
  d.onHost = true;
  ir::Value *base = fn_->addParam(p.name, Type{ir::ElemType{elem, 1}, {}, nullptr}, 16);
  base->setNameHint(p.name);
  d.elems.push_back(value(base));
  for (size_t i = 0; i < rank; ++i) {
    const std::string name = p.name + ".shape" + std::to_string(i);
    ir::Value *v = fn_->addParam(name, Type::scalar(ScalarKind::I32), 0);
    v->setNameHint(name);
    d.elems.push_back(value(v));
  }
  for (size_t i = 0; i + 1 < rank; ++i) {
    const std::string name = p.name + ".stride" + std::to_string(i);
    ir::Value *v = fn_->addParam(name, Type::scalar(ScalarKind::I64), 0);
    v->setNameHint(name);
    if (bytes < 16) fn_->params.back().divisibility = 16 / bytes;
    d.elems.push_back(value(v));
  }
  d.elems.push_back(constant(ConstValue::ofInt(1), ScalarKind::I64, false));
  bind(p.name, d);
}

}  // namespace tk::lang
