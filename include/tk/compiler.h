// tk's compiler API: .tk source -> a Bundle (specialised tile IR + PTX +
// signature) that either device can load. See docs/api.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "tk/error.h"

namespace tk {

struct CompileOptions {
  std::map<std::string, std::string> defines;  // const parameter overrides: {"BLOCK", "256"}
  int numWarps = 4;                            // threads per block = 32 * numWarps
  // Values launches will pass for integer arguments (`tkc compile --assume
  // NAME=VALUE`): the variant is compiled for the facts they give, as Triton
  // specialises -- 1 (the argument becomes the constant 1) or a multiple of
  // 16 (vector accesses through it) -- and launches whose values break them
  // are refused. Other values give no fact.
  std::map<std::string, int64_t> assume;
  // Software-pipeline depth of loops over K (an autotuning axis, as in
  // Triton): the operand loads of tensor-core dots in a loop are fetched by
  // cp.async this many iterations minus one ahead, through a ring of
  // numStages - 1 shared buffers (at least 2) on mma.sync and numStages on
  // wgmma, Triton's counts; 1 turns it off (docs/language.md, "num_stages").
  // Recorded in the bundle.
  int numStages = 3;
  std::vector<std::string> archs = {"sm_80"};  // one PTX per arch in the bundle
  // Where `import "NAME"` looks after the importing file's folder, in order
  // (`tkc -I DIR`); then each directory of $TK_PATH (':'-separated); names
  // starting "tk/" last in the stdlib (docs/language.md, "Imports").
  std::vector<std::string> importPaths;
  // The stdlib's directory; empty: share/tk/stdlib beside the program's bin/
  // folder, else the installed one, else the source tree's.
  std::string stdlibDir;
  bool emitPtx = true;       // false: tile IR only (enough for the sim)
  bool useLibdevice = true;  // false: fast approximate math (see docs/backends.md)
  std::string cudaHome;      // empty: $CUDA_HOME, then /usr/local/cuda
  // Verify the tile IR after every pass of the tile pipeline (off: once,
  // after the last pass). On for the API and the tests; `tkc compile` turns
  // it on with --verify-each (about 10% of a large kernel's front end).
  bool verifyEachPass = true;
  std::set<std::string> printAfter;  // pass flags ("cse", "assign-layouts", "all")
  std::ostream *dump = nullptr;      // where printAfter writes
  // Run `ptxas -v` on each arch's PTX (when the toolkit has ptxas) and record
  // registers, spills and static shared memory in Bundle::resources.
  bool ptxasResources = false;
  // The compile cache (docs/autotune.md): a bundle compiled before from the
  // same sources, kernel, options and compiler build is read back instead.
  // Off while printAfter asks to see the passes run.
  bool cache = true;
  std::string cacheDir;  // empty: $TK_CACHE_DIR, then $XDG_CACHE_HOME/tk, then ~/.cache/tk
  // Cache trouble that does not stop a compile (an unwritable directory, a
  // corrupted entry, which is then rebuilt). Unset: "tk: warning: ..." on stderr.
  std::function<void(const std::string &)> warn;
};

// What ptxas reported for one arch (`ptxas -v`).
struct Resources {
  int registers = -1;  // per thread
  int spillStoreBytes = 0, spillLoadBytes = 0;
  int sharedStaticBytes = 0;
};

struct KernelParam {
  std::string name;
  std::string type;  // "*f32", "i32", "f32", "bool"
  bool isConst = false;
  std::string value;  // the specialised value of a const parameter
  int64_t align = 0;  // pointer params: the address alignment the kernel assumes
  // Integer params: declared `@no_specialize` (launches never specialise on
  // its value) or `@multiple_of(N)` (every launch passes a multiple of N).
  bool noSpecialize = false;
  int64_t multipleOf = 0;
};

// A tensor map (CUtensorMap) a launch builds from the descriptor passed for
// `param`, a `desc<..>` parameter, and passes after every other argument:
// kernels for sm_90a fill shared memory from it with the tensor memory
// accelerator. `box`: the box one copy moves, outermost dim first like a
// block shape; `swizzle`: 0, 32, 64 or 128 (bytes).
struct TensorMapParam {
  std::string param;
  std::vector<int64_t> box;
  int swizzle = 0;
  bool operator==(const TensorMapParam &) const = default;
};

// A compiled, specialised kernel.
struct Bundle {
  static constexpr int kFormatVersion = 5;  // 5: archs beside param attributes
  std::string kernel;
  std::string source;  // the .tk file it came from
  std::vector<KernelParam> params;
  int numWarps = 4;
  // A warp-specialised kernel's producer warps, launched after numWarps
  // (a `range(.., warp_specialize: true)` the compiler split; else 0).
  int producerWarps = 0;
  int numStages = 3;
  int sharedBytes = 0;                     // the most any arch's lowering needs
  int threadsPerBlock() const { return (numWarps + producerWarps) * 32; }
  std::vector<std::string> archs;          // CompileOptions::archs: the sim emulates the first
  std::string tir;                         // layout-assigned tile IR, with source locations
  std::map<std::string, std::string> ptx;  // arch -> PTX
  // arch -> the cubin ptxas assembled from ptx[arch]: filled by generated
  // launchers (docs/aot.md), which embed them beside the JSON; a GPU of
  // exactly that arch loads it instead of JIT-compiling the PTX. Not part
  // of toJson.
  std::map<std::string, std::string> cubins;
  std::map<std::string, Resources> resources;  // arch -> ptxas's figures (CompileOptions::ptxasResources)
  // Integer argument -> the fact this variant assumes of it: "1" (equal to
  // 1) or "N" (a multiple of N, a power of two: "16" from a launch's value,
  // any from @multiple_of(N)). Device::launch refuses values that break one.
  std::map<std::string, std::string> assumed;
  // One per tensor map the kernel takes, in the order it takes them: after
  // the ABI values of every launch parameter (docs/api.md, "Tensor maps").
  std::vector<TensorMapParam> tensorMaps;

