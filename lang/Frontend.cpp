// The front end's entry points: load (lex, parse, check declarations and
// @tune spaces), dumps, kernel signatures, and specialisation + lowering of
// one kernel.
#include "lang/Frontend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "syntax/AST.h"
#include "lang/DescriptorParams.h"
#include "lang/Signatures.h"
#include "lang/HostExpr.h"
#include "lang/IRGen.h"
#include "lang/Specialise.h"
#include "parser/Lexer.h"
#include "parser/Parser.h"

namespace tk::lang {

Frontend::Frontend(DiagnosticEngine &diags) : diags_(diags), fns_(std::make_unique<FnTable>()) {}
Frontend::~Frontend() = default;

void Frontend::setFileReader(FileReader reader) { reader_ = std::move(reader); }
void Frontend::setImportRoots(std::vector<ImportRoot> roots) { roots_ = std::move(roots); }

namespace {
// Larger files are not source: refuse them rather than read gigabytes.
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{64} << 20;
// Deeper import chains are almost surely generated garbage.
constexpr size_t kMaxImportDepth = 32;

std::string normalPath(const std::string &p) { return std::filesystem::path(p).lexically_normal().generic_string(); }
std::string baseName(const std::string &p) { return std::filesystem::path(p).filename().generic_string(); }
}  // namespace

namespace {
// The whole of a regular file, or why not. Read to its end rather than
// trusting its size (files under /proc report 0), stopping at the cap, and
// with every read error reported (`/proc/self/mem` fails at offset 0).
std::optional<std::string> readText(const std::string &path, std::string &why) {
  struct stat st;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  std::string text;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = ::fstat(fd, &st) != 0 ? std::strerror(errno) : S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file";
    ::close(fd);
    return std::nullopt;
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxFileBytes) {
      why = "it is larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB";
      ::close(fd);
      return std::nullopt;
    }
  }
  ::close(fd);
  return text;
}
}  // namespace

std::optional<std::string> Frontend::readFile(const std::string &path) {
  std::string why;
  return readText(path, why);
}

void Frontend::reset() {
  module_.reset();
  sigs_.clear();
  sigOk_.clear();
  kernelDecls_.clear();
  imported_.clear();
  loaded_.clear();
  fns_ = std::make_unique<FnTable>();
  loadOk_ = false;
}

bool Frontend::loadFile(const std::string &path) {
  std::string why;
  auto text = readText(path, why);
  if (!text) {
    reset();
    diags_.error(Location{path, 0, 0}, "cannot read file '" + path + "': " + why);
    return false;
  }
  return loadSource(*text, path);
}

std::unique_ptr<ast::Module> Frontend::parseText(const std::string &text, const std::string &file) {
  const std::string &stored = diags_.sources().add(file, text);
  parser::LexResult lexed = parser::lex(stored, file, diags_);
  if (lexed.stopped) {
    // The token stream is cut short: parsing it would only add noise.
    auto m = std::make_unique<ast::Module>();
    m->file = file;
    return m;
  }
  return parser::parse(lexed.tokens, file, diags_, lexed.errorLines);
}

bool Frontend::loadSource(const std::string &text, const std::string &filename) {
  int errorsBefore = diags_.errorCount();
  reset();
  file_ = filename;
  module_ = parseText(text, filename);
  text_ = *diags_.sources().text(filename);
  std::vector<std::string> stack = {normalPath(filename)};
  loaded_[stack[0]] = module_.get();
  loadImports(*module_, stack);
  checkDecls();
  loadOk_ = diags_.errorCount() == errorsBefore;
  return loadOk_;
}

