// tkc's launch description: the .npy reader and writer, LaunchSpec's parsing,
// checks, fills and grid, and `tkc run` end to end (the built binary on the
// sim, .npy in and out) against a double CPU reference on fresh inputs.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "LaunchSpec.h"
#include "Npy.h"
#include "TestSeed.h"
#include "runtime_TestUtil.h"

namespace {

// Absolute: tkc runs in scratch directories (TK_SOURCE_DIR is relative to
// the tests' working directory).
const std::string kSourceDir = (std::filesystem::absolute(TK_SOURCE_DIR) / "").lexically_normal().string();
const std::string kElementwise = kSourceDir + "stdlib/elementwise.tk";

// A fresh scratch directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = testing::TempDir() + "tkc_run_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    path_ = mkdtemp(buf.data());
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  std::string operator/(const std::string &name) const { return path_ + "/" + name; }
  // The names of the files in it, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    FILE *p = popen(("ls -A '" + path_ + "'").c_str(), "r");
    char line[4096];
    while (fgets(line, sizeof line, p)) out.push_back(std::string(line, strcspn(line, "\n")));
    pclose(p);
    return out;
  }

 private:
  std::string path_;
};

void writeBytes(const std::string &path, const std::string &bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The message of the tk::Error `f` throws ("" if none).
using tk::test::errorOf;

std::vector<float> randomFloats(size_t n) {
  static std::mt19937 rng(tk::test::testSeed());
  std::uniform_real_distribution<float> d(-4, 4);
  std::vector<float> v(n);
  for (float &f : v) f = d(rng);
  return v;
}

// Runs the built tkc with `args` (in directory `cwd` if given); returns its
// exit code, stdout+stderr in `output`.
int tkc(const std::string &args, std::string &output, const std::string &cwd = "") {
  std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") + std::string(TKC_PATH) + " " + args + " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  output.clear();
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// ---- .npy ---------------------------------------------------------------------

TEST(Npy, WritesWhatNumpyWrites) {
  TempDir dir;
  float v[3] = {0, 1, 2};
  tkc::writeNpy(dir / "a.npy", "f32", v, 3);
  std::string bytes = readBytes(dir / "a.npy");
  // np.save("a.npy", np.arange(3, dtype=np.float32)): format 1.0, the data
  // on a 64-byte boundary.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  ASSERT_EQ(bytes.size(), 128u + 12);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8, 118);
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(std::memcmp(bytes.data() + 128, v, 12), 0);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"a.npy"});  // no temporary left
}

TEST(Npy, RoundTripsEveryDtype) {
  TempDir dir;
  for (const char *dtype : {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "bool"}) {
    size_t elem = tkc::scalarBytes(dtype);
    std::vector<char> data(7 * elem);
    for (size_t i = 0; i < data.size(); ++i) data[i] = std::string(dtype) == "bool" ? char(i % 2) : char(i * 37);
    tkc::writeNpy(dir / "x.npy", dtype, data.data(), 7);
    tkc::NpyArray a = tkc::readNpy(dir / "x.npy");
    EXPECT_EQ(a.descr, tkc::npyDescr(dtype)) << dtype;
    EXPECT_EQ(a.shape, std::vector<uint64_t>{7}) << dtype;
    EXPECT_EQ(tkc::readNpyAs(dir / "x.npy", dtype, 7), data) << dtype;
  }
  EXPECT_EQ(tkc::npyDescr("bf16"), "<u2");
  EXPECT_EQ(tkc::npyDescr("bool"), "|b1");
  EXPECT_EQ(tkc::npyDescr("f33"), "");
}

