#!/usr/bin/env bash
# The suite under AddressSanitizer and UndefinedBehaviorSanitizer: clang-14 into ./build-asan.
# The same build holds the libFuzzer targets (scripts/fuzz.sh): the libraries are compiled once,
# with the fuzzers' coverage instrumentation as well, which the tests do not notice.
# Usage: scripts/sanitize.sh [configure|build|test|all]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
step=${1:-all}
jobs=$(nproc 2>/dev/null || echo 2)

configure() {
  bash scripts/install-deps.sh
  # -fno-sanitize=function: clang 14 cannot compile coroutines with UBSan's function check
  # ("Cannot represent a difference across sections", llvm/llvm-project#49689); it checks calls
  # through mistyped function pointers, which C++ code without casts of function pointers cannot
  # make. -O1 with line tables: ASan's stacks name the lines, and the build stays short on 2 cores.
  # The samples, tools and tests at -O0 (EXACTLY_TEST_CODE_OPTIONS): about 40 % less compile time
  # for them, and the libraries they load keep -O1.
  local san="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize=function"
  san+=" -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DEXACTLY_TEST_CODE_OPTIONS=-O0 \
    -DEXACTLY_FUZZ=ON \
    -DEXACTLY_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS="$san" >/dev/null
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