// grammar: IMPORT STRING ';'   before the kernels and fns of a file.
// Each file is read once (however often it is imported); `stack` holds the
// chain of files being imported, to find cycles.
void Frontend::loadImports(const ast::Module &m, std::vector<std::string> &stack) {
  const std::filesystem::path dir = std::filesystem::path(m.file).parent_path();
  bool pastTop = false;
  for (const ast::Decl &d : m.decls) {
    if (diags_.tooManyErrors()) return;
    if (d.kind != ast::DeclKind::Import) {
      pastTop = true;
      continue;
    }
    if (pastTop) {
      diags_.error(d.loc, "'import' must come before the kernels and fns of the file");
      continue;
    }
    if (d.name.empty()) {
      diags_.error(d.loc, "an import needs a file name");
      continue;
    }
    // Beside the importing file first, then the import roots in order; an
    // absolute name is only itself.
    std::string target = normalPath((dir / d.name).generic_string());
    std::optional<std::string> text;
    std::string why;  // why the file beside the importer could not be read
    auto read = [&](const std::string &path, std::string &reason) {
      return reader_ ? reader_(path) : readText(path, reason);
    };
    const bool known = loaded_.count(target) || std::find(stack.begin(), stack.end(), target) != stack.end();
    if (!known) text = read(target, why);
    if (!known && !text && !std::filesystem::path(d.name).is_absolute())
      for (const ImportRoot &root : roots_) {
        if (d.name.rfind(root.prefix, 0) != 0) continue;
        std::string candidate = normalPath((std::filesystem::path(root.dir) / d.name.substr(root.prefix.size())).generic_string());
        std::string ignored;
        if ((text = read(candidate, ignored))) {
          target = candidate;
          break;
        }
      }
    auto onStack = std::find(stack.begin(), stack.end(), target);
    if (onStack == stack.end() && (text || loaded_.count(target))) fns_->imports[m.file].insert(target);
    if (onStack != stack.end()) {
      std::string chain;
      for (auto it = onStack; it != stack.end(); ++it) chain += baseName(*it) + " -> ";
      diags_.error(d.loc, "import cycle: " + chain + baseName(target));
      continue;
    }
    if (loaded_.count(target)) continue;
    if (stack.size() >= kMaxImportDepth) {
      diags_.error(d.loc, "imports nested more than " + std::to_string(kMaxImportDepth) + " deep");
      continue;
    }
    if (!text) {
      std::string looked = lang::quoted(target);
      for (const ImportRoot &root : roots_)
        if (d.name.rfind(root.prefix, 0) == 0)
          looked += ", " + lang::quoted(normalPath((std::filesystem::path(root.dir) / d.name.substr(root.prefix.size())).generic_string()));
      diags_.error(d.loc, "cannot read imported file " + lang::quoted(d.name) +
                              (looked != lang::quoted(d.name) ? " (looked for " + looked + ")" : "") +
                              (why.empty() ? "" : ": " + why));
      continue;
    }
    imported_.push_back(parseText(*text, target));
    const ast::Module *mod = imported_.back().get();
    loaded_[target] = mod;
    stack.push_back(target);
    loadImports(*mod, stack);
    stack.pop_back();
  }
}

std::string Frontend::dumpTokens() const {
  DiagnosticEngine scratch;
  return parser::dumpTokens(parser::lex(text_, file_, scratch).tokens);
}

std::string Frontend::dumpAst() const { return module_ ? ast::dump(*module_) : std::string(); }

std::vector<KernelSig> Frontend::kernels() const { return sigs_; }

