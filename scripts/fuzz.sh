#!/usr/bin/env bash
# Builds the libFuzzer targets in ./build-asan (the sanitizer build of scripts/sanitize.sh: clang-14,
# ASan+UBSan) and runs them side by side, each for FUZZ_SECONDS (default 90) from its seed corpus in
# tests/fuzz/corpus/<name>/. New inputs go to build-asan/fuzz/corpus/<name>/ (the committed seeds
# are never written); a finding fails the run, its input in build-asan/fuzz/findings/.
# Usage: scripts/fuzz.sh [target...] (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(request_id server_request client_envelope); fi
seconds=${FUZZ_SECONDS:-90}
jobs=$(nproc 2>/dev/null || echo 2)
# The fuzz targets live in the sanitizer build (clang-14, ASan+UBSan, coverage instrumentation).
bash scripts/sanitize.sh configure
cmake --build build-asan -j "$jobs" --target "${targets[@]/#/fuzz_}"
mkdir -p build-asan/fuzz/findings
# fuzz_one NAME: runs one target for $seconds from its seeds; its log is build-asan/fuzz/fuzz_NAME.log.
fuzz_one() {
  local t=$1 seeds=tests/fuzz/corpus/$1 work=build-asan/fuzz/corpus/$1
  mkdir -p "$work"
  # -timeout: an input slower than 10 s is a finding too (a hang).
  "build-asan/tests/fuzz/fuzz_$t" "$work" "$seeds" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="build-asan/fuzz/findings/$t-" \
    2>"build-asan/fuzz/fuzz_$t.log"
}
# The targets run side by side, so every core fuzzes: three on two cores get about two thirds of
# a core each for the whole time.
pids=()
for t in "${targets[@]}"; do
  echo "fuzz_$t: ${seconds}s from $(find "tests/fuzz/corpus/$t" -type f | wc -l) seeds"
  fuzz_one "$t" &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if ! wait "${pids[$i]}"; then
    tail -n 60 "build-asan/fuzz/fuzz_$t.log"
    echo "fuzz_$t found a failure: its input is in build-asan/fuzz/findings/" >&2
    status=1
    continue
  fi
  echo "fuzz_$t:"
  grep -E "^stat::(number_of_executed_units|new_units_added)|^#[0-9]+.*DONE" \
    "build-asan/fuzz/fuzz_$t.log" || true
done
exit $status
