#!/usr/bin/env bash
# Builds with AddressSanitizer and UndefinedBehaviorSanitizer into ./build-asan and runs ctest.
# Only the targets the tests run are built (no benchmarks, no sample mains the tests never start).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" >/dev/null
cmake --build build-asan -j "$jobs" --target exactly_unit_tests exactly_integration_tests \
  exactly_crash_tests exactly_slow_sync_vfs_test pg-test-cluster exactly_postgres_tests \
  exactly_postgres_integration_tests exactly_postgres_client_tests billing-demo
echo "asan+ubsan build: $((SECONDS - start)) s"
start=$SECONDS
cd build-asan
# install_and_consume builds a plain consumer against these instrumented libraries, and
# protocol_model checks the Spin model, no C++ of ours: both skipped.
UBSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j "$jobs" \
  -E "install_and_consume|protocol_model"
echo "asan+ubsan tests: $((SECONDS - start)) s"
