#!/usr/bin/env bash
# Registers, spills, shared stores and tensor-core instructions of stdlib
# matmul_fp8 on sm_90a and sm_89, with and without a launch's facts, B
# row-major or stored [N, K] (docs/perf.md, "fp8 on wgmma"): one Markdown
# row a configuration.
#
#   bench/fp8_matmul_registers.sh [build-dir]      (default: build)
# Environment: PTXAS (ptxas on PATH or $CUDA_HOME/bin).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
TKC=$build/tools/tkc/tkc
PTXAS=${PTXAS:-$(command -v ptxas || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas")}
[[ -x $TKC ]] || { echo "error: $TKC not found; build the tkc target first" >&2; exit 1; }
cd "$root"
F="--assume M=4096 --assume N=4096 --assume K=4096 --assume stride_am=4096 --assume stride_ak=1 --assume stride_cm=4096 --assume stride_cn=1"
BROW="--assume stride_bk=4096 --assume stride_bn=1"
BCOL="--assume stride_bk=1 --assume stride_bn=4096"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
BIG="-D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=64 --num-warps 8 --num-stages 3"
echo "| arch | facts, tiles | registers | spill bytes | st.shared | cp.async | tensor-core instructions |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for arch in sm_90a sm_89; do
for row in "none||" "B row-major|$F $BROW|" "B [N,K]|$F $BCOL|" "none, 128x128x64 8w||$BIG" "B row-major, 128x128x64 8w|$F $BROW|$BIG" "B [N,K], 128x128x64 8w|$F $BCOL|$BIG"; do
  IFS='|' read name facts cfg <<< "$row"
  $TKC compile stdlib/matmul.tk -k matmul_fp8 --arch $arch $facts $cfg --no-cache --emit ptx -o "$tmp/m.ptx" || continue
  mma=$(grep -oE 'wgmma.mma_async.sync.aligned.m64n[0-9]+k[0-9]+.f32.[a-z0-9]+|mma.sync.aligned.m16n8k[0-9]+.row.col.f32.[a-z0-9]+' "$tmp/m.ptx" | sort | uniq -c | sed 's/^ *//' | tr '\n' ';' || true)
  st=$(grep -c 'st.shared' "$tmp/m.ptx" || true); cp=$(grep -c 'cp.async.cg' "$tmp/m.ptx" || true)
  r=$($PTXAS -arch=$arch -v "$tmp/m.ptx" -o "$tmp/m.cubin" 2>&1 | grep -oE 'Used [0-9]+ registers|[0-9]+ bytes spill stores' | grep -oE '[0-9]+' | tr '\n' ' ')
  set -- $r
  echo "| $arch | $name | $2 | $1 | $st | $cp | $mma |"
done; done
