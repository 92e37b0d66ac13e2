// libFuzzer target for the front end: any bytes go through load, the AST
// dump, every kernel's lowering with its defaults, pad-tiles (tiles of any
// size become powers of two), and diagnostic rendering. A crash, a hang, or
// IR the verifier rejects is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "ir/Verifier.h"
#include "ir/passes/Passes.h"
#include "lang/Frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  tk::lang::DiagnosticEngine diags;
  tk::lang::Frontend fe(diags);
  // Imports resolve against a fixed in-memory file (and nothing on disk),
  // so runs are reproducible and imports, cycles included, get exercised.
  fe.setFileReader([&text](const std::string &path) -> std::optional<std::string> {
    if (path == "fuzz.tk" || path == "self.tk") return text;
    if (path == "lib.tk") return std::string("fn twice(x: f32) -> f32 { return x + x; }\n");
    return std::nullopt;
  });
  fe.loadSource(text, "fuzz.tk");
  (void)fe.dumpAst();
  for (const tk::lang::KernelSig &k : fe.kernels()) {
    auto fn = fe.lowerKernel(k.name, {}, 4);
    if (!fn) continue;
    std::string err;
    if (!tk::ir::verifyFunction(*fn, err)) {
      fprintf(stderr, "front end produced invalid IR: %s\n", err.c_str());
      abort();
    }
    tk::ir::padTiles(*fn);
    if (!tk::ir::verifyFunction(*fn, err)) {
      fprintf(stderr, "pad-tiles produced invalid IR: %s\n", err.c_str());
      abort();
    }
  }
  (void)diags.render();
  return 0;
}
