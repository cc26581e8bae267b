#!/usr/bin/env bash
# Sourced by scripts/sanitize.sh and scripts/tsan.sh, the two clang-14 builds of CI.
# clang_configure DIR CXX_FLAGS TEST_CODE_OPTIONS [CMAKE_ARGS...]: configures DIR with Ninja and
# LLVM's linker (README, Testing: what keeps the build short). -O1 with line tables: the
# sanitizers' stacks name the lines. The samples, tools and tests get TEST_CODE_OPTIONS
# (EXACTLY_TEST_CODE_OPTIONS), and the two files of Beast's TCP and TLS streams -O0
# (EXACTLY_STREAM_CODE_OPTIONS): see CMakeLists.txt.
clang_configure() {
  local dir=$1 flags=$2 test_code=$3
  shift 3
  # CMake cannot switch the generator of a configured directory: one made with another starts over.
  local cache=$dir/CMakeCache.txt
  if [ -f "$cache" ] && ! grep -qx "CMAKE_GENERATOR:INTERNAL=Ninja" "$cache"; then rm -rf "$dir"; fi
  CC=clang-14 CXX=clang++-14 cmake -G Ninja -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
    -DEXACTLY_TEST_CODE_OPTIONS="$test_code" -DEXACTLY_STREAM_CODE_OPTIONS=-O0 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld-14 -DCMAKE_CXX_FLAGS="$flags" "$@" >/dev/null
}
