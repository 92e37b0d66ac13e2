// The compiler driver behind tk::Compiler: the front end (or a .tir file)
// and the stages of driver/Pipeline.cpp, PTX per arch packed into a Bundle
// through the compile cache, and every stage's text for `tkc compile --emit`.

#include "tk/compiler.h"
#include "tk/gpu.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "backend/nvptx/Codegen.h"
#include "backend/nvptx/Ptxas.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "lang/Frontend.h"
#include "lower/LowerToLLVM.h"
#include "runtime/CacheFiles.h"
#include "driver/CompileCache.h"
#include "driver/KernelLookup.h"
#include "driver/Pipeline.h"

namespace tk {

namespace {

// A file through the front end, kept for every question asked of it.
struct Loaded {
  lang::DiagnosticEngine diags;
  std::unique_ptr<lang::Frontend> fe;
  std::string path;
  size_t loadDiagnostics = 0;  // the load's warnings: each lowering starts from them
  std::mutex frontEnd;         // lowering through `fe` is one at a time
};

void load(Loaded &l, const std::string *source, const std::string &path, const CompileOptions &opts = {}) {
  l.fe = std::make_unique<lang::Frontend>(l.diags);
  l.fe->setImportRoots(detail::importRoots(opts));
  l.path = path;
  bool ok = source ? l.fe->loadSource(*source, path) : l.fe->loadFile(path);
  if (!ok || l.diags.hasErrors()) throw CompileError(l.diags.render());
  l.loadDiagnostics = l.diags.diagnostics().size();
}

// Holds the front end for one lowering, the diagnostics of an earlier one
// that failed dropped.
struct FrontEndTurn {
  explicit FrontEndTurn(Loaded &l) : lock(l.frontEnd) { l.diags.rewind(l.loadDiagnostics); }
  std::lock_guard<std::mutex> lock;
};

std::vector<KernelParam> toParams(const lang::KernelSig &sig) {
  std::vector<KernelParam> out;
  for (const lang::ParamSig &p : sig.params)
    out.push_back(KernelParam{p.name, p.type, p.isConst, p.constValue, p.align, p.noSpecialize, p.multipleOf});
  return out;
}

// Codegen options for `arch`; an unknown arch is a tk::Error listing the valid ones.
nvptx::CodegenOptions codegenOptions(const CompileOptions &opts, const std::string &arch) {
  nvptx::checkArch(arch);
  nvptx::CodegenOptions cg;
  cg.arch = arch;
  cg.useLibdevice = opts.useLibdevice;
  cg.toolkit = nvptx::Toolkit::find(opts.cudaHome);
  return cg;
}

// A kernel through the front end and the tile-IR pipeline.
struct Specialised {
  std::unique_ptr<ir::Module> module;
  ir::Function *fn = nullptr;
  lang::KernelSig sig;
};

// --print-after names a pass of the tile pipeline, or "all".
void checkPrintAfter(const CompileOptions &opts) {
  const std::vector<std::string> passes = Compiler::pipelinePasses();
  for (const std::string &p : opts.printAfter) {
    if (p == "all" || std::find(passes.begin(), passes.end(), p) != passes.end()) continue;
    std::string known;
    for (const std::string &q : passes) known += q + ", ";
    throw Error("--print-after: unknown pass '" + p + "' (the tile pipeline's passes: " + known + "or all)");
  }
}

// The kernel through the front end and, unless `runPipeline` is false (the
// tile IR before passes), the tile pipeline.
Specialised specialise(Loaded &l, const std::string &kernel, const CompileOptions &opts,
                       bool runPipeline = true) {
  detail::findKernel(l.fe->kernels(), l.path, kernel);
  if (!validNumWarps(opts.numWarps))
    throw Error("num_warps must be a power of two in [1, " + std::to_string(kMaxWarps) + "], got " +
                std::to_string(opts.numWarps));
  Specialised s;
  std::unique_ptr<ir::Function> fn;
  {
    FrontEndTurn turn(l);
    fn = pipeline::frontEnd(*l.fe, kernel, opts, s.sig);
  }
  s.module = std::make_unique<ir::Module>();
  s.fn = fn.get();
  s.module->functions.push_back(std::move(fn));
  if (runPipeline) pipeline::runTilePasses(*s.module, kernel, opts);
  return s;
}

// A file's only kernel, as nvcc compiles a file whole; a file of several
// must name one.
std::string onlyKernel(const Loaded &l) {
  const std::vector<lang::KernelSig> &kernels = l.fe->kernels();
  if (kernels.size() == 1) return kernels[0].name;
  std::string names;
  for (const lang::KernelSig &k : kernels) names += (names.empty() ? "" : ", ") + k.name;
  if (kernels.empty()) throw Error(l.path + " defines no kernel");
  throw Error(l.path + " defines " + std::to_string(kernels.size()) + " kernels (" + names + "): choose one by name");
}

bool isTirFile(const std::string &path) { return path.size() > 4 && path.compare(path.size() - 4, 4, ".tir") == 0; }

// True when every tile value has a layout: the tile pipeline already ran.
bool hasLayouts(ir::Function &fn) {
  for (ir::Op *op : fn.walk())
    for (ir::Value *v : op->results())
      if (v->type().isTile() && !v->type().layout) return false;
  return true;
}

// Kernel `kernel` of a printed tile-IR file, verified. IR without layouts
// (`--emit tir-raw`) runs the tile pipeline unless `runPipeline` is false; IR
// with them (`--emit tir`, a bundle's) is lowered as it is.
Specialised loadTir(const std::string &path, const std::string &kernel, const CompileOptions &opts, bool runPipeline) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error("cannot read '" + path + "': " + std::strerror(errno));
  std::string error;
  Specialised s;
  s.module = ir::parseModule(text.str(), path, error);
  if (!s.module) throw IRParseError(error + "\n");
  if (!ir::verifyModule(*s.module, error)) throw CompileError(path + ": error: invalid tile IR:\n" + error + "\n");
  s.fn = s.module->lookup(kernel);
  if (!s.fn) {
    std::string names;
    for (const auto &f : s.module->functions) names += (names.empty() ? "" : ", ") + f->name;
    throw Error("'" + path + "' has no kernel '" + kernel + "' (it has: " + names + ")");
  }
  if (!runPipeline) return s;
  if (!hasLayouts(*s.fn))
    pipeline::runTilePasses(*s.module, kernel, opts);
  else if (!opts.printAfter.empty())
    throw Error("--print-after: '" + path +
                "' has layouts already (the tile pipeline's output), so no pass runs on it");
  return s;
}

std::atomic<uint64_t> compiledCount{0}, cacheHitCount{0};

Bundle compileUncached(Loaded &l, const std::string &kernel, const CompileOptions &opts) {
  Specialised s = specialise(l, kernel, opts);
  Bundle b;
  b.kernel = kernel;
  b.source = l.path;
  b.params = toParams(s.sig);
  b.numWarps = opts.numWarps;
  b.numStages = opts.numStages;
  // The facts the front end compiled in (Frontend::lowerKernel): a launch's
  // value's, or @multiple_of's where that is stronger.
  for (const KernelParam &p : b.params) {
    auto value = opts.assume.find(p.name);
    std::string fact = value == opts.assume.end() ? "" : integerFact(value->second);
    if (p.multipleOf && fact != "1")
      fact = std::to_string(std::max<int64_t>(p.multipleOf, fact.empty() ? 0 : std::stoll(fact)));
    if (!fact.empty()) b.assumed[p.name] = fact;
  }
  b.tir = ir::printFunction(*s.fn, ir::PrintOptions{true});
  b.archs = opts.archs;
  for (const std::string &arch : opts.archs) {
    nvptx::CodegenOptions cg = codegenOptions(opts, arch);
    pipeline::Llvm llvm = pipeline::lowerForNvptx(*s.fn, cg);
    // Each arch's lowering may stage differently (wgmma on sm_90a): a launch
    // on any of them gets the most.
    b.sharedBytes = std::max(b.sharedBytes, llvm.lowered.sharedBytes);
    // The tensor maps a launch passes: the tile IR decides them, so every
    // arch (all TMA archs, or none takes any) agrees.
    if (arch == opts.archs.front()) {
      b.tensorMaps = llvm.lowered.tensorMaps;
      b.producerWarps = llvm.lowered.producerWarps;
    }
    else if (b.tensorMaps != llvm.lowered.tensorMaps)
      throw InternalError("kernel '" + kernel + "': " + arch + " takes other tensor maps than " + opts.archs.front());
    if (!opts.emitPtx) break;
    try {
      b.ptx[arch] = nvptx::emitPtx(*llvm.lowered.module, cg);
    } catch (const Error &e) {
      e.rethrowPrefixed("PTX generation for " + arch + " failed: ");
    }
    if (opts.ptxasResources && cg.toolkit.hasPtxas()) {
      try {
        nvptx::PtxasInfo info = nvptx::runPtxas(b.ptx[arch], arch, cg.toolkit);
        b.resources[arch] = Resources{info.registers, info.spillStoreBytes, info.spillLoadBytes, info.sharedBytes};
      } catch (const Error &e) {
        e.rethrowPrefixed("ptxas rejected the PTX for " + arch + ": ");
      }
    }
  }
  ++compiledCount;
  return b;
}

// Through the compile cache when it is on: the key hashes every loaded
// source, so an edit to an imported file misses as it must.
Bundle build(Loaded &l, const std::string &kernel, const CompileOptions &opts) {
  if (opts.archs.empty()) throw Error("no target architecture given");
  checkPrintAfter(opts);
  if (!opts.cache || !opts.printAfter.empty()) return compileUncached(l, kernel, opts);
  auto warn = cache::orStderr(opts.warn);
  const std::string dir = cacheDirectory(opts.cacheDir);
  if (!cache::trustedDirectory(dir, warn)) return compileUncached(l, kernel, opts);
  const std::string key = detail::compileKey(l.diags.sources(), kernel, opts, nvptx::Toolkit::find(opts.cudaHome).root);
  if (std::optional<Bundle> hit = detail::lookupBundle(dir, key, warn); hit && hit->kernel == kernel) {
    ++cacheHitCount;
    return std::move(*hit);
  }
  Bundle b = compileUncached(l, kernel, opts);
  detail::storeBundle(dir, key, b, warn);
  return b;
}

}  // namespace

