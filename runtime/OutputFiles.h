// The one writer of every file tk writes (tkc's -o, --json, --plot,
// --depfile, .npy outputs, generated launchers; Bundle::save; cache entries
// through CacheFiles.h): all of a command's outputs or none, never through a
// planted symlink, never into a FIFO or device, every failure named.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace tk::files {

// Creates `dir` and its missing parents with `mode` (before the umask). An
// existing component may be a symlink to a directory (a user's home often
// is); a dangling one is an error, never created through. False with
// `error` ("cannot create 'DIR': reason") on failure.
bool makeDirectories(const std::string &dir, mode_t mode, std::string &error);

// One command's outputs, written together by commit():
// - each goes to a fresh temporary file beside its target (O_EXCL|O_NOFOLLOW,
//   so no planted name is followed), and only when every one is written
//   whole are they all renamed over their targets; any failure (ENOSPC,
//   EIO, EFBIG, a refused target) removes every temporary and changes
//   nothing;
// - a symlink at the target is replaced, not written through, except in a
//   sticky world-writable directory (/tmp) where it belongs to someone else
//   than you and the directory's owner: refused there, as the kernel's
//   fs.protected_symlinks refuses to follow it;
// - a directory, FIFO, device or socket is refused: "-" and /dev/stdout
//   mean standard output, /dev/stderr standard error, /dev/null discards;
//   these streams are written last, after the renames;
// - two outputs naming one file (by path, "./x" and "x", or a hard link)
//   are refused before anything is written;
// - a missing directory above a target is created.
class OutputSet {
 public:
  struct Options {
    mode_t fileMode = 0666;  // a new file's mode before the umask (a replaced file keeps its own)
    mode_t dirMode = 0777;   // missing directories' mode before the umask
    // Cache entries: a non-regular file at the target (a planted FIFO) is
    // replaced by the rename instead of refused.
    bool replaceAnything = false;
  };
  OutputSet() = default;
  explicit OutputSet(Options o) : opts_(o) {}

  void add(std::string path, std::string bytes);
  // Writes every output added; false with `error` ("cannot write 'PATH':
  // reason") when any fails, then no target has changed (a stream written
  // last may have been cut short).
  bool commit(std::string &error);

 private:
  struct Output {
    std::string path, bytes;
  };
  Options opts_;
  std::vector<Output> outputs_;
};

// An OutputSet of one file.
bool writeFile(const std::string &path, const std::string &bytes, std::string &error,
               OutputSet::Options opts = OutputSet::Options());

}  // namespace tk::files
