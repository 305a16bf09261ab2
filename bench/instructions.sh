#!/usr/bin/env bash
# The client's cost, guarded: user-space instructions per transaction of `pgrig bench` (release
# build) against a committed baseline, bench/instructions.baseline. Fails (exit 1) when a
# workload costs more than 3 % over its baseline; prints both numbers and, measured in the same
# run, pgbench 15's count and the ratio to it.
#
# Method (docs/performance.md): callgrind counts every instruction the client executes in user
# space (all threads, start-up included); the difference between a run of -t 3000 and one of
# -t 1000 transactions, divided by 2000, is the cost of one transaction in steady state, start-up
# and exit cancelled out. `-c 1`, speculative reads off (PGRIG_RT_SPECULATE=0: under valgrind the
# timing that decides them is not the real one). Each measurement is repeated and the lowest
# kept: what varies between runs is the server's timing (a read that finds half a response, a
# spurious wake-up), never the client's own work, and it only ever adds. One throwaway server
# (`pgrig server start`, autovacuum off), pgbench tables at scale 10, client and server on the
# same machine.
#
# Counts depend on the machine kind (glibc's memcpy variant, the vDSO): the baseline is this
# project's machine's. After an intended change of cost, `--update` writes the new baseline
# (commit it with the change that moved it, saying why).
#
# Usage: bench/instructions.sh [--update] [--repeat N] [--threshold PCT]
# Env: PGRIG (a release pgrig binary; default: `cargo build --release -p pgrig-cli` and
#      target/release/pgrig), CARGO_TARGET_DIR, PGBENCH (default PostgreSQL 15's pgbench).
# Needs: valgrind, pgbench 15, the PostgreSQL 15 server binaries; a missing one fails the guard.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASELINE=$ROOT/bench/instructions.baseline
UPDATE=0; REPEAT=3; THRESHOLD=3
while [ $# -gt 0 ]; do
  case "$1" in
    --update) UPDATE=1; shift ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --threshold) THRESHOLD=$2; shift 2 ;;
    *) echo "instructions.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

die() { echo "instructions.sh: $*" >&2; exit 1; }
command -v valgrind >/dev/null || die "valgrind is missing (apt-get install valgrind)"
PGBENCH=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
[ -x "$PGBENCH" ] || die "pgbench 15 is missing ($PGBENCH)"
if [ -z "${PGRIG:-}" ]; then
  (cd "$ROOT" && cargo build --release -p pgrig-cli --quiet) || die "release build failed"
  PGRIG=${CARGO_TARGET_DIR:-$ROOT/target}/release/pgrig
fi
[ -x "$PGRIG" ] || die "no pgrig binary at $PGRIG"

STATE=$(mktemp -d /tmp/pgrig-instructions-XXXXXX)
chmod 755 "$STATE"
export XDG_RUNTIME_DIR=$STATE
cleanup() { "$PGRIG" server stop >/dev/null 2>&1 || true; rm -rf "$STATE"; }
trap cleanup EXIT
eval "$("$PGRIG" server start --set autovacuum=off | grep '^export ')"
"$PGBENCH" -i -q -s 10 >/dev/null 2>&1 || die "pgbench -i failed"

# instructions of one run: callgrind's total over all threads
collected() {
  local log=$STATE/valgrind.log
  valgrind --tool=callgrind --callgrind-out-file="$STATE/cg.%p" --log-file="$log" "$@" \
    >/dev/null 2>"$STATE/stderr" || die "failed under valgrind: $* ($(tail -3 "$STATE/stderr"))"
  rm -f "$STATE"/cg.*
  local n
  n=$(grep -o 'Collected : [0-9]*' "$log" | awk '{s += $3} END {print s + 0}')
  [ "$n" -gt 0 ] || die "no callgrind summary for: $*"
  echo "$n"
}

# per transaction: (runs of -t 3000) - (runs of -t 1000), over 2000; the lowest of REPEAT
per_tx() {
  local best="" i a b v
  for ((i = 0; i < REPEAT; i++)); do
    a=$(collected "$@" -c 1 -t 1000)
    b=$(collected "$@" -c 1 -t 3000)
    v=$(( (b - a) / 2000 ))
    if [ -z "$best" ] || [ "$v" -lt "$best" ]; then best=$v; fi
  done
  echo "$best"
}

baseline_of() { [ -f "$BASELINE" ] && awk -v k="$1" '$1 == k {print $2}' "$BASELINE" || true; }

# as docs/performance.md's table (bench/client_cost.py): each run vacuums first, as pgbench does
# without -n; that is start-up, cancelled out by the difference
declare -A ARGS=([select-only-prepared]="-S -M prepared" [tpcb-like-prepared]="-M prepared")
NAMES="select-only-prepared tpcb-like-prepared"
failed=0
new=""
printf '%-22s %10s %10s %8s %10s %8s\n' workload pgrig baseline change pgbench ratio
for name in $NAMES; do
  # shellcheck disable=SC2086
  mine=$(PGRIG_RT_SPECULATE=0 per_tx "$PGRIG" bench ${ARGS[$name]})
  # shellcheck disable=SC2086
  theirs=$(per_tx "$PGBENCH" ${ARGS[$name]})
  base=$(baseline_of "$name")
  ratio=$(awk -v a="$mine" -v b="$theirs" 'BEGIN {printf "%.3f", a / b}')
  if [ -n "$base" ]; then
    change=$(awk -v a="$mine" -v b="$base" 'BEGIN {printf "%+.1f%%", (a / b - 1) * 100}')
    if [ "$UPDATE" = 0 ] && awk -v a="$mine" -v b="$base" -v t="$THRESHOLD" 'BEGIN {exit !(a > b * (1 + t / 100))}'; then
      failed=1
      change="$change !"
    fi
  else
    base="-"; change="(none)"
    [ "$UPDATE" = 1 ] || failed=1
  fi
  printf '%-22s %10s %10s %8s %10s %8s\n' "$name" "$mine" "$base" "$change" "$theirs" "$ratio"
  new+="$name $mine"$'\n'
done

if [ "$UPDATE" = 1 ]; then
  {
    echo "# pgrig's user-space instructions per transaction, the baseline of bench/instructions.sh"
    echo "# (callgrind, -c 1, speculation off, Δ of -t 3000 and -t 1000, the lowest of $REPEAT)."
    echo "# Written by \`bench/instructions.sh --update\` at $(git -C "$ROOT" rev-parse --short HEAD)."
    printf '%s' "$new"
  } >"$BASELINE"
  echo "instructions: baseline written to bench/instructions.baseline"
  exit 0
fi
if [ "$failed" = 1 ]; then
  echo "instructions: FAILED: a workload costs more than ${THRESHOLD} % over bench/instructions.baseline (or has none)"
  exit 1
fi
echo "instructions: ok (each workload within ${THRESHOLD} % of bench/instructions.baseline)"
