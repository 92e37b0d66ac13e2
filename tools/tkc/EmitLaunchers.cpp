// The launchers `tkc compile --emit cpp` writes for one kernel
// (EmitCppPlan.h): the header's config struct, select and typed launchers,
// the .cpp's select (nearest tuned key), dispatch over the compiled
// variants, and the C launchers.
#include "CppNames.h"
#include "EmitCppPlan.h"
#include "runtime/Descriptors.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tkc {

using tk::Error;

namespace {

// "BLOCK=256, num_warps=4" for a config's const struct fields.
std::string describe(const Config &c, const std::vector<const tk::KernelParam *> &fields) {
  std::string s;
  for (const tk::KernelParam *p : fields)
    s += p->name + "=" + (c.consts.count(p->name) ? c.consts.at(p->name) : p->value) + ", ";
  return s + "num_warps=" + std::to_string(c.numWarps);
}

// The value a config gives const `p` (its -D value or the kernel's default).
std::string constValue(const Variant &v, const tk::KernelParam &p) {
  for (const tk::KernelParam &q : v.bundle.params)
    if (q.isConst && q.name == p.name) return q.value;
  return p.value;
}

// The value config `c` gives field `p`: its -D value or the default.
std::string fieldValue(const Config &c, const tk::KernelParam &p) {
  return c.consts.count(p.name) ? c.consts.at(p.name) : p.value;
}

// What every part of a kernel's launchers names: the config struct's fields
// (integer and bool consts), the launch parameters, and their C++ spellings.
struct Launch {
  std::string cfg;  // the config struct: NAME_config
  std::vector<const tk::KernelParam *> fields, launch, scalars;
  std::string decls, names, scalarDecls, scalarNames;  // ", T a, T b" and ", a, b"; scalars alone, unprefixed
  std::string signature;                               // the kernel as tk writes it, for comments
  std::map<std::string, std::string> declOf;           // each launch parameter's C++ declaration
};

Launch launchOf(const KernelPlan &k) {
  Launch l;
  l.cfg = k.name + "_config";
  // The config struct: integer and bool consts, and num_warps.
  for (const tk::KernelParam &p : k.params)
    if (p.isConst && (isIntegerType(p.type) || p.type == "bool")) l.fields.push_back(&p);
  for (const tk::KernelParam &p : k.params) {
    if (!p.isConst || std::find(l.fields.begin(), l.fields.end(), &p) != l.fields.end()) continue;
    for (const Variant &v : k.variants)
      if (constValue(v, p) != constValue(k.variants.front(), p))
        throw Error("kernel '" + k.name + "': const parameter '" + p.name + "' of type " + p.type +
                    " differs between variants; a generated launcher dispatches on integer and bool consts only");
  }
  for (const tk::KernelParam &p : k.params)
    if (!p.isConst) {
      l.launch.push_back(&p);
      if (p.type[0] != '*' && !tk::detail::parseDescriptorType(p.type)) l.scalars.push_back(&p);
    }
  auto paramDecl = [&](const tk::KernelParam &p) {
    if (tk::detail::parseDescriptorType(p.type)) return "const tk::TensorDescriptor &" + p.name;
    std::string t = cppType(p.type, k.name, p.name);
    if (p.type[0] == '*') return (k.written.count(p.name) ? "" : "const ") + t + " *" + p.name;
    return t + " " + p.name;
  };
  for (const tk::KernelParam *p : l.launch) {
    l.declOf[p->name] = paramDecl(*p);
    l.decls += ", " + l.declOf[p->name];
    l.names += ", " + p->name;
  }
  for (const tk::KernelParam *p : l.scalars) {
    l.scalarDecls += (l.scalarDecls.empty() ? "" : ", ") + paramDecl(*p);
    l.scalarNames += (l.scalarNames.empty() ? "" : ", ") + p->name;
  }
  std::string &signature = l.signature;
  signature = k.name + "(";
  for (size_t i = 0; i < k.params.size(); ++i)
    signature += (i ? ", " : "") + std::string(k.params[i].isConst ? "const " : "") + k.params[i].name + ": " +
                 k.params[i].type +
                 (k.params[i].isConst && !k.params[i].value.empty() ? " = " + k.params[i].value : "");
  signature += ")";
  return l;
}

// The header: the config struct, NAME_select and the typed launchers.
void writeHeader(const KernelPlan &k, const std::string &lib, const Launch &l, std::ostream &h) {
  h << "\n// ---- " << cppComment(l.signature) << "\n";
  h << "// The consts and num_warps of one compiled variant.\nstruct " << l.cfg << " {\n";
  for (const tk::KernelParam *p : l.fields) h << "  " << cppType(p->type, k.name, p->name) << " " << p->name << ";\n";
  h << "  int num_warps;\n};\n";
  h << "// The config a launch with these arguments takes: "
    << (k.configs.front().key.empty() ? "the first compiled." : "the tuning table's entry of the nearest key values.")
    << "\n"
    << l.cfg << " " << k.name << "_select(" << l.scalarDecls << ");\n";
  h << "namespace " << lib << "_detail {\ntk::Status " << k.name
    << "(uint64_t tk_header, tk::Stream s, tk::Dim3 grid, const " << l.cfg << " &config" << l.decls << ");\n}\n";
  h << "// Launches the variant of `config` (a tk::Status error naming the kernel\n"
    << "// and the argument when one is wrong or none was compiled for it).\n";
  h << "inline tk::Status " << k.name << "(tk::Stream s, tk::Dim3 grid, const " << l.cfg << " &config" << l.decls
    << ") {\n  return " << lib << "_detail::" << k.name << "(" << lib << "_hash, s, grid, config" << l.names << ");\n}\n";
  h << "// Launches the selected config (" << k.name << "_select).\n";
  h << "inline tk::Status " << k.name << "(tk::Stream s, tk::Dim3 grid" << l.decls << ") {\n  return " << k.name
    << "(s, grid, " << k.name << "_select(" << l.scalarNames << ")" << l.names << ");\n}\n";
  // A CUDA program's own stream (CUstream, cudaStream_t) beside tk::Stream,
  // so the launch is ordered with the program's work (Device::borrowStream).
  h << "// The same two queued on a CUDA stream the program owns (a CUstream or cudaStream_t;\n"
    << "// null: the legacy default stream): they return once queued (docs/aot.md).\n";
  const std::string borrow = "  tk::Stream tk_s = device;\n  if (tk::Status tk_st = tk::aot::borrowStream(device, stream, "
                             "tk_s); !tk_st) return tk_st;\n  return " + k.name + "(tk_s, grid";
  h << "inline tk::Status " << k.name << "(tk::Device &device, void *stream, tk::Dim3 grid, const " << l.cfg
    << " &config" << l.decls << ") {\n" << borrow << ", config" << l.names << ");\n}\n";
  h << "inline tk::Status " << k.name << "(tk::Device &device, void *stream, tk::Dim3 grid" << l.decls << ") {\n"
    << borrow << l.names << ");\n}\n";
  h << "// The same with the grid computed from the selected config: gridOf(const " << l.cfg << " &) -> tk::Dim3.\n";
  h << "template <class GridOf>\ninline tk::Status " << k.name << "(tk::Stream s, GridOf &&gridOf" << l.decls
    << ") {\n  const " << l.cfg << " config = " << k.name << "_select(" << l.scalarNames << ");\n  return " << k.name
    << "(s, tk::Dim3(gridOf(config)), config" << l.names << ");\n}\n";
}

// The .cpp's NAME_select: the first config, or the tuning table's nearest key.
void writeSelect(const KernelPlan &k, const Launch &l, std::ostream &cpp) {
  cpp << "\n" << l.cfg << " " << k.name << "_select(" << l.scalarDecls << ") {\n";
  for (const tk::KernelParam *p : l.scalars) cpp << "  (void)" << p->name << ";\n";
  auto configInit = [&](const Config &c) {
    std::string s = l.cfg + "{";
    for (const tk::KernelParam *p : l.fields) s += fieldValue(c, *p) + ", ";
    return s + std::to_string(c.numWarps) + "}";
  };
  if (k.configs.front().key.empty()) {
    cpp << "  return " << configInit(k.configs.front()) << ";\n}\n";
  } else {
    // Nearest by summed |log2| distance of the key values: a size between two
    // tuned sizes takes the config of the closer one.
    cpp << "  auto tk_far = [](double a, double b) { return std::fabs(std::log2(std::max(std::fabs(a), 1.0)) - "
           "std::log2(std::max(std::fabs(b), 1.0))) + (a == b ? 0.0 : 1e-9); };\n";
    cpp << "  double tk_best = 1e300;\n  " << l.cfg << " tk_chosen = " << configInit(k.configs.front()) << ";\n";
    for (const Config &c : k.configs) {
      cpp << "  if (double tk_d = 0";
      for (const auto &[name, value] : c.key) {
        if (std::none_of(l.scalars.begin(), l.scalars.end(), [&](auto *p) { return p->name == name; }))
          throw Error("kernel '" + k.name + "': tuning key '" + name + "' is not a scalar launch argument");
        const std::string num = cppNumber(value, "kernel '" + k.name + "': tuning key " + name);
        cpp << " + tk_far(double(" << name << "), " << num << ")";
      }
      cpp << "; tk_d < tk_best) {\n    tk_best = tk_d;\n    tk_chosen = " << configInit(c) << ";\n  }\n";
    }
    cpp << "  return tk_chosen;\n}\n";
  }
}

// The .cpp's launcher: pointer checks, the variant of the config and the
// arguments' integer facts, the launch.
void writeDispatch(const KernelPlan &k, const std::string &lib, size_t firstBundle, const Launch &l, std::ostream &cpp) {
  std::string compiled;
  for (const Config &c : k.configs) compiled += (compiled.empty() ? "" : "; ") + describe(c, l.fields);
  cpp << "\ntk::Status " << lib << "_detail::" << k.name << "(uint64_t tk_header, tk::Stream s, tk::Dim3 grid, const "
      << l.cfg << " &config" << l.decls << ") {\n";
  // Pointer checks: the alignment of the first variant (every variant
  // assumes the same of its pointers).
  for (const tk::KernelParam *p : l.launch) {
    if (p->type[0] != '*') continue;
    cpp << "  if (!" << p->name << ") return tk::aot::nullPointer(" << cppString(k.name) << ", " << cppString(p->name) << ", "
        << cppString(p->type) << ");\n";
    int64_t align = 0;
    for (const tk::KernelParam &q : k.variants.front().bundle.params)
      if (q.name == p->name) align = q.align;
    if (align > 1)
      cpp << "  if (reinterpret_cast<uintptr_t>(" << p->name << ") % " << align << " != 0) return tk::aot::misaligned("
          << cppString(k.name) << ", " << cppString(p->name) << ", " << cppString(p->type) << ", " << p->name << ", " << align
          << ");\n";
  }
  // Facts: two bits per integer argument, 1: a multiple of 16, 2: equal to 1
  // (tk::integerFact's rule).
  std::vector<std::string> ints;
  for (const tk::KernelParam *p : l.scalars)
    if (isIntegerType(p->type)) ints.push_back(p->name);
  cpp << "  uint64_t tk_facts = 0;\n";
  for (size_t i = 0; i < ints.size() && i < 32; ++i)
    cpp << "  tk_facts |= uint64_t(" << ints[i] << " == 1 ? 2 : " << ints[i] << " % 16 == 0 ? 1 : 0) << " << 2 * i
        << ";\n";
  cpp << "  (void)tk_facts;\n  size_t tk_variant = 0;\n";
  for (size_t c = 0; c < k.configs.size(); ++c) {
    cpp << "  " << (c ? "else if (" : "if (");
    for (const tk::KernelParam *p : l.fields)
      cpp << "config." << p->name << " == " << fieldValue(k.configs[c], *p) << " && ";
    cpp << "config.num_warps == " << k.configs[c].numWarps << ") {\n";
    bool first = true;
    for (size_t vi = 0; vi < k.variants.size(); ++vi) {
      const Variant &var = k.variants[vi];
      if (var.config != c) continue;
      uint64_t mask = 0, want = 0;
      for (size_t i = 0; i < ints.size() && i < 32; ++i)
        if (auto f = var.facts.find(ints[i]); f != var.facts.end()) {
          mask |= uint64_t(3) << 2 * i;
          want |= uint64_t(f->second == "1" ? 2 : 1) << 2 * i;
        }
      if (mask == 0)
        cpp << "    " << (first ? "" : "else ") << "tk_variant = " << firstBundle + vi << ";\n";
      else
        cpp << "    " << (first ? "" : "else ") << "if ((tk_facts & " << mask << "ull) == " << want
            << "ull) tk_variant = " << firstBundle + vi << ";\n";
      first = false;
    }
    cpp << "  }\n";
  }
  cpp << "  else {\n    std::string tk_wanted;\n";
  for (const tk::KernelParam *p : l.fields)
    cpp << "    tk_wanted += \"" << p->name << "=\" + std::to_string(config." << p->name << ") + \", \";\n";
  cpp << "    tk_wanted += \"num_warps=\" + std::to_string(config.num_warps);\n    return tk::aot::noVariant("
      << cppString(k.name) << ", tk_wanted, " << cppString(compiled) << ");\n  }\n";
  std::string argList;
  size_t abiCount = 0;
  for (size_t i = 0; i < l.launch.size(); ++i) {
    const tk::KernelParam *p = l.launch[i];
    if (auto desc = tk::detail::parseDescriptorType(p->type)) {
      // Its 2N ABI scalars, checked against the chosen variant.
      const std::string slots = "tk_d" + std::to_string(i);
      cpp << "  uint64_t " << slots << "[" << 2 * desc->block.size() << "];\n  if (tk::Status tk_st = tk::aot::descriptorArgs("
          << "library(), s, tk_variant, " << cppString(k.name) << ", " << cppString(p->name) << ", " << p->name << ", "
          << slots << "); !tk_st) return tk_st;\n";
      for (size_t j = 0; j < 2 * desc->block.size(); ++j)
        argList += std::string(argList.empty() ? "" : ", ") + "&" + slots + "[" + std::to_string(j) + "]";
      abiCount += 2 * desc->block.size();
      continue;
    }
    ++abiCount;
    if (p->type[0] == '*') {
      cpp << "  const uint64_t tk_a" << i << " = reinterpret_cast<uintptr_t>(" << p->name << ");\n";
      argList += std::string(argList.empty() ? "" : ", ") + "&tk_a" + std::to_string(i);
    } else {
      argList += std::string(argList.empty() ? "" : ", ") + "&" + p->name;
    }
  }
  cpp << "  const void *tk_args[] = {" << (argList.empty() ? "nullptr" : argList) << "};\n";
  cpp << "  return library().launch(s, tk_header, " << cppString(k.name) << ", tk_variant, grid, tk_args, " << abiCount << ");\n}\n";
}

void writeCLaunchers(const KernelPlan &k, const Launch &l, std::ostream &cpp, std::ostream &c) {
  // C has no tk::TensorDescriptor: a descriptor comes as a const
  // tk_tensor_descriptor * and is converted before the C++ launcher runs.
  std::string decls, names, convert;
  for (const tk::KernelParam *p : l.launch) {
    if (!tk::detail::parseDescriptorType(p->type)) {
      decls += ", " + l.declOf.at(p->name);
      names += ", " + p->name;
      continue;
    }
    decls += ", const tk_tensor_descriptor *" + p->name;
    names += ", tk_" + p->name;
    convert += "  tk::TensorDescriptor tk_" + p->name + ";\n  if (tk::Status tk_st = tk::aot::descriptorOf(" + p->name + ", " +
               cppString(k.name) + ", " + cppString(p->name) + ", tk_" + p->name + "); !tk_st)\n    return tk::aot::cStatus(tk_st, error);\n";
  }
  // The C launcher: the selected config, the Status as its code + *error.
  c << "\n/* " << cppComment(l.signature) << ": the config " << k.name << "_select would choose. */\n";
  c << "int " << k.name << "_c(tk_device *device, tk_dim3 grid" << decls << ", const char **error);\n";
  cpp << "\nextern \"C\" int " << k.name << "_c(tk_device *device, tk_dim3 grid" << decls << ", const char **error) {\n"
      << "  if (!device) return tk::aot::cStatus(tk::aot::nullHandle(" << cppString(k.name) << ", \"tk_device\"), error);\n"
      << convert << "  return tk::aot::cStatus(" << k.name << "(tk::aot::deviceOf(device), tk::Dim3{grid.x, grid.y, grid.z}"
      << names << "), error);\n}\n";
  c << "/* The same queued on `stream` (tk_stream_create). */\n";
  c << "int " << k.name << "_c_stream(tk_stream *stream, tk_dim3 grid" << decls << ", const char **error);\n";
  cpp << "\nextern \"C\" int " << k.name << "_c_stream(tk_stream *stream, tk_dim3 grid" << decls
      << ", const char **error) {\n"
      << "  if (!stream) return tk::aot::cStatus(tk::aot::nullHandle(" << cppString(k.name) << ", \"tk_stream\"), error);\n"
      << convert << "  return tk::aot::cStatus(" << k.name << "(tk::aot::streamOf(stream), tk::Dim3{grid.x, grid.y, grid.z}"
      << names << "), error);\n}\n";
}

}  // namespace

void writeKernel(const KernelPlan &k, const std::string &lib, size_t firstBundle, std::ostream &h, std::ostream &cpp,
                 std::ostream &c) {
  const Launch l = launchOf(k);
  writeHeader(k, lib, l, h);
  writeSelect(k, l, cpp);
  writeDispatch(k, lib, firstBundle, l, cpp);
  writeCLaunchers(k, l, cpp, c);
}

}  // namespace tkc
