#!/usr/bin/env bash
# TPC-C, client-side SQL against server-side functions (procedures=off/on), no-wait mode:
# alternating rounds on one loaded database, each run's transactions per second, NOPM, statements
# per transaction and client CPU per transaction from its --json document.
#
#   TARGET="host=/tmp/... dbname=tpcc" bench/tpcc_procedures.sh [warehouses] [clients] [seconds] [rounds]
#
# PGRIG (default target/release/pgrig) is the binary; the database is loaded first.
set -euo pipefail
PGRIG=${PGRIG:-target/release/pgrig}
W=${1:-2}
C=${2:-4}
T=${3:-15}
ROUNDS=${4:-2}
: "${TARGET:?TARGET=conninfo of the database to load and run on}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$PGRIG" tpcc load --target "$TARGET" --warehouses "$W" >/dev/null 2>&1
for r in $(seq "$ROUNDS"); do
  for p in off on; do
    "$PGRIG" run --target "$TARGET" -w tpcc -o warehouses="$W" -o procedures=$p \
      -c "$C" -j 1 -T "${T}s" --json "$out/$p-$r.json" >/dev/null 2>&1
    python3 - "$out/$p-$r.json" "$p" "$r" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["transactions"]["ok"]
no = next(s for s in d["scripts"] if s["desc"] == "new_order")["transactions"]["ok"]
no -= d["transactions"]["rollbacks"]
stmts = sum(c["executions"] for s in d["scripts"] for c in s["commands"])
cpu = sum(t["user_s"] + t["sys_s"] for t in d["client_cpu"]["threads"])
print(f"procedures={sys.argv[2]:3} round {sys.argv[3]}: {d['tps']:8.1f} tps  "
      f"NOPM {60 * no / d['duration_s']:9.0f}  {stmts / ok:5.1f} statements/tx  "
      f"client CPU {1e6 * cpu / ok:6.1f} us/tx  retries {d['transactions']['retries']}")
EOF
  done
done
"$PGRIG" tpcc check --target "$TARGET" --warehouses "$W" | tail -1