TEST(Npy, ReadsVersions2And3AnyShapeAndOneDimFortran) {
  TempDir dir;
  int32_t v[6] = {1, 2, 3, 4, 5, 6};
  std::string one = tkc::encodeNpy("<i4", {2, 3}, false, v, sizeof v);
  // Formats 2.0 and 3.0 differ from 1.0 only in a 4-byte header length.
  for (char major : {2, 3}) {
    std::string header = one.substr(10, one.size() - 10 - sizeof v);
    std::string file = std::string("\x93NUMPY", 6) + major + '\0';
    uint32_t len = header.size();
    file.append(reinterpret_cast<const char *>(&len), 4);
    writeBytes(dir / "v.npy", file + header + std::string(reinterpret_cast<const char *>(v), sizeof v));
    std::vector<char> got = tkc::readNpyAs(dir / "v.npy", "i32", 6);
    EXPECT_EQ(std::memcmp(got.data(), v, sizeof v), 0) << int(major);
  }
  writeBytes(dir / "f.npy", tkc::encodeNpy("<i4", {6, 1}, true, v, sizeof v));
  EXPECT_EQ(tkc::readNpyAs(dir / "f.npy", "i32", 6).size(), sizeof v);
  writeBytes(dir / "s.npy", tkc::encodeNpy("<i4", {}, false, v, 4));
  EXPECT_EQ(tkc::readNpyAs(dir / "s.npy", "i32", 1).size(), 4u);
  uint8_t b[3] = {0, 7, 1};
  writeBytes(dir / "b.npy", tkc::encodeNpy("|b1", {3}, false, b, 3));
  EXPECT_EQ(tkc::readNpyAs(dir / "b.npy", "bool", 3), (std::vector<char>{0, 1, 1}));
}

TEST(Npy, NamesTheFileAndTheProblem) {
  TempDir dir;
  float v[4] = {};
  auto err = [&](const std::string &bytes, const std::string &dtype = "f32", uint64_t count = 4) {
    writeBytes(dir / "bad.npy", bytes);
    return errorOf([&] { tkc::readNpyAs(dir / "bad.npy", dtype, count); });
  };
  std::string good = tkc::encodeNpy("<f4", {4}, false, v, sizeof v);
  EXPECT_EQ(err(good), "");
  EXPECT_NE(err("hello").find("bad.npy' is not a .npy file"), std::string::npos);
  std::string v4 = good;
  v4[6] = 4;
  EXPECT_NE(err(v4).find("unsupported .npy format version 4.0"), std::string::npos);
  EXPECT_NE(err(good.substr(0, 40)).find("corrupt .npy header: it claims 118 bytes"), std::string::npos);
  EXPECT_NE(err(good.substr(0, good.size() - 1)).find("(16 bytes) but the file holds 15 data bytes"),
            std::string::npos);
  EXPECT_NE(err(good + "x").find("but the file holds 17 data bytes"), std::string::npos);
  EXPECT_NE(err(tkc::encodeNpy("<f4", {2, 2}, true, v, 16)).find("is in Fortran order (shape (2, 2))"),
            std::string::npos);
  EXPECT_NE(err(tkc::encodeNpy(">f4", {4}, false, v, 16)).find("'>f4' is big-endian"), std::string::npos);
  EXPECT_NE(err(good, "i32").find("holds float32 ('<f4'), expected int32 ('<i4') for i32"), std::string::npos);
  EXPECT_NE(err(good, "bf16", 8).find("bf16 has no numpy dtype"), std::string::npos);
  EXPECT_NE(err(good, "f32", 5).find("holds 4 elements (shape (4,)), expected 5 for f32[5]"), std::string::npos);
  std::string broken = good;
  broken.replace(broken.find("'shape'"), 7, "'shapf'");
  EXPECT_NE(err(broken).find("corrupt .npy header: unexpected key 'shapf'"), std::string::npos);
  broken = good;
  broken.replace(broken.find("False"), 5, "Flase");
  EXPECT_NE(err(broken).find("fortran_order must be True or False"), std::string::npos);
  EXPECT_NE(errorOf([&] { tkc::readNpy(dir / "missing.npy"); }).find("cannot read '"), std::string::npos);
}

TEST(Npy, AFailedWriteLeavesNothing) {
  TempDir dir;
  float v = 1;
  std::ofstream(dir / "afile") << "x";  // a file where a directory must be
  EXPECT_NE(errorOf([&] { tkc::writeNpy(dir / "afile/dir.npy", "f32", &v, 1); }).find("cannot write"),
            std::string::npos);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"afile"});
}

// ---- LaunchSpec -----------------------------------------------------------------

std::vector<tk::KernelParam> complexActivationParams() {
  auto param = [](const char *name, const char *type, bool isConst = false, const char *value = "") {
    tk::KernelParam p;
    p.name = name, p.type = type, p.isConst = isConst, p.value = value;
    return p;
  };
  return {param("x", "*f32"), param("y", "*f32"), param("out", "*f32"), param("n", "i32"),
          param("BLOCK", "i32", true, "1024")};
}

