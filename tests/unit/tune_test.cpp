// tk::Tuner on the sim: spaces from files and code, pruning with reasons, the
// tuning and compile caches (hits, new configs, corrupted and unwritable),
// shards merged, parallel compiles, and tuned launches checked against a CPU
// reference.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "runtime_TestUtil.h"
#include "driver/CacheEntry.h"
#include "tk/tune.h"

namespace {

namespace fs = std::filesystem;
const std::string kElementwise = TK_SOURCE_DIR + "/stdlib/elementwise.tk";

std::string freshDir() {
  std::string tmpl = (fs::temp_directory_path() / "tk-tune-test-XXXXXX").string();
  char *d = mkdtemp(tmpl.data());
  if (!d) throw std::runtime_error("mkdtemp failed");
  return d;
}

struct Elementwise {
  int n;
  std::vector<float> x, y;
  tk::Buffer bx, by, out;
  Elementwise(tk::Device &dev, int n) : n(n), x(tk::test::randomFloats(n, -4, 4)), y(tk::test::randomFloats(n, -4, 4)) {
    bx = dev.upload(x);
    by = dev.upload(y);
    out = dev.upload(std::vector<float>(n, NAN));
  }
  std::vector<tk::Arg> args() const { return {bx, by, out, int32_t(n)}; }
  tk::Tuner::GridFn grid() const {
    return [n = n](const tk::Bundle &b) { return tk::Dim3{uint32_t((n + b.constInt("BLOCK") - 1) / b.constInt("BLOCK"))}; };
  }
};

tk::TuneSpace space(std::vector<std::string> configs) {
  tk::TuneSpace s;
  for (const std::string &c : configs) s.configs.push_back(tk::TuneConfig::parse(c));
  s.key = {"n"};
  return s;
}

tk::TuneOptions options(const std::string &dir, std::vector<std::string> *warnings = nullptr) {
  tk::TuneOptions o;
  o.cacheDir = dir;
  o.compile.cacheDir = dir;
  o.jobs = 2;
  o.warn = [warnings](const std::string &w) {
    if (warnings) warnings->push_back(w);
  };
  return o;
}

const tk::TuneResult &resultFor(const tk::TuneReport &r, const std::string &config) {
  for (const tk::TuneResult &x : r.results)
    if (x.config.str() == config) return x;
  throw std::runtime_error("no result for " + config);
}

TEST(TuneConfig, ParsesAndPrints) {
  tk::TuneConfig c = tk::TuneConfig::parse("BLOCK=256,num_warps=8,num_stages=2");
  EXPECT_EQ(c.consts.at("BLOCK"), "256");
  EXPECT_EQ(c.numWarps, 8);
  EXPECT_EQ(c.numStages, 2);
  EXPECT_EQ(c.str(), "BLOCK=256,num_warps=8,num_stages=2");
  EXPECT_EQ(tk::TuneConfig::parse(c.str()), c);
  EXPECT_EQ(tk::TuneConfig::parse("BLOCK=64").numWarps, 4);
  // Consts print in the order given (a space's declared order), while the
  // identity (equality, cache keys) ignores it.
  tk::TuneConfig two = tk::TuneConfig::parse("BLOCK_R=1,BLOCK_D=256,num_warps=2");
  EXPECT_EQ(two.str(), "BLOCK_R=1,BLOCK_D=256,num_warps=2,num_stages=3");
  EXPECT_EQ(two.canonical(), "BLOCK_D=256,BLOCK_R=1,num_warps=2,num_stages=3");
  EXPECT_EQ(two, tk::TuneConfig::parse("BLOCK_D=256,BLOCK_R=1,num_warps=2"));
  // softmax declares product(BLOCK_R: [1, 2, 4, 8], BLOCK_D: [256, 512, 1024], ...).
  tk::TuneSpace rows = tk::TuneSpace::fromFile(TK_SOURCE_DIR + "/stdlib/normalization.tk", "softmax");
  ASSERT_FALSE(rows.configs.empty());
  EXPECT_EQ(rows.configs[0].str(), "BLOCK_R=1,BLOCK_D=256,num_warps=2,num_stages=3");
  for (const char *bad : {"", "BLOCK", "=3", "BLOCK=", "BLOCK=1,BLOCK=2", "num_warps=3", "num_warps=64",
                          "num_stages=0", "num_warps=x", "1X=2", "BLOCK=1,,num_warps=2"})
    EXPECT_THROW(tk::TuneConfig::parse(bad), tk::Error) << bad;
}

TEST(Tuner, FileSpaceAndModelRanking) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  tk::TuneSpace s = tk::TuneSpace::fromFile(kElementwise, "complex_activation");
  ASSERT_FALSE(s.configs.empty());
  EXPECT_EQ(s.key, std::vector<std::string>{"n"});
  EXPECT_FALSE(s.prune.empty());

