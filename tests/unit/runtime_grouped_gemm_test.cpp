// Triton's tutorial 08 grouped GEMM (tests/kernels/grouped_gemm.tk) on the
// sim against a double-precision reference: per-group matrices passed as
// i64 addresses cast back with `as *f16`, and as `**f16` arrays; the sim's
// check of an access through a pointer made from an integer; bitcast
// (tests/kernels/bitcast.tk) against std::bit_cast.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>

#include "runtime_TestUtil.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/grouped_gemm.tk";

struct Group {
  int M, N, K, lda, ldb, ldc;  // leading dims may exceed K, N, N: padding stays untouched
};

constexpr uint16_t kPoison = 0x7e00 | 0x1234;  // an f16 NaN no result can be

// Both kernels take the same buffers: i64 addresses are what a `**f16` holds.
void runGroups(const std::string &kernel) {
  auto dev = tk::Device::open("sim");
  // Sizes 1 and 781, K not a multiple of BLOCK_SIZE_K, N not one of
  // BLOCK_SIZE_N, padded rows: every mask of the kernel matters.
  const std::vector<Group> groups = {
      {1, 1, 1, 1, 1, 1}, {781, 40, 33, 33, 40, 40}, {37, 70, 64, 80, 72, 75}, {16, 16, 130, 130, 16, 16}};
  std::vector<std::vector<float>> a, b;
  std::vector<tk::Buffer> da, db, dc;
  std::vector<int32_t> sizes, lds;
  for (const Group &g : groups) {
    a.push_back(tk::test::exactHalfInputs(size_t(g.M) * g.lda));
    b.push_back(tk::test::exactHalfInputs(size_t(g.K) * g.ldb));
    da.push_back(dev->upload(tk::test::f16Values(a.back())));
    db.push_back(dev->upload(tk::test::f16Values(b.back())));
    dc.push_back(dev->upload(std::vector<uint16_t>(size_t(g.M) * g.ldc, kPoison)));
    sizes.insert(sizes.end(), {g.M, g.N, g.K});
    lds.insert(lds.end(), {g.lda, g.ldb, g.ldc});
  }
  auto addresses = [&](const std::vector<tk::Buffer> &bufs) {
    std::vector<int64_t> out;
    for (const tk::Buffer &buf : bufs) out.push_back(int64_t(buf.address()));
    return dev->upload(out);
  };
  tk::Buffer pa = addresses(da), pb = addresses(db), pc = addresses(dc);
  const int numSm = 4;
  tk::CompileOptions o;
  o.defines = {{"NUM_SM", std::to_string(numSm)}};
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, kernel, o));
  (*dev)(k, {uint32_t(numSm)}, pa, pb, pc, dev->upload(sizes), dev->upload(lds), int32_t(groups.size()));

  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group &g = groups[gi];
    SCOPED_TRACE("group " + std::to_string(gi) + ": " + std::to_string(g.M) + "x" + std::to_string(g.N) + "x" +
                 std::to_string(g.K));
    std::vector<uint16_t> c = dev->download<uint16_t>(dc[gi], size_t(g.M) * g.ldc);
    int bad = 0;
    for (int m = 0; m < g.M; ++m)
      for (int n = 0; n < g.ldc; ++n) {
        const uint16_t got = c[size_t(m) * g.ldc + n];
        if (n >= g.N) {  // padding: never written
          if (got != kPoison && bad++ < 5) ADD_FAILURE() << "padding (" << m << ", " << n << ") was written";
          continue;
        }
        double ref = 0;
        for (int kk = 0; kk < g.K; ++kk) ref += double(a[gi][size_t(m) * g.lda + kk]) * b[gi][size_t(kk) * g.ldb + n];
        // Exact inputs: f32 accumulation is exact, so the f16 result is ref rounded once.
        const uint16_t want = tk::floatToHalfBits(float(ref));
        if (got != want && bad++ < 5)
          ADD_FAILURE() << "C[" << m << ", " << n << "] = " << tk::halfBitsToFloat(got) << ", want " << ref;
      }
    EXPECT_EQ(bad, 0);
  }
}

