#!/usr/bin/env bash
# How the front end and tile passes scale with the size of a kernel: the
# wall time of `tkc compile --emit tir` on generated kernels that grow in one
# direction at a time, doubling each step, so linear growth shows as a
# doubling time column.
#   - cse: N pairs of identical expressions (CSE keeps one of each pair);
#   - guards: N early returns in a row, each `if` guarding the rest;
#   - loops: N `while` loops with `break` and `continue` one after another.
#
#   bench/front_scaling.sh [build-dir]      (default: build)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
tkc=$build/tools/tkc/tkc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ -x $tkc ]] || { echo "error: $tkc not found; build the tkc target first" >&2; exit 1; }

cse() {  # $1 pairs
  echo "kernel k(x: *f32, out: *f32, n: i32) {"
  echo "    let a = load(x + arange(0, 128));"
  echo "    var acc = a;"
  for ((i = 0; i < $1; ++i)); do
    echo "    let b$i = a * $i.5 + 1.0;"
    echo "    let c$i = a * $i.5 + 1.0;"
    echo "    acc += b$i - c$i;"
  done
  echo "    store(out + arange(0, 128), acc);"
  echo "}"
}

guards() {  # $1 guards
  echo "kernel k(out: *i32, n: i32) {"
  echo "    var r = 0;"
  for ((i = 0; i < $1; ++i)); do
    echo "    if n == $i {"
    echo "        store(out, r);"
    echo "        return;"
    echo "    }"
    echo "    r += $i;"
  done
  echo "    store(out, r);"
  echo "}"
}

loops() {  # $1 loops
  echo "kernel k(out: *i32, n: i32) {"
  echo "    var r = 0;"
  for ((i = 0; i < $1; ++i)); do
    echo "    var w$i = 0;"
    echo "    while w$i < n {"
    echo "        w$i += 1;"
    echo "        if w$i == $i { continue; }"
    echo "        if r > 1000 { break; }"
    echo "        r += w$i;"
    echo "    }"
  done
  echo "    store(out, r);"
  echo "}"
}

printf '%-8s %8s %12s %10s\n' shape N "tir lines" "ms"
for shape in cse guards loops; do
  case $shape in cse) sizes="1000 2000 4000 8000 16000";; guards) sizes="4 8 12 16 32 64 128";; loops) sizes="100 200 400 800";; esac
  for n in $sizes; do
    $shape "$n" > "$tmp/k.tk"
    start=$(date +%s%N)
    "$tkc" compile "$tmp/k.tk" -k k --emit tir -o "$tmp/k.tir"
    end=$(date +%s%N)
    printf '%-8s %8d %12d %10.1f\n' "$shape" "$n" "$(wc -l < "$tmp/k.tir")" "$(( (end - start) / 1000 ))e-3"
  done
done