TEST(LaunchSpec, ParsesBuffersScalarsAndTheGrid) {
  tkc::LaunchSpec s = tkc::LaunchSpec::parse(
      {"x=f32[781]:rand", "y=f16[4]:@in.npy", "out=f32[781]:zeros>out.npy", "n=781", "eps=-1e-5", "flag=true"},
      "cdiv(n, BLOCK), max(1, 2)");
  ASSERT_EQ(s.args.size(), 6u);
  EXPECT_TRUE(s.args[0].isBuffer);
  EXPECT_EQ(s.args[0].count, 781u);
  EXPECT_EQ(s.args[1].fill, tkc::Fill::File);
  EXPECT_EQ(s.args[1].inFile, "in.npy");
  EXPECT_EQ(s.args[2].outFile, "out.npy");
  EXPECT_EQ(s.scalars.at("n").i, 781);
  EXPECT_DOUBLE_EQ(s.scalars.at("eps").f, -1e-5);
  EXPECT_EQ(s.scalars.at("flag").kind, tk::lang::HostValue::Kind::Bool);
  EXPECT_EQ(s.gridTexts, (std::vector<std::string>{"cdiv(n, BLOCK)", "max(1, 2)"}));
  tk::Dim3 g = s.gridForConsts({{"BLOCK", "256"}});
  EXPECT_EQ(g.x, 4u);
  EXPECT_EQ(g.y, 2u);
  EXPECT_EQ(g.z, 1u);
}

TEST(LaunchSpec, ChecksAgainstTheKernel) {
  auto params = complexActivationParams();
  auto check = [&](std::vector<std::string> args, const std::string &grid = "cdiv(n, BLOCK)") {
    return errorOf([&] { tkc::LaunchSpec::parse(args, grid).check("complex_activation", params); });
  };
  std::vector<std::string> ok = {"x=f32[8]:rand", "y=f32[8]:rand", "out=f32[8]:zeros", "n=8"};
  EXPECT_EQ(check(ok), "");
  auto with = [&](std::string replace) {
    std::vector<std::string> a = ok;
    for (std::string &s : a)
      if (s.substr(0, s.find('=')) == replace.substr(0, replace.find('='))) s = replace;
    return a;
  };
  EXPECT_NE(check(with("x=f16[8]:rand")).find("'x' is *f32 and needs a f32 buffer, got f16[8]"), std::string::npos);
  EXPECT_NE(check(with("n=8.5")).find("'n' is i32 and needs an integer literal, got '8.5'"), std::string::npos);
  EXPECT_NE(check(with("n=4294967296")).find("does not fit i32"), std::string::npos);
  EXPECT_NE(check(with("n=f32[8]:zeros")).find("'n' is a scalar (i32) and needs a literal"), std::string::npos);
  EXPECT_NE(check(with("x=3")).find("'x' is a pointer (*f32) and needs a buffer f32[COUNT]:INIT"), std::string::npos);
  EXPECT_NE(check({"x=f32[8]:rand", "n=8"}).find("missing --arg for y (*f32), out (*f32)"), std::string::npos);
  auto extra = ok;
  extra.push_back("BLOCK=4");
  EXPECT_NE(check(extra).find("'BLOCK' is a const parameter of 'complex_activation': set it with -D BLOCK=VALUE"),
            std::string::npos);
  extra.back() = "m=4";
  EXPECT_NE(check(extra).find("has no parameter 'm'; it is complex_activation(x: *f32"), std::string::npos);
  EXPECT_NE(check(ok, "cdiv(m, BLOCK)").find("'m' is not a parameter"), std::string::npos);
  EXPECT_NE(check(ok, "x").find("'x' is a buffer"), std::string::npos);
  EXPECT_NE(check(ok, "n / 2.0").find("not an integer number of blocks"), std::string::npos);
}

