// Every file tk writes goes through one writer (runtime/OutputFiles.h): a
// fresh temporary file, never a planted one, then a rename; all of a
// command's outputs or none; symlinks replaced, never written through;
// devices, FIFOs and directories refused; a reason for each failure. And the
// caches' own checks (runtime/CacheFiles.h): a private directory, entries
// that are private regular files of bounded size.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/CacheFiles.h"
#include "runtime/OutputFiles.h"

namespace fs = std::filesystem;

bool writeAtomic(const std::string &path, const std::string &bytes, std::string &error) {
  return tk::files::writeFile(path, bytes, error);
}

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

TEST_F(Files, ASymlinkIsReplacedNeverWrittenThrough) {
  std::ofstream(dir / "victim") << "keep";
  fs::create_symlink("victim", dir / "link");
  ASSERT_TRUE(writeAtomic((dir / "link").string(), "new", error)) << error;
  EXPECT_EQ(slurp(dir / "victim"), "keep");
  EXPECT_FALSE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(slurp(dir / "link"), "new");
  // A dangling link is replaced too: its target is never created.
  fs::create_symlink("later", dir / "dangling");
  ASSERT_TRUE(writeAtomic((dir / "dangling").string(), "x", error)) << error;
  EXPECT_FALSE(fs::exists(dir / "later"));
  EXPECT_EQ(slurp(dir / "dangling"), "x");
  // A replaced file keeps its permissions.
  std::ofstream(dir / "real") << "old";
  fs::permissions(dir / "real", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ASSERT_TRUE(writeAtomic((dir / "real").string(), "new", error)) << error;
  EXPECT_EQ(fs::status(dir / "real").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST_F(Files, AnotherUsersSymlinkInAStickyDirectoryIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to plant a link owned by another user";
  const fs::path tmp = dir / "tmp";
  fs::create_directory(tmp);
  ASSERT_EQ(::chmod(tmp.c_str(), 01777), 0);
  std::ofstream(dir / "victim") << "keep";
  fs::create_symlink(dir / "victim", tmp / "out.ptx");
  ASSERT_EQ(::lchown((tmp / "out.ptx").c_str(), 4242, 4242), 0);
  EXPECT_FALSE(writeAtomic((tmp / "out.ptx").string(), "new", error));
  EXPECT_NE(error.find("symlink owned by user 4242 in a sticky shared directory"), std::string::npos) << error;
  EXPECT_EQ(slurp(dir / "victim"), "keep");
  EXPECT_TRUE(fs::is_symlink(tmp / "out.ptx"));
}

TEST_F(Files, DevicesFifosAndDirectoriesAreRefused) {
  EXPECT_FALSE(writeAtomic("/dev/full", "x", error));
  EXPECT_EQ(error, "cannot write '/dev/full': not a regular file (a FIFO, device or socket); write to a file, or '-' "
                   "for standard output");
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(writeAtomic(fifo.string(), "x", error));  // refused, not blocked on
  EXPECT_TRUE(fs::is_fifo(fifo));
  fs::create_directory(dir / "adir");
  EXPECT_FALSE(writeAtomic((dir / "adir").string(), "x", error));
  EXPECT_EQ(error, "cannot write '" + (dir / "adir").string() + "': Is a directory");
  // /dev/null discards; it is never replaced.
  ASSERT_TRUE(writeAtomic("/dev/null", "discarded", error)) << error;
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(Files, AFailedOutputLeavesNoneWritten) {
  // A file-size limit makes the third write fail (EFBIG) the way a full disk
  // does (ENOSPC): in a child, so the limit stays there.
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    tk::files::OutputSet set;
    set.add((dir / "a.npy").string(), "small");
    set.add((dir / "b.npy").string(), "small");
    set.add((dir / "c.npy").string(), std::string(8192, 'x'));
    std::string e;
    const bool ok = set.commit(e);
    const bool named = e == "cannot write '" + (dir / "c.npy").string() + "': File too large";
    ::_exit(!ok && named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "commit did not fail with the path and EFBIG";
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 0) << "no output, no temporary";
}

TEST_F(Files, TwoOutputsNamingOneFileAreRefused) {
  for (const auto &[a, b] : std::vector<std::pair<fs::path, fs::path>>{
           {dir / "x.npy", dir / "." / "x.npy"}, {dir / "x.npy", dir / "sub" / ".." / "x.npy"}}) {
    fs::create_directories(dir / "sub");
    tk::files::OutputSet set;
    set.add(a.string(), "1");
    set.add(b.string(), "2");
    EXPECT_FALSE(set.commit(error)) << a << " " << b;
    EXPECT_NE(error.find("is the same file as"), std::string::npos) << error;
    EXPECT_FALSE(fs::exists(dir / "x.npy"));
  }
  std::ofstream(dir / "h1") << "old";
  fs::create_hard_link(dir / "h1", dir / "h2");
  tk::files::OutputSet set;
  set.add((dir / "h1").string(), "1");
  set.add((dir / "h2").string(), "2");
  EXPECT_FALSE(set.commit(error));
  EXPECT_EQ(slurp(dir / "h1"), "old");
}

TEST_F(Files, MissingDirectoriesAreMadeNeverThroughADanglingLink) {
  ASSERT_TRUE(writeAtomic((dir / "gen" / "sub" / "x.ptx").string(), "ptx", error)) << error;
  EXPECT_EQ(slurp(dir / "gen" / "sub" / "x.ptx"), "ptx");
  fs::create_symlink(dir / "elsewhere" / "gen", dir / "planted");
  EXPECT_FALSE(writeAtomic((dir / "planted" / "x.ptx").string(), "ptx", error));
  EXPECT_NE(error.find("is a dangling symlink"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(dir / "elsewhere"));
  std::ofstream(dir / "afile") << "x";
  EXPECT_FALSE(writeAtomic((dir / "afile" / "x").string(), "x", error));
  EXPECT_NE(error.find("is not a directory"), std::string::npos) << error;
}

TEST_F(Files, CacheDirectoriesAreMadePrivateAndRefusedWhenShared) {
  std::vector<std::string> warnings;
  auto warn = [&](const std::string &w) { warnings.push_back(w); };
  const fs::path cache = dir / "cache" / "tk";
  ASSERT_TRUE(tk::cache::trustedDirectory(cache.string(), warn));
  EXPECT_EQ(fs::status(cache).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(dir / "cache").permissions() & fs::perms::all, fs::perms::owner_all);
  ASSERT_EQ(::chmod(cache.c_str(), 0777), 0);
  EXPECT_FALSE(tk::cache::trustedDirectory(cache.string(), warn));
  EXPECT_FALSE(tk::cache::trustedDirectory(cache.string(), warn));
  ASSERT_EQ(warnings.size(), 1u) << "warned once";
  EXPECT_NE(warnings[0].find("'" + cache.string() + "' is writable by group or others"), std::string::npos) << warnings[0];
  ASSERT_EQ(::chmod(cache.c_str(), 0700), 0);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(cache.c_str(), 4242, 4242), 0);
    EXPECT_FALSE(tk::cache::trustedDirectory(cache.string(), warn));
    EXPECT_NE(warnings.back().find("owned by user 4242"), std::string::npos) << warnings.back();
  }
  // Never made through a dangling link.
  fs::create_symlink(dir / "nowhere", dir / "link");
  EXPECT_FALSE(tk::cache::trustedDirectory((dir / "link" / "tk").string(), warn));
  EXPECT_FALSE(fs::exists(dir / "nowhere"));
}

TEST_F(Files, CacheEntriesArePrivateRegularFilesOfBoundedSize) {
  std::vector<std::string> warnings;
  auto warn = [&](const std::string &w) { warnings.push_back(w); };
  const fs::path e = dir / "entry";
  EXPECT_FALSE(tk::cache::readEntry(e.string(), 100, warn));
  EXPECT_TRUE(warnings.empty()) << "a missing entry is a quiet miss";
  ASSERT_TRUE(tk::cache::writeEntry(e.string(), "payload", error)) << error;
  EXPECT_EQ(fs::status(e).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(tk::cache::readEntry(e.string(), 100, warn), "payload");
  EXPECT_FALSE(tk::cache::readEntry(e.string(), 3, warn));  // over the cap: refused before reading
  ASSERT_EQ(::chmod(e.c_str(), 0622), 0);
  EXPECT_FALSE(tk::cache::readEntry(e.string(), 100, warn));
  fs::create_symlink(e, dir / "link");
  EXPECT_FALSE(tk::cache::readEntry((dir / "link").string(), 100, warn));
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(tk::cache::readEntry((dir / "fifo").string(), 100, warn));  // never blocks
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_NE(warnings[0].find("more than an entry may hold"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("writable by group or others"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[2].find("'" + (dir / "link").string() + "': it is a symlink"), std::string::npos) << warnings[2];
  EXPECT_NE(warnings[3].find("not a regular file"), std::string::npos) << warnings[3];
  // Storing replaces what was planted, FIFO included.
  ASSERT_TRUE(tk::cache::writeEntry((dir / "fifo").string(), "fresh", error)) << error;
  EXPECT_EQ(slurp(dir / "fifo"), "fresh");
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
