#!/bin/sh
# tk's GPU kit (docs/gpu.md, README.md beside this file): checks and times
# every kernel on this machine's GPU and writes OUT/report.json and
# OUT/report.md.
#
#   ./run.sh --out DIR [--only NAME,...] [--budget-s S] [--reps N] [--seed N] [--no-peers] [--no-sanitizer]
#   ./run.sh --sim --out DIR     steps 2 and 5 on tk's sim (from a build tree: the sim runner links LLVM
#                                and is not part of the kit; $TK_GPU_KIT_SIM names it elsewhere)
#
# Exit status 0 when every row is ok, 1 otherwise; the report says which.
set -eu
KIT=$(cd "$(dirname "$0")" && pwd)
RUNNER="$KIT/bin/tk-gpu-kit"
DEVICE=cuda
for a in "$@"; do
  [ "$a" = "--sim" ] && DEVICE=sim
done
if [ "$DEVICE" = sim ]; then
  RUNNER="${TK_GPU_KIT_SIM:-$KIT/../tools/gpu-kit/tk-gpu-kit-sim}"
  if [ ! -x "$RUNNER" ]; then
    echo "run.sh: error: --sim needs tk-gpu-kit-sim from a tk build tree (not found at $RUNNER; set TK_GPU_KIT_SIM)" >&2
    exit 1
  fi
fi
# Drop --sim, keep the rest in order.
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  [ "$a" = "--sim" ] || set -- "$@" "$a"
  n=$((n - 1))
done
exec "$RUNNER" --kit "$KIT" --device "$DEVICE" "$@"