TEST(LaunchSpec, RejectsMalformedArgsAndGrids) {
  auto parse = [](std::vector<std::string> args, const std::string &grid = "1") {
    return errorOf([&] { tkc::LaunchSpec::parse(args, grid); });
  };
  EXPECT_NE(parse({"x"}).find("--arg expects NAME=SPEC, got 'x'"), std::string::npos);
  EXPECT_NE(parse({"x=f32[8]"}).find("no ':INIT' after ']'"), std::string::npos);
  EXPECT_NE(parse({"x=f33[8]:zeros"}).find("'f33' is not a tk scalar type"), std::string::npos);
  EXPECT_NE(parse({"x=f32[0]:zeros"}).find("COUNT must be a positive integer, got '0'"), std::string::npos);
  EXPECT_NE(parse({"x=f32[n]:zeros"}).find("COUNT must be a positive integer, got 'n'"), std::string::npos);
  EXPECT_NE(parse({"x=f32[8]:random"}).find("unknown INIT 'random'"), std::string::npos);
  EXPECT_NE(parse({"x=i32[8]:randn"}).find("randn needs a float dtype"), std::string::npos);
  EXPECT_NE(parse({"x=f32[8]:zeros>"}).find("'>' needs a file name"), std::string::npos);
  EXPECT_NE(parse({"x=1", "x=2"}).find("--arg 'x' is given twice ('x=1' and 'x=2')"), std::string::npos);
  EXPECT_NE(parse({"x=f32[8]:zeros>o.npy", "y=f32[8]:zeros>o.npy"}).find("another buffer already writes 'o.npy'"),
            std::string::npos);
  EXPECT_NE(parse({"n=abc"}).find("'abc' is neither a scalar literal"), std::string::npos);
  EXPECT_NE(parse({}, "1,1,1,1").find("has 4 dimensions"), std::string::npos);
  EXPECT_NE(parse({}, "1,,1").find("empty expression"), std::string::npos);
  EXPECT_NE(parse({}, "cdiv(n,").find("does not parse"), std::string::npos);

  tkc::LaunchSpec s = tkc::LaunchSpec::parse({"n=0"}, "cdiv(n, B), n + 70000, 1 / n");
  auto grid = [&](const std::string &b) { return errorOf([&] { s.gridForConsts({{"B", b}}); }); };
  EXPECT_NE(grid("0").find("--grid expression 'cdiv(n, B)'"), std::string::npos);
  EXPECT_NE(grid("4").find("--grid expression 'cdiv(n, B)' gives 0 blocks in x; it must be in [1, 2147483647]"),
            std::string::npos);
  tkc::LaunchSpec big = tkc::LaunchSpec::parse({"n=1"}, "1, n + 70000");
  EXPECT_NE(errorOf([&] { big.gridForConsts({}); }).find("gives 70001 blocks in y"), std::string::npos);
}

TEST(LaunchSpec, FillsReproduciblyFromTheSeed) {
  auto bytes = [](const std::string &arg, uint64_t seed) {
    tkc::LaunchSpec s = tkc::LaunchSpec::parse({arg}, "1", seed);
    return s.initialBytes(s.args[0]);
  };
  EXPECT_EQ(bytes("x=f32[1000]:rand", 7), bytes("x=f32[1000]:rand", 7));
  EXPECT_NE(bytes("x=f32[1000]:rand", 7), bytes("x=f32[1000]:rand", 8));
  EXPECT_NE(bytes("x=f32[1000]:rand", 7), bytes("y=f32[1000]:rand", 7));  // each arg its own stream
  std::vector<char> r = bytes("x=f32[100000]:rand", 1);
  const float *f = reinterpret_cast<const float *>(r.data());
  double lo = 1, hi = -1, sum = 0;
  for (size_t i = 0; i < 100000; ++i) lo = std::min(lo, double(f[i])), hi = std::max(hi, double(f[i])), sum += f[i];
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, -0.999);
  EXPECT_GT(hi, 0.999);
  EXPECT_NEAR(sum / 100000, 0, 0.01);
  std::vector<char> g = bytes("x=f64[100000]:randn", 1);
  const double *d = reinterpret_cast<const double *>(g.data());
  double m = 0, m2 = 0;
  for (size_t i = 0; i < 100000; ++i) m += d[i], m2 += d[i] * d[i];
  EXPECT_NEAR(m / 100000, 0, 0.02);
  EXPECT_NEAR(m2 / 100000, 1, 0.02);
  std::vector<char> a = bytes("x=i16[5]:arange", 1);
  EXPECT_EQ(reinterpret_cast<const int16_t *>(a.data())[4], 4);
  std::vector<char> h = bytes("x=f16[3]:ones", 1);
  EXPECT_EQ(reinterpret_cast<const uint16_t *>(h.data())[2], 0x3c00);
  std::vector<char> bf = bytes("x=bf16[3]:arange", 1);
  EXPECT_EQ(reinterpret_cast<const uint16_t *>(bf.data())[2], 0x4000);  // 2.0
}

