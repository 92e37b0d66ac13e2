// LaunchSpec: parse `--arg`/`--grid`, check them against a kernel's
// parameters, fill buffers reproducibly, evaluate the grid, write outputs.
// (-D and --assume: Defines.cpp.)
#include "LaunchSpec.h"

#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <set>

#include "Addresses.h"
#include "Npy.h"
#include "runtime/CacheFiles.h"
#include "runtime/Descriptors.h"
#include "tk/half.h"
#include "tk/jit.h"

namespace tkc {

using tk::lang::HostValue;

namespace {

// tk/dtype.def's names and classes: what a buffer's dtype may be.
enum class Class { Bool, Int, Float };
const std::pair<const char *, Class> kDtypes[] = {
#define TK_DTYPE(ID, IR_ID, NAME, IR_NAME, BYTES, CLASS, ...) {NAME, Class::CLASS},
#include "tk/dtype.def"
};
bool isA(const std::string &t, Class c) {
  for (const auto &[name, cls] : kDtypes)
    if (t == name) return cls == c;
  return false;
}
bool isFloatType(const std::string &t) { return isA(t, Class::Float); }
bool isIntType(const std::string &t) { return isA(t, Class::Int); }
std::string dtypeList() {
  std::string s;
  for (const auto &[name, cls] : kDtypes) s += (s.empty() ? "" : " ") + std::string(name);
  return s;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}


[[noreturn]] void argError(const std::string &text, const std::string &why) {
  throw tk::Error("--arg " + text + ": " + why);
}

// --- filling buffers --------------------------------------------------------

// splitmix64: tiny, and its output is fixed by its definition (the standard
// library's distributions are not, across implementations), so a seed gives
// the same inputs everywhere.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// Stores `v` as one element of `dtype` at `dst`. Integers wrap as a cast to
// the narrower type would.
void storeAs(const std::string &dtype, double v, char *dst) {
  auto put = [&](auto x) { std::memcpy(dst, &x, sizeof x); };
  auto wrapped = [&] { return static_cast<uint64_t>(static_cast<int64_t>(v)); };
  if (dtype == "f32")
    put(static_cast<float>(v));
  else if (dtype == "f64")
    put(v);
  else if (dtype == "f16")
    put(tk::doubleToHalfBits(v));
  else if (dtype == "bf16")
    put(tk::doubleToBf16Bits(v));
  else if (dtype == "f8e4m3")
    put(tk::doubleToFp8Bits(v, tk::kE4M3));
  else if (dtype == "f8e5m2")
    put(tk::doubleToFp8Bits(v, tk::kE5M2));
  else if (dtype == "i8")
    put(static_cast<uint8_t>(wrapped()));
  else if (dtype == "i16")
    put(static_cast<uint16_t>(wrapped()));
  else if (dtype == "i32")
    put(static_cast<uint32_t>(wrapped()));
  else if (dtype == "i64")
    put(wrapped());
  else
    put(static_cast<uint8_t>(v != 0));
}

// Significand bits of a float dtype: rand draws that many bits, so every
// value is exact in the dtype and none rounds up to 1.
int significandBits(const std::string &t) {
  return t == "f64" ? 53 : t == "f32" ? 24 : t == "f16" ? 11 : t == "f8e4m3" ? 4 : t == "f8e5m2" ? 3 : 8;  // bf16: 8
}

// --- scalars -----------------------------------------------------------------

// Checks a scalar literal against a parameter type and converts it to that
// type's launch argument.
tk::Arg scalarArg(const ArgSpec &a, const std::string &type, HostValue *converted) {
  const HostValue &v = a.scalar;
  const std::string lit = "'" + v.str() + "'";
  if (isIntType(type)) {
    if (v.kind != HostValue::Kind::Int)
      argError(a.text, "'" + a.name + "' is " + type + " and needs an integer literal, got " + lit);
    int bits = type == "i8" ? 8 : type == "i16" ? 16 : type == "i32" ? 32 : 64;
    int64_t lo = bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1)),
            hi = bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
    if (v.i < lo || v.i > hi)
      argError(a.text, v.str() + " does not fit " + type + " [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    if (converted) *converted = v;
    if (bits == 8) return static_cast<int8_t>(v.i);
    if (bits == 16) return static_cast<int16_t>(v.i);
    if (bits == 32) return static_cast<int32_t>(v.i);
    return v.i;
  }
  if (type == "f32" || type == "f64" || type == "f16" || type == "bf16") {
    if (v.kind == HostValue::Kind::Bool)
      argError(a.text, "'" + a.name + "' is " + type + " and needs a number, got " + lit);
    double d = v.kind == HostValue::Kind::Int ? static_cast<double>(v.i) : v.f;
    if (type == "f32" && std::isfinite(d) && std::fabs(d) > FLT_MAX) argError(a.text, v.str() + " does not fit f32");
    if (type == "f16" || type == "bf16") {
      // Rounded once to the parameter's type; a value past its range is an error, not inf.
      tk::Arg arg = type == "f16" ? tk::Arg(tk::Half(d)) : tk::Arg(tk::BFloat16(d));
      float r = type == "f16" ? std::get<tk::Half>(arg).value() : std::get<tk::BFloat16>(arg).value();
      if (std::isfinite(d) && !std::isfinite(r)) argError(a.text, v.str() + " does not fit " + type);
      if (converted) *converted = HostValue::ofFloat(r);
      return arg;
    }
    if (converted) *converted = HostValue::ofFloat(type == "f32" ? static_cast<double>(static_cast<float>(d)) : d);
    if (type == "f32") return static_cast<float>(d);
    return d;
  }
  if (type == "bool") {
    if (v.kind != HostValue::Kind::Bool)
      argError(a.text, "'" + a.name + "' is bool and needs true or false, got " + lit);
    if (converted) *converted = v;
    return v.i != 0;
  }
  argError(a.text, "'" + a.name + "' is " + type +
                       ": scalar parameters of this type cannot be passed (the launcher takes bool, i8, i16, i32, "
                       "i64, f16, bf16, f32, f64)");
}

// --- parsing -------------------------------------------------------------------

ArgSpec parseBuffer(ArgSpec a, const std::string &spec) {
  const std::string form =
      "expected DTYPE[COUNT]:INIT[>OUT.npy] with INIT one of rand randn zeros ones arange @FILE.npy addresses(BUF,...)";
  size_t lb = spec.find('[');
  size_t rb = spec.find(']', lb);
  if (rb == std::string::npos) argError(a.text, "unterminated '[': " + form);
  a.isBuffer = true;
  a.dtype = spec.substr(0, lb);
  if (scalarBytes(a.dtype) == 0)
    argError(a.text, "'" + a.dtype + "' is not a tk scalar type (" + dtypeList() + ")");
  std::string count = spec.substr(lb + 1, rb - lb - 1);
  // COUNT, or a shape D0xD1.. (row-major: a tensor descriptor's). COUNT *
  // element size must fit comfortably in memory sizes.
  auto positive = [](const std::string &n) {
    return !n.empty() && n.size() <= 15 && n.find_first_not_of("0123456789") == std::string::npos &&
           std::stoull(n) != 0;
  };
  if (count.find('x') == std::string::npos) {
    if (!positive(count)) argError(a.text, "COUNT must be a positive integer, got '" + count + "'");
    a.count = std::stoull(count);
  } else {
    a.count = 1;
    for (size_t start = 0; start <= count.size();) {
      const size_t x = std::min(count.find('x', start), count.size());
      const std::string d = count.substr(start, x - start);
      if (!positive(d) || a.dims.size() == 5)
        argError(a.text, "a shape is 2 to 5 positive sizes joined by 'x', as in f16[1024x512], got '" + count + "'");
      a.dims.push_back(std::stoull(d));
      if (a.count > (uint64_t{1} << 48) / a.dims.back()) argError(a.text, "shape " + count + " has too many elements");
      a.count *= a.dims.back();
      start = x + 1;
    }
  }
  if (rb + 1 >= spec.size() || spec[rb + 1] != ':') argError(a.text, "no ':INIT' after ']': " + form);
  std::string init = spec.substr(rb + 2);
  if (size_t gt = init.find('>'); gt != std::string::npos) {
    a.outFile = init.substr(gt + 1);
    init = init.substr(0, gt);
    if (a.outFile.empty()) argError(a.text, "'>' needs a file name to write the buffer to");
  }
  static const std::pair<const char *, Fill> fills[] = {{"rand", Fill::Rand},
                                                        {"randn", Fill::Randn},
                                                        {"zeros", Fill::Zeros},
                                                        {"ones", Fill::Ones},
                                                        {"arange", Fill::Arange}};
  bool known = false;
  for (auto &[name, f] : fills)
    if (init == name) a.fill = f, known = true;
  if (!known) known = parseAddresses(a, init);
  if (!known && init.size() > 1 && init[0] == '@') {
    a.fill = Fill::File;
    a.inFile = init.substr(1);
    known = true;
  }
  if (!known) argError(a.text, "unknown INIT '" + init + "': " + form);
  if (a.fill == Fill::Randn && !isFloatType(a.dtype)) argError(a.text, "randn needs a float dtype, not " + a.dtype);
  if (a.fill == Fill::Arange && a.dtype == "bool") argError(a.text, "arange needs a numeric dtype, not bool");
  return a;
}

// The grid text split at its top-level commas (those inside parentheses
// separate call arguments).
std::vector<std::string> splitGrid(const std::string &grid) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : grid) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.emplace_back();
      continue;
    }
    parts.back() += c;
  }
  return parts;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

