// emitPtx: libdevice link, the O3 pipeline and NVPTX code generation. The
// NVPTX TargetMachine is the one source of the triple, data layout and PTX
// version (+ptx80), so nothing edits the PTX text afterwards.
#include "backend/nvptx/Codegen.h"
#include "tk/error.h"

#include "backend/nvptx/AccessPredicates.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace tk::nvptx {

using namespace llvm;

const std::vector<std::string> &validArches() {
  static const std::vector<std::string> arches = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
  return arches;
}

void checkArch(const std::string &arch) {
  for (const std::string &a : validArches())
    if (a == arch) return;
  std::string list;
  for (const std::string &a : validArches()) list += (list.empty() ? "" : ", ") + a;
  throw tk::Error("unknown NVPTX arch '" + arch + "' (valid: " + list + ")");
}

static const Target &nvptxTarget() {
  static const Target *target = [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    std::string err;
    const Target *t = TargetRegistry::lookupTarget("nvptx64-nvidia-cuda", err);
    if (!t) throw tk::Error("LLVM has no NVPTX target: " + err);
    return t;
  }();
  return *target;
}

static CodeGenOptLevel codegenLevel(int opt) {
  switch (opt) {
    case 0: return CodeGenOptLevel::None;
    case 1: return CodeGenOptLevel::Less;
    case 2: return CodeGenOptLevel::Default;
    default: return CodeGenOptLevel::Aggressive;
  }
}

// PTX ISA 8.0 (what sm_90 needs), or the newer version `m` asks for
// through kMinPtxFlag (fp8 mma: 8.4); LLVM 19 writes up to 8.5.
static std::string ptxFeature(const Module &m) {
  int64_t version = 80;
  if (auto *v = mdconst::extract_or_null<ConstantInt>(m.getModuleFlag(kMinPtxFlag)))
    version = std::max<int64_t>(version, v->getSExtValue());
  if (version > 85) throw tk::InternalError("a module asks for PTX ISA " + std::to_string(version) + ", past LLVM 19's 8.5");
  return "+ptx" + std::to_string(version);
}

static std::unique_ptr<TargetMachine> makeTargetMachine(const std::string &arch, const std::string &ptx, int opt) {
  TargetOptions to;
  return std::unique_ptr<TargetMachine>(nvptxTarget().createTargetMachine(
      "nvptx64-nvidia-cuda", arch, ptx, to, std::nullopt, std::nullopt, codegenLevel(opt)));
}

// libdevice's bytes, read once per path and kept for the process: parsing is
// per call (a Module belongs to one LLVMContext), reading the file is not.
// Guarded by a mutex; entries are never removed, so the returned buffer
// outlives every module lazily loaded from it.
static MemoryBufferRef libdeviceBytes(const std::string &path) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<MemoryBuffer>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(path);
  if (it == cache.end()) {
    auto buf = MemoryBuffer::getFile(path);
    if (!buf) throw tk::Error("cannot read libdevice '" + path + "': " + buf.getError().message());
    it = cache.emplace(path, std::move(*buf)).first;
  }
  return it->second->getMemBufferRef();
}

