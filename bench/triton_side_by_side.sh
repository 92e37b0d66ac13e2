#!/usr/bin/env bash
# Registers and spills of the stdlib kernels beside Triton's, with the same
# tiles and the integer facts a Triton launch specialises (tk's --assume):
# `tkc compile ... --emit ptx`, then `ptxas -v`, one Markdown row a kernel
# and arch. Triton's columns are recorded figures, not recompiled here:
# Triton 3.9 cross-compiled with ptxas 13.0 (../shared/FACTS.md, 2026-11-27)
# for the forward kernels, Triton 3.6 for tutorial 06's backward loops
# (docs/perf.md "Attention backward"). "-" where none was recorded.
#
#   bench/triton_side_by_side.sh [build-dir]      (default: build)
# Environment: PTXAS (ptxas on PATH or $CUDA_HOME/bin).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
tkc=$build/tools/tkc/tkc
ptxas=${PTXAS:-$(command -v ptxas || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ -x $tkc ]] || { echo "error: $tkc not found; build the tkc target first" >&2; exit 1; }
[[ -x $ptxas ]] || { echo "error: ptxas not found (PTXAS, CUDA_HOME, /usr/local/cuda)" >&2; exit 1; }
cd "$root"

rows='-D BLOCK_R=1 -D BLOCK_D=1024 --num-warps 4 --assume rows=1823 --assume D=781'
attn='-D BLOCK_M=128 -D BLOCK_N=64 --num-warps 4 --num-stages 3 --assume L=4096'
mm='-D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=32 --num-warps 4 --num-stages 4'
mmfacts='--assume stride_ak=1 --assume stride_bn=1 --assume stride_cn=1 --assume stride_am=1024 --assume stride_bk=1024 --assume stride_cm=1024 --assume M=1024 --assume N=1024 --assume K=1024'

# label | file (a stdlib name, or a path) | kernel | arch | tkc flags | Triton registers (+ spill bytes)
# (Triton's figure for tutorial 03 is its stdlib-shaped matmul's: the same kernel.)
table="
complex_activation|elementwise|complex_activation|sm_90a|--assume n=1048576|52
gelu|elementwise|gelu|sm_90a|--assume n=1048576|32
dropout|dropout|dropout|sm_90a|-D BLOCK=1024 --assume n=1048576|32
dropout|dropout|dropout|sm_80|-D BLOCK=1024 --assume n=1048576|32
softmax|normalization|softmax|sm_90a|$rows|40
softmax|normalization|softmax|sm_80|$rows|32
rmsnorm|normalization|rmsnorm|sm_90a|$rows|48
rmsnorm|normalization|rmsnorm|sm_80|$rows|40
layernorm|normalization|layernorm|sm_90a|$rows|56
layernorm|normalization|layernorm|sm_80|$rows|53
cross_entropy|loss|cross_entropy|sm_90a|-D BLOCK_V=2048 --assume rows=4096 --assume V=32000|36
cross_entropy|loss|cross_entropy|sm_80|-D BLOCK_V=2048 --assume rows=4096 --assume V=32000|37
layernorm_tanh_linear_relu D=256|normalization|layernorm_tanh_linear_relu|sm_90a|--assume D=256|168
rope|rope|rope|sm_90a|-D D=64 -D BLOCK_S=4 -D BLOCK_H=8 --assume seq=2048 --assume table_cols=64|48
similarity|similarity|similarity|sm_90a||72
matmul 128x128x32, facts|matmul|matmul|sm_90a|$mm $mmfacts|173
matmul 128x128x32, facts|matmul|matmul|sm_80|$mm $mmfacts|245
matmul 128x128x32, no facts|matmul|matmul|sm_90a|$mm|255 + 92 B
matmul 128x128x32, host descriptors, no facts|matmul|matmul_desc|sm_90a|$mm|not compiled
matmul 128x128x32, host descriptors, no facts|matmul|matmul_desc|sm_80|$mm|not compiled
attention D=64|attention|attention|sm_90a|-D D=64 $attn|191
attention D=64 causal|attention|attention|sm_90a|-D D=64 -D CAUSAL=true $attn|208
attention D=128|attention|attention|sm_90a|-D D=128 $attn|252
attention D=128 causal|attention|attention|sm_90a|-D D=128 -D CAUSAL=true $attn|254
attention D=64|attention|attention|sm_80|-D D=64 $attn|246 (the kernel written in Triton)
attention D=128|attention|attention|sm_80|-D D=128 $attn|255 + 104 B (the kernel written in Triton)
attention D=64, host descriptors (TMA K/V)|attention|attention_desc|sm_90a|-D D=64 $attn|187 (tutorial 06, TMA)
attention D=64 causal, host descriptors|attention|attention_desc|sm_90a|-D D=64 -D CAUSAL=true $attn|190 (tutorial 06, TMA)
attention D=128, host descriptors|attention|attention_desc|sm_90a|-D D=128 $attn|250 (tutorial 06, TMA)
attention D=128 causal, host descriptors|attention|attention_desc|sm_90a|-D D=128 -D CAUSAL=true $attn|252 (tutorial 06, TMA)
attention backward dk/dv D=64|attention|attention_bwd_dkdv|sm_90a|-D D=64 --assume L=4096|138
attention backward dk/dv D=128|attention|attention_bwd_dkdv|sm_90a|-D D=128 --assume L=4096|234
attention backward dq D=64|attention|attention_bwd_dq|sm_90a|-D D=64 --assume L=4096|172
attention backward dq D=128|attention|attention_bwd_dq|sm_90a|-D D=128 --assume L=4096|255 + 60 B
attention backward dk/dv D=64|attention|attention_bwd_dkdv|sm_80|-D D=64 --assume L=4096|238
attention backward dq D=64|attention|attention_bwd_dq|sm_80|-D D=64 --assume L=4096|255
tutorial 03 matmul as written 128x128x32|tests/kernels/ports/matmul_tutorial03.tk|matmul_kernel|sm_90a|-D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 -D BLOCK_SIZE_K=32 --num-warps 4 --num-stages 4 $mmfacts|173
tutorial 03 matmul as written 128x128x32|tests/kernels/ports/matmul_tutorial03.tk|matmul_kernel|sm_80|-D BLOCK_SIZE_M=128 -D BLOCK_SIZE_N=128 -D BLOCK_SIZE_K=32 --num-warps 4 --num-stages 4 $mmfacts|245
"

