// The kit's case table: which kernel, in which config, at which sizes. The
// check sizes exercise masks (1, 781, 1023, 98433 and rows or heads that do
// not fill a block); the realistic size is what a GPU times. Everything the
// kit compiles ahead of time is derived from this table (--list-variants).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tools/gpu-kit/Problem.h"

namespace kit {

std::string Variant::config() const {
  std::string s;
  for (const auto &[name, value] : consts) s += name + "=" + value + ",";
  return s + "num_warps=" + std::to_string(numWarps) + ",num_stages=" + std::to_string(numStages);
}

std::string Variant::stem() const {
  std::string s = kernel + "/" + config();
  std::string facts;
  for (const auto &[name, value] : assume) facts += (facts.empty() ? "" : ",") + name + "=" + tk::integerFact(value);
  return facts.empty() ? s : s + "+" + facts;
}

std::vector<std::string> Variant::tkcArgs() const {
  std::vector<std::string> a = {"-k", kernel};
  for (const auto &[name, value] : consts) a.insert(a.end(), {"-D", name + "=" + value});
  a.insert(a.end(), {"--num-warps", std::to_string(numWarps), "--num-stages", std::to_string(numStages)});
  for (const auto &[name, value] : assume) a.insert(a.end(), {"--assume", name + "=" + std::to_string(value)});
  return a;
}

std::map<std::string, int64_t> factsOf(const std::map<std::string, int64_t> &ints) {
  std::map<std::string, int64_t> facts;
  for (const auto &[name, value] : ints)
    if (!tk::integerFact(value).empty()) facts[name] = value;
  return facts;
}

Variant Case::variant(const Problem &p, const Consts &c, int warps, int stages) const {
  return {source, kernel, c, warps, stages, factsOf(p.ints())};
}

namespace {

double gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608 * (x + 0.044715 * x * x * x))); }

const std::vector<Size> kFlatSizes = {{1}, {781}, {1023}, {98433}};
const Size kFlatRealistic = {int64_t{1} << 26};  // 256 MiB an array: well past the L2
// Rows that fit one tile, rows longer than one (the chunked paths), a
// single row, and row counts that leave a block part-empty.
const std::vector<Size> kRowSizes = {{1, 1}, {3, 1023}, {17, 2500}, {781, 97}};

Case flat(std::string name, std::string source, std::string kernel, Consts consts,
          std::function<std::unique_ptr<Problem>(int64_t)> make) {
  Case c{std::move(name), std::move(source), std::move(kernel), std::move(consts)};
  c.make = [make](const Size &s) { return make(s.at(0)); };
  c.checkSizes = kFlatSizes;
  c.realistic = kFlatRealistic;
  return c;
}

Case rows(std::string name, std::string kernel, Consts consts,
          std::function<std::unique_ptr<Problem>(int64_t, int64_t)> make, std::vector<Size> sizes, Size realistic,
          std::string source = "normalization.tk") {
  Case c{std::move(name), std::move(source), std::move(kernel), std::move(consts)};
  c.make = [make](const Size &s) { return make(s.at(0), s.at(1)); };
  c.checkSizes = std::move(sizes);
  c.realistic = std::move(realistic);
  return c;
}

Case attentionCase(int d, bool causal) {
  Case c{"attention_d" + std::to_string(d) + (causal ? "_causal" : ""),
         "attention.tk",
         "attention",
         {{"D", std::to_string(d)}, {"BLOCK_M", "128"}, {"BLOCK_N", "64"}, {"CAUSAL", causal ? "true" : "false"}}};
  c.numWarps = 8;
  c.make = [d, causal](const Size &s) { return attention(s.at(0), s.at(1), d, causal); };
  c.checkSizes = {{1, 1}, {2, 130}};
  c.realistic = {32, 4096};
  c.tensorCores = true;
  return c;
}

}  // namespace