TEST(GroupedGemm, AddressesCastBackMatchDoubleReference) { runGroups("grouped_matmul"); }

TEST(GroupedGemm, PointerArraysMatchDoubleReference) { runGroups("grouped_matmul_pp"); }

// An address the program computes is checked like any pointer: inside a live
// buffer it reads, one element past the end is an error naming the .tk line.
TEST(GroupedGemm, SimChecksPointersMadeFromIntegers) {
  auto dev = tk::Device::open("sim");
  tk::Kernel k = dev->load(tk::Compiler::compileFile(kFile, "read_at"));
  const std::vector<float> x = {1.5f, 2.5f, 3.5f};
  tk::Buffer dx = dev->upload(x), out = dev->upload(std::vector<float>{-1.0f});
  (*dev)(k, {1u}, int64_t(dx.address()), int64_t(8), out);
  EXPECT_EQ(dev->download<float>(out, 1)[0], 3.5f);
  try {
    (*dev)(k, {1u}, int64_t(dx.address()), int64_t(12), out);
    FAIL() << "a read past the buffer's end went unreported";
  } catch (const tk::Error &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("out-of-bounds load"), std::string::npos) << what;
    // The line of read_at's load, wherever the file puts it.
    std::ifstream in(kFile);
    std::string line;
    int n = 0, loadLine = 0;
    while (std::getline(in, line)) {
      ++n;
      if (line.find("store(out, load(p))") != std::string::npos) loadLine = n;
    }
    EXPECT_NE(what.find("grouped_gemm.tk:" + std::to_string(loadLine) + ":"), std::string::npos) << what;
  }
}

// bitcast keeps every bit, NaN payloads and -0.0 included, at a size with a
// masked tail (781).
TEST(Bitcast, KeepsTheBits) {
  auto dev = tk::Device::open("sim");
  const int n = 781;
  std::vector<float> x = tk::test::randomFloats(n, -1e3f, 1e3f);
  x[0] = -0.0f, x[1] = std::bit_cast<float>(0x7fc01234u), x[2] = INFINITY;
  std::vector<uint16_t> h = tk::test::f16Values(tk::test::randomFloats(n, -10.0f, 10.0f));
  h[0] = 0x8000, h[1] = 0x7e01;
  const int32_t poison = 0x5a5a5a5a;
  tk::Buffer dxi = dev->upload(std::vector<int32_t>(n, poison)), dhi = dev->upload(std::vector<uint16_t>(n, 0x5a5a)),
             dhb = dev->upload(std::vector<uint16_t>(n, 0x5a5a));
  // i32 poison bits for the f32 output `back`: reinterpreted on purpose.
  tk::Buffer dback = dev->upload(std::vector<int32_t>(n, poison)).as(tk::DType::F32);
  tk::Kernel k = dev->load(tk::Compiler::compileFile(TK_SOURCE_DIR + "/tests/kernels/bitcast.tk", "bits"));
  (*dev)(k, {uint32_t((n + 127) / 128)}, dev->upload(x), dev->upload(h), dxi, dhi, dhb, dback, int32_t(n));
  std::vector<uint32_t> xi = dev->download<uint32_t>(dxi, n), back = dev->download<uint32_t>(dback, n);
  std::vector<uint16_t> hi = dev->download<uint16_t>(dhi, n), hb = dev->download<uint16_t>(dhb, n);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const uint32_t want = std::bit_cast<uint32_t>(x[i]);
    if ((xi[i] != want || back[i] != (want ^ 0x80000000u) || hi[i] != h[i] || hb[i] != h[i]) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": " << std::hex << xi[i] << " " << back[i] << " " << hi[i] << " " << hb[i]
                    << ", want " << want << " " << (want ^ 0x80000000u) << " " << h[i];
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
