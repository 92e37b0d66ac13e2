#!/bin/sh
# `tkc report` of every stdlib kernel at a size a user would launch it at,
# printed as the Markdown of docs/perf-reports.md's "tkc report of the stdlib
# kernels" (the command, then its report). Integer arguments specialise as
# a launch's would (multiples of 16, values of 1); ptxas's arch is the
# model's GPU's (sm_90 for the H100) unless a row says otherwise.
#   bench/stdlib_reports.sh [TKC] > reports.md
set -eu
cd "$(dirname "$0")/.."
TKC=${1:-build/tools/tkc/tkc}

report() {
  title=$1
  shift
  printf '**%s**\n\n```sh\ntkc report' "$title"
  for a in "$@"; do
    case $a in
      --*) printf ' \\\n    %s' "$a" ;;
      *) printf ' %s' "$a" ;;
    esac
  done
  printf '\n```\n\n```text\n'
  "$TKC" report "$@"
  printf '```\n\n'
}

E=stdlib/elementwise.tk
N=1048576
report "complex_activation at 2^20" $E -k complex_activation --grid 'cdiv(n, BLOCK)' \
  --arg x=f32[$N]:rand --arg y=f32[$N]:rand --arg out=f32[$N]:zeros --arg n=$N
report "sincos_chain at 2^20" $E -k sincos_chain --grid 'cdiv(n, BLOCK)' \
  --arg x=f32[$N]:rand --arg out=f32[$N]:zeros --arg n=$N
report "gelu at 2^20" $E -k gelu --grid 'cdiv(n, BLOCK)' \
  --arg x=f32[$N]:randn --arg out=f32[$N]:zeros --arg n=$N
report "swiglu at 2^20" $E -k swiglu --grid 'cdiv(n, BLOCK)' \
  --arg a=f32[$N]:randn --arg b=f32[$N]:randn --arg out=f32[$N]:zeros --arg n=$N
report "dropout at 2^20, p = 0.5" stdlib/dropout.tk -k dropout --grid 'cdiv(n, BLOCK)' \
  --arg x=f32[$N]:randn --arg out=f32[$N]:zeros --arg n=$N --arg p=0.5 --arg seed=42

F=stdlib/normalization.tk
report "softmax at 4096 x 768" $F -k softmax --grid 'cdiv(rows, BLOCK_R)' \
  --arg x=f32[3145728]:randn --arg out=f32[3145728]:zeros --arg rows=4096 --arg D=768
report "softmax at 1823 x 781 (D breaks every fact: the general variant)" $F -k softmax --grid 'cdiv(rows, BLOCK_R)' \
  --arg x=f32[1423763]:randn --arg out=f32[1423763]:zeros --arg rows=1823 --arg D=781
report "layernorm at 4096 x 768" $F -k layernorm --grid 'cdiv(rows, BLOCK_R)' \
  --arg x=f32[3145728]:randn --arg w=f32[768]:randn --arg b=f32[768]:randn --arg out=f32[3145728]:zeros \
  --arg rows=4096 --arg D=768 --arg eps=1e-5
report "rmsnorm at 4096 x 768" $F -k rmsnorm --grid 'cdiv(rows, BLOCK_R)' \
  --arg x=f32[3145728]:randn --arg w=f32[768]:randn --arg out=f32[3145728]:zeros \
  --arg rows=4096 --arg D=768 --arg eps=1e-6
report "layernorm_tanh_linear_relu at 16384 x 256" $F -k layernorm_tanh_linear_relu --grid 'cdiv(rows, BLOCK_R)' \
  --arg x=f32[4194304]:randn --arg w=f32[256]:randn --arg b=0.1 --arg out=f32[16384]:zeros \
  --arg rows=16384 --arg D=256 --arg eps=1e-5

report "cross_entropy at 64 x 32000" stdlib/loss.tk -k cross_entropy --grid 'cdiv(rows, BLOCK_R)' \
  --arg x=f32[2048000]:randn --arg targets=i32[64]:zeros --arg loss=f32[64]:zeros \
  --arg rows=64 --arg V=32000 --arg ignore_index=-100

report "similarity at 64 samples x 1024 dims" stdlib/similarity.tk -k similarity \
  --grid 'cdiv(n_dim, BLOCK_I), cdiv(n_dim, BLOCK_J)' \
  --arg x=f32[65536]:randn --arg y=f32[65536]:randn --arg out=i32[1048576]:zeros --arg n_samples=64 --arg n_dim=1024

M=512
report "matmul at 512^3, f16 in, f32 out, 128 x 128 x 32 tiles, 4 stages, sm_80" stdlib/matmul.tk -k matmul \
  --grid 'cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)' -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=32 --num-stages 4 \
  --arch sm_80 --arg a=f16[262144]:randn --arg b=f16[262144]:randn --arg c=f32[262144]:zeros \
  --arg bias=f32[$M]:zeros --arg M=$M --arg N=$M --arg K=$M --arg stride_am=$M --arg stride_ak=1 \
  --arg stride_bk=$M --arg stride_bn=1 --arg stride_cm=$M --arg stride_cn=1
report "matmul at 512^3 on sm_90a (wgmma)" stdlib/matmul.tk -k matmul \
  --grid 'cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N)' -D BLOCK_M=128 -D BLOCK_N=128 -D BLOCK_K=32 --num-stages 4 \
  --arch sm_90a --arg a=f16[262144]:randn --arg b=f16[262144]:randn --arg c=f32[262144]:zeros \
  --arg bias=f32[$M]:zeros --arg M=$M --arg N=$M --arg K=$M --arg stride_am=$M --arg stride_ak=1 \
  --arg stride_bk=$M --arg stride_bn=1 --arg stride_cm=$M --arg stride_cn=1
report "matmul_batched: 8 x (256 x 256 x 256)" stdlib/matmul.tk -k matmul_batched \
  --grid 'cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), 8' --arch sm_80 \
  --arg a=f16[524288]:randn --arg b=f16[524288]:randn --arg c=f32[524288]:zeros \
  --arg M=256 --arg N=256 --arg K=256 --arg stride_az=65536 --arg stride_am=256 --arg stride_ak=1 \
  --arg stride_bz=65536 --arg stride_bk=256 --arg stride_bn=1 --arg stride_cz=65536 --arg stride_cm=256 --arg stride_cn=1

report "attention: 4 heads, L = 1024, D = 64, causal, sm_80" stdlib/attention.tk -k attention \
  --grid 'cdiv(L, BLOCK_M), 4' -D CAUSAL=true --arch sm_80 \
  --arg q=f16[262144]:randn --arg k=f16[262144]:randn --arg v=f16[262144]:randn --arg out=f32[262144]:zeros \
  --arg L=1024 --arg scale=0.125