std::vector<Case> allCases() {
  const Consts block = {{"BLOCK", "1024"}};
  std::vector<Case> cases = {
      flat("vector_add", "kit.tk", "vector_add", block,
           [](int64_t n) { return elementwise(n, 2, [](double x, double y) { return x + y; }); }),
      flat("complex_activation", "elementwise.tk", "complex_activation", block,
           [](int64_t n) {
             return elementwise(n, 2,
                                [](double x, double y) { return std::max(0.0, (std::sin(x) * std::cos(y) + x) * y); });
           }),
      flat("sincos_chain", "elementwise.tk", "sincos_chain", {{"CHAIN", "4"}, {"BLOCK", "1024"}},
           [](int64_t n) {
             return elementwise(n, 1, [](double x, double) { return std::cos(std::sin(std::cos(std::sin(x)))); },
                                {{"chain", 4}});
           }),
      flat("gelu", "elementwise.tk", "gelu", block,
           [](int64_t n) { return elementwise(n, 1, [](double x, double) { return gelu(x); }); }),
      flat("swiglu", "elementwise.tk", "swiglu", block,
           [](int64_t n) { return elementwise(n, 2, [](double a, double b) { return a / (1 + std::exp(-a)) * b; }); }),
      flat("dropout", "dropout.tk", "dropout", block, [](int64_t n) { return dropout(n, 0.3f); }),
      rows("softmax", "softmax", {{"BLOCK_R", "1"}, {"BLOCK_D", "1024"}}, softmax, kRowSizes, {8192, 1024}),
      rows("layernorm", "layernorm", {{"BLOCK_R", "1"}, {"BLOCK_D", "1024"}}, layernorm, kRowSizes, {8192, 1024}),
      rows("rmsnorm", "rmsnorm", {{"BLOCK_R", "1"}, {"BLOCK_D", "1024"}}, rmsnorm, kRowSizes, {8192, 1024}),
      // The seed: 16 features x batch 1024 of 256 values.
      rows("layernorm_tanh_linear_relu", "layernorm_tanh_linear_relu", {{"BLOCK_R", "32"}, {"BLOCK_D", "256"}}, puzzler,
           {{1, 1}, {781, 256}, {33, 1000}, {5, 97}}, {16384, 256}),
      // LLaMA's vocabulary.
      rows("cross_entropy", "cross_entropy", {{"BLOCK_R", "1"}, {"BLOCK_V", "2048"}}, crossEntropy,
           {{1, 1}, {7, 1000}, {33, 5000}, {3, 32000}}, {4096, 32000}, "loss.tk"),
      // The seed's 256 samples x 2000 features (7.6 GB as broadcast-then-reduce).
      rows("similarity", "similarity", {{"BLOCK_I", "64"}, {"BLOCK_J", "64"}}, similarity,
           {{1, 1}, {33, 130}, {7, 781}}, {256, 2000}, "similarity.tk"),
      // Mamba-sized scans: 4096 channels of a 4096-step sequence, in 1024-wide chunks.
      rows("cumsum_rows", "cumsum_rows", {{"BLOCK_R", "1"}, {"BLOCK_D", "1024"}}, cumsumRows, kRowSizes, {4096, 4096},
           "cases.tk"),
      rows("recurrence_rows", "recurrence_rows", {{"BLOCK_R", "1"}, {"BLOCK_D", "1024"}}, recurrenceRows, kRowSizes,
           {4096, 4096}, "cases.tk"),
      // One 1024-wide sort a row (sort needs the whole row in one tile).
      rows("sort_rows", "sort_rows", {{"BLOCK_R", "1"}, {"BLOCK_D", "1024"}}, sortRows,
           {{1, 1}, {3, 1023}, {17, 1000}, {781, 97}}, {16384, 1024}, "cases.tk"),
  };
  // vLLM's per-token fp8 quantisation of LLaMA-70B-sized activations: a
  // row of 8192 read once (in registers, 8 warps).
  Case q = rows("quantize_fp8_rows", "quantize_fp8_rows", {{"BLOCK_D", "8192"}}, quantizeRows, kRowSizes, {8192, 8192},
                "quantize.tk");
  q.numWarps = 8;
  cases.push_back(q);
  // A user's tiled transpose: trans() through padded shared rows.
  cases.push_back(rows("transpose", "transpose", {{"B", "64"}}, transpose, {{1, 1}, {130, 67}, {1023, 517}},
                       {8192, 8192}, "cases.tk"));
  Case r{"rope", "rope.tk", "rope", {{"D", "64"}, {"BLOCK_S", "4"}, {"BLOCK_H", "8"}}};
  r.make = [](const Size &s) { return rope(s.at(0), s.at(1), s.at(2), s.at(3), 64); };
  r.checkSizes = {{1, 1, 1, 1}, {2, 33, 5, 3}};
  r.realistic = {4, 2048, 32, 8};  // grouped-query attention: 32 query heads, 8 key heads
  cases.push_back(r);

  Case m{"matmul", "matmul.tk", "matmul", {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "32"}}};
  m.numStages = 4;
  m.make = [](const Size &s) { return matmul(s.at(0), s.at(1), s.at(2)); };
  m.checkSizes = {{1, 1, 1}, {130, 67, 100}};
  m.realistic = {4096, 4096, 4096};
  m.tensorCores = true;
  cases.push_back(m);

  // The same product through host descriptors: no integer facts needed for
  // aligned, contiguous operand blocks (sizes multiples of 8 for the rules).
  Case md{"matmul_desc", "matmul.tk", "matmul_desc", {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "32"}}};
  md.numStages = 4;
  md.make = [](const Size &s) { return matmulDesc(s.at(0), s.at(1), s.at(2)); };
  md.checkSizes = {{1, 8, 8}, {130, 72, 104}};
  md.realistic = {4096, 4096, 4096};
  md.tensorCores = true;
  cases.push_back(md);

  // The same, persistent (a program per multiprocessor) and on sm_90a
  // warp-specialised: a producer warpgroup issues the TMA copies across
  // tiles (docs/internals.md, "Warp specialisation"). The tile:
  // 128 x 128 x 64, 8 warps (two consumer warpgroups), 4 stages.
  Case mw{"matmul_desc_ws", "matmul.tk", "matmul_desc_ws", {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "64"}}};
  mw.numWarps = 8;
  mw.numStages = 4;
  mw.make = [](const Size &s) { return matmulDescPersistent(s.at(0), s.at(1), s.at(2)); };
  mw.checkSizes = {{1, 8, 8}, {130, 72, 104}};
  mw.realistic = {4096, 4096, 4096};
  mw.tensorCores = true;
  cases.push_back(mw);

  Case mb{"matmul_batched", "matmul.tk", "matmul_batched", {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "32"}}};
  mb.numStages = 4;
  mb.make = [](const Size &s) { return matmul(s.at(1), s.at(2), s.at(3), s.at(0)); };
  mb.checkSizes = {{1, 1, 1, 1}, {3, 130, 67, 100}};
  mb.realistic = {16, 1024, 1024, 1024};
  mb.tensorCores = true;
  cases.push_back(mb);

  // fp8 codes on wgmma's fp8 form on sm_90a (f16 tensor cores on sm_80):
  // B row-major, staged K-major through registers, and B stored [N, K]
  // (_bt), read in place from its cp.async ring as torch._scaled_mm's is.
  for (bool bt : {false, true}) {
    Case mf{bt ? "matmul_fp8_bt" : "matmul_fp8", "matmul.tk", "matmul_fp8",
            {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "64"}}};
    mf.numWarps = 8;
    mf.make = [bt](const Size &s) { return matmulFp8(s.at(0), s.at(1), s.at(2), bt); };
    mf.checkSizes = {{1, 1, 1}, {130, 67, 100}};
    mf.realistic = {4096, 4096, 4096};
    mf.tensorCores = true;
    cases.push_back(mf);
  }
  // The same codes through host descriptors, B stored [N, K]: on sm_90a a
  // producer warpgroup moves them with the tensor memory accelerator and two
  // consumer warpgroups multiply them on wgmma (matmul_fp8_desc_ws).
  Case mfw{"matmul_fp8_desc_ws", "matmul.tk", "matmul_fp8_desc_ws",
           {{"BLOCK_M", "128"}, {"BLOCK_N", "128"}, {"BLOCK_K", "128"}}};
  mfw.numWarps = 8;
  mfw.numStages = 4;
  mfw.make = [](const Size &s) { return matmulFp8DescPersistent(s.at(0), s.at(1), s.at(2)); };
  mfw.checkSizes = {{1, 16, 16}, {130, 72, 112}};
  mfw.realistic = {4096, 4096, 4096};
  mfw.tensorCores = true;
  cases.push_back(mfw);
  for (int d : {64, 128})
    for (bool causal : {false, true}) cases.push_back(attentionCase(d, causal));
  return cases;
}

}  // namespace kit

