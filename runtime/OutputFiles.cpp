// The one output writer (see OutputFiles.h): checks every target, writes
// temporaries, then renames them all.
#include "runtime/OutputFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>

namespace tk::files {

namespace fs = std::filesystem;

namespace {

std::string cannot(const std::string &path, const std::string &why) { return "cannot write '" + path + "': " + why; }

// Writes all of `bytes` to `fd`; false with errno set on failure (a short
// write is how a full disk shows before ENOSPC).
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

// Where an output goes: a file, or one of the streams the process already has.
enum class Kind { File, Stdout, Stderr, Discard };

Kind kindOf(const std::string &path) {
  if (path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1") return Kind::Stdout;
  if (path == "/dev/stderr" || path == "/dev/fd/2" || path == "/proc/self/fd/2") return Kind::Stderr;
  if (path == "/dev/null") return Kind::Discard;
  return Kind::File;
}

// One target, checked and written to its temporary.
struct Pending {
  std::string path, temp, target, dir;
  bool replacesFile = false;
  mode_t oldMode = 0;
};

// A symlink `link` (lstat `lst`) in `dir` that the kernel's
// fs.protected_symlinks would not let us follow: in a sticky world-writable
// directory, owned by neither us nor the directory's owner. Replacing it is
// safe, but it is someone else's planted name: refuse, as the kernel would.
bool protectedSymlink(const std::string &dir, const struct stat &lst) {
  struct stat ds;
  if (::stat(dir.c_str(), &ds) != 0) return false;
  const bool stickyShared = (ds.st_mode & S_ISVTX) && (ds.st_mode & S_IWOTH);
  return stickyShared && lst.st_uid != ::geteuid() && lst.st_uid != ds.st_uid;
}

// The file a target names, for finding two outputs that are one: its
// directory resolved, its own name kept (a link there is replaced, not
// followed).
std::string identity(const std::string &dir, const std::string &name) {
  char *real = ::realpath(dir.c_str(), nullptr);
  std::string d = real ? real : fs::absolute(dir).lexically_normal().string();
  std::free(real);
  return d + "/" + name;
}

}  // namespace

bool makeDirectories(const std::string &dir, mode_t mode, std::string &error) {
  if (dir.empty()) return true;
  fs::path prefix;
  for (const fs::path &part : fs::path(dir)) {
    prefix /= part;
    if (part.empty() || part == "." || part == "/") continue;
    const std::string p = prefix.string();
    for (int attempt = 0;; ++attempt) {
      struct stat st;
      if (::lstat(p.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) break;
        if (S_ISLNK(st.st_mode)) {
          struct stat to;
          const bool resolves = ::stat(p.c_str(), &to) == 0;
          if (resolves && S_ISDIR(to.st_mode)) break;
          error = "cannot create '" + dir + "': '" + p + "' is a " +
                  (resolves ? "symlink to something not a directory" : "dangling symlink");
          return false;
        }
        error = "cannot create '" + dir + "': '" + p + "' is not a directory";
        return false;
      }
      if (errno != ENOENT) {
        error = "cannot create '" + dir + "': " + std::strerror(errno);
        return false;
      }
      // mkdir never follows a symlink at its last component: a link planted
      // between the lstat and here makes it fail with EEXIST, then looked at.
      if (::mkdir(p.c_str(), mode) == 0) break;
      if (errno != EEXIST || attempt > 0) {
        error = "cannot create '" + p + "': " + std::strerror(errno);
        return false;
      }
    }
  }
  return true;
}

void OutputSet::add(std::string path, std::string bytes) { outputs_.push_back({std::move(path), std::move(bytes)}); }

bool OutputSet::commit(std::string &error) {
  std::vector<Pending> pending;
  auto removeTemps = [&] {
    for (const Pending &p : pending)
      if (!p.temp.empty()) ::unlink(p.temp.c_str());
  };
  auto fail = [&](std::string why) {
    removeTemps();
    error = std::move(why);
    return false;
  };

  // Check every target before anything is written.
  std::map<std::string, std::string> seen;  // identity -> the path that named it
  auto claim = [&](const std::string &id, const std::string &path) {
    auto [it, fresh] = seen.emplace(id, path);
    if (fresh) return true;
    error = "cannot write '" + path + "': it is the same file as '" + it->second + "', another output of this command";
    return false;
  };
  for (const Output &o : outputs_) {
    const Kind kind = kindOf(o.path);
    if (kind == Kind::Discard) continue;
    if (kind != Kind::File) {
      if (!claim(kind == Kind::Stdout ? "<stdout>" : "<stderr>", o.path)) return fail(error);
      continue;
    }
    const fs::path p(o.path);
    const std::string name = p.filename().string();
    if (o.path.empty() || name.empty() || name == "." || name == "..") return fail(cannot(o.path, std::strerror(EISDIR)));
    Pending w;
    w.path = o.path;
    w.target = o.path;
    w.dir = p.has_parent_path() ? p.parent_path().string() : ".";
    struct stat st;
    if (::lstat(o.path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return fail(cannot(o.path, std::strerror(EISDIR)));
      if (S_ISLNK(st.st_mode) && protectedSymlink(w.dir, st))
        return fail(cannot(o.path, "it is a symlink owned by user " + std::to_string(st.st_uid) +
                                       " in a sticky shared directory; refusing to replace it"));
      if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode) && !opts_.replaceAnything)
        return fail(cannot(o.path, "not a regular file (a FIFO, device or socket); write to a file, or '-' for "
                                   "standard output"));
      if (S_ISREG(st.st_mode)) {
        w.replacesFile = true;
        w.oldMode = st.st_mode & 07777;
        // A hard link under another name is the same file too.
        if (!claim("inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino), o.path)) return fail(error);
      }
    } else if (errno != ENOENT && errno != ENOTDIR) {
      return fail(cannot(o.path, std::strerror(errno)));
    }
    if (!claim(identity(w.dir, name), o.path)) return fail(error);
    pending.push_back(std::move(w));
  }

  // Each file to a temporary beside its target: same file system, so the
  // rename is atomic. A name no other writer uses (pid and a serial), opened
  // with O_EXCL|O_NOFOLLOW: a planted file or link of that name makes the
  // open fail, never be followed.
  static std::atomic<unsigned> serial{0};
  size_t i = 0;
  for (const Output &o : outputs_) {
    if (kindOf(o.path) != Kind::File) continue;
    Pending &w = pending[i++];
    std::string why;
    if (!makeDirectories(w.dir, opts_.dirMode, why)) return fail(cannot(w.path, why));
    int fd = -1;
    std::string temp;
    for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
      temp = (fs::path(w.dir) / (".tmp-" + fs::path(w.target).filename().string() + "." + std::to_string(::getpid()) +
                                 "." + std::to_string(serial++)))
                 .string();
      fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, opts_.fileMode);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return fail("cannot write in '" + w.dir + "': " + std::strerror(errno));
    w.temp = temp;
    bool ok = (!w.replacesFile || ::fchmod(fd, w.oldMode) == 0) && writeAll(fd, o.bytes);
    int saved = ok ? 0 : errno;
    if (::close(fd) != 0 && ok) {  // NFS and some full disks report here
      ok = false;
      saved = errno;
    }
    if (!ok) return fail(cannot(w.path, std::strerror(saved ? saved : EIO)));
  }

  // Every temporary is whole: put them in place.
  for (Pending &w : pending) {
    if (std::rename(w.temp.c_str(), w.target.c_str()) != 0) return fail(cannot(w.path, std::strerror(errno)));
    w.temp.clear();
  }

  for (const Output &o : outputs_) {
    const Kind kind = kindOf(o.path);
    if (kind != Kind::Stdout && kind != Kind::Stderr) continue;
    std::FILE *f = kind == Kind::Stdout ? stdout : stderr;
    errno = 0;
    if (std::fwrite(o.bytes.data(), 1, o.bytes.size(), f) != o.bytes.size() || std::fflush(f) != 0) {
      error = "cannot write to standard " + std::string(kind == Kind::Stdout ? "output" : "error") + ": " +
              std::strerror(errno ? errno : EIO);
      return false;
    }
  }
  return true;
}

bool writeFile(const std::string &path, const std::string &bytes, std::string &error, OutputSet::Options opts) {
  OutputSet set(opts);
  set.add(path, bytes);
  return set.commit(error);
}

}  // namespace tk::files