  // The ranking: BLOCK=32 below BLOCK=1024 at 2^22, and a spilling
  // config (allowed to run here) below a clean one.
  Elementwise e(*dev, 1 << 22);
  tk::TuneOptions o = options(dir);
  o.maxSpillBytes = 1 << 20;
  // The file's prune would drop BLOCK=32 (what a space leaves empty comes
  // from the file): "false" keeps every config.
  tk::TuneSpace ranking = space({"BLOCK=32", "BLOCK=1024", "BLOCK=4096,num_warps=1"});
  ranking.prune = "false";
  tk::Tuner t(*dev, kElementwise, "complex_activation", ranking, o);
  EXPECT_EQ(tk::Tuner(*dev, kElementwise, "complex_activation", space({"BLOCK=64"}), o).space().prune, s.prune);
  tk::TuneReport r = t.tune(e.grid(), e.args());
  EXPECT_EQ(r.measure, "model");
  const tk::TuneResult &tiny = resultFor(r, "BLOCK=32,num_warps=4,num_stages=3");
  const tk::TuneResult &clean = resultFor(r, "BLOCK=1024,num_warps=4,num_stages=3");
  const tk::TuneResult &spills = resultFor(r, "BLOCK=4096,num_warps=1,num_stages=3");
  ASSERT_EQ(tiny.status, "ok") << tiny.reason;
  ASSERT_EQ(clean.status, "ok") << clean.reason;
  ASSERT_EQ(spills.status, "ok") << spills.reason;
  EXPECT_GT(tiny.ms, clean.ms);
  EXPECT_EQ(r.bestResult().config.str(), clean.config.str());
  if (spills.spillBytes > 0) {
    EXPECT_GT(spills.ms, clean.ms);
  }
  EXPECT_NE(r.table().find("a model, not a measurement"), std::string::npos);
  EXPECT_NE(r.json().find("\"measure\": \"model\""), std::string::npos);
  EXPECT_NE(r.svg().find("<svg"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Tuner, PrunesWithReasonsAndFailsWhenNothingRuns) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  Elementwise e(*dev, 4096);
  tk::TuneSpace s = space({"BLOCK=128,num_warps=8", "BLOCK=256", "BLOCK=2097152"});
  s.prune = "BLOCK < 32 * num_warps";
  tk::Tuner t(*dev, kElementwise, "complex_activation", s, options(dir));
  tk::TuneReport r = t.tune(e.grid(), e.args());
  const tk::TuneResult &pruned = resultFor(r, "BLOCK=128,num_warps=8,num_stages=3");
  EXPECT_EQ(pruned.status, "pruned");
  EXPECT_NE(pruned.reason.find("BLOCK < 32 * num_warps"), std::string::npos) << pruned.reason;
  const tk::TuneResult &bad = resultFor(r, "BLOCK=2097152,num_warps=4,num_stages=3");
  EXPECT_EQ(bad.status, "error");
  EXPECT_NE(bad.reason.find("is too large"), std::string::npos) << bad.reason;
  EXPECT_EQ(r.bestResult().config.str(), "BLOCK=256,num_warps=4,num_stages=3");

  tk::TuneSpace none = space({"BLOCK=0", "BLOCK=-4"});
  tk::Tuner t2(*dev, kElementwise, "complex_activation", none, options(dir));
  try {
    t2.tune(e.grid(), e.args());
    FAIL() << "expected every config to fail";
  } catch (const tk::Error &err) {
    std::string what = err.what();
    EXPECT_NE(what.find("BLOCK=0,num_warps=4"), std::string::npos) << what;
    EXPECT_NE(what.find("BLOCK=-4,num_warps=4"), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

TEST(Tuner, BadSpacesAreErrors) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  auto make = [&](tk::TuneSpace s) { tk::Tuner t(*dev, kElementwise, "complex_activation", s, options(dir)); };
  tk::TuneSpace s = space({"BLOCK=256"});
  s.key = {"m"};
  EXPECT_THROW(make(s), tk::Error);
  s.key = {"x"};  // a pointer
  EXPECT_THROW(make(s), tk::Error);
  s = space({"BLOK=256"});
  EXPECT_THROW(make(s), tk::Error);
  s = space({"BLOCK=256", "BLOCK=256"});
  EXPECT_THROW(make(s), tk::Error);
  s = space({"BLOCK=256"});
  s.prune = "BLOCK < m";
  EXPECT_THROW(make(s), tk::Error);
  s.prune = "BLOCK <";
  EXPECT_THROW(make(s), tk::Error);
  // No @tune on the kernel and no configs: nothing to tune.
  EXPECT_THROW(tk::Tuner(*dev, TK_SOURCE_DIR + "/tests/kernels/casts.tk", "casts", {}, options(dir)), tk::Error);
  fs::remove_all(dir);
}

TEST(Tuner, CacheAnswersRepeatsAndMeasuresOnlyNewConfigs) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  Elementwise e(*dev, 98433);
  {
    tk::Tuner t(*dev, kElementwise, "complex_activation", space({"BLOCK=256", "BLOCK=1024"}), options(dir));
    tk::TuneReport r = t.tune(e.grid(), e.args());
    EXPECT_EQ(r.timed, 2);
    EXPECT_EQ(r.cacheHits, 0);
  }
  {
    tk::Tuner t(*dev, kElementwise, "complex_activation", space({"BLOCK=256", "BLOCK=1024"}), options(dir));
    std::optional<tk::TuneReport> cached = t.cached(e.grid(), {tk::Buffer(), tk::Buffer(), tk::Buffer(), int32_t(98433)},
                                                        {98433 * 4, 98433 * 4, 98433 * 4, 0});
    ASSERT_TRUE(cached);
    EXPECT_EQ(cached->cacheHits, 2);
    tk::TuneReport r = t.tune(e.grid(), e.args());
    EXPECT_EQ(r.compiled, 0);
    EXPECT_EQ(r.timed, 0);
    EXPECT_EQ(r.cacheHits, 2);
    EXPECT_EQ(r.best, cached->best);
    // Another key value is another entry.
    EXPECT_FALSE(t.cached(e.grid(), {tk::Buffer(), tk::Buffer(), tk::Buffer(), int32_t(98432)},
                          {98433 * 4, 98433 * 4, 98433 * 4, 0}));
  }
  {
    tk::Tuner t(*dev, kElementwise, "complex_activation", space({"BLOCK=256", "BLOCK=1024", "BLOCK=512"}), options(dir));
    tk::TuneReport r = t.tune(e.grid(), e.args());
    EXPECT_EQ(r.timed, 1);
    EXPECT_EQ(r.cacheHits, 2);
  }
  fs::remove_all(dir);
}

TEST(Tuner, CorruptedEntriesAreRebuiltAndUnwritableCachesWarn) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  Elementwise e(*dev, 4096);
  tk::TuneSpace s = space({"BLOCK=256"});
  { tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir)).tune(e.grid(), e.args()); }
  std::vector<std::string> entries;
  for (auto &f : fs::recursive_directory_iterator(dir + "/tune")) entries.push_back(f.path().string());
  ASSERT_EQ(entries.size(), 2u);  // the kernel's directory and one entry
  const std::string entry = fs::is_regular_file(entries[0]) ? entries[0] : entries[1];
  std::ofstream(entry, std::ios::trunc) << "{\"format\": \"tk-tune-entry\", \"ver";  // truncated
  std::vector<std::string> warnings;
  tk::TuneReport r = tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir, &warnings)).tune(e.grid(), e.args());
  EXPECT_EQ(r.timed, 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("'" + entry + "'"), std::string::npos) << warnings[0];
  warnings.clear();
  r = tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir, &warnings)).tune(e.grid(), e.args());
  EXPECT_EQ(r.cacheHits, 1) << "the rebuilt entry is read back";
  EXPECT_TRUE(warnings.empty());

  // A cache under a regular file cannot be created: tuning works, it warns.
  const std::string file = dir + "/plain-file";
  std::ofstream(file) << "x";
  r = tk::Tuner(*dev, kElementwise, "complex_activation", s, options(file + "/cache", &warnings)).tune(e.grid(), e.args());
  EXPECT_EQ(r.bestResult().status, "ok");
  EXPECT_FALSE(warnings.empty());
  fs::remove_all(dir);
}