namespace kit {

Consts tunedConsts(const Case &c, const nlohmann::json &r) {
  Consts consts;
  for (const auto &[name, value] : r.at("consts").items()) consts.emplace_back(name, value.get<std::string>());
  for (const auto &kv : c.consts)
    if (std::none_of(consts.begin(), consts.end(), [&](const auto &have) { return have.first == kv.first; }))
      consts.push_back(kv);
  return consts;
}

// Attention's whole @tune space at 32 heads x 4096 (the kit's timed size),
// head dim `d`; the sim samples 4 blocks a config.
static TuneCase attentionTune(int d) {
  const std::string n = std::to_string(32 * 4096 * d);
  std::vector<std::string> args = {"-k", "attention", "-D", "D=" + std::to_string(d), "--grid",
                                   "cdiv(L, BLOCK_M), 32"};
  for (const char *buffer : {"q", "k", "v"}) args.insert(args.end(), {"--arg", std::string(buffer) + "=f16[" + n + "]:rand"});
  args.insert(args.end(), {"--arg", "out=f32[" + n + "]:zeros", "--arg", "L=4096", "--arg", "scale=0.125", "--arch",
                           "sm_90a", "--sample-blocks", "4"});
  return {"attention_d" + std::to_string(d), {32, 4096}, {2, 130}, args};
}

std::vector<TuneCase> tuneCases() {
  const std::string rows = "8192", d = "1024", n = std::to_string(8192 * 1024);
  const std::string mm = "2048", mm2 = std::to_string(2048 * 2048);
  return {
      attentionTune(64),
      attentionTune(128),
      {"softmax",
       {8192, 1024},
       {17, 2500},
       {"-k", "softmax", "--grid", "cdiv(rows, BLOCK_R)", "--arg", "x=f32[" + n + "]:rand", "--arg",
        "out=f32[" + n + "]:zeros", "--arg", "rows=" + rows, "--arg", "D=" + d, "--arch", "sm_90a"}},
      // The sim runs tensor-core code lane by lane: 8 sampled blocks a config.
      {"matmul",
       {2048, 2048, 2048},
       {130, 67, 100},
       {"-k",
        "matmul",
        "--grid",
        "cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)",
        "--arg",
        "a=f16[" + mm2 + "]:rand",
        "--arg",
        "b=f16[" + mm2 + "]:rand",
        "--arg",
        "c=f32[" + mm2 + "]:zeros",
        "--arg",
        "bias=f32[" + mm + "]:zeros",
        "--arg",
        "M=" + mm,
        "--arg",
        "N=" + mm,
        "--arg",
        "K=" + mm,
        "--arg",
        "stride_am=" + mm,
        "--arg",
        "stride_ak=1",
        "--arg",
        "stride_bk=" + mm,
        "--arg",
        "stride_bn=1",
        "--arg",
        "stride_cm=" + mm,
        "--arg",
        "stride_cn=1",
        "--arch",
        "sm_90a",
        "--sample-blocks",
        "8"}},
  };
}

}  // namespace kit