LaunchSpec LaunchSpec::parse(const std::vector<std::string> &args, const std::string &grid, uint64_t seed) {
  LaunchSpec s;
  s.seed = seed;
  std::set<std::string> outs;
  for (const std::string &text : args) {
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0) throw tk::Error("--arg expects NAME=SPEC, got '" + text + "'");
    ArgSpec a;
    a.name = text.substr(0, eq);
    a.text = text;
    std::string spec = text.substr(eq + 1);
    if (!isIdentifier(a.name)) argError(text, "'" + a.name + "' is not a parameter name");
    if (const ArgSpec *prev = s.find(a.name))
      throw tk::Error("--arg '" + a.name + "' is given twice ('" + prev->text + "' and '" + text + "')");
    if (spec.empty())
      argError(text, "empty SPEC: expected a scalar literal (98432, 1e-5, true) or a buffer DTYPE[COUNT]:INIT");
    if (spec.find('[') != std::string::npos) {
      a = parseBuffer(a, spec);
      if (!a.outFile.empty() && !outs.insert(a.outFile).second)
        argError(text, "another buffer already writes '" + a.outFile + "'");
    } else {
      std::optional<HostValue> v = HostValue::parseLiteral(spec);
      if (!v)
        argError(text, "'" + spec +
                           "' is neither a scalar literal (an integer, a float, true or false) nor a buffer "
                           "DTYPE[COUNT]:INIT");
      a.scalar = *v;
      s.scalars[a.name] = *v;
    }
    s.args.push_back(a);
  }

  std::vector<std::string> parts = splitGrid(grid);
  if (parts.size() > 3)
    throw tk::Error("--grid '" + grid + "' has " + std::to_string(parts.size()) + " dimensions; at most 3 (x,y,z)");
  for (std::string &p : parts) {
    p = trim(p);
    if (p.empty())
      throw tk::Error("--grid '" + grid + "': empty expression (expected 1 to 3 comma-separated expressions)");
    std::string error;
    std::unique_ptr<tk::lang::HostExpr> e = tk::lang::HostExpr::parse(p, "--grid", error);
    if (!e) {
      while (!error.empty() && error.back() == '\n') error.pop_back();
      throw tk::Error("--grid expression '" + p + "' does not parse:\n" + error);
    }
    s.gridTexts.push_back(p);
    s.gridExprs.push_back(std::move(e));
  }
  return s;
}