// The one entry of a fresh one-config tuning cache in `dir`.
std::string onlyEntry(const std::string &dir) {
  std::vector<std::string> files;
  for (auto &f : fs::recursive_directory_iterator(dir + "/tune"))
    if (f.is_regular_file()) files.push_back(f.path().string());
  if (files.size() != 1) throw std::runtime_error("expected one tuning entry");
  return files[0];
}

TEST(Tuner, PlantedOrEditedEntriesNeverWin) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  Elementwise e(*dev, 4096);
  tk::TuneSpace s = space({"BLOCK=256"});
  { tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir)).tune(e.grid(), e.args()); }
  const std::string entry = onlyEntry(dir);
  std::ifstream in(entry);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // An edit that keeps the JSON well formed: "ms": 0 would win every tuning.
  const size_t at = text.find("\"ms\": ");
  ASSERT_NE(at, std::string::npos);
  const size_t end = text.find(',', at);
  // Edited in place (the seal no longer matches), then sealed anew as only
  // tk's own writer could (the JSON's number out of range).
  for (bool reseal : {false, true}) {
    std::string edited = text;
    edited.replace(at, end - at, reseal ? "\"ms\": 1e400" : "\"ms\": 0");
    std::string error;
    if (reseal) ASSERT_TRUE(tk::detail::storeEntry(entry, edited.substr(edited.find('\n') + 1), error)) << error;
    else std::ofstream(entry, std::ios::trunc) << edited;
    std::vector<std::string> warnings;
    tk::TuneReport r = tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir, &warnings)).tune(e.grid(), e.args());
    EXPECT_EQ(r.timed, 1) << reseal;
    EXPECT_EQ(r.cacheHits, 0);
    EXPECT_GT(r.bestResult().ms, 0);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("'" + entry + "'"), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find(reseal ? "number overflow" : "SHA-256"), std::string::npos) << warnings[0];
  }
  fs::remove_all(dir);
}

