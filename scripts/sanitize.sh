#!/usr/bin/env bash
# The suite under AddressSanitizer and UndefinedBehaviorSanitizer: clang-14 into ./build-asan.
# The same build holds the libFuzzer targets (scripts/fuzz.sh): the libraries are compiled once,
# with the fuzzers' coverage instrumentation as well, which the tests do not notice.
# Usage: scripts/sanitize.sh [configure|build|test|all]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=clang-build.sh
source scripts/clang-build.sh
step=${1:-all}
jobs=$(nproc 2>/dev/null || echo 2)

configure() {
  bash scripts/install-deps.sh
  # -fno-sanitize=function: clang 14 cannot compile coroutines with UBSan's function check
  # ("Cannot represent a difference across sections", llvm/llvm-project#49689); it checks calls
  # through mistyped function pointers, which C++ code without casts of function pointers cannot
  # make. The fuzzers' coverage instrumentation goes to the libraries only (EXACTLY_FUZZ).
  local san="-fsanitize=address,undefined -fno-sanitize=function"
  san+=" -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  # The samples, tools and tests at -O0, and UBSan left to the libraries: it cost that code 27 %
  # of its compile time (ASan still checks it).
  # The benchmark programs too, for their smoke tests: that they run and print what they promise.
  clang_configure build-asan "$san" "-O0;-fno-sanitize=undefined" -DEXACTLY_FUZZ=ON \
    -DEXACTLY_BUILD_BENCHMARKS=ON
}

build() {
  configure
  local start=$SECONDS
  cmake --build build-asan -j "$jobs"
  echo "asan+ubsan build: $((SECONDS - start)) s"
}

run_tests() {
  local start=$SECONDS
  cd build-asan
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
  ctest --output-on-failure -j "$jobs" --timeout 600
  echo "asan+ubsan tests: $((SECONDS - start)) s"
}

case "$step" in
  configure) configure ;;
  build) build ;;
  test) run_tests ;;
  all) build && run_tests ;;
  *) echo "usage: scripts/sanitize.sh [configure|build|test|all]" >&2; exit 2 ;;
esac
