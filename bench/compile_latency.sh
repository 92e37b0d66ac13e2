#!/usr/bin/env bash
# Compile latency, whole process: `tkc compile ... --emit ptx` on
# stdlib/elementwise.tk's complex_activation against `nvcc -ptx` on the
# equivalent hand-written CUDA kernel (bench/complex_activation.cu).
# Uses hyperfine when installed (Debian package `hyperfine`), else a timed loop.
#
#   bench/compile_latency.sh [build-dir]      (default: build)
# Environment: ARCH (sm_80), RUNS (20), NVCC (nvcc on PATH or $CUDA_HOME/bin).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
arch=${ARCH:-sm_80}
runs=${RUNS:-20}
tkc=$build/tools/tkc/tkc
nvcc=${NVCC:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[[ -x $tkc ]] || { echo "error: $tkc not found; build the tkc target first" >&2; exit 1; }

names=("tkc (libdevice)" "tkc (--no-libdevice)")
cmds=("$tkc compile $root/stdlib/elementwise.tk -k complex_activation --arch $arch --emit ptx -o $tmp/tk.ptx"
      "$tkc compile $root/stdlib/elementwise.tk -k complex_activation --arch $arch --emit ptx --no-libdevice -o $tmp/tk-fast.ptx")
if [[ -x $nvcc ]]; then
  names+=("nvcc -ptx" "nvcc -ptx -use_fast_math")
  cmds+=("$nvcc -ptx -arch=$arch $root/bench/complex_activation.cu -o $tmp/nv.ptx"
         "$nvcc -ptx -use_fast_math -arch=$arch $root/bench/complex_activation.cu -o $tmp/nv-fast.ptx")
else
  echo "note: nvcc not found; timing tkc only" >&2
fi

# Fail early, with the tool's own message, if a command does not work.
for c in "${cmds[@]}"; do $c >/dev/null || { echo "error: failed: $c" >&2; exit 1; }; done

printf '%-26s %10s %10s %10s %10s\n' "compiler ($arch)" "mean ms" "min ms" "max ms" "cpu ms"
if command -v hyperfine >/dev/null; then
  for i in "${!cmds[@]}"; do
    hyperfine --warmup 3 --runs "$runs" --style none --export-json "$tmp/h.json" "${cmds[$i]}" >/dev/null
    python3 - "${names[$i]}" "$tmp/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))["results"][0]
cpu = (r["user"] + r["system"]) * 1e3
print(f"{sys.argv[1]:<26} {r['mean']*1e3:10.1f} {r['min']*1e3:10.1f} {r['max']*1e3:10.1f} {cpu:10.1f}")
PY
  done
  echo "(hyperfine, $runs runs after 3 warm-ups)"
else
  for i in "${!cmds[@]}"; do
    times=()
    for ((r = 0; r < runs; r++)); do
      s=$(date +%s%N); ${cmds[$i]} >/dev/null; e=$(date +%s%N)
      times+=($(( (e - s) / 1000 )))
    done
    printf '%s\n' "${times[@]}" | awk -v n="${names[$i]}" \
      '{s+=$1; if(min==""||$1<min)min=$1; if($1>max)max=$1} END{printf "%-26s %10.1f %10.1f %10.1f %10s\n", n, s/NR/1000, min/1000, max/1000, "-"}'
  done
  echo "(shell loop, $runs runs; install hyperfine for warm-ups and outlier checks)"
fi
for f in "$tmp"/*.ptx; do printf '%-26s %s lines of PTX\n' "$(basename "$f")" "$(wc -l <"$f")"; done