  // The parameters a launch passes (the non-const ones), in order.
  std::vector<KernelParam> launchParams() const;
  // The specialised value of integer const parameter `name` (throws if none).
  int64_t constInt(const std::string &name) const;
  std::string toJson() const;
  // Throws tk::Error naming what is wrong with a malformed or corrupted bundle.
  static Bundle fromJson(const std::string &json, const std::string &what = "bundle");
  void save(const std::string &path) const;  // atomically: nothing half-written
  static Bundle load(const std::string &path);
};

// How far `tkc compile --emit` goes. TirRaw is the tile IR as the front end
// made it, before any pass; Tir after the tile pipeline. Llvm and LlvmOpt are
// the NVPTX module before and after libdevice + O3 (what the code generator
// reads); SimLlvm and SimLlvmOpt the sim's, before and after instrumentation +
// O2 (what the sim JITs).
enum class Stage { Tokens, Ast, Tir, Llvm, Ptx, Cubin, Bundle, TirRaw, LlvmOpt, SimLlvm, SimLlvmOpt };

class Compiler {
 public:
  // Compiles kernel `kernel` of a .tk file. Throws CompileError for source
  // errors, Error for the rest.
  static Bundle compileFile(const std::string &path, const std::string &kernel, const CompileOptions &opts = {});
  static Bundle compileSource(const std::string &source, const std::string &filename, const std::string &kernel,
                              const CompileOptions &opts = {});
  // The text of one stage (tokens, AST, tile IR before or after the pipeline,
  // LLVM IR for the first arch or the sim before or after optimisation, PTX
  // for the first arch, bundle JSON), or the bytes of a cubin for the first
  // arch (needs ptxas from the CUDA toolkit). A `path` ending in `.tir` is
  // printed tile IR (`--emit tir` or `tir-raw`): one without layouts runs the
  // tile pipeline, one with them is lowered as it is. An empty `kernel`
  // names a .tk file's only kernel (a tk::Error lists them where there are
  // several). `dependencies`, where given, receives the files the source
  // read (it and its imports; a .tir file: itself), from the same one parse.
  static std::string emit(const std::string &path, const std::string &kernel, Stage stage,
                          const CompileOptions &opts = {}, std::vector<std::string> *dependencies = nullptr);
  // The passes of the tile pipeline, in order, each once: what printAfter
  // may name (with "all"); others are a tk::Error listing these.
  static std::vector<std::string> pipelinePasses();
  // Every tile-IR pass the compiler knows, in the registry's order, as
  // {name, one-line description} (`tkc compile --list-passes`, tk-opt's
  // --pass names, the table in docs/ir.md).
  static std::vector<std::pair<std::string, std::string>> passes();
  // The passes the compiler runs on a kernel's tile IR, in order, with
  // repeats: canonicalize, cse, licm, cse, dce, ...
  static std::vector<std::string> pipelineOrder();
  // The files a compile of `path` reads: `path` and every file it imports,
  // found as `opts` says (the depfile of `tkc compile --depfile`).
  static std::vector<std::string> dependencies(const std::string &path, const CompileOptions &opts = {});
  // The kernels a file defines (after checking it), with their parameters.
  // A parameter whose type is a type const (`x: *T`) has the type T's
  // default gives it ("*T" as written when T has none).
  static std::vector<std::pair<std::string, std::vector<KernelParam>>> kernels(const std::string &path,
                                                                               const CompileOptions &opts = {});
  // One kernel's parameters specialised by `defines`: the const values and
  // the types they give `x: *T`. CompileError for bad defines or source.
  // Imports are found as `opts` says (importPaths).
  static std::vector<KernelParam> signature(const std::string &path, const std::string &kernel,
                                            const std::map<std::string, std::string> &defines,
                                            const CompileOptions &opts = {});
  // The tiles of one kernel whose dims are not all powers of two, as the
  // source wrote them, one per source position and shape: the compiler pads
  // each dim to the next power of two (docs/language.md, "Tiles of any
  // size"); `tkc report` shows what that costs.
  struct PaddedTile {
    std::string loc;                     // "file:line:col" of the expression
    std::vector<int64_t> shape, padded;  // as written, and as registers hold it
  };
  static std::vector<PaddedTile> paddedTiles(const std::string &path, const std::string &kernel,
                                             const CompileOptions &opts = {});
  // What compiles since the last reset actually ran the pipeline (cache
  // misses) and how many were answered by the compile cache. Process-wide.
  struct CacheStats {
    uint64_t compiled = 0, hits = 0;
  };
  static CacheStats cacheStats();
};

namespace detail {
struct SourceFileAccess;  // driver/KernelLookup.h: what the tuner reads of one
}

// A .tk file read, parsed and checked once, with the files it imports: the
// questions one command asks of a file (its kernels, a kernel's signature,
// bundles, padded tiles, the files it read) without reading it again, where
// the static Compiler functions each load the file anew. Imports are found
// as the options given to the constructor say. compile() may run on several
// threads at once: the front end serves one at a time, the tile pipeline,
// lowering and ptxas run in parallel. Errors as Compiler's: CompileError for
// the source, Error for the rest.
class SourceFile {
 public:
  explicit SourceFile(const std::string &path, const CompileOptions &opts = {});
  // A source held in memory, `filename` naming it in diagnostics and for
  // relative imports.
  SourceFile(const std::string &source, const std::string &filename, const CompileOptions &opts);
  ~SourceFile();
  SourceFile(SourceFile &&) noexcept;
  SourceFile &operator=(SourceFile &&) noexcept;

  const std::string &path() const;
  std::vector<std::pair<std::string, std::vector<KernelParam>>> kernels() const;
  std::vector<KernelParam> signature(const std::string &kernel, const std::map<std::string, std::string> &defines) const;
  Bundle compile(const std::string &kernel, const CompileOptions &opts) const;
  std::vector<Compiler::PaddedTile> paddedTiles(const std::string &kernel, const CompileOptions &opts) const;
  // The file and every file it imports.
  std::vector<std::string> files() const;

 private:
  friend struct detail::SourceFileAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The fact an integer argument's value gives a compile (CompileOptions::
// assume): "1", "16" (a multiple of 16), or "" (none).
std::string integerFact(int64_t value);
// Whether `value` has `fact` (a Bundle::assumed entry: "1" or "N").
bool factHolds(const std::string &fact, int64_t value);

// The directory tk caches compiled kernels and tuning results in: `dir` when
// not empty, else $TK_CACHE_DIR, $XDG_CACHE_HOME/tk, ~/.cache/tk.
std::string cacheDirectory(const std::string &dir = "");

// The stdlib directory `import "tk/..."` reads (CompileOptions::stdlibDir);
// "" when none is found.
std::string stdlibDirectory(const std::string &dir = "");

}  // namespace tk