static bool callsLibdevice(const Module &m) {
  for (const Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
  return false;
}

// Links only the libdevice functions `m` calls and internalizes them, so O3
// can inline them and drop the rest (the way clang links it for CUDA).
static bool isOutlinedLibdeviceFunction(StringRef name) {
  static const char *const names[] = {"__nv_sinf", "__nv_cosf", "__nv_tanf", "__nv_sin", "__nv_cos", "__nv_tan"};
  for (const char *n : names)
    if (name == n) return true;
  return false;
}

static void linkLibdevice(Module &m, const Toolkit &tk) {
  if (!tk.hasLibdevice())
    throw tk::Error("the module calls libdevice (__nv_*) but no CUDA toolkit with libdevice was found "
                             "(set CUDA_HOME, or compile with libdevice off)");
  auto lib = getLazyBitcodeModule(libdeviceBytes(tk.libdevice), m.getContext());
  if (!lib) throw tk::Error("cannot parse libdevice '" + tk.libdevice + "': " + toString(lib.takeError()));
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  bool failed = Linker::linkModules(m, std::move(*lib), Linker::Flags::LinkOnlyNeeded,
                                    [](Module &mod, const StringSet<> &linked) {
                                      internalizeModule(mod, [&linked](const GlobalValue &gv) {
                                        return !gv.hasName() || !linked.count(gv.getName());
                                      });
                                    });
  if (failed) throw tk::Error("linking libdevice '" + tk.libdevice + "' failed");
  // Keep the trigonometric routines out of line: their argument reduction
  // for huge inputs (Payne-Hanek) is large, a thread applies them to each of
  // its elements, and inlining every copy multiplies optimisation and codegen
  // time (and registers) for no gain in a memory-bound kernel. The rest of
  // libdevice (exp, log, tanh, rsqrt...) is small and still inlines.
  for (Function &f : m)
    if (!f.isDeclaration() && isOutlinedLibdeviceFunction(f.getName())) {
      f.removeFnAttr(Attribute::AlwaysInline);  // libdevice marks everything alwaysinline
      f.addFnAttr(Attribute::NoInline);
    }
  // Denormals are kept (no flush to zero), as nvcc does without -ftz.
  if (!m.getModuleFlag("nvvm-reflect-ftz")) m.addModuleFlag(Module::Override, "nvvm-reflect-ftz", uint32_t(0));
}

// Collects LLVM's error diagnostics during codegen instead of letting the
// default handler print them and exit the process.
namespace {
struct CollectErrors : DiagnosticHandler {
  std::string *errors;
  explicit CollectErrors(std::string *e) : errors(e) {}
  bool handleDiagnostics(const DiagnosticInfo &di) override {
    if (di.getSeverity() != DS_Error) return true;
    raw_string_ostream os(*errors);
    DiagnosticPrinterRawOStream printer(os);
    di.print(printer);
    os << "\n";
    return true;
  }
};

class ScopedDiagnostics {
 public:
  explicit ScopedDiagnostics(LLVMContext &c) : ctx_(c), saved_(c.getDiagnosticHandler()) {
    ctx_.setDiagnosticHandler(std::make_unique<CollectErrors>(&errors_));
  }
  ~ScopedDiagnostics() { ctx_.setDiagnosticHandler(std::move(saved_)); }
  void throwIfAny(const char *stage) const {
    if (!errors_.empty()) throw tk::Error(std::string("NVPTX ") + stage + " failed:\n" + errors_);
  }

 private:
  LLVMContext &ctx_;
  std::unique_ptr<DiagnosticHandler> saved_;
  std::string errors_;
};
}  // namespace

static void optimize(Module &m, TargetMachine &tm, int opt) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder pb(&tm);  // registers NVVMReflect and the NVPTX passes
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  static const OptimizationLevel levels[] = {OptimizationLevel::O0, OptimizationLevel::O1, OptimizationLevel::O2,
                                             OptimizationLevel::O3};
  ModulePassManager mpm =
      opt == 0 ? pb.buildO0DefaultPipeline(OptimizationLevel::O0) : pb.buildPerModuleDefaultPipeline(levels[opt]);
  mpm.run(m, mam);
}

// Checks `o`, sets `m`'s target, links libdevice when needed and runs the
// optimisation pipeline: everything emitPtx does before code generation.
static std::unique_ptr<TargetMachine> optimizeForArch(Module &m, const CodegenOptions &o, CodegenTimes *times) {
  checkArch(o.arch);
  if (o.optLevel < 0 || o.optLevel > 3)
    throw tk::Error("optLevel " + std::to_string(o.optLevel) + " is not in 0..3");
  if (!m.getTargetTriple().empty() && Triple(m.getTargetTriple()).getArch() != Triple::nvptx64)
    throw tk::Error("module '" + m.getModuleIdentifier() + "' targets " + m.getTargetTriple() +
                                ", not nvptx64-nvidia-cuda");
  std::unique_ptr<TargetMachine> tm = makeTargetMachine(o.arch, ptxFeature(m), o.optLevel);
  m.setTargetTriple(tm->getTargetTriple().str());
  m.setDataLayout(tm->createDataLayout());

  ScopedDiagnostics diags(m.getContext());
  std::string verifyLog;
  raw_string_ostream vos(verifyLog);
  if (verifyModule(m, &vos)) throw tk::InternalError("invalid LLVM IR given to the NVPTX backend:\n" + verifyLog);
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::time_point a, clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  auto t0 = clock::now();
  if (callsLibdevice(m)) linkLibdevice(m, o.toolkit);
  auto t1 = clock::now();
  optimize(m, *tm, o.optLevel);
  diags.throwIfAny("optimization");
  recomputeAccessPredicates(m);
  if (times) *times = {ms(t0, t1), ms(t1, clock::now()), 0};
  return tm;
}

void optimizeModule(Module &m, const CodegenOptions &o) { optimizeForArch(m, o, nullptr); }

std::string emitPtx(Module &m, const CodegenOptions &o, CodegenTimes *times) {
  std::unique_ptr<TargetMachine> tm = optimizeForArch(m, o, times);
  ScopedDiagnostics diags(m.getContext());
  auto t2 = std::chrono::steady_clock::now();
  SmallString<0> ptx;
  raw_svector_ostream os(ptx);
  legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::AssemblyFile))
    throw tk::Error("the NVPTX target cannot emit PTX");
  pm.run(m);
  diags.throwIfAny("code generation");
  if (times) times->codegenMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t2).count();
  return std::string(ptx.str());
}

}  // namespace tk::nvptx
