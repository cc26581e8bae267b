#!/usr/bin/env bash
# Builds and runs the consumer project (main.cpp) against an installed exactly under PREFIX, as a
# user's project would: once through CMake's find_package, once through pkg-config. Runs the
# installed programs too. The consumer is compiled with the build's compiler and flags (a
# sanitizer build's libraries need its runtime in the consumer).
# Usage: consume.sh PREFIX WORKDIR CXX "CXXFLAGS"
set -euo pipefail
prefix=$1 work=$2 cxx=$3 cxxflags=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"

echo "consumer through find_package(exactly), CMAKE_PREFIX_PATH=$prefix"
cmake -S "$here" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  "-DCMAKE_CXX_FLAGS=$cxxflags" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/install_test"

pc_dir=$(dirname "$(find "$prefix" -name exactly.pc -path '*/pkgconfig/*' | head -n 1)")
echo "consumer through pkg-config, PKG_CONFIG_PATH=$pc_dir"
flags=$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs exactly)
# shellcheck disable=SC2086  # the flags are words
"$cxx" -std=c++20 $cxxflags "$here/main.cpp" -o "$work/pkg_config_test" $flags
"$work/pkg_config_test"

echo "installed programs"
"$prefix/bin/fault-proxy" --help | head -n 1
"$prefix/bin/exactly-admin" --help | head -n 1
"$prefix/bin/exactly-conformance" --list | grep -c . | sed 's/^/exactly-conformance cases: /'
