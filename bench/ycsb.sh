#!/usr/bin/env bash
# Client CPU per YCSB operation: each of workloads A–F loaded on a throwaway test cluster and
# run by pgrig's engine (release build, prepared statements) for a few seconds; prints a
# markdown table of operations per second and client CPU µs per operation (the engine's worker
# threads, from the run document, and the whole client process, from /proc/self/stat).
# The server runs on the same machine: the figures are the client's cost, not a server benchmark.
#
# Usage: bench/ycsb.sh [--seconds N] [--records N] [--clients N] [--threads N] [--rounds N]
# Env:   CARGO_TARGET_DIR (where it is built)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_EACH=5
RECORDS=100000
CLIENTS=8
THREADS=2
ROUNDS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --records) RECORDS=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) echo "usage: $0 [--seconds N] [--records N] [--clients N] [--threads N] [--rounds N]" >&2; exit 2 ;;
  esac
done

echo "# YCSB client cost: $(date -u +%Y-%m-%dT%H:%MZ), pgrig $(git -C "$ROOT" rev-parse --short HEAD)"
echo "# $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(uname -r)"
echo "# recordcount=$RECORDS, -c $CLIENTS -j $THREADS, ${SECONDS_EACH} s per workload, -M prepared"
for round in $(seq 1 "$ROUNDS"); do
  echo
  echo "round $round"
  (cd "$ROOT" && YCSB_COST_SECONDS=$SECONDS_EACH YCSB_COST_RECORDS=$RECORDS \
    YCSB_COST_CLIENTS=$CLIENTS YCSB_COST_THREADS=$THREADS \
    cargo test --release -q -p pgrig-workloads --test ycsb_cost -- --ignored --nocapture 2>/dev/null) |
    grep '^|'
done
