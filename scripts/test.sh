#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs the whole test suite; with
# EXACTLY_TEST_ALL=1 also the suite under ASan+UBSan, the threaded tests under TSan and each fuzz
# target for FUZZ_SECONDS (60). Prints how long each part took at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
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
part "build" bash scripts/build.sh
part "tests" bash -c "cd build && ctest --output-on-failure -j $jobs --timeout 600"
# The sanitizer builds and the fuzzers run with EXACTLY_TEST_ALL=1 only, until a cold run of all
# of them is measured inside the 30-minute budget (README, Testing).
if [ "${EXACTLY_TEST_ALL:-0}" = 1 ]; then
  part "asan+ubsan" bash scripts/sanitize.sh
  part "tsan" bash scripts/tsan.sh
  part "fuzz" bash scripts/fuzz.sh
fi
print_summary
