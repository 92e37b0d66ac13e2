// The sim as a sanitizer, through the public API on .tk kernels: an index
// into another live buffer is an error naming the parameter, the line and
// the byte offset (provenance), and sim:racecheck finds the global-memory
// race a missing debug_barrier() leaves (docs/sim.md).
#include <gtest/gtest.h>

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
  auto dev = tk::Device::open("sim:racecheck");
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

}  // namespace