echo "| kernel | arch | tk registers | tk spill bytes | Triton registers | tkc flags |"
echo "| --- | --- | --- | --- | --- | --- |"
while IFS='|' read -r label file kernel arch flags triton; do
  [[ -n $label ]] || continue
  [[ $file == */* ]] || file=stdlib/$file.tk
  # shellcheck disable=SC2086  # flags are words
  if ! "$tkc" compile "$file" -k "$kernel" --arch "$arch" $flags --no-cache --emit ptx -o "$tmp/k.ptx" \
      2> "$tmp/err"; then
    echo "| $label | $arch | compile failed: $(head -1 "$tmp/err") | | $triton | \`$flags\` |"
    continue
  fi
  info=$("$ptxas" -v "-arch=$arch" "$tmp/k.ptx" -o /dev/null 2>&1)
  regs=$(grep -oE 'Used [0-9]+ registers' <<< "$info" | grep -oE '[0-9]+' | head -1)
  spill=$(grep -oE '[0-9]+ bytes spill stores' <<< "$info" | grep -oE '^[0-9]+' | head -1)
  echo "| $label | $arch | $regs | $spill | $triton | \`$flags\` |"
done <<< "$table"

# Shared memory of attention on sm_80 (the bundle's shared_bytes) beside
# Triton 3.9's `metadata.shared` for the same kernel written in Triton,
# cc 80, the same tiles (docs/perf.md, "Triton's slot count").
echo
echo "| kernel | arch | tk shared bytes | Triton shared bytes |"
echo "| --- | --- | --- | --- |"
for pair in 64:49152 128:98304; do
  d=${pair%%:*}
  # shellcheck disable=SC2086  # $attn is words
  "$tkc" compile stdlib/attention.tk -k attention --arch sm_80 -D D="$d" $attn --no-cache --emit bundle -o "$tmp/a.json"
  shared=$(grep -oE '"shared_bytes": [0-9]+' "$tmp/a.json" | grep -oE '[0-9]+$')
  echo "| attention D=$d | sm_80 | $shared | ${pair#*:} |"
done

# Compile time of the matmul without facts against the specialised one
# (issue 25: within 2x), whole process, best of 5, cache off.
best_of() {
  local best=""
  for _ in 1 2 3 4 5; do
    local t0 t1
    t0=$(date +%s%N)
    # shellcheck disable=SC2086  # $mm is words
    "$tkc" compile stdlib/matmul.tk -k matmul --arch sm_90a $mm "$@" --no-cache --emit ptx -o "$tmp/t.ptx"
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000))
    [[ -z $best || $ms -lt $best ]] && best=$ms
  done
  echo "$best"
}
general=$(best_of)
# shellcheck disable=SC2086  # $mmfacts is words
special=$(best_of $mmfacts)
echo
echo "matmul 128x128x32 sm_90a compile time (best of 5): no facts ${general} ms, facts ${special} ms," \
  "$(awk -v g="$general" -v s="$special" 'BEGIN { printf "%.1fx", g / s }')"
