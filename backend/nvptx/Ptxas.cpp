// runPtxas: ptxas in a temporary directory through posix_spawn, and the
// parse of its -v resource report.
#include "backend/nvptx/Ptxas.h"
#include "tk/error.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/nvptx/Codegen.h"

extern char **environ;

namespace tk::nvptx {

namespace fs = std::filesystem;

namespace {
// A private directory under $TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tk-ptxas-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw tk::Error("cannot create a temporary directory for ptxas");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path &path() const { return path_; }

 private:
  fs::path path_;
};
}  // namespace

static std::string readText(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs argv with stdout and stderr both into `logPath`; returns the exit status.
static int spawn(const std::vector<std::string> &argv, const fs::path &logPath) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int err = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0)
    throw tk::Error("cannot run " + argv[0] + ": " + std::error_code(err, std::generic_category()).message());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw tk::Error("waiting for " + argv[0] + " failed");
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

void parsePtxasLog(const std::string &log, PtxasInfo &info) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex props(R"(Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  info.kernels.clear();
  PtxasKernelInfo *cur = nullptr;
  auto kernel = [&](const std::string &name) {
    for (auto &k : info.kernels)
      if (k.name == name) return &k;
    info.kernels.push_back({name});
    return &info.kernels.back();
  };
  std::istringstream lines(log);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, entry)) {
      cur = kernel(m[1]);
    } else if (std::regex_search(line, m, props)) {
      // Properties of a non-entry function come without a "Compiling entry"
      // line; only entries are reported.
      cur = nullptr;
      for (auto &k : info.kernels)
        if (k.name == m[1].str()) cur = &k;
    } else if (cur && std::regex_search(line, m, frame)) {
      cur->stackBytes = std::stoi(m[1]);
      cur->spillStoreBytes = std::stoi(m[2]);
      cur->spillLoadBytes = std::stoi(m[3]);
    } else if (cur && std::regex_search(line, m, used)) {
      cur->registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) cur->sharedBytes = std::stoi(m[1]);
    }
  }
  info.registers = -1;
  info.spillStoreBytes = info.spillLoadBytes = info.sharedBytes = 0;
  for (const auto &k : info.kernels) {
    info.registers = std::max(info.registers, k.registers);
    info.spillStoreBytes += k.spillStoreBytes;
    info.spillLoadBytes += k.spillLoadBytes;
    info.sharedBytes = std::max(info.sharedBytes, k.sharedBytes);
  }
}

PtxasInfo runPtxas(const std::string &ptx, const std::string &arch, const Toolkit &tk) {
  checkArch(arch);
  PtxasInfo info;
  if (!tk.hasPtxas()) {
    info.log = "ptxas not found (no CUDA toolkit in CUDA_HOME or /usr/local/cuda)";
    return info;
  }
  TempDir dir;
  fs::path in = dir.path() / "kernel.ptx", out = dir.path() / "kernel.cubin", logPath = dir.path() / "ptxas.log";
  {
    std::ofstream f(in, std::ios::binary);
    f << ptx;
    if (!f) throw tk::Error("cannot write " + in.string());
  }
  int rc = spawn({tk.ptxas, "-v", "-arch=" + arch, "-o", out.string(), in.string()}, logPath);
  info.ran = true;
  info.log = readText(logPath);
  if (rc != 0) throw tk::Error("ptxas -arch=" + arch + " failed (exit " + std::to_string(rc) + "):\n" + info.log);
  parsePtxasLog(info.log, info);
  std::string bytes = readText(out);
  info.cubin.assign(bytes.begin(), bytes.end());
  return info;
}

}  // namespace tk::nvptx
