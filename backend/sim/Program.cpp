// Program::compile: the sim-lowered module -> instrumented, optimised, JIT'd
// code with one `<kernel>.tk_entry(void **args, uint64_t *runs)` trampoline
// per kernel.
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include "backend/sim/CountInstructions.h"
#include "backend/sim/InstrumentMemory.h"
#include "backend/sim/InstrumentOverflow.h"
#include "backend/sim/ProgramImpl.h"
#include "backend/sim/Runtime.h"
#include "backend/sim/SimTarget.h"

namespace tk::sim {

using namespace llvm;

Program::Impl::~Impl() = default;
Program::Program() : impl_(std::make_unique<Impl>()) {}
Program::~Program() = default;

namespace {

template <typename T>
T orThrow(Expected<T> e, const std::string &what) {
  if (!e) throw SimError("sim: " + what + ": " + toString(e.takeError()));
  return std::move(*e);
}

void orThrow(llvm::Error e, const std::string &what) {
  if (e) throw SimError("sim: " + what + ": " + toString(std::move(e)));
}

std::string entryName(const std::string &kernel) { return kernel + ".tk_entry"; }

// void <kernel>.tk_entry(ptr args, ptr runs): parameter i is loaded from
// *args[i], except a tensor map (kTensorMapParamAttr,
// SimTarget::markTensorMapParam), which is the blob args[i] points at; `runs` is for countInstructions,
// which it spares a runtime call.
void addTrampoline(Module &m, Function &kernel) {
  LLVMContext &c = m.getContext();
  Type *ptr = PointerType::get(c, 0);
  auto *fty = FunctionType::get(Type::getVoidTy(c), {ptr, ptr}, false);
  Function *entry = Function::Create(fty, GlobalValue::ExternalLinkage, entryName(kernel.getName().str()), m);
  entry->setDoesNotThrow();
  entry->addFnAttr(kBlockRunsArgAttr);
  IRBuilder<> b(BasicBlock::Create(c, "entry", entry));
  std::vector<Value *> args;
  for (Argument &a : kernel.args()) {
    Value *slot = b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), a.getArgNo());
    // Where the value is: the sim's plumbing. A GPU loads only the value (ld.param).
    auto *at = b.CreateAlignedLoad(ptr, slot, Align(8));
    at->setMetadata(kMdUncounted, MDNode::get(c, {}));
    if (kernel.getAttributes().hasParamAttr(a.getArgNo(), kTensorMapParamAttr)) {
      args.push_back(at);  // the blob itself
      continue;
    }
    args.push_back(b.CreateAlignedLoad(a.getType(), at, Align(1)));  // caller's value, any alignment
  }
  b.CreateCall(kernel.getFunctionType(), &kernel, args);
  b.CreateRetVoid();
}

void optimize(Module &m, TargetMachine &tm) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  // O2, not O3: the kernel runs a million times, but O3's extra unrolling
  // mostly grows code the per-thread runtime calls dominate anyway.
  ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(OptimizationLevel::O2);
  mpm.run(m, mam);
}

// Everything Program::compile does before the JIT: checks, kernel discovery
// into `impl`, instrumentation, trampolines, O2 and the block counters. Returns
// the host machine builder the module was optimised for.
orc::JITTargetMachineBuilder prepareForJit(Module *m, Program::Impl &impl, const ProgramOptions &options) {
  const HostTarget &host = hostTarget();

  const std::string &triple = m->getTargetTriple();
  if (triple.empty()) {
    m->setTargetTriple(host.triple);
  } else if (Triple(triple).getArch() != Triple(host.triple).getArch()) {
    throw SimError("sim: module " + m->getName().str() + " was lowered for " + triple + ", not for the sim (host " +
                   host.triple + ")");
  }
  if (m->getDataLayoutStr().empty()) m->setDataLayout(host.dataLayout);

  std::string err;
  raw_string_ostream os(err);
  if (verifyModule(*m, &os)) throw SimError("sim: invalid module " + m->getName().str() + ": " + os.str());

  std::vector<Function *> kernels;
  for (Function &f : *m) {
    if (f.isDeclaration() || !f.hasFnAttribute(kNumThreadsAttr)) continue;
    if (!f.getReturnType()->isVoidTy()) throw SimError("sim: kernel " + f.getName().str() + " must return void");
    KernelInfo k;
    k.name = f.getName().str();
    k.numParams = unsigned(f.arg_size());
    if (f.getFnAttribute(kNumThreadsAttr).getValueAsString().getAsInteger(10, k.numThreads))
      throw SimError("sim: kernel " + k.name + " has a malformed " + kNumThreadsAttr + " attribute");
    impl.kernels[k.name] = k;
    kernels.push_back(&f);
  }
  if (kernels.empty()) throw SimError("sim: module " + m->getName().str() + " has no kernel (SimTarget::markKernel)");

  // Before the memory instrumentation, which hides addresses behind its
  // hooks, and before O2, which folds the index math it follows.
  if (options.overflowCheck) instrumentIndexOverflow(*m, impl.sites);
  instrumentMemoryAccesses(*m, impl.sites);
  for (Function *f : kernels) {
    addTrampoline(*m, *f);
    // Only the trampoline calls it now: internal, the kernel is inlined there
    // and its own copy dropped (compiled once, counted once).
    f->setLinkage(GlobalValue::InternalLinkage);
  }

  auto jtmb = orThrow(orc::JITTargetMachineBuilder::detectHost(), "host target");
  jtmb.setCodeGenOptLevel(CodeGenOptLevel::Default);
  // x86's f32 -> bf16 instructions (AVX512-BF16, AVX-NE-CONVERT) flush
  // subnormal inputs to zero; a GPU's cvt.rn.bf16.f32 does not. Without them
  // the conversion is the runtime's __truncsfbf2, which rounds like the GPU.
  if (jtmb.getTargetTriple().isX86()) {
    jtmb.getFeatures().AddFeature("avx512bf16", false);
    jtmb.getFeatures().AddFeature("avxneconvert", false);
  }
  std::unique_ptr<TargetMachine> tm = orThrow(jtmb.createTargetMachine(), "target machine");
  m->setDataLayout(tm->createDataLayout());
  optimize(*m, *tm);
  // After O2, so the counts describe the code that runs, and nothing moves or
  // merges the increments.
  countInstructions(*m, impl.blocks);
  return jtmb;
}

}  // namespace

