#!/usr/bin/env bash
# Builds the libFuzzer targets into ./build-fuzz (clang-14, ASan+UBSan) and runs each one for
# FUZZ_SECONDS (default 60) from its seed corpus in tests/fuzz/corpus/<name>/. New inputs go to
# build-fuzz/corpus/<name>/ (the committed seeds are never written); a finding stops the run with
# its input in build-fuzz/findings/. Usage: scripts/fuzz.sh [target...] (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(request_id server_request client_envelope); fi
seconds=${FUZZ_SECONDS:-60}
jobs=$(nproc 2>/dev/null || echo 2)
# -fno-sanitize=function: clang 14 cannot compile coroutines with UBSan's function check ("Cannot
# represent a difference across sections", llvm/llvm-project#49689); it checks calls through
# mistyped function pointers, which C++ code without casts of function pointers cannot make.
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function"
san+=" -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DEXACTLY_FUZZ=ON -DEXACTLY_BUILD_TESTS=OFF -DEXACTLY_BUILD_SAMPLES=OFF \
  -DCMAKE_CXX_FLAGS="$san" >/dev/null
cmake --build build-fuzz -j "$jobs" --target "${targets[@]/#/fuzz_}"
mkdir -p build-fuzz/findings
for t in "${targets[@]}"; do
  seeds=tests/fuzz/corpus/$t
  work=build-fuzz/corpus/$t
  mkdir -p "$work"
  echo "fuzz_$t: ${seconds}s from $(find "$seeds" -type f | wc -l) seeds"
  # -timeout: an input slower than 10 s is a finding too (a hang).
  "build-fuzz/tests/fuzz/fuzz_$t" "$work" "$seeds" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t-" \
    2>"build-fuzz/fuzz_$t.log" || {
    tail -n 60 "build-fuzz/fuzz_$t.log"
    echo "fuzz_$t found a failure: its input is in build-fuzz/findings/" >&2
    exit 1
  }
  grep -E "^stat::(number_of_executed_units|new_units_added)|^#[0-9]+.*DONE" "build-fuzz/fuzz_$t.log" || true
done