Bundle Compiler::compileFile(const std::string &path, const std::string &kernel, const CompileOptions &opts) {
  return SourceFile(path, opts).compile(kernel, opts);
}

Bundle Compiler::compileSource(const std::string &source, const std::string &filename, const std::string &kernel,
                               const CompileOptions &opts) {
  return SourceFile(source, filename, opts).compile(kernel, opts);
}

std::string Compiler::emit(const std::string &path, const std::string &kernel, Stage stage,
                           const CompileOptions &opts, std::vector<std::string> *dependencies) {
  checkPrintAfter(opts);
  const bool tir = isTirFile(path);
  Loaded l;
  if (stage == Stage::Tokens || stage == Stage::Ast) {
    if (tir) throw Error("'" + path + "' is tile IR: it has no tokens or AST (emit tir-raw, tir, llvm, ... from it)");
    l.fe = std::make_unique<lang::Frontend>(l.diags);
    l.fe->setImportRoots(detail::importRoots(opts));
    l.fe->loadFile(path);
    std::string text = stage == Stage::Tokens ? l.fe->dumpTokens() : l.fe->dumpAst();
    if (l.diags.hasErrors()) throw CompileError(l.diags.render());
    if (dependencies) *dependencies = l.diags.sources().files();
    return text;
  }
  Specialised s;
  if (tir) {
    if (stage == Stage::Bundle)
      throw Error("--emit bundle needs the .tk source: a bundle carries the kernel's signature, which '" + path +
                  "' does not");
    s = loadTir(path, kernel, opts, stage != Stage::TirRaw);
    if (dependencies) *dependencies = {path};
  } else {
    load(l, nullptr, path, opts);
    if (dependencies) *dependencies = l.diags.sources().files();
    const std::string chosen = kernel.empty() ? onlyKernel(l) : kernel;
    if (stage == Stage::Bundle) return build(l, chosen, opts).toJson();
    s = specialise(l, chosen, opts, stage != Stage::TirRaw);
  }
  if (stage == Stage::TirRaw || stage == Stage::Tir) return ir::printFunction(*s.fn);
  const std::string arch = opts.archs.empty() ? "sm_80" : opts.archs.front();
  // The sim emulates the first arch, as the sim device lowers a bundle.
  return pipeline::compileTo(*s.fn, stage, codegenOptions(opts, arch));
}

