// One tk::Error hierarchy (include/tk/error.h): each representative failure
// throws its own class, every one is catchable as tk::Error, and a catch
// that adds context keeps the class.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <typeinfo>

#include "backend/cuda/Driver.h"
#include "backend/sim/Simulator.h"
#include "ir/Parser.h"
#include "lang/HostExpr.h"
#include "tk/compiler.h"
#include "tk/runtime.h"

namespace {

// Runs f, which must throw; returns the exception's dynamic type and message
// as caught through tk::Error (so a throw outside the hierarchy fails).
template <class F>
std::pair<const std::type_info *, std::string> caught(F &&f) {
  try {
    f();
  } catch (const tk::Error &e) {
    return {&typeid(e), e.what()};
  } catch (const std::exception &e) {
    ADD_FAILURE() << "not a tk::Error: " << typeid(e).name() << ": " << e.what();
    return {&typeid(e), e.what()};
  }
  ADD_FAILURE() << "nothing was thrown";
  return {nullptr, ""};
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

const char *kKernel = R"(kernel copy(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 128) {
    let offs = program_id(0) * BLOCK + arange(BLOCK);
    store(out + offs, load(x + offs, mask: offs < n), mask: offs < n);
}
)";

TEST(Errors, BadSourceIsACompileError) {
  auto [type, what] = caught([] { tk::Compiler::compileSource("kernel k( {", "bad.tk", "k"); });
  EXPECT_EQ(*type, typeid(tk::CompileError));
  EXPECT_TRUE(contains(what, "bad.tk:1:")) << what;
  EXPECT_THROW(tk::Compiler::compileSource("kernel k( {", "bad.tk", "k"), tk::CompileError);
}

TEST(Errors, MalformedTileIrIsAnIRParseError) {
  // In the IR library itself...
  EXPECT_THROW(tk::ir::parseModule("kernel @k(%a: i32) {\n  %0 = frob %a : i32\n", "bad.tir"), tk::IRParseError);
  std::string error;
  EXPECT_FALSE(tk::ir::parseModule("kernel @k(", "bad.tir", error));
  EXPECT_TRUE(contains(error, "bad.tir:1:")) << error;
  // ...and through the compiler's API, reading a .tir file: a CompileError too.
  const std::string path = std::string(TK_BINARY_DIR) + "/errors-test-bad.tir";
  std::ofstream(path) << "kernel @k(%a: i32) {\n  %0 = frob %a : i32\n";
  auto [type, what] = caught([&] { tk::Compiler::emit(path, "k", tk::Stage::Llvm); });
  EXPECT_EQ(*type, typeid(tk::IRParseError));
  EXPECT_TRUE(contains(what, "errors-test-bad.tir:2:")) << what;
  EXPECT_THROW(tk::Compiler::emit(path, "k", tk::Stage::Llvm), tk::CompileError);
  std::remove(path.c_str());
}

TEST(Errors, HostExpressionDivisionByZeroIsAHostExprError) {
  std::string error;
  auto e = tk::lang::HostExpr::parse("n / B", "--grid", error);
  ASSERT_TRUE(e) << error;
  const std::map<std::string, tk::lang::HostValue> values = {{"n", tk::lang::HostValue::ofInt(4)},
                                                             {"B", tk::lang::HostValue::ofInt(0)}};
  auto [type, what] = caught([&] { e->eval(values); });
  EXPECT_EQ(*type, typeid(tk::lang::HostExprError));  // the public class, with the place in the text
  EXPECT_TRUE(contains(what, "division by zero")) << what;
  EXPECT_THROW(e->eval(values), tk::HostExprError);
}

TEST(Errors, SimOutOfBoundsIsASimError) {
  auto dev = tk::Device::open("sim");
  tk::CompileOptions o;
  o.emitPtx = false;
  tk::Kernel k = dev->load(tk::Compiler::compileSource(kKernel, "copy.tk", "copy", o));
  tk::Buffer x = dev->alloc(64 * 4), out = dev->alloc(64 * 4);
  // n past the buffers' end: the masked accesses reach beyond them.
  auto [type, what] = caught([&] { dev->launch(k, {1}, {x, out, int32_t(128)}); });
  EXPECT_EQ(*type, typeid(tk::SimError));
  EXPECT_TRUE(contains(what, "out-of-bounds")) << what;
  EXPECT_TRUE(contains(what, "copy.tk:3:")) << what;
  // The sim's own name is the same class.
  EXPECT_EQ(typeid(tk::sim::SimError), typeid(tk::SimError));
}

TEST(Errors, NoGpuIsCudaUnavailable) {
  std::unique_ptr<tk::Device> dev;
  try {
    dev = tk::Device::open("cuda");
  } catch (const tk::CudaUnavailable &e) {
    EXPECT_TRUE(contains(e.what(), "cannot open CUDA device 0: ")) << e.what();
    return;
  }
  GTEST_SKIP() << "a GPU is present: " << dev->name();
}

TEST(Errors, ContextKeepsTheClassAndItsData) {
  try {
    tk::CudaError(2, "cuMemAlloc", "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory")
        .rethrowPrefixed("kernel k: ");
  } catch (const tk::Error &e) {
    ASSERT_EQ(typeid(e), typeid(tk::CudaError));
    const auto &c = static_cast<const tk::CudaError &>(e);
    EXPECT_EQ(c.code(), 2);
    EXPECT_EQ(c.call(), "cuMemAlloc");
    EXPECT_EQ(std::string(e.what()), "kernel k: cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
  }
  EXPECT_EQ(typeid(tk::cuda::Error), typeid(tk::CudaError));
  EXPECT_EQ(typeid(tk::cuda::Unavailable), typeid(tk::CudaUnavailable));
  tk::Location loc{"t.tk", 3, 7};
  try {
    tk::lang::HostExprError(loc, "unknown name 'x'").rethrowPrefixed("prune: ");
  } catch (const tk::lang::HostExprError &e) {
    EXPECT_EQ(e.loc().line, 3);
    EXPECT_EQ(std::string(e.what()), "prune: unknown name 'x'");
  }
  EXPECT_THROW(tk::InternalError("x").rethrowPrefixed("y"), tk::InternalError);
  EXPECT_THROW(tk::IRParseError("x").rethrowPrefixed("y"), tk::IRParseError);
  EXPECT_THROW(tk::Error("x").rethrowPrefixed("y"), tk::Error);
  // Everything is a std::runtime_error as well, for code that catches the standard types.
  EXPECT_THROW(tk::SimError("x").rethrowPrefixed("y"), std::runtime_error);
}

}  // namespace