TEST(Tuner, EntriesAreKeyedOnTheWholeLaunch) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  Elementwise e(*dev, 4096);
  tk::TuneSpace s = space({"BLOCK=256"});
  auto tuneWith = [&](const tk::Tuner::GridFn &grid, tk::TuneOptions o) {
    return tk::Tuner(*dev, kElementwise, "complex_activation", s, o).tune(grid, e.args());
  };
  EXPECT_EQ(tuneWith(e.grid(), options(dir)).timed, 1);
  EXPECT_EQ(tuneWith(e.grid(), options(dir)).cacheHits, 1);
  // Half the grid measures another launch.
  auto half = [](const tk::Bundle &b) { return tk::Dim3{uint32_t(4096 / b.constInt("BLOCK") / 2)}; };
  EXPECT_EQ(tuneWith(half, options(dir)).cacheHits, 0);
  tk::TuneOptions o = options(dir);
  o.maxSpillBytes = 7;
  EXPECT_EQ(tuneWith(e.grid(), o).cacheHits, 0);
  o = options(dir);
  o.sampleBlocks = 3;
  EXPECT_EQ(tuneWith(e.grid(), o).cacheHits, 0);
  // Bigger buffers, same key value n.
  Elementwise big(*dev, 8192);
  std::vector<tk::Arg> args = {big.bx, big.by, big.out, int32_t(4096)};
  EXPECT_EQ(tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir)).tune(e.grid(), args).cacheHits, 0);
  fs::remove_all(dir);
}

