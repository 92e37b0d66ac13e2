// Atomic cache writes and the helpers around them (see CacheFiles.h).
#include "runtime/CacheFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tk::cache {

namespace fs = std::filesystem;

namespace {
// Writes all of `bytes` to `fd`; false with errno set on failure.
bool writeAll(int fd, const std::string &bytes) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    p += n;
    left -= size_t(n);
  }
  return true;
}

// A device, FIFO or stream of this process (/dev/null, /dev/stdout): written
// where it is, since renaming a file over it would replace the node.
bool writeInPlace(const std::string &path, const std::string &bytes, std::string &error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  bool ok = fd >= 0 && writeAll(fd, bytes);
  int saved = ok ? 0 : errno;
  if (fd >= 0 && ::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (!ok) error = "cannot write '" + path + "': " + std::strerror(saved ? saved : EIO);
  return ok;
}
}  // namespace

bool writeAtomic(const std::string &path, const std::string &bytes, std::string &error, bool makeParents) {
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    error = "cannot write '" + path + "': " + std::strerror(EISDIR);
    return false;
  }
  // /dev/stdout may name a regular file the shell redirected to: replacing
  // that file would lose the output.
  const bool stream = path == "/dev/stdout" || path == "/dev/stderr" || path.rfind("/dev/fd/", 0) == 0 ||
                      path.rfind("/proc/self/fd/", 0) == 0;
  if ((exists && !S_ISREG(st.st_mode)) || stream) return writeInPlace(path, bytes, error);
  fs::path target(path);
  std::error_code ec;
  // Through a symlink the file it names is replaced, and the link stays.
  struct stat lst;
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    if (char *real = ::realpath(path.c_str(), nullptr)) {
      target = real;
      std::free(real);
    } else {
      fs::path to = fs::read_symlink(target, ec);
      if (ec) {
        error = "cannot write '" + path + "': " + ec.message();
        return false;
      }
      target = to.is_absolute() ? to : target.parent_path() / to;
    }
  }
  if (makeParents && target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec) {
    error = "cannot create '" + target.parent_path().string() + "': " + ec.message();
    return false;
  }
  // A name no other writer uses (pid and a per-process serial), opened with
  // O_EXCL: an existing file or link of that name makes it fail, never be
  // followed. Unlike mkstemp's 0600, mode 0666 lets the umask decide, as for
  // any file the user writes.
  static std::atomic<unsigned> serial{0};
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    name = (dir / (".tmp-" + target.filename().string() + "." + std::to_string(::getpid()) + "." +
                   std::to_string(serial++)))
               .string();
    fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    error = "cannot write in '" + dir.string() + "': " + std::strerror(errno);
    return false;
  }
  // A replaced file keeps its permissions.
  bool ok = (!exists || ::fchmod(fd, st.st_mode & 07777) == 0) && writeAll(fd, bytes);
  int saved = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && std::rename(name.c_str(), target.c_str()) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    ::unlink(name.c_str());
    error = "cannot write '" + path + "': " + std::strerror(saved ? saved : EIO);
  }
  return ok;
}

std::optional<std::string> readFile(const std::string &path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return ss.str();
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

std::function<void(const std::string &)> orStderr(std::function<void(const std::string &)> warn) {
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