const ArgSpec *LaunchSpec::find(const std::string &name) const {
  for (const ArgSpec &a : args)
    if (a.name == name) return &a;
  return nullptr;
}

void LaunchSpec::check(const std::string &kernel, const std::vector<tk::KernelParam> &params) const {
  const std::string sig = signature(kernel, params);
  auto paramOf = [&](const std::string &name) -> const tk::KernelParam * {
    for (const tk::KernelParam &p : params)
      if (p.name == name) return &p;
    return nullptr;
  };
  for (const ArgSpec &a : args) {
    const tk::KernelParam *p = paramOf(a.name);
    if (!p && a.isBuffer && addressed(*this, a.name)) continue;  // a buffer only an addresses(...) passes
    if (!p) argError(a.text, "kernel '" + kernel + "' has no parameter '" + a.name + "'; it is " + sig);
    if (p->isConst)
      argError(a.text, "'" + a.name + "' is a const parameter of '" + kernel + "': set it with -D " + a.name +
                           "=VALUE, not --arg");
    if (auto desc = tk::detail::parseDescriptorType(p->type)) {
      const std::string want = desc->elem + "[" + std::string(desc->block.size() == 1 ? "N" : "D0") +
                               (desc->block.size() > 1 ? "x..." : "") + "]:INIT";
      if (!a.isBuffer || a.dtype != desc->elem)
        argError(a.text, "'" + a.name + "' is a tensor descriptor (" + p->type + ") and needs a buffer with its shape, " +
                             want + " (row-major)");
      if (std::max<size_t>(a.dims.size(), 1) != desc->block.size())
        argError(a.text, "'" + a.name + "' is a descriptor of rank " + std::to_string(desc->block.size()) +
                             " and needs a shape of that many sizes, " + want);
      continue;
    }
    if (p->type[0] == '*') {
      std::string elem = p->type.substr(1);
      // A `**T` parameter is a buffer of addresses: i64 on the host side.
      const bool addrs = elem[0] == '*';
      if (addrs) elem = "i64";
      if (!a.isBuffer || (addrs && a.dtype != elem))
        argError(a.text, "'" + a.name + "' is a pointer (" + p->type + ") and needs a buffer " + elem +
                             (addrs ? "[COUNT]:addresses(BUF,...) of buffer addresses" : "[COUNT]:INIT"));
      if (a.dtype != elem)
        argError(a.text, "'" + a.name + "' is " + p->type + " and needs a " + elem + " buffer, got " + a.dtype + "[" +
                             std::to_string(a.count) + "]");
    } else {
      if (a.isBuffer)
        argError(a.text, "'" + a.name + "' is a scalar (" + p->type + ") and needs a literal, not a buffer");
      scalarArg(a, p->type, nullptr);
    }
  }
  std::string missing;
  for (const tk::KernelParam &p : params)
    if (!p.isConst && !find(p.name)) missing += (missing.empty() ? "" : ", ") + p.name + " (" + p.type + ")";
  if (!missing.empty()) throw tk::Error("missing --arg for " + missing + "; the kernel is " + sig);
  checkAddresses(*this);

  // The grid may name scalar args and consts; anything else would fail only
  // after compiling, so say it now.
  std::string usable;
  for (const tk::KernelParam &p : params)
    if (p.isConst || isScalarParam(p)) usable += (usable.empty() ? "" : ", ") + p.name;
  for (size_t i = 0; i < gridExprs.size(); ++i)
    for (const std::string &n : gridExprs[i]->names()) {
      const tk::KernelParam *p = paramOf(n);
      if (p && isScalarParam(*p)) continue;
      throw tk::Error("--grid expression '" + gridTexts[i] + "': '" + n + "' is " +
                      (p ? (p->type[0] == '*' ? "a buffer" : "a tensor descriptor") : "not a parameter of '" + kernel + "'") +
                      "; the grid can use the scalar args and consts: " + usable);
    }
  auto kindOf = [&](const std::string &name) -> std::optional<HostValue::Kind> {
    if (const ArgSpec *a = find(name)) return a->scalar.kind;
    const tk::KernelParam *p = paramOf(name);
    std::optional<HostValue> v = p ? HostValue::parseLiteral(p->value) : std::nullopt;
    return v ? std::optional(v->kind) : std::nullopt;
  };
  for (size_t i = 0; i < gridExprs.size(); ++i) {
    HostValue::Kind k;
    try {
      k = gridExprs[i]->check(kindOf);
    } catch (const tk::HostExprError &e) {
      e.rethrowPrefixed("--grid expression '" + gridTexts[i] + "': ");
    }
    if (k != HostValue::Kind::Int)
      throw tk::Error("--grid expression '" + gridTexts[i] + "' gives a " + HostValue::kindName(k) +
                      ", not an integer number of blocks");
  }
}

