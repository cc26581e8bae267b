#!/usr/bin/env bash
# Installs what is missing, builds, starts the echo connector server and walks the protocol
# with curl: PUT, POST (executed), POST again (replayed), GET, DELETE, then the refusals.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh >/dev/null
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
key=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')  # a fresh key, passed in the environment
EXACTLY_API_KEYS="demo:$key" build/samples/echo/echo-server --listen 127.0.0.1:0 \
  --db "$dir/echo.db" >"$dir/out" 2>"$dir/log" &
pid=$!
for _ in $(seq 100); do grep -q listening "$dir/out" 2>/dev/null && break; sleep 0.05; done
addr=$(sed -n 's/^listening on //p' "$dir/out")
id=$(build/samples/echo/echo-server --print-id)
url="http://$addr/vectors/echo/$id"
auth=(-H "Authorization: Bearer $key")
step() { echo; echo "\$ curl -X $1 $url"; shift; curl -s -i "${auth[@]}" "$@" | tr -d '\r'; echo; }
step PUT -X PUT -H 'Content-Type: application/json' --data '{"status":200,"reply":"charged 42"}' "$url"
step POST -X POST "$url"
step "POST (again)" -X POST "$url"
step GET "$url"
step DELETE -X DELETE "$url"
step "POST (after DELETE)" -X POST "$url"
step "PUT (after DELETE)" -X PUT -H 'Content-Type: application/json' --data '{"status":200}' "$url"
echo; echo "the server's own counters (GET /metrics):"
curl -s "http://$addr/metrics" | grep -E '^exactly_(executions|replays)_total|^exactly_interactions'
