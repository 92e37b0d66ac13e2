// The kit's report: report.json as the runner keeps it, and report.md, the
// same as tables a closing note can quote (docs/gpu.md explains each
// column).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "tools/gpu-kit/Kit.h"

namespace kit {

namespace {

// The H100 SXM's datasheet peaks, which the report sets every figure beside.
constexpr double kH100GBps = 3350, kH100F16Tflops = 989;

std::string num(const json &v, int digits) {
  if (!v.is_number()) return v.is_string() ? v.get<std::string>() : "";
  char buf[64];
  const double d = v.get<double>();
  if (digits < 0)
    std::snprintf(buf, sizeof buf, "%.2e", d);
  else
    std::snprintf(buf, sizeof buf, "%.*f", digits, d);
  return buf;
}

std::string str(const json &row, const char *field) {
  if (!row.contains(field) || row[field].is_null()) return "";
  return row[field].is_string() ? row[field].get<std::string>() : row[field].dump();
}

std::string cell(std::string s) {
  for (char &c : s)
    if (c == '|' || c == '\n') c = ' ';
  return s.size() > 160 ? s.substr(0, 157) + "..." : s;
}

std::string okText(const json &row) { return row.value("ok", false) ? "ok" : "**FAIL**"; }

void table(std::string &md, const std::vector<std::string> &head) {
  md += "|";
  for (const std::string &h : head) md += " " + h + " |";
  md += "\n|";
  for (size_t i = 0; i < head.size(); ++i) md += " --- |";
  md += "\n";
}

void line(std::string &md, const std::vector<std::string> &cells) {
  md += "|";
  for (const std::string &c : cells) md += " " + cell(c) + " |";
  md += "\n";
}

void errors(std::string &md, const json &rows, const char *step) {
  std::string list;
  for (const json &r : rows)
    if (r.value("step", "") == step && r.contains("error"))
      list += "- " + str(r, "name") + " " + str(r, "arch") + " " + str(r, "shape") + " " + str(r, "config") + ": `" +
              cell(str(r, "error")) + "`\n";
  if (!list.empty()) md += "\nErrors:\n" + list;
}

}  // namespace

double spearman(const std::vector<double> &a, const std::vector<double> &b) {
  const size_t n = a.size();
  if (n < 3 || b.size() != n) return NAN;
  auto ranks = [n](const std::vector<double> &v) {
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](size_t i, size_t j) { return v[i] < v[j]; });
    std::vector<double> r(n);
    for (size_t i = 0; i < n;) {
      size_t j = i;
      while (j + 1 < n && v[idx[j + 1]] == v[idx[i]]) ++j;
      for (size_t k = i; k <= j; ++k) r[idx[k]] = (double(i) + double(j)) / 2 + 1;
      i = j + 1;
    }
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double mean = (double(n) + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < n; ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : NAN;
}

std::string markdown(const json &report) {
  const json &kit = report.value("kit", json::object());
  const json &dev = report.value("device", json::object());
  const json &rows = report.value("rows", json::array());
  std::string md = "# tk GPU kit report\n\n";
  md += "Run " + str(kit, "started") + " on **" + str(dev, "name") + "** (" + str(kit, "mode") + "), kit " +
        str(kit, "commit") + ", seed " + str(kit, "seed") + ". Peaks for comparison: H100 SXM " + num(kH100GBps, 0) +
        " GB/s, " + num(kH100F16Tflops, 0) + " TFLOP/s f16 dense.\n";

  md += "\n## 1. Device\n\n";
  table(md, {"property", "value"});
  for (const auto &[k, v] : dev.items()) line(md, {k, v.is_string() ? v.get<std::string>() : v.dump()});

  md += "\n## 2-4. Kernels: checked against double, timed, and beside PyTorch and Triton\n\n";
  table(md, {"kernel", "arch", "shape", "dtype", "max err", "tol", "ok", "ms", "GB/s", "TFLOP/s", "of H100 peak",
             "torch ms", "torch.compile ms", "triton ms"});
  for (const json &r : rows) {
    if (r.value("step", "") != "kernels") continue;
    std::string peak;
    if (r.contains("gbps")) peak = num(100 * r["gbps"].get<double>() / kH100GBps, 1) + "%";
    if (r.contains("tflops")) peak = num(100 * r["tflops"].get<double>() / kH100F16Tflops, 1) + "%";
    line(md,
         {str(r, "name"), str(r, "arch"), str(r, "shape"), str(r, "dtype"), num(r.value("max_err", json()), -1),
          num(r.value("tol", json()), -1), okText(r), num(r.value("ms", json()), 4), num(r.value("gbps", json()), 0),
          num(r.value("tflops", json()), 1), peak, num(r.value("torch_ms", json()), 4),
          num(r.value("compile_ms", json()), 4), num(r.value("triton_ms", json()), 4)});
  }
  errors(md, rows, "kernels");
  if (report.contains("peers")) {
    md += "\nPeers (" + str(report["peers"], "status") + "): torch " + str(report["peers"], "torch") + ", triton " +
          str(report["peers"], "triton") + ".\n";
    for (const json &r : rows)
      if (r.value("step", "") == "kernels" && r.contains("peer_notes") && !r["peer_notes"].get<std::string>().empty())
        md += "- " + str(r, "name") + ": " + cell(str(r, "peer_notes")) + "\n";
  }

  md += "\n## 5. Tuning: measured against the model\n";
  for (const json &t : report.value("tune", json::array())) {
    md += "\n**" + str(t, "name") + "** " + str(t, "shape") + ": " + str(t, "configs") +
          " configs, Spearman rank correlation of model and measurement " + num(t.value("spearman", json()), 3) +
          "; best measured " + str(t, "best_measured") + ", best by the model " + str(t, "best_model") + ".\n\n";
    table(md, {"config", "ok", "ms", "model ms"});
    for (const json &r : rows)
      if (r.value("step", "") == "tune" && r.value("name", "") == t.value("name", ""))
        line(md, {str(r, "config"), okText(r), num(r.value("ms", json()), 4), num(r.value("model_ms", json()), 4)});
  }
  errors(md, rows, "tune");

  md += "\n## 6. compute-sanitizer\n\n";
  table(md, {"kernel", "tool", "ok", "note"});
  for (const json &r : rows)
    if (r.value("step", "") == "sanitizer") line(md, {str(r, "name"), str(r, "tool"), okText(r), str(r, "note")});

  md += "\n## 7. Host cost of a launch\n\n";
  table(md, {"launcher", "us per launch", "what"});
  for (const json &r : rows)
    if (r.value("step", "") == "launch")
      line(md, {str(r, "name"), num(r.value("us_per_launch", json()), 2), str(r, "what")});
  errors(md, rows, "launch");

  md += "\n## Steps\n\n";
  table(md, {"step", "status", "seconds", "error"});
  for (const json &s : report.value("steps", json::array()))
    line(md, {str(s, "step"), str(s, "status"), num(s.value("seconds", json()), 1), str(s, "error")});
  return md;
}

void writeReport(const std::string &dir, const json &report) {
  writeFileAtomically(dir + "/report.json", report.dump(2) + "\n");
  writeFileAtomically(dir + "/report.md", markdown(report));
}

}  // namespace kit
