#!/bin/bash
# Builds the GPU kit (docs/gpu.md) in --kit DIR: called by `make gpu-kit`
# (the gpu-kit target of tools/gpu-kit/CMakeLists.txt). Every kernel the kit
# runs is compiled here with tkc, for sm_90a and sm_80 (and sm_90 for tensor-core kernels) into a
# bundle and, when ptxas is found, a cubin; the list comes from the runner
# itself (--list-variants), so the case table in Cases.cpp is the only place
# that names them. Compiles already done are kept unless tkc or the .tk file
# is newer. Fails when the kit passes 48 MiB or a binary in it links LLVM.
set -euo pipefail

while [ $# -gt 0 ]; do
  case "$1" in
    --kit) KIT=$2; shift 2 ;;
    --runner) RUNNER=$2; shift 2 ;;
    --tkc) TKC=$2; shift 2 ;;
    --source) SRC=$2; shift 2 ;;
    *) echo "build-kit.sh: unknown argument $1" >&2; exit 1 ;;
  esac
done
: "${KIT:?--kit}" "${RUNNER:?--runner}" "${TKC:?--tkc}" "${SRC:?--source}"
JOBS=$(nproc)
mkdir -p "$KIT/bin" "$KIT/kernels" "$KIT/model" "$KIT/peers"

# What ships: the runner without its debug info, the script, the peers, the docs.
strip -o "$KIT/bin/tk-gpu-kit" "$RUNNER"
cp "$SRC/tools/gpu-kit/run.sh" "$KIT/run.sh"
rm -f "$KIT"/peers/*.py  # what an older kit had, gone from the source
cp "$SRC"/tools/gpu-kit/peers/*.py "$KIT/peers/"  # the package, not its example problems
cp "$SRC/docs/gpu.md" "$KIT/README.md"

source_of() {  # the .tk file a case names
  case "$1" in kit.tk | cases.tk) echo "$SRC/tools/gpu-kit/$1" ;; *) echo "$SRC/stdlib/$1" ;; esac
}
stale() {  # stale OUTPUT INPUT...: missing, empty or older than an input
  local out=$1
  shift
  [ -s "$out" ] || return 0
  for i in "$@"; do [ "$i" -nt "$out" ] && return 0; done
  return 1
}

# The model's estimate of every config of the tuned kernels (`tkc tune` on
# the sim); the variants list reads these.
while IFS=$'\t' read -r -a line; do
  name=${line[0]}
  src=$(source_of "${line[1]}")
  if stale "$KIT/model/$name.json" "$TKC" "$src"; then
    echo "gpu-kit: tkc tune $name (the model, on the sim)"
    "$TKC" tune "$src" "${line[@]:2}" --jobs "$JOBS" --json "$KIT/model/$name.json" > "$KIT/model/$name.txt"
  fi
done < <("$RUNNER" --kit "$KIT" --list-tune)

"$RUNNER" --kit "$KIT" --list-variants > "$KIT/kernels/variants.tsv"
have_ptxas=0
# Cubins only for the archs the kit's GPU (an H100 or H200, compute 9.0)
# loads: an sm_80 cubin never runs there, so sm_80 ships as PTX, which is
# what the kit's sm_80 rows test (the driver's JIT). 5.8 MB saved.
CUBIN_ARCHS=" sm_90 sm_90a "
if "$TKC" compile "$SRC/tools/gpu-kit/kit.tk" -k vector_add --emit cubin -o /dev/null >/dev/null 2>&1; then have_ptxas=1; fi

compile_one() {
  local -a f
  IFS=$'\t' read -r -a f <<< "$1"
  local stem=${f[0]} arch=${f[1]} src
  src=$(source_of "${f[2]}")
  local out="$KIT/kernels/$stem.$arch"
  mkdir -p "$(dirname "$out")"
  if stale "$out.json" "$TKC" "$src"; then
    "$TKC" compile "$src" "${f[@]:3}" --arch "$arch" --emit bundle -o "$out.json" || { echo "gpu-kit: FAILED $stem $arch" >&2; return 1; }
  fi
  if [ "$have_ptxas" = 1 ] && [[ "$CUBIN_ARCHS" == *" $arch "* ]] && stale "$out.cubin" "$out.json"; then
    "$TKC" compile "$src" "${f[@]:3}" --arch "$arch" --emit cubin -o "$out.cubin" || { echo "gpu-kit: FAILED cubin $stem $arch" >&2; return 1; }
  fi
}
export -f compile_one source_of stale
export KIT TKC SRC have_ptxas CUBIN_ARCHS
count=$(wc -l < "$KIT/kernels/variants.tsv")
echo "gpu-kit: $count compiles (bundles$([ $have_ptxas = 1 ] && echo ' and cubins'), $JOBS at a time)"
tr '\n' '\0' < "$KIT/kernels/variants.tsv" | xargs -0 -P "$JOBS" -n 1 bash -c 'compile_one "$1"' _

# Bundles and cubins of variants the case table no longer names (a renamed
# config, a dropped case) would ship for nothing and count against the size.
expected=$(mktemp)
trap 'rm -f "$expected"' EXIT
cut -f1,2 "$KIT/kernels/variants.tsv" | while IFS=$'\t' read -r stem arch; do
  printf '%s\n' "$KIT/kernels/$stem.$arch.json"
  if [[ "$CUBIN_ARCHS" == *" $arch "* ]]; then printf '%s\n' "$KIT/kernels/$stem.$arch.cubin"; fi
done | sort > "$expected"
find "$KIT/kernels" -type f \( -name '*.json' -o -name '*.cubin' \) | sort | comm -23 - "$expected" |
  while IFS= read -r old; do rm -f -- "$old"; done
find "$KIT/kernels" -mindepth 1 -type d -empty -delete

needs() { objdump -T "$KIT/bin/tk-gpu-kit" | grep -o "$1_[0-9.]*" | sort -u -V | tail -1; }
glibc="$(needs GLIBC), $(needs GLIBCXX)"
cat > "$KIT/manifest.json" <<JSON
{
  "commit": "$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)",
  "built": "$(date -u '+%Y-%m-%d %H:%M:%S UTC')",
  "archs": ["sm_80", "sm_90", "sm_90a"],
  "variants": $count,
  "cubins": $([ $have_ptxas = 1 ] && echo '["sm_90", "sm_90a"]' || echo '[]'),
  "runner_needs": "$glibc"
}
JSON

# The kit's promises: small enough to send, and no LLVM on the GPU machine.
size=$(du -sb "$KIT" | cut -f1)
if [ "$size" -gt $((48 * 1024 * 1024)) ]; then
  echo "gpu-kit: error: $KIT is $size bytes, over the 48 MiB a GPU machine takes" >&2
  exit 1
fi
if ldd "$KIT/bin/tk-gpu-kit" | grep -qi llvm; then
  echo "gpu-kit: error: $KIT/bin/tk-gpu-kit links LLVM:" >&2
  ldd "$KIT/bin/tk-gpu-kit" | grep -i llvm >&2
  exit 1
fi
echo "gpu-kit: $KIT ready: $count compiles, $((size / 1024)) KiB; run.sh --out DIR on a GPU machine (docs/gpu.md)"
