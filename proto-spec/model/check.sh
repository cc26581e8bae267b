#!/usr/bin/env bash
# Model-checks proto-spec/model/exactly.pml with Spin: every configuration of the protocol must
# pass with no error, and every deliberately broken variant must fail, so the model cannot
# silently stop checking anything. Prints states and seconds for each; exit status 1 on a miss.
# Configurations run CHECK_JOBS at a time (default: the cores), each in a directory of its own.
# Usage: check.sh [--quick]   (--quick: the smallest configuration and the broken variants only)
set -euo pipefail
model="$(cd "$(dirname "$0")" && pwd)/exactly.pml"
command -v spin >/dev/null || { echo "check.sh: spin is not installed (apt-get install spin)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The server commits PUT and DELETE without a flush; a POST execution and a too-old decision are
# flushed commits, made durable by a later sync (pipelined) that their answers wait for; a sweep
# is flushed at once. A server crash (one by default, -DCRASHES) takes back every commit since
# the last sync. A GET waits for the sync only if a POST of its id was served since the last one;
# -DEARLY_GET lets the client GET before its POST's answer, which puts that rule to the test.
# The longest first (about 19, 18, 10, 10, 9, 7 and 3 million states), so that the jobs finish
# close together.
passing=(
  "-DK=2 -DA=1 -DTMAX=3 -DCRASHES=0"   # two invocations interleaved (no server crash)
  "-DCLOCK_STEP -DTMAX=3 -DCRASHES=0"  # one invocation, the server clock runs fast, then is
                                       # set back
  "-DEARLY_GET -DTMAX=3"               # one invocation, two handler attempts: network, client
                                       # crashes, sweeper, a server crash taking back commits,
                                       # a GET while the POST is unanswered
  "-DUNAWAITED_PUT -DTMAX=3"           # ... the handler may commit with its PUT unanswered
                                       # and POST at once (put_wait::never)
  "-DUNAWAITED_PUT -DOTHER_PRINCIPAL -DTMAX=2"  # ... and another principal's PUT or DELETE
  "-DOTHER_PRINCIPAL -DTMAX=2"         # ... and another principal PUTs or DELETEs one of its ids
  "-DCRASHES=0"                        # ... no server crash, time to 4
)
failing=(
  "-DBROKEN_WINDOW"                 # PUT ignores the acceptance window
  "-DBROKEN_VOLATILE_TOO_OLD -DCLOCK_STEP -DVOLATILE_HW -DTMAX=2"  # a too-old decision's time left to the sweeper
  "-DBROKEN_PURGE"                  # tombstones purged without waiting
  "-DBROKEN_REINVOKE"               # a new id after a 404/410 to the POST
  "-DBROKEN_CLOCK -DCLOCK_STEP"     # decisions by a clock that was set back
  "-DBROKEN_NO_REPUT -DTMAX=3"      # a 404 to the POST goes to the error queue, no re-PUT
  # the sweeper's commits are not flushed (two invocations: the other's execution and its sync
  # must make the PUT durable before the sweep that a crash takes back)
  # (-DT_REVERSE, a pan option after the "|": the transitions tried in reverse order find its
  # violation after 0.5 million states instead of 14 million)
  "-DBROKEN_UNFLUSHED_SWEEP -DK=2 -DA=1 -DTMAX=2 | -DT_REVERSE"
  "-DBROKEN_UNHELD_ANSWER"          # POST and GET answers go out before the sync
  "-DBROKEN_GET_UNTRACKED -DEARLY_GET"  # GET answers go out at once (POST answers still held)
  # committed with the PUT unanswered, a POST sent before the PUT's answer, and a refusal in that
  # answer error-queuing the message: another principal's row refuses the PUT and is DELETEd, a
  # delayed copy of the PUT stages the id, the POST executes it
  "-DUNAWAITED_PUT -DBROKEN_AWAIT_POST -DOTHER_PRINCIPAL -DTMAX=2"
)
if [ "${1:-}" = "--quick" ]; then passing=("-DCRASHES=0"); fi

# run "MODEL_FLAGS[ | PAN_FLAGS]" DIR: checks one configuration in directory DIR; writes
# "errors states seconds" to DIR/result. A broken variant may name pan options that change only
# the search order: any violation found is a real one, and it stops the search. No -DCOLLAPSE:
# the state vector is 68 bytes, and compressing it cost a third more time for no less memory.
# -DNOCOMP stores the vectors as they are, not byte-masked: -DOTHER_PRINCIPAL took 60 and 72 s
# instead of 78 and 78 (one job at a time), for 4 % more memory.
run() {
  mkdir -p "$2" && cd "$2"
  local model_flags=${1%%|*} pan_flags=
  if [[ $1 == *"|"* ]]; then pan_flags=${1#*|}; fi
  # shellcheck disable=SC2086
  spin -a $model_flags "$model" >/dev/null
  # shellcheck disable=SC2086
  gcc -O2 -w -DSAFETY -DNOCOMP $pan_flags -o pan pan.c
  local start=$SECONDS
  ./pan -m1000000 -w26 >out.txt 2>&1 || true
  local seconds=$((SECONDS - start))
  local errors states
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' out.txt | head -1)
  states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' out.txt | head -1)
  if grep -q "error: max search depth too small" out.txt; then errors=depth; fi
  echo "${errors:-none} ${states:-?} $seconds" >result
}

# Every configuration in its own directory, CHECK_JOBS (default: the cores) at a time; the
# results are printed in order once all have run.
all=("${passing[@]}" "${failing[@]}")
jobs=${CHECK_JOBS:-$(nproc)}
for i in "${!all[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  (run "${all[$i]}" "$work/$i") &
done
wait

status=0
printf '%-46s %-8s %12s %8s\n' configuration result states seconds
for i in "${!all[@]}"; do
  flags=${all[$i]}
  read -r errors states seconds <"$work/$i/result" || { errors=none states=? seconds=?; }
  if [ "$i" -lt "${#passing[@]}" ]; then
    result=pass
    if [ "$errors" != 0 ]; then
      result=FAIL
      status=1
      grep -m3 -E "violated|error" "$work/$i/out.txt" >&2 || true
    fi
  else
    result=fails
    if [ "$errors" = 0 ] || [ "$errors" = none ]; then result=MISSED; status=1; fi
  fi
  printf '%-46s %-8s %12s %8s\n' "${flags:-(plain)}" "$result" "$states" "$seconds"
done
exit $status