TEST(LaunchSpec, BindsInParameterOrderAndWritesOutputs) {
  TempDir dir;
  auto dev = tk::Device::open("sim");
  auto params = complexActivationParams();
  tkc::LaunchSpec s =
      tkc::LaunchSpec::parse({"n=5", "out=f32[5]:ones>" + dir / "o.npy", "y=f32[5]:arange", "x=f32[5]:zeros"}, "1");
  s.check("complex_activation", params);
  tkc::LaunchSpec::Bound b = s.bind(*dev, params);
  ASSERT_EQ(b.args.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<tk::Buffer>(b.args[0]));
  EXPECT_EQ(std::get<int32_t>(b.args[3]), 5);
  ASSERT_EQ(b.buffers.size(), 3u);
  EXPECT_EQ(b.buffers[1].spec.name, "y");
  EXPECT_EQ(dev->download<float>(std::get<tk::Buffer>(b.args[1]), 5)[4], 4.0f);
  tk::files::OutputSet out;
  s.addOutputs(*dev, b, out);
  std::string error;
  ASSERT_TRUE(out.commit(error)) << error;
  EXPECT_EQ(tkc::readNpyAs(dir / "o.npy", "f32", 5).size(), 20u);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"o.npy"});
}

// ---- tkc run ----------------------------------------------------------------------

TEST(TkcRun, ComplexActivationMatchesTheReference) {
  for (int n : {1, 781, 1023, 98433}) {
    TempDir dir;
    std::vector<float> x = randomFloats(n), y = randomFloats(n), poison(n, NAN);
    tkc::writeNpy(dir / "x.npy", "f32", x.data(), n);
    tkc::writeNpy(dir / "y.npy", "f32", y.data(), n);
    tkc::writeNpy(dir / "out.npy", "f32", poison.data(), n);
    std::string N = std::to_string(n), out;
    ASSERT_EQ(
        tkc("run " + kElementwise + " -k complex_activation --device sim --grid 'cdiv(n, BLOCK)'" + " --arg x=f32[" +
                N + "]:@" + dir / "x.npy" + " --arg y=f32[" + N + "]:@" + dir / "y.npy" + " --arg 'out=f32[" + N +
                "]:@" + dir / "out.npy" + ">" + dir / "out.npy'" + " --arg n=" + N + " --json " + dir / "run.json",
            out),
        0)
        << out;
    std::vector<char> bytes = tkc::readNpyAs(dir / "out.npy", "f32", n);
    const float *got = reinterpret_cast<const float *>(bytes.data());
    for (int i = 0; i < n; ++i) {
      double ref = std::max(0.0, (std::sin(double(x[i])) * std::cos(double(y[i])) + x[i]) * y[i]);
      ASSERT_LE(std::fabs(got[i] - ref), 1e-5 * std::max(1.0, std::fabs(ref))) << "n=" << n << " i=" << i;
    }
    EXPECT_NE(out.find("kernel   complex_activation  BLOCK=1024  num_warps=4"), std::string::npos) << out;
    nlohmann::json j = nlohmann::json::parse(readBytes(dir / "run.json"));
    EXPECT_EQ(j["kernel"], "complex_activation");
    EXPECT_EQ(j["grid"], nlohmann::json::array({(n + 1023) / 1024, 1, 1}));
    EXPECT_EQ(j["consts"]["BLOCK"], 1024);
    EXPECT_EQ(j["num_warps"], 4);
    EXPECT_EQ(j["stats"]["counted"], true);
    // Each input element read once, each output element written once.
    EXPECT_EQ(j["stats"]["globalLoadBytes"], 8 * n);
    EXPECT_EQ(j["stats"]["globalStoreBytes"], 4 * n);
    EXPECT_EQ(dir.files(), (std::vector<std::string>{"out.npy", "run.json", "x.npy", "y.npy"}));
  }
}

