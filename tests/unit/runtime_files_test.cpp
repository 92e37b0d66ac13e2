// Every file tk writes goes through cache::writeAtomic: a fresh temporary
// file, never a planted one, then a rename; devices, FIFOs and streams in
// place; symlinks through to their target; a reason for each failure.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/CacheFiles.h"

namespace fs = std::filesystem;
using tk::cache::writeAtomic;

namespace {

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Files : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::path(TK_BINARY_DIR) / ("files-test-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  fs::path dir;
  std::string error;
};

}  // namespace

TEST_F(Files, APlantedTemporaryNameIsNeverFollowed) {
  std::ofstream(dir / "victim") << "keep";
  fs::create_symlink(dir / "victim", dir / "out.ptx.tmp");
  ASSERT_TRUE(writeAtomic((dir / "out.ptx").string(), "new", error)) << error;
  EXPECT_EQ(slurp(dir / "victim"), "keep");
  EXPECT_TRUE(fs::is_symlink(dir / "out.ptx.tmp"));
  EXPECT_EQ(slurp(dir / "out.ptx"), "new");
  // Nothing else is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 3);
}

TEST_F(Files, ASymlinkIsWrittenThroughAndKept) {
  std::ofstream(dir / "real") << "old";
  fs::permissions(dir / "real", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink("real", dir / "link");
  ASSERT_TRUE(writeAtomic((dir / "link").string(), "new", error)) << error;
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(slurp(dir / "real"), "new");
  EXPECT_EQ(fs::status(dir / "real").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  // A dangling link gets its target created.
  fs::create_symlink("later", dir / "dangling");
  ASSERT_TRUE(writeAtomic((dir / "dangling").string(), "x", error)) << error;
  EXPECT_TRUE(fs::is_symlink(dir / "dangling"));
  EXPECT_EQ(slurp(dir / "later"), "x");
}

TEST_F(Files, DevicesAndFifosAreWrittenInPlace) {
  // /dev/zero, like /dev/null, discards what it is given (and /dev/null may
  // already be a plain file where an older tk ran as root).
  ASSERT_TRUE(writeAtomic("/dev/zero", "discarded", error)) << error;
  struct stat st;
  ASSERT_EQ(::stat("/dev/zero", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  EXPECT_TRUE(writeAtomic(fifo.string(), "through the pipe", error)) << error;
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(Files, EveryFailureSaysWhy) {
  fs::create_directory(dir / "adir");
  EXPECT_FALSE(writeAtomic((dir / "adir").string(), "x", error));
  EXPECT_EQ(error, "cannot write '" + (dir / "adir").string() + "': Is a directory");
  EXPECT_FALSE(writeAtomic("/dev/full", "x", error));
  EXPECT_EQ(error, "cannot write '/dev/full': No space left on device");
  EXPECT_FALSE(writeAtomic((dir / "missing" / "x").string(), "x", error));
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

TEST_F(Files, ConcurrentWritersNeverFail) {
  const fs::path out = dir / "shared.tir";
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < 8; ++w)
    writers.emplace_back([&, w] {
      std::string e, text(4096 + w, char('a' + w));
      for (int i = 0; i < 50; ++i)
        if (!writeAtomic(out.string(), text, e)) ++failures;
    });
  for (std::thread &t : writers) t.join();
  EXPECT_EQ(failures, 0);
  const std::string last = slurp(out);
  ASSERT_GE(last.size(), 4096u);
  EXPECT_EQ(last, std::string(last.size(), last[0]));  // one writer's whole text
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}
