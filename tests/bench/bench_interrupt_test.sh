#!/bin/bash
# exactly-bench stopped by SIGTERM in the middle of a run exits 128 + 15 and leaves nothing running:
# its bench-server processes are gone, and on PostgreSQL its cluster is stopped and its directory
# removed. Usage: bench_interrupt_test.sh EXACTLY_BENCH (sqlite|postgres) (rounds|long-run)
set -u
bench=$1 engine=$2 mode=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
children='' cluster='' bench_pid=''
fail() {  # and stops what the run left, so that a failure leaves nothing running either
  echo "FAIL: $*"
  cat "$out"
  [ -n "$bench_pid" ] && kill -KILL "$bench_pid" 2>/dev/null
  [ -n "$children" ] && kill -KILL $children 2>/dev/null
  if [ -n "$cluster" ] && [ -f "$cluster/data/postmaster.pid" ]; then
    kill -QUIT "$(head -1 "$cluster/data/postmaster.pid")" 2>/dev/null  # immediate shutdown
    sleep 1
  fi
  [ -n "$cluster" ] && rm -rf "$cluster"
  exit 1
}

if [ "$mode" = rounds ]; then  # 100 rounds of one 2 s scenario: stopped after the first
  "$bench" --engine "$engine" --scenarios plain --concurrency 4 --seconds 2 --warmup 0.2 \
    --rounds 100 --json /dev/null >"$out" 2>&1 &
  started='^plain '
else  # a long run far too long to end by itself: stopped after its first sample
  "$bench" --engine "$engine" --long-run 100000000 --long-run-rate 200 --sample-seconds 1 \
    --json /dev/null >"$out" 2>&1 &
  started='^ +[0-9]+ +[0-9]+ '
fi
bench_pid=$!
for _ in $(seq 1 240); do
  grep -Eq "$started" "$out" && break
  kill -0 $bench_pid 2>/dev/null || fail "exactly-bench ended by itself"
  sleep 0.5
done
grep -Eq "$started" "$out" || fail "no figures within 120 s"
cluster=$(sed -n 's/^a throwaway PostgreSQL cluster in //p' "$out")
[ "$engine" = sqlite ] || [ -n "$cluster" ] || fail "no cluster directory printed"
# Every child seen from here until the signal is handled must be gone at the end: between two
# scenarios one server stops and the next starts, so the children are read until one shows up,
# and once more right after the signal.
watch_children() {
  local pid
  for pid in $(pgrep -P $bench_pid); do
    case " $children " in *" $pid "*) ;; *) children="$children $pid" ;; esac
  done
}
for _ in $(seq 1 100); do
  watch_children
  [ -n "$children" ] && break
  sleep 0.05
done
[ -n "$children" ] || fail "no bench-server child to watch"

kill -TERM $bench_pid
watch_children
# It stops within a scenario or a sample (and the server's shutdown grace), not at the run's end.
for _ in $(seq 1 120); do
  kill -0 $bench_pid 2>/dev/null || break
  sleep 0.5
done
kill -0 $bench_pid 2>/dev/null && { kill -KILL $bench_pid; fail "still running 60 s after SIGTERM"; }
wait $bench_pid
status=$?
for child in $children; do
  kill -0 "$child" 2>/dev/null && fail "child $child still running"
done
if [ -n "$cluster" ]; then
  pgrep -f "$cluster/data" >/dev/null && fail "a PostgreSQL server of $cluster still running"
  [ -e "$cluster" ] && fail "cluster directory $cluster left behind"
fi
[ $status -eq 143 ] || fail "exit status $status, not 143"
grep -q "exactly-bench: stopping" "$out" || fail "the signal was not reported"
echo "ok: exit $status, children ($children) gone${cluster:+, cluster $cluster stopped and removed}"
