// The tile IR's core data structures: types, the op table, blocks, builder.
#include "ir/IR.h"
#include "tk/error.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <stdexcept>

namespace tk::ir {

// ---------------------------------------------------------------- types

namespace {
enum class Class { Bool, Int, Float };  // tk/dtype.def's CLASS
struct ScalarInfo {
  const char *name;
  int bits;
  bool isFloat;
};
// tk/dtype.def's rows: i1 is one bit in the IR (a byte in memory).
constexpr ScalarInfo kScalars[kNumScalarKinds] = {
#define TK_DTYPE(ID, IR_ID, NAME, IR_NAME, BYTES, CLASS, ...) \
  {IR_NAME, Class::CLASS == Class::Bool ? 1 : 8 * (BYTES), Class::CLASS == Class::Float},
#include "tk/dtype.def"
};
const ScalarInfo &info(ScalarKind k) { return kScalars[static_cast<int>(k)]; }
}  // namespace

bool isFloat(ScalarKind k) { return info(k).isFloat; }
bool isInt(ScalarKind k) { return !isFloat(k); }
int bitWidth(ScalarKind k) { return info(k).bits; }

const char *scalarName(ScalarKind k) { return info(k).name; }

std::optional<ScalarKind> scalarFromName(const std::string &name) {
  for (int i = 0; i < kNumScalarKinds; ++i)
    if (name == kScalars[i].name) return static_cast<ScalarKind>(i);
  return std::nullopt;
}

std::string ElemType::str() const {
  return isPtr() ? "ptr<" + pointee().str() + ">" : scalarName(scalar);
}

int64_t ElemType::bytes() const { return isPtr() ? 8 : std::max(1, bitWidth(scalar) / 8); }

int64_t Type::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool Type::operator==(const Type &o) const {
  return elem == o.elem && shape == o.shape && sameLayout(layout, o.layout);
}

std::string Type::str() const {
  if (shape.empty()) return elem.str();
  std::string s = "tile<";
  for (int64_t d : shape) s += std::to_string(d) + "x";
  s += elem.str();
  if (layout) s += ", " + layout->str();
  return s + ">";
}

// ---------------------------------------------------------------- layouts

LayoutRef Layout::blocked(std::vector<int> spt, std::vector<int> tpw, std::vector<int> wpc,
                          std::vector<int> order) {
  auto l = std::make_shared<Layout>();
  l->kind = Kind::Blocked;
  l->sizePerThread = std::move(spt);
  l->threadsPerWarp = std::move(tpw);
  l->warpsPerCTA = std::move(wpc);
  l->order = std::move(order);
  return l;
}

LayoutRef Layout::slice(int dim, LayoutRef parent) {
  auto l = std::make_shared<Layout>();
  l->kind = Kind::Slice;
  l->dim = dim;
  l->parent = std::move(parent);
  return l;
}

int Layout::rank() const {
  return kind == Kind::Blocked ? static_cast<int>(sizePerThread.size()) : parent->rank() - 1;
}

int Layout::numWarps() const {
  if (kind == Kind::Slice) return parent->numWarps();
  int n = 1;
  for (int w : warpsPerCTA) n *= w;
  return n;
}

bool Layout::operator==(const Layout &o) const {
  if (kind != o.kind) return false;
  if (kind == Kind::Slice) return dim == o.dim && sameLayout(parent, o.parent);
  return sizePerThread == o.sizePerThread && threadsPerWarp == o.threadsPerWarp &&
         warpsPerCTA == o.warpsPerCTA && order == o.order;
}

static std::string intList(const std::vector<int> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string Layout::str() const {
  if (kind == Kind::Slice) return "#slice<" + std::to_string(dim) + ", " + parent->str() + ">";
  return "#blocked<" + intList(sizePerThread) + "," + intList(threadsPerWarp) + "," +
         intList(warpsPerCTA) + "," + intList(order) + ">";
}

bool sameLayout(const LayoutRef &a, const LayoutRef &b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return *a == *b;
}

// ---------------------------------------------------------------- ops

const std::vector<OpInfo> &allOps() {
  using namespace OpTrait;
  static const std::vector<OpInfo> ops = {
#define TK_OP(E, M, MIN, MAX, RES, TRAITS, DOC) \
  OpInfo{OpKind::E, M, MIN, MAX, RES, static_cast<unsigned>(TRAITS), DOC},
#include "ir/Ops.def"
  };
  return ops;
}

const OpInfo &opInfo(OpKind k) { return allOps()[static_cast<size_t>(k)]; }

std::optional<OpKind> opFromMnemonic(const std::string &m) {
  for (const OpInfo &info : allOps())
    if (m == info.mnemonic) return info.kind;
  return std::nullopt;
}

static std::string formatDouble(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, r.ptr);
  // Keep floats recognisable as floats in the text form.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string attrStr(const Attr &a) {
  if (auto *i = std::get_if<int64_t>(&a)) return std::to_string(*i);
  if (auto *d = std::get_if<double>(&a)) return formatDouble(*d);
  if (auto *s = std::get_if<std::string>(&a)) {
    std::string out = "\"";
    for (char c : *s) {
      // Control characters are escaped so the text stays on one line for the parser.
      if (c == '\n') out += "\\n";
      else if (c == '\t') out += "\\t";
      else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        static const char hex[] = "0123456789abcdef";
        out += "\\x";
        out += hex[(c >> 4) & 0xf];
        out += hex[c & 0xf];
      } else {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
    }
    return out + "\"";
  }
  const auto &v = std::get<std::vector<int64_t>>(a);
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

Op::Op(OpKind kind, std::vector<Value *> operands, std::optional<Type> resultType, Location loc)
    : kind_(kind), operands_(std::move(operands)), loc_(std::move(loc)) {
  linkOperands();
  if (resultType) addResult(std::move(*resultType));
}

Op::~Op() { dropAllReferences(); }

// ---------------------------------------------------------------- use-lists

void linkUse(Use &u) {
  if (!u.value) return;
  u.prev = nullptr;
  u.next = u.value->firstUse_;
  if (u.next) u.next->prev = &u;
  u.value->firstUse_ = &u;
}

void unlinkUse(Use &u) {
  if (!u.value) return;
  if (u.prev) u.prev->next = u.next;
  else u.value->firstUse_ = u.next;
  if (u.next) u.next->prev = u.prev;
  u.prev = u.next = nullptr;
  u.value = nullptr;
}

void Op::linkOperands() {
  uses_ = std::make_unique<Use[]>(operands_.size());
  for (size_t i = 0; i < operands_.size(); ++i) {
    uses_[i].user = this;
    uses_[i].index = i;
    uses_[i].value = operands_[i];
    linkUse(uses_[i]);
  }
}

void Op::unlinkOperands() {
  for (size_t i = 0; i < operands_.size(); ++i) unlinkUse(uses_[i]);
}

void Op::setOperand(size_t i, Value *v) {
  Use &u = uses_[i];
  operands_.at(i) = v;
  unlinkUse(u);
  u.value = v;
  linkUse(u);
}

void Op::setOperands(std::vector<Value *> ops) {
  unlinkOperands();
  operands_ = std::move(ops);
  linkOperands();
}

void Op::dropAllReferences() {
  unlinkOperands();
  for (auto &r : regions_)
    for (auto &op : r->ops()) op->dropAllReferences();
}

Value::~Value() {
  while (firstUse_) {
    Use *u = firstUse_;
    u->user->operands_[u->index] = nullptr;
    unlinkUse(*u);
  }
}

size_t Value::numUses() const {
  size_t n = 0;
  for (const Use *u = firstUse_; u; u = u->next) ++n;
  return n;
}

std::vector<std::pair<Op *, size_t>> Value::uses() const {
  std::vector<std::pair<Op *, size_t>> out;
  for (const Use *u = firstUse_; u; u = u->next) out.push_back({u->user, u->index});
  return out;
}

void Value::replaceAllUsesWith(Value *to) {
  if (to == this) return;
  while (firstUse_) firstUse_->user->setOperand(firstUse_->index, to);
}

Value *Op::addResult(Type t) {
  results_.push_back(std::make_unique<Value>(std::move(t), this, nullptr, static_cast<int>(results_.size())));
  return results_.back().get();
}

std::vector<Value *> Op::results() const {
  std::vector<Value *> out;
  for (const auto &r : results_) out.push_back(r.get());
  return out;
}

int64_t Op::intAttr(const std::string &k) const {
  auto it = attrs_.find(k);
  if (it == attrs_.end()) throw tk::InternalError("op '" + std::string(info().mnemonic) + "' has no attribute '" + k + "'");
  if (auto *i = std::get_if<int64_t>(&it->second)) return *i;
  throw tk::InternalError("attribute '" + k + "' is not an integer");
}

const std::vector<int64_t> &Op::intListAttr(const std::string &k) const {
  auto it = attrs_.find(k);
  if (it == attrs_.end()) throw tk::InternalError("op '" + std::string(info().mnemonic) + "' has no attribute '" + k + "'");
  if (auto *l = std::get_if<std::vector<int64_t>>(&it->second)) return *l;
  throw tk::InternalError("attribute '" + k + "' is not a list of integers");
}

double Op::floatAttr(const std::string &k) const {
  auto it = attrs_.find(k);
  if (it == attrs_.end()) throw tk::InternalError("op '" + std::string(info().mnemonic) + "' has no attribute '" + k + "'");
  if (auto *d = std::get_if<double>(&it->second)) return *d;
  if (auto *i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  throw tk::InternalError("attribute '" + k + "' is not a number");
}

const std::string &Op::strAttr(const std::string &k) const {
  auto it = attrs_.find(k);
  if (it == attrs_.end()) throw tk::InternalError("op '" + std::string(info().mnemonic) + "' has no attribute '" + k + "'");
  if (auto *s = std::get_if<std::string>(&it->second)) return *s;
  throw tk::InternalError("attribute '" + k + "' is not a string");
}

void Op::badEnumAttr(const std::string &k, const char *what) const {
  throw tk::InternalError("op '" + std::string(info().mnemonic) + "': attribute '" + k + "' is not a " + what);
}

std::string choicesText(std::span<const char *const> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + "\"" + names[i] + "\"";
  return out;
}

// ---------------------------------------------------------------- blocks

Block::~Block() {
  for (auto &op : ops_) op->dropAllReferences();
}

Value *Block::addArgument(Type t) {
  args_.push_back(std::make_unique<Value>(std::move(t), nullptr, this, static_cast<int>(args_.size())));
  return args_.back().get();
}

Block::iterator Block::insert(iterator pos, std::unique_ptr<Op> op) {
  op->setParentBlock(this);
  return ops_.insert(pos, std::move(op));
}

Block::iterator Block::find(const Op *op) {
  return std::find_if(ops_.begin(), ops_.end(), [&](const std::unique_ptr<Op> &o) { return o.get() == op; });
}

namespace {
int64_t intOr(const std::map<std::string, Attr> &attrs, const char *name, int64_t otherwise) {
  auto it = attrs.find(name);
  if (it != attrs.end())
    if (auto *i = std::get_if<int64_t>(&it->second)) return *i;
  return otherwise;
}
}  // namespace

int Function::numWarps() const { return static_cast<int>(intOr(attrs, "num_warps", 4)); }
int Function::numStages() const { return static_cast<int>(intOr(attrs, "num_stages", 1)); }
bool Function::wgmma() const { return intOr(attrs, "wgmma", 0) != 0; }
bool Function::tma() const { return intOr(attrs, "tma", 0) != 0; }
bool Function::rowWarps() const { return intOr(attrs, "row_warps", 0) != 0; }

Value *Function::addParam(const std::string &pname, Type t, int64_t align) {
  params.push_back(Param{pname, align});
  Value *v = body.addArgument(std::move(t));
  v->setNameHint(pname);
  return v;
}

static void walkBlock(Block &b, std::vector<Op *> &out) {
  for (auto &op : b.ops()) {
    out.push_back(op.get());
    for (auto &r : op->regions()) walkBlock(*r, out);
  }
}

std::vector<Op *> Function::walk() {
  std::vector<Op *> out;
  walkBlock(body, out);
  return out;
}

Function *Module::lookup(const std::string &n) const {
  for (auto &f : functions)
    if (f->name == n) return f.get();
  return nullptr;
}

std::vector<int> transOrder(const Op &trans) {
  std::vector<int> order;
  auto it = trans.attrs().find("order");
  if (it == trans.attrs().end()) {
    for (int d = trans.operand(0)->type().rank() - 1; d >= 0; --d) order.push_back(d);
    return order;
  }
  if (const auto *list = std::get_if<std::vector<int64_t>>(&it->second))
    for (int64_t d : *list) order.push_back(static_cast<int>(d));
  return order;
}

ScalarKind reduceResultElem(ReduceKind kind, ScalarKind in) {
  if (kind == ReduceKind::Argmax || kind == ReduceKind::Argmin) return ScalarKind::I32;
  if (kind != ReduceKind::Sum) return in;
  switch (in) {
    case ScalarKind::I1: case ScalarKind::I8: case ScalarKind::I16: return ScalarKind::I32;
    case ScalarKind::F16: case ScalarKind::BF16: case ScalarKind::F8E4M3: case ScalarKind::F8E5M2: return ScalarKind::F32;
    default: return in;
  }
}

void replaceAllUses(Function &, Value *from, Value *to) { from->replaceAllUsesWith(to); }

std::map<const Value *, std::vector<std::pair<Op *, size_t>>> computeUses(Function &fn) {
  std::map<const Value *, std::vector<std::pair<Op *, size_t>>> uses;
  for (Op *op : fn.walk())
    for (size_t i = 0; i < op->numOperands(); ++i) uses[op->operand(i)].push_back({op, i});
  return uses;
}

Op *Builder::create(OpKind kind, std::vector<Value *> operands, std::optional<Type> resultType,
                    std::map<std::string, Attr> attrs) {
  auto op = std::make_unique<Op>(kind, std::move(operands), std::move(resultType), loc_);
  op->attrs() = std::move(attrs);
  Op *raw = op.get();
  block_->insert(pos_, std::move(op));
  return raw;
}

}  // namespace tk::ir
