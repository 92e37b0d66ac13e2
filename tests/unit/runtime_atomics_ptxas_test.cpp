// Every atomic op on every type, at every sem and scope, reaches the PTX as
// `atom.{sem}.{scope}.global.{op}.{type}` (LLVM 19's NVPTX backend would drop
// both: backend/nvptx/Atomics.cpp), and ptxas accepts it for sm_80 and sm_90.
// The PTX text is checked without ptxas; assembling skips without it.
#include <gtest/gtest.h>

#include "backend/nvptx/Ptxas.h"
#include "backend/nvptx/Toolkit.h"
#include "ir/Atomics.h"
#include "tk/compiler.h"

namespace {

// One kernel per sem and scope: every op on every type it takes, as tiles
// (masked) and as scalars.
std::string kernelSource(const std::string &sem, const std::string &scope) {
  const std::string q = ", sem: \"" + sem + "\", scope: \"" + scope + "\")";
  std::string s = "kernel k_" + sem + "_" + scope + "(pi: *i32, pl: *i64, pf: *f32, pd: *f64, fv: f32, dv: f64) {\n";
  s += "    let o = arange(128);\n    let m = o < 100;\n";
  for (const char *op : {"add", "max", "min", "xchg", "and", "or", "xor"}) {
    const bool floats = tk::ir::atomicTakesFloats(*tk::ir::parseEnum<tk::ir::AtomicKind>(op));
    for (const char *p : {"pi", "pl", "pf", "pd"}) {
      const bool fp = p[1] == 'f' || p[1] == 'd';
      if (fp && !floats) continue;
      // Floats from arguments: a constant's sign would fold away one half of max/min.
      const std::string v = !fp ? "1" : p[1] == 'f' ? "fv" : "dv";
      s += std::string("    atomic_") + op + "(" + p + " + o, " + v + ", mask: m" + q + ";\n";
      s += std::string("    atomic_") + op + "(" + p + ", " + v + q + ";\n";
    }
  }
  s += "    atomic_cas(pi + o, 0, 1" + q + ";\n    atomic_cas(pl, 0, 1" + q + ";\n}\n";
  return s;
}

// The instructions each kernel must hold: f32/f64 max is a signed max and an
// unsigned min of the bits, min the mirror (lower/LowerAtomics.cpp).
const char *const kInstructions[] = {
    "add.u32", "add.u64", "add.f32", "add.f64", "max.s32", "max.s64", "min.s32", "min.s64", "max.u32", "max.u64",
    "min.u32", "min.u64", "exch.b32", "exch.b64", "and.b32", "and.b64", "or.b32", "or.b64", "xor.b32", "xor.b64",
    "cas.b32", "cas.b64"};

TEST(AtomicsPtxas, EveryOpSemAndScopeAssemblesForSm80AndSm90) {
  tk::nvptx::Toolkit toolkit = tk::nvptx::Toolkit::find();
  int assembled = 0;
  for (const char *sem : tk::ir::enumNames<tk::ir::AtomicSem>()) {
    for (const char *scope : tk::ir::enumNames<tk::ir::AtomicScope>()) {
      const std::string name = std::string("k_") + sem + "_" + scope;
      tk::CompileOptions opts;
      opts.archs = {"sm_80", "sm_90"};
      tk::Bundle b = tk::Compiler::compileSource(kernelSource(sem, scope), name + ".tk", name, opts);
      for (const std::string &arch : opts.archs) {
        const std::string &ptx = b.ptx.at(arch);
        for (const char *inst : kInstructions) {
          const std::string want = std::string("atom.") + sem + "." + scope + ".global." + inst + " ";
          EXPECT_NE(ptx.find(want), std::string::npos) << name << " " << arch << ": no `" << want << "`";
        }
        // No atomic escapes the inline asm (LLVM's own would be `atom.global.`).
        EXPECT_EQ(ptx.find("atom.global."), std::string::npos) << name << " " << arch;
        if (!toolkit.hasPtxas()) continue;
        tk::nvptx::PtxasInfo info = tk::nvptx::runPtxas(ptx, arch, toolkit);
        ASSERT_TRUE(info.ran) << name << " " << arch << "\n" << info.log;
        EXPECT_FALSE(info.cubin.empty()) << name << " " << arch << "\n" << info.log;
        ++assembled;
      }
    }
  }
  if (!toolkit.hasPtxas()) GTEST_SKIP() << "PTX checked; no ptxas to assemble it (CUDA_HOME, /usr/local/cuda)";
  EXPECT_EQ(assembled, 4 * 3 * 2);
}

}  // namespace
