// Cache directories and entries that another user cannot plant or edit
// (see CacheFiles.h).
#include "runtime/CacheFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "runtime/OutputFiles.h"

namespace tk::cache {

namespace fs = std::filesystem;

namespace {
// Why a file or directory with status `st` is not ours alone, or "".
std::string notPrivate(const struct stat &st) {
  if (st.st_uid != ::geteuid()) return "owned by user " + std::to_string(st.st_uid) + ", not you";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by group or others";
  return "";
}

// Reads exactly `size` bytes from `fd` (one more would mean it grew).
std::optional<std::string> readFd(int fd, uint64_t size) {
  std::string out(size, '\0');
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, out.data() + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += size_t(n);
  }
  return out;
}
}  // namespace

void warnOnce(const WarnFn &warn, const std::string &message) {
  // Process-wide on purpose: many Compilers and Tuners share one cache.
  static std::mutex mu;
  static std::set<std::string> said;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!said.insert(message).second) return;
  }
  orStderr(warn)(message);
}

bool trustedDirectory(const std::string &dir, const WarnFn &warn) {
  std::string error;
  if (!files::makeDirectories(dir, 0700, error)) {
    warnOnce(warn, "cache off: " + error + " (set TK_CACHE_DIR to a directory of yours)");
    return false;
  }
  struct stat st;
  std::string why;
  if (::stat(dir.c_str(), &st) != 0) why = std::strerror(errno);
  else if (!S_ISDIR(st.st_mode)) why = "not a directory";
  else why = notPrivate(st);
  if (why.empty()) return true;
  warnOnce(warn, "cache off: the cache directory '" + dir + "' is " + why +
                     " (tk uses a cache only you can write; set TK_CACHE_DIR to one, created 0700)");
  return false;
}

std::optional<std::string> readEntry(const std::string &path, uint64_t cap, const WarnFn &warn) {
  auto refuse = [&](const std::string &why) -> std::optional<std::string> {
    warnOnce(warn, "ignoring cache entry '" + path + "': " + why + "; it is replaced");
    return std::nullopt;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    return refuse(errno == ELOOP ? "it is a symlink" : std::strerror(errno));
  }
  struct stat st;
  std::optional<std::string> text;
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (why = notPrivate(st); !why.empty()) {
  } else if (uint64_t(st.st_size) > cap)
    why = std::to_string(st.st_size) + " bytes, more than an entry may hold (" + std::to_string(cap) + ")";
  else if (!(text = readFd(fd, uint64_t(st.st_size))))
    why = "cannot be read whole";
  ::close(fd);
  if (!why.empty()) return refuse(why);
  return text;
}

bool writeEntry(const std::string &path, const std::string &bytes, std::string &error) {
  files::OutputSet::Options o;
  o.fileMode = 0600;
  o.dirMode = 0700;
  o.replaceAnything = true;
  return files::writeFile(path, bytes, error, o);
}

std::optional<std::string> readFile(const std::string &path, uint64_t cap) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<std::string> text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) <= cap) text = readFd(fd, uint64_t(st.st_size));
  ::close(fd);
  return text;
}

std::vector<std::string> listFiles(const std::string &dir, const std::string &suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(ec) && name.size() >= suffix.size() && name[0] != '.' &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

WarnFn orStderr(WarnFn warn) {
  if (warn) return warn;
  return [](const std::string &message) { std::fprintf(stderr, "tk: warning: %s\n", message.c_str()); };
}

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hash64(std::string_view bytes) {
  const uint64_t h = fnv1a64(bytes);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace tk::cache
