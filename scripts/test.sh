#!/usr/bin/env bash
# The test command (what CI runs): installs what is missing, builds with ASan+UBSan and runs the
# whole suite there, runs the fuzz targets side by side for FUZZ_SECONDS (90) and the threaded
# tests under TSan. Prints how long each part took at the end. The plain build (scripts/build.sh)
# is for the demo and the benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
summary=()
print_summary() {
  echo "=== time per part"
  printf '%s\n' "${summary[@]}"
  echo "total: $((SECONDS / 60)) min $((SECONDS % 60)) s"
}
# part NAME COMMAND...: runs COMMAND, records its duration; stops everything if it fails.
part() {
  local name=$1 start=$SECONDS status=ok
  shift
  echo "=== $name"
  "$@" || status=FAILED
  summary+=("$(printf '%-22s %5d s  %s' "$name" $((SECONDS - start)) "$status")")
  if [ "$status" != ok ]; then
    print_summary
    exit 1
  fi
}
part "dependencies" bash scripts/install-deps.sh
part "asan+ubsan build" bash scripts/sanitize.sh build
part "asan+ubsan tests" bash scripts/sanitize.sh test
part "fuzz" bash scripts/fuzz.sh
part "tsan" bash scripts/tsan.sh
print_summary
