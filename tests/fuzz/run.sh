#!/usr/bin/env bash
# Builds the front-end fuzzer with clang-19 (libFuzzer + ASan + UBSan) in its own
# build directory and runs it for N seconds (default 60) on a corpus seeded
# from stdlib/*.tk, tests/kernels/, tests/errors/ and tests/fuzz/seeds/. Fails when it finds a crash.
#   tests/fuzz/run.sh [seconds]      BUILD_DIR=... to choose the build dir
set -euo pipefail
seconds=${1:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}

cmake -S "$root/tests/fuzz" -B "$build" -G Ninja \
  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" >/dev/null
ninja -C "$build" frontend_fuzzer make_dict
# The dictionary: every token and built-in from the tables, then the phrases.
"$build/make_dict" > "$build/tk.dict"
cat "$root/tests/fuzz/tk.dict" >> "$build/tk.dict"

corpus=$build/fuzz-corpus
mkdir -p "$corpus" "$build/fuzz-artifacts"
cp "$root"/stdlib/*.tk "$root"/tests/kernels/*.tk "$root"/tests/errors/*.tk "$root"/tests/errors/Inputs/*.tk "$root"/tests/fuzz/seeds/*.tk \
  "$corpus"/ 2>/dev/null || true

# -max_len keeps inputs source-sized; -timeout flags anything slower than 5 s.
"$build/frontend_fuzzer" "$corpus" -dict="$build/tk.dict" -max_total_time="$seconds" -max_len=8192 -timeout=5 \
  -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/"
