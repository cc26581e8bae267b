#!/usr/bin/env bash
# Builds the tests where threads and processes run against each other with ThreadSanitizer
# (clang-14) into ./build-tsan, only their targets, and runs them: concurrent requests on one id,
# commit groups, the client runtime's workers, invoke_http end to end through the Beast transport's
# I/O thread (exactly_thread_tests), the background sync's and the checkpointer's threads
# (exactly_server_flush_tests, those suites), the crash and outage tests
# (exactly_crash_tests, whose child servers and clients are built with TSan too), a connector's
# storage threads over several PostgreSQL connections (exactly_postgres_lanes_tests), the client
# runtime on PostgreSQL, whose workers and publishers claim rows from each other
# (exactly_postgres_client_tests). Suppressions: tests/tsan.supp.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=clang-build.sh
source scripts/clang-build.sh
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
start=$SECONDS
clang_configure build-tsan "-fsanitize=thread -fno-omit-frame-pointer" -O0
cmake --build build-tsan -j "$jobs" --target exactly_thread_tests exactly_crash_tests \
  exactly_server_flush_tests exactly_postgres_lanes_tests exactly_postgres_client_tests \
  pg-test-cluster
echo "tsan build: $((SECONDS - start)) s"
start=$SECONDS
cd build-tsan
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/../tests/tsan.supp"
# All of it; GoogleTestVerification only notes the contract suites this binary does not instantiate.
tests/exactly_thread_tests --gtest_filter='-GoogleTestVerification.*'
# The threads beside the storage connection: the background sync and the checkpointer.
tests/exactly_server_flush_tests --gtest_filter='background_sync*:wal_checkpoint_test*'
# The PostgreSQL variants (pg.*, postgres*) are not built here: the same code paths on SQLite.
# But storage_lanes is: a connector's storage threads, one per PostgreSQL connection, two of
# them deadlocking, and the thread of the GETs (ctest starts the cluster they need).
ctest --output-on-failure -j "$jobs" --timeout 600 \
  -R "^server_crash\.|client_crash|^server_outage\.|^storage_lanes\.|^storage_lanes_deadlock\.|^separate_reads_pg" \
  -E "postgres|^pg\."
# The client runtime on PostgreSQL, all of it: workers and publishers of several runtimes and
# processes claiming rows from one another (postgres_shared_*), crashes, an outage.
ctest --output-on-failure -j "$jobs" --timeout 600 \
  -R "^postgres_(shared|invoke|client)|^postgres/|^points/postgres_client_crash"
echo "tsan tests: $((SECONDS - start)) s"