TEST(TkcRun, DefinesAndNumWarpsReachTheKernelAndTheGrid) {
  TempDir dir;
  std::string out;
  ASSERT_EQ(tkc("run " + kElementwise + " -k gelu --device sim -D BLOCK=256 --num-warps 2 --grid 'cdiv(n, BLOCK)'" +
                    " --arg x=f32[1023]:arange --arg 'out=f32[1023]:zeros>" + dir / "g.npy'" + " --arg n=1023",
                out),
            0)
      << out;
  EXPECT_NE(out.find("grid     4 x 1 x 1 blocks of 64 threads"), std::string::npos) << out;
  std::vector<char> bytes = tkc::readNpyAs(dir / "g.npy", "f32", 1023);
  const float *g = reinterpret_cast<const float *>(bytes.data());
  for (int i : {0, 1, 3, 1022}) {
    double v = i, ref = 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(g[i], ref, 1e-5 * std::max(1.0, ref)) << i;
  }
}

// --workers picks the sim's worker threads (run, tune and report take it).
TEST(TkcRun, WorkersPickTheSimsThreads) {
  std::string out;
  const std::string gelu = kElementwise + " -k gelu --grid 'cdiv(n, BLOCK)' --arg x=f32[100]:rand --arg n=100";
  ASSERT_EQ(tkc("run " + gelu + " --device sim --arg out=f32[100]:zeros --workers 2", out), 0) << out;
  EXPECT_NE(out.find("device   tk sim (2 workers)"), std::string::npos) << out;
  EXPECT_EQ(tkc("run " + gelu + " --device sim --arg out=f32[100]:zeros --workers 0", out), 1);
  EXPECT_NE(out.find("--workers: Value 0 not in range 1 to 1024"), std::string::npos) << out;
  ASSERT_EQ(tkc("report " + gelu + " --arg out=f32[100]:zeros --workers 1", out), 0) << out;
  EXPECT_NE(out.find("tk sim (1 workers)"), std::string::npos) << out;
}

TEST(TkcRun, AFailedRunWritesNothing) {
  TempDir dir;
  std::string out;
  // The grid fails after compiling: no output, no JSON, no temporary.
  EXPECT_EQ(
      tkc("run " + kElementwise + " -k gelu --device sim --grid 'n - n'" +
              " --arg x=f32[8]:rand --arg 'out=f32[8]:zeros>" + dir / "o.npy'" + " --arg n=8 --json " + dir / "r.json",
          out),
      1);
  EXPECT_NE(out.find("tkc: error: --grid expression 'n - n' gives 0 blocks in x"), std::string::npos) << out;
  EXPECT_TRUE(dir.files().empty());
}

// Docs run: the examples at the end of docs/tkc.md's `tkc run` section, in
// order in one directory (on the sim), each succeeding.
TEST(TkcRun, DocExamplesRun) {
  std::ifstream in(kSourceDir + "docs/tkc.md");
  std::string line;
  std::vector<std::string> commands;
  bool examples = false, inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("Examples (`tests/unit/tkc_run_test.cpp`", 0) == 0) examples = true;
    if (examples && line == "```sh")
      inside = true;
    else if (inside && line == "```")
      break;
    else if (inside && line.rfind("tkc run ", 0) == 0)
      commands.push_back(line.substr(4));
  }
  ASSERT_GE(commands.size(), 3u);
  TempDir dir;
  for (std::string cmd : commands) {
    for (size_t at; (at = cmd.find(" stdlib/")) != std::string::npos;) cmd.replace(at, 8, " " + kSourceDir + "stdlib/");
    std::string out;
    EXPECT_EQ(tkc("run --device sim " + cmd.substr(4), out, dir / ""), 0) << cmd << "\n" << out;
  }
  EXPECT_EQ(dir.files(), (std::vector<std::string>{"gelu.json", "gelu.npy", "out.npy", "y.npy"}));
}

}  // namespace