std::vector<char> LaunchSpec::initialBytes(const ArgSpec &a) const {
  if (a.fill == Fill::File) {
    try {
      return readNpyAs(a.inFile, a.dtype, a.count);
    } catch (const tk::Error &e) {
      argError(a.text, e.what());
    }
  }
  const size_t elem = scalarBytes(a.dtype);
  std::vector<char> out(a.count * elem);
  Rng rng{seed ^ tk::cache::fnv1a64(a.name)};
  rng.next();
  for (uint64_t i = 0; i < a.count; ++i) {
    double v = 0;
    switch (a.fill) {
      case Fill::Zeros:
        v = 0;
        break;
      case Fill::Ones:
        v = 1;
        break;
      case Fill::Arange:
        v = static_cast<double>(i);
        break;
      case Fill::Rand:
        if (isFloatType(a.dtype)) {
          int bits = significandBits(a.dtype);
          v = std::ldexp(static_cast<double>(rng.next() >> (64 - bits)), 1 - bits) - 1.0;
        } else if (a.dtype == "bool") {
          v = static_cast<double>(rng.next() >> 63);
        } else {
          v = static_cast<double>(rng.next() % 200) - 100.0;
        }
        break;
      case Fill::Randn: {
        // Box-Muller; u1 in (0, 1] keeps the log finite.
        double u1 = std::ldexp(static_cast<double>((rng.next() >> 11) + 1), -53);
        double u2 = std::ldexp(static_cast<double>(rng.next() >> 11), -53);
        v = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        break;
      }
      case Fill::File:
      case Fill::Addresses:  // written once the buffers it names exist (fillAddresses)
        break;
    }
    storeAs(a.dtype, v, out.data() + i * elem);
  }
  return out;
}

