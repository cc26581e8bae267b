#!/usr/bin/env bash
# Installs the Debian 12 packages exactly builds with, if any is missing. Idempotent.
set -euo pipefail
packages=(
  g++ cmake make ccache pkg-config
  libboost1.81-dev      # Asio and Beast: HTTP server and client with C++20 coroutines
  libboost-url1.81-dev  # Boost.URL: the client's URLs (default ports, IPv6 literals)
  libssl-dev            # OpenSSL: request id randomness, SHA-256 digests, TLS later
  libsqlite3-dev        # SQLite: the embedded storage engine
  libpq-dev             # libpq: the PostgreSQL engine's client library
  postgresql-15         # PostgreSQL server: the tests start throwaway clusters of their own
  nlohmann-json3-dev    # JSON for payloads, problems and test vectors
  libgtest-dev          # GoogleTest
  libspdlog-dev         # logging
  prometheus-cpp-dev    # the client runtime's Prometheus metrics: registry, text format, /metrics server
  libcli11-dev          # command lines of the sample programs
  curl                  # the README's walk through the protocol
  sqlite3               # docs/operations.md's walkthrough repairs a table with the SQLite shell
  jq                    # docs/operations.md's walkthrough reads exactly-admin --json with it
  spin                  # model checking of the protocol (proto-spec/model)
  clang-14              # the fuzz and ThreadSanitizer builds (scripts/fuzz.sh, scripts/tsan.sh)
  libclang-rt-14-dev    # clang's sanitizer runtimes: ASan, UBSan, TSan, libFuzzer
  libfuzzer-14-dev      # libFuzzer
  lld-14                # LLVM's linker, for the clang builds: links ASan tests 6x faster than ld.bfd
  ninja-build           # Ninja, for the clang builds: both cores busy across targets
  chromium              # headless browser: the operator page's browser test (tests/browser)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