namespace {

// ---- a newcomer's first kernels (tests/kernels/newcomer.tk) ------------------
// Written as a user new to tk would, run through `tkc run` with .npy inputs
// this test writes, checked against references computed here in double.

const std::string kNewcomer = kSourceDir + "tests/kernels/newcomer.tk";

// Fused bias + GELU + dropout over 1000 x 781 values: every output is 0 or
// gelu(x + bias) / (1 - p), the kept fraction is 1 - p, and the same seed
// keeps the same elements.
TEST(TkcNewcomer, BiasGeluDropout) {
  TempDir dir;
  const int rows = 1000, cols = 781, n = rows * cols;
  const float p = 0.25f;
  std::vector<float> x = randomFloats(n), bias = randomFloats(cols);
  tkc::writeNpy(dir / "x.npy", "f32", x.data(), n);
  tkc::writeNpy(dir / "bias.npy", "f32", bias.data(), cols);
  std::string out;
  for (const char *name : {"a.npy", "b.npy"})
    ASSERT_EQ(tkc("run " + kNewcomer + " -k bias_gelu_dropout --grid 'cdiv(n, BLOCK)' --arg x=f32[" +
                      std::to_string(n) + "]:@x.npy --arg bias=f32[781]:@bias.npy --arg 'out=f32[" + std::to_string(n) +
                      "]:zeros>" + name + "' --arg n=" + std::to_string(n) + " --arg cols=781 --arg p=0.25 --arg seed=7",
                  out, dir / ""),
              0)
        << out;
  std::vector<char> a = tkc::readNpyAs(dir / "a.npy", "f32", n), b = tkc::readNpyAs(dir / "b.npy", "f32", n);
  const float *got = reinterpret_cast<const float *>(a.data());
  EXPECT_EQ(a, b) << "the same seed keeps the same elements";
  // The keep rate over the elements whose kept value cannot be 0 (gelu of
  // a large negative v rounds to 0 in f32).
  int kept = 0, counted = 0;
  for (int i = 0; i < n; ++i) {
    const double v = double(x[i]) + bias[i % cols];
    const double want = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))) / (1 - p);
    if (got[i] == 0.0f) {
      counted += std::fabs(want) > 1e-3;
      continue;
    }
    ASSERT_NEAR(got[i], want, 1e-5 * std::max(1.0, std::fabs(want))) << i;
    counted += std::fabs(want) > 1e-3;
    kept += std::fabs(want) > 1e-3;
  }
  ASSERT_GT(counted, n / 2);
  EXPECT_NEAR(double(kept) / counted, 1 - p, 0.01);
}

// Row-wise argmax over 1000 x 3000 (one row a program; the first of equal
// maxima), with duplicated maxima planted in some rows.
TEST(TkcNewcomer, RowArgmax) {
  TempDir dir;
  const int rows = 1000, cols = 3000;
  std::vector<float> x = randomFloats(size_t(rows) * cols);
  for (int r = 0; r < rows; r += 7) x[size_t(r) * cols + (r * 13) % cols] = x[size_t(r) * cols + 2999] = 9.0f;
  tkc::writeNpy(dir / "x.npy", "f32", x.data(), x.size());
  std::string out;
  ASSERT_EQ(tkc("run " + kNewcomer + " -k row_argmax --grid rows --arg x=f32[3000000]:@x.npy" +
                    " --arg 'out=i32[1000]:zeros>i.npy' --arg rows=1000 --arg cols=3000",
                out, dir / ""),
            0)
      << out;
  std::vector<char> bytes = tkc::readNpyAs(dir / "i.npy", "i32", rows);
  const int32_t *got = reinterpret_cast<const int32_t *>(bytes.data());
  for (int r = 0; r < rows; ++r) {
    const float *row = &x[size_t(r) * cols];
    ASSERT_EQ(got[r], std::max_element(row, row + cols) - row) << "row " << r;
  }
}

// A tiled transpose of a 1023 x 517 f16 matrix (ragged in both dims).
TEST(TkcNewcomer, TransposeF16) {
  TempDir dir;
  const int M = 1023, N = 517;
  std::vector<float> xf = randomFloats(size_t(M) * N);
  std::vector<uint16_t> x;
  for (float f : xf) x.push_back(tk::floatToHalfBits(f));
  tkc::writeNpy(dir / "x.npy", "f16", x.data(), x.size());
  std::string out;
  ASSERT_EQ(tkc("run " + kNewcomer + " -k transpose --grid 'cdiv(M, BM), cdiv(N, BN)' --arg x=f16[528891]:@x.npy" +
                    " --arg 'y=f16[528891]:zeros>y.npy' --arg M=1023 --arg N=517",
                out, dir / ""),
            0)
      << out;
  std::vector<char> bytes = tkc::readNpyAs(dir / "y.npy", "f16", size_t(M) * N);
  const uint16_t *y = reinterpret_cast<const uint16_t *>(bytes.data());
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) ASSERT_EQ(y[size_t(n) * M + m], x[size_t(m) * N + n]) << m << ", " << n;
}