LaunchSpec::Bound LaunchSpec::bind(tk::Device &dev, const std::vector<tk::KernelParam> &params) const {
  Bound b;
  for (const tk::KernelParam &p : params) {
    if (p.isConst) continue;
    const ArgSpec *a = find(p.name);
    if (!a) throw tk::Error("missing --arg for " + p.name + " (" + p.type + ")");
    if (isScalarParam(p)) {
      HostValue converted = a->scalar;
      b.args.push_back(scalarArg(*a, p.type, &converted));
      b.scalars[a->name] = converted;
      continue;
    }
    if (!a->isBuffer) argError(a->text, "'" + a->name + "' is a pointer (" + p.type + ") and needs a buffer");
    BoundBuffer bb{*a, {}, initialBytes(*a)};
    bb.buffer = dev.alloc(bb.initial.size());
    dev.copyToDevice(bb.buffer, bb.initial.data(), bb.initial.size());
    if (auto desc = tk::detail::parseDescriptorType(p.type)) {
      b.args.push_back(tk::TensorDescriptor::contiguous(bb.buffer, a->shape(), desc->block));
    } else {
      b.args.push_back(bb.buffer);
    }
    b.buffers.push_back(std::move(bb));
  }
  bindAddressed(dev, *this, params, b);
  return b;
}

void LaunchSpec::reset(tk::Device &dev, const Bound &b) const {
  for (const BoundBuffer &bb : b.buffers) dev.copyToDevice(bb.buffer, bb.initial.data(), bb.initial.size());
}

tk::Dim3 LaunchSpec::gridForConsts(const std::map<std::string, std::string> &consts) const {
  auto lookup = [&](const std::string &name) -> std::optional<HostValue> {
    if (name == tk::lang::kNumSmsName) return numSms > 0 ? std::optional(HostValue::ofInt(numSms)) : std::nullopt;
    if (auto s = scalars.find(name); s != scalars.end()) return s->second;
    if (const ArgSpec *a = find(name); a && a->isBuffer)
      throw tk::Error("'" + name + "' is a buffer; the grid can use the scalar args and consts");
    if (auto c = consts.find(name); c != consts.end()) return HostValue::parseLiteral(c->second);
    return std::nullopt;
  };
  static const char *const dims[] = {"x", "y", "z"};
  uint32_t out[3] = {1, 1, 1};
  for (size_t i = 0; i < gridExprs.size(); ++i) {
    const std::string what = "--grid expression '" + gridTexts[i] + "'";
    HostValue v = HostValue::ofInt(0);
    try {
      v = gridExprs[i]->eval(lookup);
    } catch (const tk::Error &e) {  // HostExprError, or the buffer error above
      e.rethrowPrefixed(what + ": ");
    }
    if (v.kind != HostValue::Kind::Int)
      throw tk::Error(what + " gives " + v.str() + ", not an integer number of blocks");
    const int64_t limit = i == 0 ? INT32_MAX : 65535;
    if (v.i < 1 || v.i > limit)
      throw tk::Error(what + " gives " + std::to_string(v.i) + " blocks in " + dims[i] + "; it must be in [1, " +
                      std::to_string(limit) + "]");
    out[i] = static_cast<uint32_t>(v.i);
  }
  return tk::Dim3{out[0], out[1], out[2]};
}