// Declaration-level checks: duplicate names, fn signatures, kernel
// parameter types, alignments and const defaults. Fills the fn table (fns of
// every loaded file) and the signatures of the main file's kernels.
void Frontend::checkDecls() {
  std::map<std::string, Location> seen;
  auto claim = [&](const ast::Decl &d, const std::string &what) {
    auto [it, fresh] = seen.emplace(d.name, d.loc);
    if (fresh) return true;
    diags_.error(d.loc, what + " " + quoted(d.name) + " is defined twice");
    diags_.note(it->second, "the first definition is here");
    return false;
  };
  auto addFn = [&](const ast::Decl &d) {
    bool fresh = claim(d, "fn");
    if (!checkFnSignature(d, diags_)) fns_->bad.insert(&d);
    if (fresh) fns_->fns[d.name] = &d;
  };
  // Imported fns first, so a clash is reported in the importing file.
  for (const auto &m : imported_) {
    checkAttributes(*m, diags_);
    for (const ast::Decl &d : m->decls)
      if (d.kind == ast::DeclKind::Fn) addFn(d);
  }
  checkAttributes(*module_, diags_);
  // Every fn is known before any const default (which may call one) is evaluated.
  std::vector<const ast::Decl *> kernels;
  for (const ast::Decl &d : module_->decls) {
    if (d.kind == ast::DeclKind::Fn) addFn(d);
    if (d.kind == ast::DeclKind::Kernel && claim(d, "kernel")) kernels.push_back(&d);
  }
  for (const ast::Decl *kernel : kernels) {
    const ast::Decl &d = *kernel;
    KernelSig sig;
    sig.name = d.name;
    sig.loc = d.loc;
    bool ok = true;
    const int errorsAtKernel = diags_.errorCount();
    std::set<std::string> names, typeConsts;
    std::vector<ConstBinding> consts;
    std::vector<std::string> runtime;
    for (const ast::Param &p : d.params) {
      if (!p.isConst) runtime.push_back(p.name);
      else if (constSortOf(p.type.name) == ConstSort::Type) typeConsts.insert(p.name);
    }
    std::vector<size_t> generic;  // run-time params of a type const's type, resolved below
    std::vector<size_t> descs;    // descriptor params, whose block may name the consts
    for (const ast::Param &p : d.params) {
      auto fail = [&](const Location &l, const std::string &m) { diags_.error(l, m); ok = false; };
      ParamSig ps{p.name, p.type.str(), p.isConst, "", 0};
      if (!names.insert(p.name).second) fail(p.loc, "parameter " + quoted(p.name) + " is declared twice");
      if (p.isDescriptor) {
        if (!checkDescriptorDecl(p, typeConsts, ps, diags_)) ok = false;
        descs.push_back(sig.params.size());
        sig.params.push_back(ps);
        continue;
      }
      if (p.isConst) {
        checkConstParam(p, consts, runtime, ps, ok, diags_, file_, fns_.get());
        sig.params.push_back(ps);
        continue;
      }
      auto kind = IRGen::scalarKind(p.type.name);
      if (!kind && typeConsts.count(p.type.name)) {
        if (p.defaultValue) fail(p.defaultValue->loc, "only const parameters can have a default value");
        if (p.type.ptrDepth > ir::kMaxPtrDepth) fail(p.type.loc, tooDeep(p.type));
        if (p.hasAlign && p.type.ptrDepth == 0) fail(p.alignLoc, "align(N) applies only to pointer parameters");
        generic.push_back(sig.params.size());
        sig.params.push_back(ps);
        continue;
      }
      if (!kind) {
        fail(p.type.loc, "unknown type '" + p.type.name + "'" +
                             (constSortOf(p.type.name) != ConstSort::Scalar ? " (only a const parameter can be a " +
                                                                                  p.type.name + ")"
                                                                            : ""));
        sig.params.push_back(ps);
        continue;
      }
      if (ir::isFp8(*kind)) {
        // Triton's spellings name the same types: the signature says which.
        ps.type = std::string(size_t(p.type.ptrDepth), '*') + ir::scalarName(*kind);
        if (p.type.ptrDepth == 0)
          fail(p.type.loc, "a kernel parameter of type " + std::string(ir::scalarName(*kind)) +
                               " must be a pointer (pass the value as f32 and convert it with 'as')");
      }
      if (p.type.ptrDepth > ir::kMaxPtrDepth) fail(p.type.loc, tooDeep(p.type));
      if (p.hasAlign && p.type.ptrDepth == 0) fail(p.alignLoc, "align(N) applies only to pointer parameters");
      if (p.type.ptrDepth >= 1) {
        // A `**f32` parameter is a buffer of 8-byte addresses.
        int64_t elemBytes = ir::ElemType{*kind, static_cast<uint8_t>(p.type.ptrDepth)}.pointee().bytes();
        ps.align = p.hasAlign ? p.align : 16;
        if (p.hasAlign && (!ir::isPowerOfTwo(p.align) || p.align < elemBytes))
          fail(p.alignLoc, "align(" + std::to_string(p.align) + ") must be a power of two of at least " +
                               std::to_string(elemBytes) + " (the size of " + p.type.name + ")");
      }
      if (p.defaultValue) fail(p.defaultValue->loc, "only const parameters can have a default value");
      if (!checkParamAttributes(p, kind, ps, diags_)) ok = false;
      sig.params.push_back(ps);
    }
    // With the defaults: a type const without one leaves its params' types as written.
    for (size_t i : generic)
      resolveGenericParam(*findParam(d, sig.params[i].name), consts, sig.params[i], ok, diags_);
    for (size_t i : descs)
      if (ok) resolveDescriptorParam(d.params[i], consts, runtime, /*quietIfUnbound=*/true, sig.params[i], diags_, file_,
                                     fns_.get());
    ok = ok && diags_.errorCount() == errorsAtKernel;
    for (const ast::Attribute &a : d.attributes)
      if (ok && a.call->text == "tune") {
        sig.tune = checkTune(d, a, diags_, file_, fns_.get());
        break;
      }
    sigs_.push_back(sig);
    sigOk_.push_back(ok);
    kernelDecls_.push_back(&d);
  }
}

