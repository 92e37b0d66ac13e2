// The sim as a sanitizer, through the public API on .tk kernels: an index
// into another live buffer is an error naming the parameter, the line and
// the byte offset (provenance), sim:racecheck finds the global-memory race
// a missing debug_barrier() leaves, and sim:overflow the i32 index that wraps
// before it reaches an address (docs/sim.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tk/runtime.h"
#include "TestSeed.h"

namespace {

std::string launchError(tk::Device &dev, const tk::Kernel &k, tk::Dim3 grid, const std::vector<tk::Arg> &args) {
  try {
    dev.launch(k, grid, args);
  } catch (const tk::Error &e) {
    return e.what();
  }
  return "";
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Sanitizer, AnIndexIntoAnotherBufferNamesTheParameterAndLine) {
  auto dev = tk::Device::open("sim");
  const std::string path = TK_SOURCE_DIR + "/tests/kernels/sanitizer.tk";
  tk::Kernel k = dev->load(tk::Compiler::compileFile(path, "shifted_load"));
  tk::Buffer x = dev->upload(std::vector<float>(16, 1.0f)), y = dev->upload(std::vector<float>(16, 2.0f));
  tk::Buffer out = dev->upload(std::vector<float>(16, 0.0f));
  EXPECT_EQ(launchError(*dev, k, {1}, {x, y, out, int32_t(0)}), "");
  // Aim x + i at y: every address lies in a live buffer, so a check against
  // all allocations (and compute-sanitizer's memcheck) sees nothing wrong.
  const int64_t bytes = int64_t(y.address()) - int64_t(x.address());
  const std::string m = launchError(*dev, k, {1}, {x, y, out, int32_t(bytes / 4)});
  EXPECT_NE(m.find("out-of-bounds load of"), std::string::npos) << m;
  EXPECT_NE(m.find("sanitizer.tk:7:13), block (0,0,0), thread 0: byte offset " + std::to_string(bytes) + " from x, "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("of its 64-byte buffer at"), std::string::npos) << m;
  EXPECT_NE(m.find("; the address is inside y's buffer"), std::string::npos) << m;
  // A negative offset is named against x, whatever lies below it.
  const std::string below = launchError(*dev, k, {1}, {x, y, out, int32_t(-4)});
  EXPECT_NE(below.find("byte offset -16 from x, 16 bytes before the start of its 64-byte buffer"), std::string::npos)
      << below;
}

// tests/kernels/debug_barrier.tk stores its block, then re-reads it mirrored:
// without its debug_barrier()s, sim:racecheck names the store and the load.
TEST(Sanitizer, RacecheckFindsTheMissingDebugBarrier) {
  // Both blocks race; one worker runs block 0 first, so the report names it
  // (with several, whichever block a loaded machine finishes first wins).
  auto dev = tk::Device::open("sim:racecheck,workers=1");
  const std::string path = TK_SOURCE_DIR + "/tests/kernels/debug_barrier.tk";
  std::string source = readFile(path), without = source;
  for (size_t at; (at = without.find("debug_barrier();")) != std::string::npos;) without.erase(at, 16);
  ASSERT_NE(without, source);
  const int n = 2048;
  auto run = [&](const std::string &src) {
    tk::Kernel k = dev->load(tk::Compiler::compileSource(src, path, "mirror_in_place"));
    tk::Buffer x = dev->upload(std::vector<float>(n, 1.0f)), out = dev->upload(std::vector<float>(n, 0.0f));
    return launchError(*dev, k, {uint32_t(n / 1024)}, {x, out, int32_t(n)});
  };
  EXPECT_EQ(run(source), "");
  const std::string m = run(without);
  EXPECT_NE(m.find("kernel mirror_in_place: global-memory race on byte at"), std::string::npos) << m;
  EXPECT_NE(m.find("from out, block (0,0,0)): thread "), std::string::npos) << m;
  EXPECT_NE(m.find("(" + path + ":10:5)"), std::string::npos) << m;   // the store
  EXPECT_NE(m.find("(" + path + ":13:13)"), std::string::npos) << m;  // the mirrored load
  EXPECT_NE(m.find("with no barrier between"), std::string::npos) << m;
}

// rows(x, out, stride, n) with stride 2^30: block 2's index pid * stride
// wraps to -2^31 and passes the mask `offs < n`. The sim without the check
// sees only the access 8 GiB before x; sim:overflow names the multiply.
TEST(Sanitizer, OverflowNamesTheMultiplyThatWraps) {
  const std::string path = TK_SOURCE_DIR + "/tests/kernels/sanitizer.tk";
  auto run = [&](const std::string &device, const char *kernel) {
    auto dev = tk::Device::open(device);
    tk::Kernel k = dev->load(tk::Compiler::compileFile(path, kernel));
    tk::Buffer x = dev->upload(std::vector<float>(32, 1.0f)), out = dev->upload(std::vector<float>(32, 0.0f));
    return launchError(*dev, k, {3}, {x, out, int32_t(1) << 30, int32_t(32)});
  };
  EXPECT_EQ(run("sim:overflow,workers=1", "rows"),
            "kernel rows: i32 overflow in an index (" + path + ":16:30), block (2,0,0), thread 0: 2 * 1073741824 = "
            "2147483648, which wraps to -2147483648 in i32; the value reaches the address of the load at " + path +
            ":18:23 (compute the index in i64)");
  const std::string plain = run("sim", "rows");
  EXPECT_NE(plain.find("(" + path + ":18:23), block (2,0,0), thread 0: byte offset -8589934592 from x"),
            std::string::npos)
      << plain;
  // The same index in i64 is past n in block 2, and masked off.
  EXPECT_EQ(run("sim:overflow", "wide_rows"), "");
}

// Philox wraps on purpose at every round; its bits reach no address, so the
// random kernels and the stdlib's dropout give the same bits under
// sim:overflow as without it, and no error.
TEST(Sanitizer, RandomNumberKernelsRunCleanUnderOverflow) {
  const std::string random = TK_SOURCE_DIR + "/tests/kernels/random.tk";
  const std::string dropout = TK_SOURCE_DIR + "/stdlib/dropout.tk";
  const int n = 781;
  const int64_t seed = int64_t(tk::test::testSeed());
  auto run = [&](const std::string &device, const std::string &file, const char *kernel) {
    auto dev = tk::Device::open(device);
    tk::Kernel k = dev->load(tk::Compiler::compileFile(file, kernel));
    // Room for `four`'s four rows.
    tk::Buffer a = dev->upload(std::vector<float>(4 * n, 1.0f)), b = dev->upload(std::vector<float>(4 * n, NAN)),
               c = dev->upload(std::vector<float>(4 * n, NAN));
    const tk::Dim3 grid{uint32_t((n + 255) / 256)};
    const tk::Buffer bits = a.as(tk::DType::I32);
    if (std::string(kernel) == "dropout")
      dev->launch(k, {1}, {a, b, int32_t(n), 0.25f, seed});
    else if (std::string(kernel) == "seed32")
      dev->launch(k, grid, {bits, b, int32_t(n), int32_t(seed)});
    else
      dev->launch(k, grid, {bits, b, c, int32_t(n), seed, int32_t(-(1 << 30))});
    std::vector<float> got = dev->download<float>(a, 4 * n);
    for (const tk::Buffer &more : {b, c})
      for (float v : dev->download<float>(more, 4 * n)) got.push_back(v);
    return got;
  };
  for (auto [file, kernel] : {std::pair{random, "streams"}, {random, "four"}, {random, "seed32"}, {dropout, "dropout"}}) {
    std::vector<float> plain, checked;
    ASSERT_NO_THROW(plain = run("sim", file, kernel)) << kernel;
    ASSERT_NO_THROW(checked = run("sim:overflow", file, kernel)) << kernel;
    ASSERT_EQ(plain.size(), checked.size());
    EXPECT_EQ(std::memcmp(plain.data(), checked.data(), plain.size() * sizeof(float)), 0) << kernel;
    EXPECT_NE(plain, std::vector<float>(plain.size(), 1.0f)) << kernel << " wrote nothing";
  }
}

// A pointer from a table of i64 addresses (vLLM's block tables): an index
// 16 past its 16-element buffer lands in the next buffer, which the check
// against all allocations accepted; now it is an error against the buffer
// the address pointed into, naming the line.
TEST(Sanitizer, AnIntegerMadePointerStaysInItsBuffer) {
  auto dev = tk::Device::open("sim");
  const std::string path = TK_SOURCE_DIR + "/tests/kernels/sanitizer.tk";
  tk::Kernel k = dev->load(tk::Compiler::compileFile(path, "table_gather"));
  tk::Buffer a = dev->upload(std::vector<float>(16, 1.0f)), next = dev->upload(std::vector<float>(16, 2.0f));
  tk::Buffer out = dev->upload(std::vector<float>(16, 0.0f));
  tk::Buffer table = dev->upload(std::vector<int64_t>{int64_t(a.address())});
  EXPECT_EQ(launchError(*dev, k, {1}, {table, out, int32_t(0)}), "");
  EXPECT_EQ(dev->download<float>(out, 16), std::vector<float>(16, 1.0f));
  const int64_t bytes = int64_t(next.address()) - int64_t(a.address());
  const std::string m = launchError(*dev, k, {1}, {table, out, int32_t(bytes / 4)});
  EXPECT_NE(m.find("kernel table_gather: out-of-bounds load of 4 bytes at"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":34:20), block (0,0,0), thread 0: byte offset " + std::to_string(bytes) +
                   " from the integer-made pointer 0x"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("of its 64-byte buffer at"), std::string::npos) << m;
  EXPECT_NE(m.find("; the address is inside another live allocation"), std::string::npos) << m;
}

}  // namespace
