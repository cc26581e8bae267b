#!/usr/bin/env bash
# Builds with AddressSanitizer and UndefinedBehaviorSanitizer into ./build-asan and runs ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer" >/dev/null
cmake --build build-asan -j "$(nproc 2>/dev/null || echo 2)"
cd build-asan
# install_and_consume builds a plain consumer against these instrumented libraries, and
# protocol_model checks the Spin model, no C++ of ours: both skipped.
UBSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" \
  -E "install_and_consume|protocol_model"
