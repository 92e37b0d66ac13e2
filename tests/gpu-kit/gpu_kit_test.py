#!/usr/bin/env python3
"""The GPU kit (docs/gpu.md), tested on a machine without a GPU.

    gpu_kit_test.py KIT BUILD_DIR WORK_DIR

- `run.sh --sim` runs steps 2 and 5 on the sim: every row ok, every case of
  the kit present, each checked at its sizes on every arch it runs;
- the kit holds no binary that links LLVM, and fits in 48 MiB;
- `run.sh` (the GPU path) on a machine without a GPU says so in the report
  and exits 1: it never falls back to the sim;
- a kit whose gelu bundles are sincos_chain's fails gelu's rows on numerics
  (the check can fail), and a corrupted bundle fails its rows with the
  loader's error while the run goes on.
"""
import json
import os
import shutil
import subprocess
import sys

KIT, BUILD, WORK = sys.argv[1:4]
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, out, env=None):
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run(args + ["--out", out], capture_output=True, text=True, env=env)
    report = None
    try:
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(p.stdout, p.stderr)
        expect(False, "%s wrote no readable report.json: %s" % (" ".join(args), e))
    if report is not None:
        expect(os.path.getsize(os.path.join(out, "report.md")) > 0, "report.md is written")
    return p, report


# 1. The sim run: every row ok.
p, report = run([os.path.join(KIT, "run.sh"), "--sim"], os.path.join(WORK, "sim"),
                dict(os.environ, TK_GPU_KIT_SIM=os.path.join(BUILD, "tools/gpu-kit/tk-gpu-kit-sim")))
expect(p.returncode == 0, "run.sh --sim exits 0 (got %d): %s" % (p.returncode, p.stderr[-2000:]))
if report:
    rows = report["rows"]
    bad = [r for r in rows if not r.get("ok")]
    expect(not bad, "every sim row is ok: %s" % json.dumps(bad[:5]))
    names = {r["name"] for r in rows if r["step"] == "kernels"}
    want = {"vector_add", "complex_activation", "sincos_chain", "gelu", "swiglu", "dropout", "softmax", "layernorm",
            "rmsnorm", "layernorm_tanh_linear_relu", "cross_entropy", "similarity", "rope", "matmul", "matmul_desc", "matmul_desc_ws", "matmul_batched",
            "attention_d64", "attention_d64_causal", "attention_d128", "attention_d128_causal", "cumsum_rows",
            "recurrence_rows", "sort_rows", "quantize_fp8_rows", "transpose", "matmul_fp8", "matmul_fp8_bt",
            "matmul_fp8_desc_ws"}
    expect(names == want, "the sim checks every kernel: missing %s, extra %s" % (want - names, names - want))
    archs = {r["arch"] for r in rows if r["name"] == "matmul" and r["step"] == "kernels"}
    expect(archs == {"sm_80", "sm_90", "sm_90a"}, "tensor-core kernels run every arch's code: %s" % archs)
    # The rest carry sm_90a and sm_80 only (an sm_90 copy never runs on a Hopper).
    carried = {f.split(".")[-2] for f in os.listdir(os.path.join(KIT, "kernels", "softmax"))}
    expect(carried == {"sm_80", "sm_90a"}, "softmax's bundles are sm_90a and sm_80 only: %s" % carried)
    expect(all("max_err" in r and "ms" not in r for r in rows if r["step"] == "kernels"),
           "sim rows carry an error and no time")
    tuned = {t["name"]: t["configs"] for t in report["tune"]}
    expect(tuned.get("softmax", 0) >= 30 and tuned.get("matmul", 0) >= 8,
           "step 5 checks every config of softmax and matmul: %s" % tuned)
    expect(all(r.get("model_ms") for r in rows if r["step"] == "tune"), "every tune row has the model's estimate")
    steps = {s["step"]: s["status"] for s in report["steps"]}
    expect(steps.get("4 peers") == "skipped" and steps.get("6 compute-sanitizer") == "skipped",
           "the sim skips the GPU-only steps, saying so: %s" % steps)

# 2. What ships: no LLVM, at most 48 MiB.
for name in os.listdir(os.path.join(KIT, "bin")):
    ldd = subprocess.run(["ldd", os.path.join(KIT, "bin", name)], capture_output=True, text=True).stdout
    expect("llvm" not in ldd.lower(), "%s links no LLVM:\n%s" % (name, ldd))
size = int(subprocess.run(["du", "-sb", KIT], capture_output=True, text=True).stdout.split()[0])
expect(size <= 48 * 1024 * 1024, "the kit is %d bytes, at most 48 MiB" % size)

# 3. The GPU path without a GPU: a report that says why, exit 1, no sim.
p, report = run([os.path.join(KIT, "run.sh"), "--no-peers"], os.path.join(WORK, "nogpu"),
                dict(os.environ, TK_LIBCUDA="/nonexistent/libcuda.so.1"))
expect(p.returncode == 1, "run.sh without a GPU exits 1 (got %d)" % p.returncode)
if report:
    step = report["steps"][0]
    expect(step["step"] == "1 device" and step["status"] == "failed" and "CUDA" in step.get("error", ""),
           "step 1 names the missing GPU: %s" % step)
    expect(not report["rows"], "nothing ran on another device")

# 4. A kit with wrong kernels: gelu's bundles replaced by sincos_chain's
# (same parameters), and one softmax bundle cut short.
bad_kit = os.path.join(WORK, "bad-kit")
shutil.rmtree(bad_kit, ignore_errors=True)
shutil.copytree(KIT, bad_kit, ignore=shutil.ignore_patterns("kernels"))
os.makedirs(os.path.join(bad_kit, "kernels"))
for case in ("gelu", "softmax"):
    shutil.copytree(os.path.join(KIT, "kernels", case), os.path.join(bad_kit, "kernels", case))
chain = os.path.join(KIT, "kernels", "sincos_chain")
for f in os.listdir(chain):
    shutil.copy(os.path.join(chain, f), os.path.join(bad_kit, "kernels", "gelu", f.replace("CHAIN=4,", "")))
cut = os.path.join(bad_kit, "kernels", "softmax", "BLOCK_R=1,BLOCK_D=1024,num_warps=4,num_stages=3.sm_90a.json")
with open(cut, "r+") as f:
    f.truncate(100)
p, report = run([os.path.join(bad_kit, "run.sh"), "--sim", "--only", "gelu,softmax"], os.path.join(WORK, "bad"),
                dict(os.environ, TK_GPU_KIT_SIM=os.path.join(BUILD, "tools/gpu-kit/tk-gpu-kit-sim")))
expect(p.returncode == 1, "a wrong kernel fails the run (exit %d)" % p.returncode)
if report:
    gelu = [r for r in report["rows"] if r["name"] == "gelu"]
    expect(gelu and all(not r["ok"] and "error" not in r and r["max_err"] != 0 for r in gelu),
           "every gelu row fails on its numbers: %s" % json.dumps(gelu[:2]))
    soft = [r for r in report["rows"] if r["name"] == "softmax" and r["step"] == "kernels"]
    cut_rows = [r for r in soft if not r["ok"]]
    expect(cut_rows and all("error" in r for r in cut_rows) and any(r["ok"] for r in soft),
           "the cut bundle fails its own rows with an error, the others pass: %s" % json.dumps(cut_rows[:1]))

print("gpu_kit_test: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