TEST(Tuner, LaunchesThatFailForTheirArgumentsAreNotCached) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  Elementwise e(*dev, 4096);
  tk::TuneSpace s = space({"BLOCK=256"});
  // `out` far too small: the sim refuses the out-of-bounds stores.
  std::vector<tk::Arg> args = {e.bx, e.by, dev->upload(std::vector<float>(16)), int32_t(4096)};
  EXPECT_THROW(tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir)).tune(e.grid(), args), tk::Error);
  size_t entries = 0;
  if (fs::exists(dir + "/tune"))
    for (auto &f : fs::recursive_directory_iterator(dir + "/tune")) entries += f.is_regular_file();
  EXPECT_EQ(entries, 0u) << "a failed launch was cached";
  EXPECT_EQ(tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir)).tune(e.grid(), e.args()).timed, 1);
  fs::remove_all(dir);
}

TEST(Tuner, ShardsMergedGiveTheSameTable) {
  auto dev = tk::Device::open("sim");
  Elementwise e(*dev, 98433);
  tk::TuneSpace s = space({"BLOCK=256", "BLOCK=512", "BLOCK=1024", "BLOCK=2048", "BLOCK=256,num_warps=2"});
  const std::string whole = freshDir(), merged = freshDir();
  tk::TuneReport one = tk::Tuner(*dev, kElementwise, "complex_activation", s, options(whole)).tune(e.grid(), e.args());
  std::vector<std::string> shards;
  for (int i = 0; i < 3; ++i) {
    shards.push_back(freshDir());
    tk::TuneOptions o = options(shards.back());
    o.shardIndex = i;
    o.shardCount = 3;
    tk::TuneReport part = tk::Tuner(*dev, kElementwise, "complex_activation", s, o).tune(e.grid(), e.args());
    EXPECT_EQ(part.results.size(), i < 2 ? 2u : 1u);
  }
  EXPECT_EQ(tk::mergeTuneCaches(shards, merged), 5);
  EXPECT_EQ(tk::mergeTuneCaches(shards, merged), 0) << "present entries are kept";
  tk::TuneReport all = tk::Tuner(*dev, kElementwise, "complex_activation", s, options(merged)).tune(e.grid(), e.args());
  EXPECT_EQ(all.timed, 0);
  EXPECT_EQ(all.cacheHits, 5);
  ASSERT_EQ(all.results.size(), one.results.size());
  for (size_t i = 0; i < all.results.size(); ++i) {
    EXPECT_EQ(all.results[i].config, one.results[i].config);
    EXPECT_DOUBLE_EQ(all.results[i].ms, one.results[i].ms);
  }
  EXPECT_EQ(all.best, one.best);
  for (const std::string &d : shards) fs::remove_all(d);
  fs::remove_all(whole);
  fs::remove_all(merged);
}

TEST(Tuner, ParallelCompilesMatchSerial) {
  auto dev = tk::Device::open("sim");
  Elementwise e(*dev, 98433);
  tk::TuneSpace s = space({"BLOCK=256", "BLOCK=512", "BLOCK=1024", "BLOCK=2048"});
  const std::string a = freshDir(), b = freshDir();
  tk::TuneOptions serial = options(a), parallel = options(b);
  serial.jobs = 1;
  parallel.jobs = 4;
  tk::TuneReport rs = tk::Tuner(*dev, kElementwise, "complex_activation", s, serial).tune(e.grid(), e.args());
  tk::TuneReport rp = tk::Tuner(*dev, kElementwise, "complex_activation", s, parallel).tune(e.grid(), e.args());
  EXPECT_EQ(rs.compiled, 4);
  EXPECT_EQ(rp.compiled, 4);
  for (size_t i = 0; i < rs.results.size(); ++i) {
    EXPECT_EQ(rs.results[i].registers, rp.results[i].registers);
    EXPECT_DOUBLE_EQ(rs.results[i].ms, rp.results[i].ms);
  }
  fs::remove_all(a);
  fs::remove_all(b);
}