std::unique_ptr<ir::Function> Frontend::lowerKernel(const std::string &name,
                                                    const std::map<std::string, std::string> &defines,
                                                    int numWarps, KernelSig *sigOut,
                                                    const std::map<std::string, int64_t> &assume) {
  size_t index = sigs_.size();
  for (size_t i = 0; i < sigs_.size(); ++i)
    if (sigs_[i].name == name) index = i;
  Location fileLoc{file_, 0, 0};
  if (index == sigs_.size()) {
    diags_.error(fileLoc, "no kernel named " + quoted(name) + (file_.empty() ? "" : " in " + file_));
    return nullptr;
  }
  if (!sigOk_[index]) return nullptr;  // its signature's errors are already reported
  const ast::Decl &d = *static_cast<const ast::Decl *>(kernelDecls_[index]);
  KernelSig sig = sigs_[index];
  bool ok = true;
  if (!validNumWarps(numWarps)) {
    diags_.error(d.loc, badNumWarps(std::to_string(numWarps)));
    ok = false;
  }
  for (const auto &[key, text] : defines) {
    const ast::Param *p = nullptr;
    for (const ast::Param &q : d.params)
      if (q.name == key) p = &q;
    if (!p) {
      diags_.error(d.loc, "kernel " + quoted(name) + " has no parameter named " + quoted(key) + " to define");
      ok = false;
    } else if (!p->isConst) {
      diags_.error(p->loc, "parameter " + quoted(key) + " is not const, so it cannot be defined");
      ok = false;
    }
  }
  // What the variant assumes of each integer argument: 1 (equal to 1) or N
  // (a multiple of N), from the values launches will pass and @multiple_of.
  std::map<std::string, int64_t> facts;
  for (const ParamSig &ps : sig.params)
    if (ps.multipleOf) facts[ps.name] = ps.multipleOf;
  for (const auto &[key, value] : assume) {
    const ast::Param *p = nullptr;
    const ParamSig *ps = nullptr;
    for (size_t i = 0; i < d.params.size(); ++i)
      if (d.params[i].name == key) p = &d.params[i], ps = &sig.params[i];
    auto kind = p ? IRGen::scalarKind(p->type.name) : std::nullopt;
    if (!p || p->isConst || p->isDescriptor || p->type.ptrDepth || !kind || ir::isFloat(*kind) || *kind == ir::ScalarKind::I1) {
      diags_.error(p ? p->loc : d.loc, "cannot assume a value of " + quoted(key) + ": kernel " + quoted(name) +
                                           " has no integer argument of that name");
      ok = false;
    } else if (ps->noSpecialize) {
      diags_.error(p->loc, "cannot assume a value of " + quoted(key) + ": it is declared @no_specialize");
      ok = false;
    } else if (ps->multipleOf && value % ps->multipleOf != 0) {
      diags_.error(p->loc, "cannot assume " + key + " = " + std::to_string(value) + ": it is declared @multiple_of(" +
                               std::to_string(ps->multipleOf) + ")");
      ok = false;
    } else if (value == 1) {
      facts[key] = 1;
    } else if (value % 16 == 0) {
      facts[key] = std::max<int64_t>(facts[key], 16);
    }
  }
  std::vector<ConstBinding> consts;
  if (!specialiseConsts(d, defines, diags_, file_, fns_.get(), consts)) ok = false;
  size_t c = 0;
  std::map<std::string, std::vector<int64_t>> descBlocks;
  if (ok && !resolveDescriptorBlocks(d, consts, sig.params, diags_, file_, fns_.get(), descBlocks)) ok = false;
  for (size_t i = 0; ok && i < d.params.size(); ++i) {
    if (d.params[i].isDescriptor) continue;
    if (!d.params[i].isConst) {
      // `x: *T` takes the type T has in this specialisation.
      if (!IRGen::scalarKind(d.params[i].type.name))
        resolveGenericParam(d.params[i], consts, sig.params[i], ok, diags_);
      continue;
    }
    sig.params[i].constValue = bindingText(consts[c]);
    ++c;
  }
  if (!ok) return nullptr;
  IRGen gen(diags_, file_);
  gen.setFns(fns_.get());
  gen.setDescriptorBlocks(std::move(descBlocks));
  auto fn = gen.lowerKernel(d, consts, numWarps, facts);
  // A file with errors yields no kernel, even one whose own body lowered
  // (a syntax error may have dropped statements from it); lowering it
  // anyway reports its other errors.
  if (!loadOk_) return nullptr;
  if (fn && sigOut) *sigOut = sig;
  return fn;
}

void Frontend::checkUnusedFns() {
  if (!module_) return;
  for (const ast::Decl &d : module_->decls) {
    if (d.kind != ast::DeclKind::Fn || fns_->bad.count(&d) || fns_->used.count(&d)) continue;
    // A fn is generic over shapes, and over element types where it has type
    // variables: it passes when scalars or tiles, of floats or of integers,
    // work.
    std::vector<Diagnostic> first;
    bool ok = false;
    for (ir::ScalarKind typeVar : {ir::ScalarKind::F32, ir::ScalarKind::I32})
      for (int64_t tile : {0, 2}) {
        if (ok) break;
        DiagnosticEngine scratch;
        IRGen gen(scratch, file_);
        gen.setFns(fns_.get());
        gen.checkFnAlone(d, tile, typeVar);
        ok = !scratch.hasErrors();
        if (first.empty()) first = scratch.diagnostics();
      }
    if (ok) continue;
    for (const Diagnostic &diag : first) {
      if (diag.severity == Diagnostic::Severity::Error) diags_.error(diag.loc, diag.message);
      else if (diag.severity == Diagnostic::Severity::Warning) diags_.warning(diag.loc, diag.message);
      else diags_.note(diag.loc, diag.message);
    }
    diags_.note(d.loc, "in " + quoted(d.name) + ", which no kernel calls (checked with scalar arguments)");
  }
}

}  // namespace tk::lang
