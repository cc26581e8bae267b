#!/usr/bin/env bash
# Runs every ```sh block of docs/operations.md, in order, in one bash (set -euo pipefail) with the
# build's exactly-admin and billing-demo first on PATH, then checks what the page says they
# print: the drill's failures listed before the repair, replayed and requeued, the demo's
# reconciliation clean after it, and every change in the audit log.
# Usage: walkthrough_test.sh DOC ADMIN_DIR DEMO_DIR
set -euo pipefail
doc=$1
export PATH="$2:$3:$PATH"
work=$(mktemp -d)
export TMPDIR=$work  # the page's mktemp -d lands here
pgid=""
cleanup() {
  if [ -n "$pgid" ]; then kill -TERM -- "-$pgid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The sh blocks, each announced by a marker line in the output.
awk '/^```sh$/ { on = 1; n++; print "echo \"=== block " n "\""; next }
     /^```/    { on = 0; next }
     on        { print }' "$doc" > "$work/walkthrough.sh"
blocks=$(grep -c '^echo "=== block' "$work/walkthrough.sh")
[ "$blocks" -ge 6 ] || { echo "only $blocks sh blocks found in $doc"; exit 1; }

# In a process group of its own, so a failure midway takes the demo and its services down too.
setsid bash -euo pipefail "$work/walkthrough.sh" > "$work/out.log" 2>&1 &
pgid=$!
status=0
wait "$pgid" || status=$?
pgid=""
echo "--- the walkthrough printed:"
cat "$work/out.log"
echo "---"
if [ "$status" -ne 0 ]; then
  echo "FAIL: the walkthrough stopped with status $status"
  exit 1
fi

# Each pattern on a line after the previous one's (fixed strings).
line=0
expect() {
  local found
  found=$(tail -n +"$((line + 1))" "$work/out.log" | grep -n -F -m 1 -- "$1" | cut -d: -f1 || true)
  if [ -z "$found" ]; then
    echo "FAIL: expected after line $line: $1"
    exit 1
  fi
  line=$((line + found))
}
expect "drill ready: 2 dead letters"
expect "outbox 0, dead letters 2"
expect "ledger frozen for maintenance"
expect "type:      settle_transaction"
expect "state:     tombstone (deleted)"
expect "/_exactly/operator"  # the operator page: its dead letters, and 401 without the key
expect "Dead letters, oldest first: 2"
expect "without the key: 401"
expect "billing   0    0        2"
expect "invoke_http PUT failed"
expect "body:      {\"amount_cents\":100,\"customer_id\":\"customer-001\",\"order_id\":\"drill-order-"
expect "replayed dead letter"
expect "replayed dead letter"
expect "requeued error-queue entry"
expect "requeued error-queue entry"
expect "add --yes to confirm"
expect "refused, status 2"
expect "RESULT: repaired: every order charged exactly once, nothing left"
expect "no dead letters"
expect "every queue and error queue is empty"
expect "replayed dead letter"  # the audit log: four lines
expect "replayed dead letter"
expect "requeued error-queue entry"
expect "requeued error-queue entry"
echo "PASS: $blocks blocks of $doc ran and printed what it says"
