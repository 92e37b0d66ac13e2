// `tkc compile --emit cpp` (EmitCpp.h): plans each kernel's variants -- the
// const sets of -D or of tuning tables, times the integer specialisations --
// compiles them, and writes NAME.h (typed launchers, configs, load/unload),
// NAME_c.h (the same for C, default configs) and NAME.cpp (the bundles
// embedded as raw strings, the dispatch).
#include "EmitCpp.h"
#include "CppNames.h"
#include "EmitCppPlan.h"
#include "Depfile.h"
#include "LaunchSpec.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "backend/nvptx/Ptxas.h"
#include "ir/IR.h"
#include "ir/Parser.h"
#include "runtime/CacheFiles.h"
#include "runtime/OutputFiles.h"

namespace tkc {

using tk::Error;

// The C++ type a generated launcher takes for a parameter of tk type `t`.
std::string cppType(const std::string &t, const std::string &kernel, const std::string &param) {
  static const std::map<std::string, std::string> scalars = {
#define TK_DTYPE(ID, IR_ID, NAME, IR_NAME, BYTES, CLASS, NPY_DESCR, NPY_NAME, CPP_TYPE, ...) {NAME, CPP_TYPE},
#include "tk/dtype.def"
  };
  const bool pointer = !t.empty() && t[0] == '*';
  // `**f16`: a device array of device pointers, `uint16_t **` in C++.
  if (pointer && t.size() > 1 && t[1] == '*') return cppType(t.substr(1), kernel, param) + " *";
  auto it = scalars.find(pointer ? t.substr(1) : t);
  if (it == scalars.end() || (!pointer && (t == "f16" || t == "bf16" || t == "f8e4m3" || t == "f8e5m2")))
    throw Error("kernel '" + kernel + "': parameter '" + param + "' of type " + t +
                " cannot be passed by a generated launcher yet");
  return it->second;
}

bool isIntegerType(const std::string &t) { return t == "i8" || t == "i16" || t == "i32" || t == "i64"; }

namespace {

// A C++ identifier from a file name: "my-kernels" -> "my_kernels".
std::string identifier(const std::string &name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

// The pointer parameters some store or atomic writes through: the def chain
// of each written address traced back to parameters. An address through a
// loop-carried value is not followed: every pointer counts as written then.
std::set<std::string> writtenPointers(const tk::Bundle &b) {
  std::string error;
  auto module = tk::ir::parseModule(b.tir, b.kernel + ".tir", error);
  tk::ir::Function *fn = module ? module->lookup(b.kernel) : nullptr;
  std::set<std::string> all, out;
  for (const tk::KernelParam &p : b.launchParams())
    if (p.type[0] == '*') all.insert(p.name);
  if (!fn) return all;
  for (tk::ir::Op *op : fn->walk()) {
    if (!op->is(tk::ir::OpKind::Store) && !op->is(tk::ir::OpKind::AtomicRmw) && !op->is(tk::ir::OpKind::AtomicCas))
      continue;
    std::vector<tk::ir::Value *> work = {op->operand(0)};
    std::set<tk::ir::Value *> seen;
    while (!work.empty()) {
      tk::ir::Value *v = work.back();
      work.pop_back();
      if (!seen.insert(v).second) continue;
      if (tk::ir::Op *def = v->definingOp()) {
        for (tk::ir::Value *o : def->operands()) work.push_back(o);
      } else if (v->ownerBlock() == &fn->body && v->argIndex() >= 0 && size_t(v->argIndex()) < fn->params.size()) {
        out.insert(fn->params[v->argIndex()].name);
      } else {
        return all;
      }
    }
  }
  return out;
}

// NAME=VALUE -> (NAME, VALUE); tk::Error naming `flag` otherwise.
std::pair<std::string, std::string> splitDefine(const std::string &d, const char *flag) {
  size_t eq = d.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == d.size())
    throw Error(std::string(flag) + " expects NAME=VALUE, got '" + d + "'");
  return {d.substr(0, eq), d.substr(eq + 1)};
}

// The configs of `k`: its tuning tables' best configs, else every
// combination of the -D values that name its const parameters.
std::vector<Config> plannedConfigs(const KernelPlan &k, const EmitCppOptions &opts,
                                   const std::vector<std::pair<std::string, nlohmann::json>> &tables) {
  std::map<std::string, std::vector<std::string>> values;  // const name -> values, as given
  std::vector<std::string> order;
  for (const std::string &d : opts.defines) {
    auto [name, value] = splitDefine(d, "-D");
    bool isConst = std::any_of(k.params.begin(), k.params.end(), [&](auto &p) { return p.isConst && p.name == name; });
    if (!isConst) continue;
    if (!values.count(name)) order.push_back(name);
    auto &vs = values[name];
    if (std::find(vs.begin(), vs.end(), value) == vs.end()) vs.push_back(value);
  }
  std::vector<Config> out;
  for (const auto &[file, j] : tables) {
    if (j.value("kernel", "") != k.name) continue;
    const nlohmann::json &best = j.at("best");
    if (!best.is_object()) throw Error(file + ": the tuning table has no best config (a shard's table?)");
    Config c;
    c.numWarps = best.at("num_warps").get<int>();
    c.numStages = best.at("num_stages").get<int>();
    for (const auto &[name, vs] : values) c.consts[name] = vs.front();
    for (const auto &[name, v] : best.at("consts").items()) c.consts[name] = v.get<std::string>();
    c.key = j.at("key").get<std::map<std::string, std::string>>();
    out.push_back(c);
  }
  if (!out.empty()) {
    for (const auto &[name, vs] : values)
      if (vs.size() > 1)
        throw Error("kernel '" + k.name + "': give several -D values of " + name + " or tuning tables, not both");
    return out;
  }
  Config base;
  base.numWarps = opts.compile.numWarps;
  base.numStages = opts.compile.numStages;
  out.push_back(base);
  for (const std::string &name : order) {
    std::vector<Config> next;
    for (const Config &c : out)
      for (const std::string &v : values[name]) {
        Config n = c;
        n.consts[name] = v;
        next.push_back(n);
      }
    out = std::move(next);
  }
  return out;
}

// The integer facts each config is compiled for, most specialised first:
// every integer a multiple of 16; one of them 1 and the rest multiples of
// 16; nothing (the general variant, last, always applies).
std::vector<std::map<std::string, std::string>> factSets(const KernelPlan &k, const std::string &mode) {
  std::vector<std::string> ints;
  for (const tk::KernelParam &p : k.params)
    if (!p.isConst && isIntegerType(p.type)) ints.push_back(p.name);
  std::vector<std::map<std::string, std::string>> out;
  if (mode == "auto" && !ints.empty()) {
    std::map<std::string, std::string> all16;
    for (const std::string &n : ints) all16[n] = "16";
    out.push_back(all16);
    for (const std::string &n : ints) {
      auto one = all16;
      one[n] = "1";
      out.push_back(one);
    }
  }
  out.push_back({});
  return out;
}

uint64_t fnv1a(const std::string &s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex64(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v << "ull";
  return os.str();
}

using Tables = std::vector<std::pair<std::string, nlohmann::json>>;

// The `tkc tune --json` reports --tune-table names, each checked for the
// fields the launcher reads.
Tables readTuneTables(const std::vector<std::string> &files) {
  Tables tables;
  for (const std::string &file : files) {
    auto text = tk::cache::readFile(file);
    if (!text) throw Error("cannot read tuning table '" + file + "'");
    try {
      nlohmann::json j = nlohmann::json::parse(*text);
      j.at("kernel").get<std::string>();
      j.at("key").get<std::map<std::string, std::string>>();
      tables.push_back({file, j});
    } catch (const nlohmann::json::exception &e) {
      throw Error(file + ": not a tuning table from `tkc tune --json` (" + e.what() + ")");
    }
  }
  return tables;
}

// The kernels asked for, each with its configs and every (config, integer
// facts) variant compiled.
std::vector<KernelPlan> planKernels(const EmitCppOptions &opts, const tk::SourceFile &source, const Tables &tables,
                                    const std::string &lib, const std::string &base) {
  const auto declared = source.kernels();
  std::vector<std::string> wanted;
  for (const std::string &name : opts.kernels)
    if (!opts.skipMissing || std::any_of(declared.begin(), declared.end(), [&](auto &d) { return d.first == name; }))
      wanted.push_back(name);
  if (opts.kernels.empty())
    for (const auto &d : declared) wanted.push_back(d.first);
  if (wanted.empty()) throw Error(opts.file + ": defines none of the kernels asked for");
  std::vector<std::pair<std::string, std::vector<tk::KernelParam>>> compiled;
  for (const auto &d : declared)
    if (std::find(wanted.begin(), wanted.end(), d.first) != wanted.end()) compiled.push_back(d);
  tkc::checkDefineNames(compiled, opts.defines);
  checkCppNames(compiled, lib, base);
  std::vector<KernelPlan> plans;
  for (const std::string &name : wanted) {
    KernelPlan k;
    k.name = name;
    auto it = std::find_if(declared.begin(), declared.end(), [&](auto &d) { return d.first == name; });
    if (it == declared.end()) {
      std::string names;
      for (auto &d : declared) names += (names.empty() ? "" : ", ") + d.first;
      throw Error(opts.file + ": no kernel named '" + name + "' (kernels: " + names + ")");
    }
    if (std::count(wanted.begin(), wanted.end(), name) > 1) throw Error("-k " + name + " given twice");
    k.params = it->second;
    k.configs = plannedConfigs(k, opts, tables);
    const auto facts = factSets(k, opts.specialise);
    for (size_t c = 0; c < k.configs.size(); ++c)
      for (const auto &f : facts) {
        tk::CompileOptions co = opts.compile;
        co.defines = k.configs[c].consts;
        co.numWarps = k.configs[c].numWarps;
        co.numStages = k.configs[c].numStages;
        for (const auto &[param, fact] : f) co.assume[param] = fact == "1" ? 1 : 16;
        k.variants.push_back(Variant{c, f, source.compile(name, co)});
      }
    // Each config's consts as compiled, in canonical form (-D BLOCK=01024 or
    // 0x400 compiles 1024: the launcher must compare with 1024).
    for (const Variant &v : k.variants)
      for (const tk::KernelParam &p : v.bundle.params)
        if (p.isConst && k.configs[v.config].consts.count(p.name)) k.configs[v.config].consts[p.name] = p.value;
    k.written = writtenPointers(k.variants.front().bundle);
    plans.push_back(std::move(k));
  }
  return plans;
}

// Every variant's bundle (and, with ptxas, its cubin per arch) as arrays in
// `cpp`, their table rows in `table`; the number of variants.
size_t embedBundles(const std::vector<KernelPlan> &plans, const EmitCppOptions &opts, std::ostringstream &cpp,
                    std::string &table) {
  // The cubins: ptxas assembles each variant's PTX per arch, so a GPU of
  // that arch loads without the driver's JIT. Without ptxas the PTX alone
  // is embedded (and JIT-compiled once per process), as the comment says.
  const tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find(opts.compile.cudaHome);
  const bool cubins = opts.cubins && toolkit.hasPtxas() && opts.compile.emitPtx;
  cpp << (cubins ? "// Each variant's cubin per arch is embedded beside its PTX (ptxas " + toolkit.ptxas + ").\n\n"
                 : std::string("// No cubins embedded (") + (opts.cubins ? "no ptxas found" : "--no-cubin") +
                       "): GPUs JIT-compile the PTX on first load.\n\n");
  size_t n = 0;
  for (const KernelPlan &k : plans)
    for (const Variant &v : k.variants) {
      std::string facts;
      for (const auto &[p, f] : v.facts) facts += " " + p + (f == "1" ? " == 1" : " % 16 == 0");
      std::string consts;
      for (const auto &[c, value] : k.configs[v.config].consts) consts += c + "=" + value + ", ";
      cpp << "// " << k.name << ": " << cppComment(consts) << "num_warps=" << k.configs[v.config].numWarps
          << (facts.empty() ? "" : ";" + facts) << "\nconst char kBundle" << n
          << "[] = " << rawLiteral(v.bundle.toJson()) << ";\n";
      const std::string id = std::to_string(n);
      std::string cubinTable;
      if (cubins)
        for (const auto &[arch, ptx] : v.bundle.ptx) {
          tk::nvptx::PtxasInfo info;
          try {
            info = tk::nvptx::runPtxas(ptx, arch, toolkit);
          } catch (const tk::Error &e) {
            e.rethrowPrefixed("kernel '" + k.name + "': ptxas failed for " + arch + ": ");
          }
          const std::string name = "kCubin" + id + "_" + identifier(arch);
          cpp << "const unsigned char " << name << "[] = " << byteArray(info.cubin) << ";\n";
          cubinTable += "    {" + cppString(arch) + ", " + name + ", sizeof " + name + "},\n";
        }
      if (!cubinTable.empty()) {
        cpp << "const tk::aot::EmbeddedCubin kCubins" << id << "[] = {\n" << cubinTable << "};\n";
        table += "    {kBundle" + id + ", sizeof kBundle" + id + " - 1, kCubins" + id + ", sizeof kCubins" + id +
                 " / sizeof kCubins" + id + "[0]},\n";
      } else {
        table += "    {kBundle" + id + ", sizeof kBundle" + id + " - 1},\n";
      }
      ++n;
    }
  return n;
}

}  // namespace

void emitCpp(const EmitCppOptions &opts) {
  if (opts.output.empty() || opts.output == "-") throw Error("--emit cpp writes two files: give -o DIR/NAME");
  if (opts.specialise != "auto" && opts.specialise != "none")
    throw Error("--specialise expects auto or none, got '" + opts.specialise + "'");
  const std::filesystem::path out(opts.output);
  const std::string base = out.filename().string();
  const std::string lib = identifier(base);

  const Tables tables = readTuneTables(opts.tuneTables);
  const tk::SourceFile file(opts.file, opts.compile);  // read once, for every kernel and variant
  const std::vector<KernelPlan> plans = planKernels(opts, file, tables, lib, base);

  // The hash ties the header to the bundles its .cpp embeds.
  uint64_t hash = fnv1a("tk-emit-cpp-1");
  for (const KernelPlan &k : plans)
    for (const Variant &v : k.variants) hash = fnv1a(v.bundle.toJson(), hash);

  std::ostringstream h, cpp;
  const std::string source = cppComment(std::filesystem::path(opts.file).filename().string());
  h << "// Generated by `tkc compile --emit cpp` from " << source << ": do not edit (docs/aot.md).\n"
    << "// Needs tk::runtime; the sim too to run without a GPU.\n#pragma once\n\n#include <cstdint>\n\n#include "
       "\"tk/aot.h\"\n\n";
  h << "// The bundles " << base << ".cpp embeds; a header from other sources is refused at load.\n";
  h << "inline constexpr uint64_t " << lib << "_hash = " << hex64(hash) << ";\n";
  h << "namespace " << lib
    << "_detail {\ntk::Status load(tk::Stream s, uint64_t header);\nvoid unload(tk::Stream s);\n}\n";
  h << "// Loads every kernel of this file on the stream's device (launches do it on first use).\n";
  h << "inline tk::Status " << lib << "_load(tk::Stream s) { return " << lib << "_detail::load(s, " << lib
    << "_hash); }\n";
  h << "// Frees them there; no launch of this file may be running on that device.\n";
  h << "inline void " << lib << "_unload(tk::Stream s) { " << lib << "_detail::unload(s); }\n";

  std::ostringstream c;
  const std::string guard = "TK_GENERATED_" + lib + "_C_H";
  c << "/* Generated by `tkc compile --emit cpp` from " << source << ": do not edit (docs/aot.md).\n"
    << " * C launchers: TK_OK (0) on success, else a TK_ERROR_* code with *error set (tk/aot_c.h). */\n#ifndef " << guard << "\n#define "
    << guard << "\n\n#include \"tk/aot_c.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "int " << lib << "_load_c(tk_device *device, const char **error);\nvoid " << lib
    << "_unload_c(tk_device *device);\n";
  cpp << "// Generated by `tkc compile --emit cpp` from " << source << ": do not edit (docs/aot.md).\n"
      << "#include \"" << base << ".h\"\n#include \"" << base
      << "_c.h\"\n\n#include <algorithm>\n#include <cmath>\n#include <string>\n\nnamespace {\n\n";
  std::string table;
  const size_t n = embedBundles(plans, opts, cpp, table);
  cpp << "\nconst tk::aot::EmbeddedBundle kBundles[] = {\n" << table << "};\n\n";
  cpp << "tk::aot::Library &library() {\n  static tk::aot::Library lib(" << cppString(base) << ", " << hex64(hash)
      << ", kBundles, " << n << ");\n  return lib;\n}\n\n}  // namespace\n\n";
  cpp << "tk::Status " << lib << "_detail::load(tk::Stream s, uint64_t header) { return library().load(s, header); }\n";
  cpp << "void " << lib << "_detail::unload(tk::Stream s) { library().unload(s); }\n";
  cpp << "\nextern \"C\" int " << lib << "_load_c(tk_device *device, const char **error) {\n"
      << "  if (!device) return tk::aot::cStatus(tk::aot::nullHandle(" << cppString(base) << ", \"tk_device\"), error);\n"
      << "  return tk::aot::cStatus(" << lib << "_load(tk::aot::deviceOf(device)), error);\n}\n";
  cpp << "extern \"C\" void " << lib << "_unload_c(tk_device *device) {\n  if (device) " << lib
      << "_unload(tk::aot::deviceOf(device));\n}\n";
  size_t first = 0;
  for (const KernelPlan &k : plans) {
    writeKernel(k, lib, first, h, cpp, c);
    first += k.variants.size();
  }
  c << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";

  // All four files or none: a build must never see a new .h beside an old .cpp.
  const std::string hPath = opts.output + ".h", cppPath = opts.output + ".cpp", cPath = opts.output + "_c.h";
  tk::files::OutputSet outputs;
  outputs.add(hPath, h.str());
  outputs.add(cPath, c.str());
  outputs.add(cppPath, cpp.str());
  if (!opts.depfile.empty()) {
    // Every output depends on every input.
    std::set<std::string> deps;
    for (const std::string &f : file.files())
      deps.insert(std::filesystem::absolute(f).lexically_normal().string());
    for (const std::string &t : opts.tuneTables) deps.insert(std::filesystem::absolute(t).lexically_normal().string());
    outputs.add(opts.depfile, depfileText({hPath, cppPath, cPath}, {deps.begin(), deps.end()}));
  }
  std::string error;
  if (!outputs.commit(error)) throw Error(error);
}

}  // namespace tkc