tk::Dim3 LaunchSpec::grid(const tk::Bundle &bundle) const {
  std::map<std::string, std::string> consts;
  for (const tk::KernelParam &p : bundle.params)
    if (p.isConst) consts[p.name] = p.value;
  return gridForConsts(consts);
}

void LaunchSpec::addOutputs(tk::Device &dev, const Bound &b, tk::files::OutputSet &out) const {
  for (const BoundBuffer &bb : b.buffers) {
    if (bb.spec.outFile.empty()) continue;
    std::vector<char> host(bb.initial.size());
    dev.copyToHost(host.data(), bb.buffer, host.size());
    out.add(bb.spec.outFile, npyBytes(bb.spec.dtype, host.data(), bb.spec.count, bb.spec.dims));
  }
}

std::map<std::string, int64_t> LaunchSpec::specialisation(const std::vector<tk::KernelParam> &params) const {
  std::vector<tk::Arg> args;  // integers as written, placeholders for the rest
  for (const tk::KernelParam &p : params) {
    if (p.isConst) continue;
    auto s = scalars.find(p.name);
    if (s != scalars.end() && s->second.kind == tk::lang::HostValue::Kind::Int) args.push_back(s->second.i);
    else args.push_back(tk::Buffer());
  }
  return tk::launchSpecialisation(params, args);
}

std::vector<tk::KernelParam> kernelParams(const tk::SourceFile &file, const std::string &kernel) {
  std::string names;
  for (const auto &[name, ps] : file.kernels()) {
    if (name == kernel) return ps;
    names += (names.empty() ? "" : ", ") + name;
  }
  throw tk::Error("no kernel named '" + kernel + "' in '" + file.path() + "' (kernels: " + names + ")");
}

CheckedLaunch checkLaunch(const std::string &file, const std::string &kernel, const std::vector<std::string> &args,
                          const std::string &grid, uint64_t seed,
                          const std::vector<std::string> &defineTexts, const tk::CompileOptions &importOpts) {
  // The command line's own mistakes first, before the file is read.
  LaunchSpec spec = LaunchSpec::parse(args, grid, seed);
  std::map<std::string, std::string> defines = parseDefines(defineTexts);
  CheckedLaunch c{std::move(spec), std::move(defines), tk::SourceFile(file, importOpts), {}};
  c.params = kernelParams(c.source, kernel);
  checkDefines(kernel, c.params, c.defines);
  // With the defines: a type const gives `x: *T` its type.
  c.spec.check(kernel, c.source.signature(kernel, c.defines));
  return c;
}

std::string assumedText(const tk::Bundle &bundle) {
  std::string out;
  for (const auto &[name, fact] : bundle.assumed)
    out += (out.empty() ? "" : ", ") + name + (fact == "1" ? " == 1" : " % " + fact + " == 0");
  return out;
}

// The const values as JSON: numbers and bools as such, anything else (a
// dtype const) as its text.
nlohmann::ordered_json constsJson(const tk::Bundle &bundle) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const tk::KernelParam &p : bundle.params) {
    if (!p.isConst) continue;
    std::optional<tk::lang::HostValue> v = tk::lang::HostValue::parseLiteral(p.value);
    if (!v)
      out[p.name] = p.value;
    else if (v->kind == tk::lang::HostValue::Kind::Int)
      out[p.name] = v->i;
    else if (v->kind == tk::lang::HostValue::Kind::Float)
      out[p.name] = v->f;
    else
      out[p.name] = v->i != 0;
  }
  return out;
}

}  // namespace tkc