// Tuner::launch is @triton.autotune's call: it tunes on the first launch
// with new key values, then launches the remembered best -- and the result
// is right.
TEST(Tuner, TunedLaunchComputesTheKernel) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  int measured = 0;
  tk::TuneOptions o = options(dir);
  o.progress = [&](int, int, const std::string &what) { measured += what.rfind("measured", 0) == 0; };
  tk::Tuner t(*dev, kElementwise, "complex_activation", space({"BLOCK=256", "BLOCK=1024,num_warps=8"}), o);
  for (int n : {1, 781, 98433}) {
    Elementwise e(*dev, n);
    for (int rep = 0; rep < 2; ++rep) {
      dev->copyToDevice(e.out, std::vector<float>(n, NAN).data(), size_t(n) * 4);
      t.launch(e.grid(), e.args());
      std::vector<float> got = dev->download<float>(e.out, n);
      for (int i = 0; i < n; ++i) {
        double ref = std::max(0.0, (std::sin(double(e.x[i])) * std::cos(double(e.y[i])) + e.x[i]) * e.y[i]);
        ASSERT_NEAR(got[i], ref, 1e-5 * std::max(1.0, std::abs(ref))) << "n " << n << " i " << i;
      }
    }
  }
  EXPECT_EQ(measured, 6) << "two configs per key value, measured once each";
  fs::remove_all(dir);
}

// Each config is compiled for the launch's integer facts (n % 16 == 0 here),
// and results are kept per set of facts: the general variants are measured
// on their own.
TEST(Tuner, SpecialisesOnTheLaunchsIntegerFacts) {
  auto dev = tk::Device::open("sim");
  const std::string dir = freshDir();
  Elementwise e(*dev, 1024);
  tk::TuneSpace s = space({"BLOCK=256", "BLOCK=512"});
  tk::TuneReport r = tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir)).tune(e.grid(), e.args());
  EXPECT_EQ(r.assumed, (std::map<std::string, std::string>{{"n", "16"}}));
  EXPECT_NE(r.json().find("\"assumed\""), std::string::npos);
  // The table says so too, and names its units; on the sim the JSON's figure
  // is the model's (model_ms), never a measured-looking "ms".
  EXPECT_NE(r.table().find("\nassumed n % 16 == 0\n"), std::string::npos) << r.table();
  EXPECT_NE(r.table().find("spill B  smem B"), std::string::npos) << r.table();
  EXPECT_NE(r.json().find("\"model_ms\""), std::string::npos);
  EXPECT_EQ(r.json().find("\"ms\""), std::string::npos);
  tk::TuneOptions general = options(dir);
  general.specialise = false;
  tk::TuneReport g = tk::Tuner(*dev, kElementwise, "complex_activation", s, general).tune(e.grid(), e.args());
  EXPECT_TRUE(g.assumed.empty());
  EXPECT_EQ(g.cacheHits, 0) << "the specialised results are not the general variants'";
  EXPECT_EQ(tk::Tuner(*dev, kElementwise, "complex_activation", s, options(dir)).tune(e.grid(), e.args()).cacheHits, 2);
  fs::remove_all(dir);
}

TEST(CompileCache, SecondCompileIsAHitAndCorruptionRecompiles) {
  const std::string dir = freshDir();
  tk::CompileOptions o;
  o.cacheDir = dir;
  std::vector<std::string> warnings;
  o.warn = [&](const std::string &w) { warnings.push_back(w); };
  o.defines["BLOCK"] = "512";
  tk::Compiler::CacheStats s0 = tk::Compiler::cacheStats();
  tk::Bundle a = tk::Compiler::compileFile(kElementwise, "gelu", o);
  tk::Bundle b = tk::Compiler::compileFile(kElementwise, "gelu", o);
  tk::Compiler::CacheStats s1 = tk::Compiler::cacheStats();
  EXPECT_EQ(s1.compiled - s0.compiled, 1u);
  EXPECT_EQ(s1.hits - s0.hits, 1u);
  EXPECT_EQ(a.toJson(), b.toJson());
  o.numWarps = 8;  // another key
  tk::Compiler::compileFile(kElementwise, "gelu", o);
  EXPECT_EQ(tk::Compiler::cacheStats().compiled - s1.compiled, 1u);
  o.numWarps = 4;
  for (auto &f : fs::recursive_directory_iterator(dir))
    if (f.is_regular_file()) std::ofstream(f.path(), std::ios::trunc) << "{\"format\": \"tk-bundle\"";
  tk::Bundle c = tk::Compiler::compileFile(kElementwise, "gelu", o);
  EXPECT_EQ(c.toJson(), a.toJson());
  EXPECT_FALSE(warnings.empty());
  fs::remove_all(dir);
}

}  // namespace