std::vector<std::string> Compiler::pipelinePasses() {
  std::vector<std::string> out;
  for (const std::string &p : pipeline::tilePasses().flags())
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  return out;
}

std::vector<std::pair<std::string, std::string>> Compiler::passes() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ir::PassInfo &p : pipeline::passes()) out.push_back({p.flag, p.summary});
  return out;
}

std::vector<std::string> Compiler::pipelineOrder() { return pipeline::tilePasses().flags(); }

Compiler::CacheStats Compiler::cacheStats() { return CacheStats{compiledCount.load(), cacheHitCount.load()}; }

std::vector<KernelParam> Compiler::signature(const std::string &path, const std::string &kernel,
                                             const std::map<std::string, std::string> &defines,
                                             const CompileOptions &opts) {
  return SourceFile(path, opts).signature(kernel, defines);
}

std::vector<Compiler::PaddedTile> Compiler::paddedTiles(const std::string &path, const std::string &kernel,
                                                      const CompileOptions &opts) {
  return SourceFile(path, opts).paddedTiles(kernel, opts);
}

std::vector<std::string> Compiler::dependencies(const std::string &path, const CompileOptions &opts) {
  return SourceFile(path, opts).files();
}

std::vector<std::pair<std::string, std::vector<KernelParam>>> Compiler::kernels(const std::string &path,
                                                                                const CompileOptions &opts) {
  return SourceFile(path, opts).kernels();
}

