// tk's exceptions: one hierarchy under tk::Error, declared once here so that
// every library -- the runtime (no LLVM), the compiler, the sim, the CUDA
// driver wrapper -- throws the same classes. See docs/api.md, "Errors".
#pragma once

#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace tk {

// Every failure tk reports derives from tk::Error (itself a
// std::runtime_error, so `catch (const std::exception &)` sees it too).
// Catch tk::Error unless you act on one of the subclasses below.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  // Throws a copy of this error, of the same class and with the same data,
  // whose message is `prefix` + what(): how a caller adds context (the
  // kernel, the arch) without changing what its own caller can catch.
  [[noreturn]] void rethrowPrefixed(const std::string &prefix) const {
    rethrowWithMessage(prefix + what());
    std::terminate();  // not reached: every rethrowWithMessage throws
  }
  // The same with the whole message given.
  [[noreturn]] virtual void rethrowWithMessage(const std::string &message) const { throw Error(message); }
};

// Each subclass keeps its class when rethrown with context.
#define TK_ERROR_RETHROW_PREFIXED(Class) \
  [[noreturn]] void rethrowWithMessage(const std::string &message) const override { throw Class(message); }

// Source errors: what() holds every diagnostic, rendered with file:line:col,
// the source line and a caret (several diagnostics end with a newline each).
class CompileError : public Error {
 public:
  using Error::Error;
  TK_ERROR_RETHROW_PREFIXED(CompileError)
};

// Tile IR text (a .tir file, a bundle's tile IR) that does not parse: what()
// is "file:line:col: error: message". A CompileError, as a .tk file's are.
class IRParseError : public CompileError {
 public:
  using CompileError::CompileError;
  TK_ERROR_RETHROW_PREFIXED(IRParseError)
};

// A host expression (`--grid`, a @tune prune condition) that cannot be
// evaluated or checked: an unknown name, a division by zero, an overflow, a
// bool where a number is needed.
class HostExprError : public Error {
 public:
  using Error::Error;
  TK_ERROR_RETHROW_PREFIXED(HostExprError)
};

// A fault of a kernel running on the sim, found as a GPU would fault or
// worse: an out-of-bounds or use-after-free access (naming the .tk line,
// block and thread), a race the race check found, a failed device assert,
// an exhausted or misused sim memory.
class SimError : public Error {
 public:
  using Error::Error;
  TK_ERROR_RETHROW_PREFIXED(SimError)
};

// No usable CUDA driver or device: libcuda missing, a stub library, cuInit
// failing, or zero devices. Tests and programs that need a GPU skip on it.
class CudaUnavailable : public Error {
 public:
  using Error::Error;
  TK_ERROR_RETHROW_PREFIXED(CudaUnavailable)
};

// A CUDA Driver API call failed: code() is its CUresult, call() the call
// ("cuMemAlloc"); what() is "<call> failed: <NAME> (<code>): <text>".
class CudaError : public Error {
 public:
  CudaError(int code, std::string call, const std::string &message)
      : Error(message), code_(code), call_(std::move(call)) {}
  int code() const { return code_; }
  const std::string &call() const { return call_; }
  [[noreturn]] void rethrowWithMessage(const std::string &message) const override {
    throw CudaError(code_, call_, message);
  }

 private:
  int code_;
  std::string call_;
};

// A bug in tk, not in its input: an invariant of a pass, of the lowering or
// of a Target broken (the verifier failing between passes, an op with no
// lowering rule). Its message starts "internal compiler error" once the
// compiler has named the kernel; please report it.
class InternalError : public Error {
 public:
  using Error::Error;
  TK_ERROR_RETHROW_PREFIXED(InternalError)
};

#undef TK_ERROR_RETHROW_PREFIXED

}  // namespace tk