// ---- names from outside ----------------------------------------------------------

// A .tk file whose name holds newlines, a quote and a backslash (issue 23):
// the launchers carry the name escaped in strings and with '?' for control
// characters in comments, so no line of them is the text after a newline,
// and they compile; --depfile refuses the name and writes nothing. ('/' is
// the one character a file name cannot hold, so `*/` cannot end a comment.)
TEST(TkcCompile, AFileNameWithANewlineInjectsNothing) {
  TempDir dir;
  const std::string name = "evil\n#error injected\n\"q\\.tk";
  writeBytes(dir / name, readBytes(kSourceDir + "tests/kernels/sanitizer.tk"));
  std::string out;
  // Through sh: inside '...' every character but ' is itself.
  ASSERT_EQ(tkc("compile '" + name + "' -k rows --emit cpp -o gen --no-cubin", out, dir / ""), 0) << out;
  for (const char *file : {"gen.h", "gen.cpp", "gen_c.h"}) {
    const std::string text = readBytes(dir / file);
    EXPECT_EQ(text.find("\n#error injected"), std::string::npos) << file;
    EXPECT_NE(text.find("from evil?#error injected?\"q\\.tk: do not edit"), std::string::npos) << file;
  }
  const std::string syntax = std::string(TK_CXX) + " -fsyntax-only -std=c++20 -I'" + kSourceDir + "include' '" +
                             dir / "gen.cpp" + "' 2>&1";
  EXPECT_EQ(std::system(syntax.c_str()), 0) << syntax;
  EXPECT_EQ(tkc("compile '" + name + "' -k rows -o x.ptx --depfile x.d", out, dir / ""), 1);
  EXPECT_EQ(out,
            "tkc: error: --depfile: cannot write the path \"evil\\012#error injected\\012\\\"q\\\\.tk\" in a depfile (it "
            "holds a line break)\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.d"));
  EXPECT_FALSE(std::filesystem::exists(dir / "x.ptx"));
}

// --device takes the sim's options (sim:racecheck, sim:overflow,
// workers=N) in tkc run and tkc report as in tk::Device::open.
TEST(TkcRun, DeviceOptionsReachTheSim) {
  const std::string rows = kSourceDir + "tests/kernels/sanitizer.tk -k rows --grid 3 --arg x=f32[32]:rand " +
                           "--arg out=f32[32]:zeros --arg stride=1073741824 --arg n=32";
  std::string out;
  EXPECT_EQ(tkc("run " + rows + " --device sim:overflow,workers=1", out), 1);
  EXPECT_NE(out.find("tkc: error: kernel rows: i32 overflow in an index (" + kSourceDir +
                     "tests/kernels/sanitizer.tk:16:30), block (2,0,0), thread 0: 2 * 1073741824"),
            std::string::npos)
      << out;
  EXPECT_EQ(tkc("report " + rows + " --device sim:overflow", out), 1);
  EXPECT_NE(out.find("i32 overflow in an index"), std::string::npos) << out;
  const std::string gelu = kElementwise + " -k gelu --grid 'cdiv(n, BLOCK)' --arg x=f32[100]:rand --arg n=100 " +
                           "--arg out=f32[100]:zeros";
  ASSERT_EQ(tkc("run " + gelu + " --device sim:racecheck,overflow --workers 1", out), 0) << out;
  EXPECT_NE(out.find("device   tk sim (1 workers, race check, overflow check)"), std::string::npos) << out;
  EXPECT_EQ(tkc("run " + gelu + " --device sim:fast", out), 1);
  EXPECT_NE(out.find("unknown device 'sim:fast': 'fast': expected sim[:OPTION,...] with OPTION racecheck, overflow"),
            std::string::npos)
      << out;
  EXPECT_EQ(tkc("run " + gelu + " --device gpu", out), 1);
  EXPECT_NE(out.find("expected sim[:OPTIONS] or cuda[:N], not 'gpu'"), std::string::npos) << out;
  EXPECT_EQ(tkc("report " + gelu + " --device cuda", out), 1);
  EXPECT_NE(out.find("the report runs on the sim: sim[:OPTIONS]"), std::string::npos) << out;
}

}  // namespace