struct SourceFile::Impl {
  Loaded l;
};

SourceFile::SourceFile(const std::string &path, const CompileOptions &opts) : impl_(std::make_unique<Impl>()) {
  load(impl_->l, nullptr, path, opts);
}

SourceFile::SourceFile(const std::string &source, const std::string &filename, const CompileOptions &opts)
    : impl_(std::make_unique<Impl>()) {
  load(impl_->l, &source, filename, opts);
}

SourceFile::~SourceFile() = default;
SourceFile::SourceFile(SourceFile &&) noexcept = default;
SourceFile &SourceFile::operator=(SourceFile &&) noexcept = default;

std::vector<lang::KernelSig> detail::SourceFileAccess::kernels(const SourceFile &file) {
  return file.impl_->l.fe->kernels();
}

const lang::SourceManager &detail::SourceFileAccess::sources(const SourceFile &file) {
  return file.impl_->l.diags.sources();
}

const std::string &SourceFile::path() const { return impl_->l.path; }

std::vector<std::string> SourceFile::files() const { return impl_->l.diags.sources().files(); }

std::vector<std::pair<std::string, std::vector<KernelParam>>> SourceFile::kernels() const {
  std::vector<std::pair<std::string, std::vector<KernelParam>>> out;
  for (const lang::KernelSig &k : impl_->l.fe->kernels()) out.push_back({k.name, toParams(k)});
  return out;
}

std::vector<KernelParam> SourceFile::signature(const std::string &kernel,
                                               const std::map<std::string, std::string> &defines) const {
  Loaded &l = impl_->l;
  detail::findKernel(l.fe->kernels(), l.path, kernel);
  FrontEndTurn turn(l);
  lang::KernelSig sig;
  if (!l.fe->lowerKernel(kernel, defines, 4, &sig) || l.diags.hasErrors()) throw CompileError(l.diags.render());
  return toParams(sig);
}

Bundle SourceFile::compile(const std::string &kernel, const CompileOptions &opts) const {
  return build(impl_->l, kernel, opts);
}

std::vector<Compiler::PaddedTile> SourceFile::paddedTiles(const std::string &kernel, const CompileOptions &opts) const {
  Specialised s = specialise(impl_->l, kernel, opts, /*runPipeline=*/false);
  std::vector<Compiler::PaddedTile> out;
  for (ir::Op *op : s.fn->walk())
    for (const ir::Value *v : op->results()) {
      Compiler::PaddedTile t{op->loc().str(), v->type().shape, ir::paddedShape(v->type().shape)};
      const bool seen = std::any_of(out.begin(), out.end(), [&](const Compiler::PaddedTile &o) {
        return o.loc == t.loc && o.shape == t.shape;
      });
      if (t.padded != t.shape && !seen) out.push_back(std::move(t));
    }
  return out;
}

}  // namespace tk