std::string Program::optimizedIR(std::unique_ptr<Module> m, std::unique_ptr<LLVMContext> ctx,
                                 const ProgramOptions &options) {
  if (!m || !ctx) throw SimError("sim: Program::optimizedIR needs a module and its context");
  Impl scratch;
  prepareForJit(m.get(), scratch, options);
  std::string text;
  raw_string_ostream os(text);
  m->print(os, nullptr);
  return os.str();
}

std::unique_ptr<Program> Program::compile(std::unique_ptr<Module> m, std::unique_ptr<LLVMContext> ctx,
                                          const ProgramOptions &options) {
  if (!m || !ctx) throw SimError("sim: Program::compile needs a module and its context");
  if (&m->getContext() != ctx.get()) throw SimError("sim: Program::compile: the module belongs to another context");
  std::unique_ptr<Program> prog(new Program());
  Impl &impl = *prog->impl_;
  orc::JITTargetMachineBuilder jtmb = prepareForJit(m.get(), impl, options);

  impl.jit = orThrow(orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create(), "creating the JIT");
  // Link errors (an unresolved symbol) reach the session's reporter, not the
  // failed lookup: keep them for the SimError instead of printing to stderr.
  auto linkErrors = std::make_shared<std::string>();
  impl.jit->getExecutionSession().setErrorReporter(
      [linkErrors](llvm::Error e) { *linkErrors += (linkErrors->empty() ? "" : "; ") + toString(std::move(e)); });
  orc::MangleAndInterner mangle(impl.jit->getExecutionSession(), impl.jit->getDataLayout());
  orc::SymbolMap symbols;
  for (auto &[name, addr] : runtimeSymbols())
    symbols[mangle(name)] = {orc::ExecutorAddr::fromPtr(addr), JITSymbolFlags::Exported | JITSymbolFlags::Callable};
  orThrow(impl.jit->getMainJITDylib().define(orc::absoluteSymbols(std::move(symbols))), "runtime symbols");
  orThrow(impl.jit->addIRModule(orc::ThreadSafeModule(std::move(m), std::move(ctx))), "adding the module");
  for (auto &[name, k] : impl.kernels) {
    auto sym = impl.jit->lookup(entryName(name));
    if (!sym) {
      std::string why = toString(sym.takeError());
      throw SimError("sim: compiling kernel " + name + ": " + (linkErrors->empty() ? why : *linkErrors));
    }
    k.entry = sym->toPtr<void (*)(void **, uint64_t *)>();
  }
  return prog;
}

bool Program::hasKernel(const std::string &name) const { return impl_->kernels.count(name) != 0; }

std::vector<std::string> Program::kernelNames() const {
  std::vector<std::string> names;
  for (auto &[name, k] : impl_->kernels) names.push_back(name);
  return names;
}

int Program::kernelNumThreads(const std::string &name) const {
  auto it = impl_->kernels.find(name);
  if (it == impl_->kernels.end()) throw SimError("sim: no kernel named " + name);
  return it->second.numThreads;
}

}  // namespace tk::sim
