#!/usr/bin/env bash
# The client against the physical floor: pgrig, pgbench 15 and sysbench 1.0.20 next to the floor
# client (bench/floor/floor.c: precomputed protocol bytes, reads parsing only message lengths),
# on ONE throwaway server (`pgrig server start`, autovacuum off), in alternating rounds (the
# order of the tools rotates every round).
#
# Workloads, at 1, 8 and 64 connections (-j = min(clients, 2), the machine's cores; sysbench runs
# one thread per connection as it always does, pgrig's sysbench mode one per core):
#   select-only      pgbench -n -S -M prepared   | pgrig bench, same options | floor --workload select
#   tpcb             pgbench -n -M prepared      | pgrig bench, same options | floor --workload tpcb
#   oltp_read_write  sysbench oltp_read_write    | pgrig sysbench, same      | floor --workload oltp
# The floor client runs twice: blocking sockets with a thread per connection (floor-thr) and
# --jobs threads each with one epoll instance (floor-ep); "floor" in the ratios is the cheaper of
# the two in that cell.
#
# pgrig's runs (pgrig, pgrig-uring) are checked too, more loosely (its connections' set-up
# statements are its own business): the server must have seen at least the transactions pgrig
# reports, and not more than 64 per connection beyond them.
#
# Per run, of the client process only (all its threads):
#   user, sys     CPU µs per transaction: getrusage of the child as perf stat reports it
#                 ("seconds user", "seconds sys"; microsecond resolution)
#   syscalls      system calls per transaction: perf stat -e raw_syscalls:sys_enter (in-kernel
#                 tracepoint counting, in the same run). Where perf cannot count tracepoints:
#                 strace -c -f in a second run of the same command, and CPU and context switches
#                 from GNU time (10 ms resolution); the output says which was used.
#   cs            context switches per transaction (perf's context-switches event: voluntary and
#                 involuntary, all the client's threads)
#   tps           as the tool reports it
# Medians over the rounds. Each floor run's transactions are checked against the server's own
# count (pg_stat_database xact_commit + xact_rollback of its database, read from another
# database, after the floor client's backends have exited): a mismatch stops the bench (exit 1).
#
# Ends with: floor ratio: select-only X tpcb Y oltp_read_write Z  (pgrig's client CPU per
# transaction over the floor's, at 8 connections).
#
# With --profile, afterwards: where the client's kernel time goes, for floor-ep and pgrig at 8
# connections on each workload: `perf record -g` (cpu-clock sampling of the client process, kernel
# symbols from /proc/kallsyms), the top kernel functions by self time, in µs per transaction.
#
# Usage: bench/floor.sh [--quick] [--rounds N] [--time S] [--clients "1 8 64"] [--pgrig-args "..."] [--uring] [--profile]
#   --quick          1 round of 2 s, sysbench tables of 10,000 rows (about 2 minutes)
#   --pgrig-args     extra options for pgrig bench / pgrig sysbench
#   --uring          also pgrig with PGRIG_IO=uring (its io_uring reactor variant): "pgrig-uring"
#   --profile        afterwards, the kernel profile described above
# Env: CARGO_TARGET_DIR; PGRIG (a pgrig binary to use instead of building target/profiling/pgrig);
#      PGRIG_BASE (another pgrig binary, e.g. one built before a change: adds a "pgrig-base"
#      column, measured in the same rounds); PGBENCH (default: the newest /usr/lib/postgresql/*/bin/pgbench); SYSBENCH (/usr/bin/sysbench)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3; TIME=5; CLIENTS="1 8 64"; SCALE=10; TABLES=4; SIZE=100000; PGRIG_ARGS=""; QUICK=0; PROFILE=0; URING=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; ROUNDS=1; TIME=2; SIZE=10000; shift ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --pgrig-args) PGRIG_ARGS=$2; shift 2 ;;
    --profile) PROFILE=1; shift ;;
    --uring) URING=1; shift ;;
    *) echo "usage: $0 [--quick] [--rounds N] [--time S] [--clients \"1 8 64\"] [--pgrig-args \"...\"]" >&2; exit 2 ;;
  esac
done

PGBENCH=${PGBENCH:-$(ls -d /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | sort -t/ -k4 -n | tail -1)}
SYSBENCH=${SYSBENCH:-/usr/bin/sysbench}
[ -x "$PGBENCH" ] || { echo "floor.sh: pgbench not found (apt-get install postgresql-contrib)" >&2; exit 1; }
[ -x "$SYSBENCH" ] || { echo "floor.sh: sysbench 1.0.20 not found (apt-get install sysbench)" >&2; exit 1; }
command -v gcc >/dev/null || { echo "floor.sh: gcc not found (apt-get install gcc)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "floor.sh: GNU time not found (apt-get install time)" >&2; exit 1; }
if [ -z "${PGRIG:-}" ]; then
  (cd "$ROOT" && cargo build -q --profile profiling -p pgrig-cli)
  PGRIG="${CARGO_TARGET_DIR:-$ROOT/target}/profiling/pgrig"
fi

STATE=$(mktemp -d /tmp/pgrig-floor.XXXXXX)
chmod 755 "$STATE"
export XDG_RUNTIME_DIR=$STATE
cleanup() { "$PGRIG" server stop >/dev/null 2>&1 || true; rm -rf "$STATE"; }
trap cleanup EXIT
FLOOR=$STATE/floor
gcc -O2 -Wall -Wextra -Werror -pthread -o "$FLOOR" "$ROOT/bench/floor/floor.c"

eval "$("$PGRIG" server start --max-connections 200 --set autovacuum=off | grep '^export ')"
SOCK="$PGHOST/.s.PGSQL.$PGPORT"
q() { psql -qAtX -d postgres -c "$1"; }
q 'create database bench' >/dev/null
q 'create database sbtest' >/dev/null
"$PGRIG" bench -i -q -s "$SCALE" bench >/dev/null 2>&1
SB_CONN=(--db-driver=pgsql "--pgsql-host=$PGHOST" "--pgsql-port=$PGPORT" "--pgsql-user=$PGUSER" --pgsql-db=sbtest)
SB_TEST=(oltp_read_write "--tables=$TABLES" "--table-size=$SIZE")
"$PGRIG" sysbench "${SB_CONN[@]}" --threads=2 "${SB_TEST[@]}" prepare >/dev/null
psql -qAtX -d bench -c 'vacuum analyze' && psql -qAtX -d sbtest -c 'vacuum analyze'

# System calls: perf's tracepoint if this kernel lets perf count it, else strace -c -f.
if perf stat -e raw_syscalls:sys_enter -x, -o "$STATE/probe" true 2>/dev/null \
   && grep -q raw_syscalls "$STATE/probe"; then SYSCALLS=perf; else SYSCALLS=strace; fi
command -v "$SYSCALLS" >/dev/null || { echo "floor.sh: neither perf nor strace can count system calls" >&2; exit 1; }

# command line of TOOL for WORKLOAD at CLIENTS
cmdline() {
  local tool=$1 wl=$2 c=$3 j=$(( $3 < 2 ? $3 : 2 ))
  local pgb=(-n -M prepared -c "$c" -j "$j" -T "$TIME")
  [ "$wl" = select-only ] && pgb=(-S "${pgb[@]}")
  local fw=${wl%%-only}; fw=${fw%%_read_write}
  local fl=(--socket "$SOCK" --user "$PGUSER" --workload "$fw" --clients "$c" --jobs "$j" --time "$TIME"
            --scale "$SCALE" --tables "$TABLES" --table-size "$SIZE")
  case "$tool:$wl" in
    floor-thr:oltp*) echo "$FLOOR" "${fl[@]}" --db sbtest --io threads ;;
    floor-ep:oltp*) echo "$FLOOR" "${fl[@]}" --db sbtest --io epoll ;;
    floor-thr:*) echo "$FLOOR" "${fl[@]}" --db bench --io threads ;;
    floor-ep:*) echo "$FLOOR" "${fl[@]}" --db bench --io epoll ;;
    pgbench:*) echo "$PGBENCH" "${pgb[@]}" bench ;;
    pgrig-uring:*) echo env PGRIG_IO=uring "$(cmdline pgrig "$wl" "$c")" ;;
    pgrig-base:*) cmdline pgrig "$wl" "$c" | sed "s|^$PGRIG |$PGRIG_BASE |" ;;
    pgrig:oltp*) echo "$PGRIG" sysbench $PGRIG_ARGS "${SB_CONN[@]}" --threads="$c" --time="$TIME" "${SB_TEST[@]}" run ;;
    pgrig:*) echo "$PGRIG" bench $PGRIG_ARGS "${pgb[@]}" bench ;;
    sysbench:*) echo "$SYSBENCH" "${SB_CONN[@]}" --threads="$c" --time="$TIME" "${SB_TEST[@]}" run ;;
  esac
}

xacts() { q "select xact_commit + xact_rollback from pg_stat_database where datname = '$1'"; }

# The server must count the floor client's transactions, plus two per connection: the
# backend's start-up transaction and the implicit one of the floor's Parse ... Sync. Fewer is a
# floor client that over-reports (the bench stops); a few more are the server's own background
# transactions on that database (autovacuum, autoanalyze: pg_stat_database counts them too), up
# to STRAY_MAX, or a thousandth of the transactions when that is more.
STRAY_MAX=5
check_floor() {
  local db=$1 before=$2 tx=$3 c=$4 expect got i slack
  expect=$(( before + tx + 2 * c ))
  slack=$(( tx / 1000 > STRAY_MAX ? tx / 1000 : STRAY_MAX ))
  for i in $(seq 1 50); do
    got=$(xacts "$db")
    [ "$got" -ge "$expect" ] && break
    sleep 0.1
  done
  if [ "$got" -gt "$expect" ] && [ "$got" -le $(( expect + slack )) ]; then
    echo "floor.sh: note: the server counted $(( got - expect )) transaction(s) more than the floor client on $db (background work such as autovacuum; at most $slack tolerated)" >&2
  elif [ "$got" -ne "$expect" ]; then
    echo "floor.sh: FAILED: the floor client counted $tx transactions on $c connections, the server $(( got - before - 2 * c )) (xact_commit + xact_rollback of $db went $before -> $got, expected $expect)" >&2
    exit 1
  fi
}

check_pgrig() {
  local db=$1 before=$2 tx=$3 c=$4 tool=$5 got i
  for i in $(seq 1 50); do
    got=$(xacts "$db")
    [ $(( got - before )) -ge "$tx" ] && break
    sleep 0.1
  done
  if [ $(( got - before )) -lt "$tx" ] || [ $(( got - before - tx )) -gt $(( 64 * c )) ]; then
    echo "floor.sh: FAILED: $tool reported $tx transactions on $c connections, the server counted $(( got - before ))" >&2
    exit 1
  fi
}

# measure TOOL WORKLOAD CLIENTS ROUND: appends one line to $STATE/results
measure() {
  local tool=$1 wl=$2 c=$3 r=$4 out=$STATE/out t=$STATE/time s=$STATE/sysc db before=0
  local cmd; read -r -a cmd <<<"$(cmdline "$tool" "$wl" "$c")"
  db=bench; [ "${wl#oltp}" != "$wl" ] && db=sbtest
  q checkpoint >/dev/null
  case "$tool" in floor*|pgrig*) before=$(xacts $db) ;; esac
  local cpu cs sysc
  if [ "$SYSCALLS" = perf ]; then
    perf stat -e raw_syscalls:sys_enter,context-switches -o "$s" -- "${cmd[@]}" >"$out" 2>&1 \
      || { echo "floor.sh: failed: ${cmd[*]}" >&2; cat "$out" >&2; exit 1; }
    sysc=$(awk '/raw_syscalls:sys_enter/ {gsub(",", "", $1); print $1}' "$s")
    cs=$(awk '/context-switches/ {gsub(",", "", $1); print $1}' "$s")
    cpu="$(awk '/seconds user/ {print $1}' "$s") $(awk '/seconds sys/ {print $1}' "$s")"
  else
    /usr/bin/time -f '%U %S %w %c' -o "$t" "${cmd[@]}" >"$out" 2>&1 \
      || { echo "floor.sh: failed: ${cmd[*]}" >&2; cat "$out" >&2; exit 1; }
    cpu=$(awk '{print $1, $2}' "$t"); cs=$(awk '{print $3 + $4}' "$t")
  fi
  local tx tps
  case "$tool" in
    floor*) tx=$(awk '{print $2 + $4}' "$out"); tps=$(awk '{print $10}' "$out")
            check_floor $db "$before" "$(awk '{print $2}' "$out")" "$c"
            [ "$(awk '{print $4}' "$out")" -eq 0 ] || echo "floor.sh: note: $(awk '{print $4}' "$out") floor transactions failed ($wl, $c clients)" >&2 ;;
    pgbench|pgrig*) if [ "${wl#oltp}" != "$wl" ]; then
               tx=$(sed -n 's/^ *transactions: *\([0-9]*\) .*/\1/p' "$out"); tps=$(sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.)/\1/p' "$out")
             else
               tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
               tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$out")
             fi ;;
    sysbench) tx=$(sed -n 's/^ *transactions: *\([0-9]*\) .*/\1/p' "$out"); tps=$(sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.)/\1/p' "$out") ;;
  esac
  [ -n "$tx" ] && [ "$tx" -gt 0 ] || { echo "floor.sh: no transaction count from ${cmd[*]}" >&2; cat "$out" >&2; exit 1; }
  [ "${tool#pgrig}" != "$tool" ] && check_pgrig $db "$before" "$tx" "$c" "$tool"
  if [ "$SYSCALLS" = strace ]; then
    # a second run, traced (strace slows the client: its CPU is not taken from this run)
    [ "${tool#floor}" != "$tool" ] && before=$(xacts $db)
    strace -f -c -o "$s" -- "${cmd[@]}" >"$out" 2>&1 || { echo "floor.sh: failed under strace: ${cmd[*]}" >&2; exit 1; }
    [ "${tool#floor}" != "$tool" ] && check_floor $db "$before" "$(awk '{print $2}' "$out")" "$c"
    sysc=$(awk '$NF == "total" {print $(NF-2)}' "$s")
    sysc=$(( sysc * tx / $(case "$tool" in floor*) awk '{print $2 + $4}' "$out" ;; *) echo "$tx" ;; esac) ))
  fi
  echo "$wl $c $tool $r $cpu $cs $sysc $tx $tps" >>"$STATE/results"
  echo "  $wl c=$c $tool round $r: user+sys $cpu s, $cs cs, $sysc syscalls, $tx tx, $tps tps" >&2
}

: >"$STATE/results"
for wl in select-only tpcb oltp_read_write; do
  if [ "$wl" = oltp_read_write ]; then tools=(floor-thr floor-ep pgrig sysbench); else tools=(floor-thr floor-ep pgrig pgbench); fi
  [ "$URING" = 1 ] && tools+=(pgrig-uring)
  [ -n "${PGRIG_BASE:-}" ] && tools+=(pgrig-base)
  for c in $CLIENTS; do
    for r in $(seq 1 "$ROUNDS"); do
      n=${#tools[@]}
      for i in $(seq 0 $((n - 1))); do measure "${tools[$(( (i + r - 1) % n ))]}" "$wl" "$c" "$r"; done
    done
  done
done

echo "bench/floor.sh: rounds $ROUNDS x ${TIME} s, pgbench scale $SCALE, sysbench $TABLES x $SIZE rows; $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); system calls counted with $SYSCALLS; $("$PGRIG" --version), $("$PGBENCH" --version), $("$SYSBENCH" --version); pgrig options: ${PGRIG_ARGS:-none}"
python3 - "$STATE/results" >"$STATE/table" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    wl, c, tool, r, u, s, cs, sysc, tx, tps = line.split()
    tx = int(tx)
    rows.setdefault((wl, int(c), tool), []).append(
        (float(u) * 1e6 / tx, float(s) * 1e6 / tx, int(sysc) / tx, int(cs) / tx, float(tps)))
med = lambda xs: st.median(xs)
print("\n| workload | clients | client | user µs/tx | sys µs/tx | CPU µs/tx | × floor | syscalls/tx | cs/tx | tps |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
ratio = {}
for (wl, c) in sorted({(k[0], k[1]) for k in rows}, key=lambda k: (["select-only", "tpcb", "oltp_read_write"].index(k[0]), k[1])):
    tools = [k[2] for k in rows if k[:2] == (wl, c)]
    m = {t: [med([x[i] for x in rows[(wl, c, t)]]) for i in range(5)] for t in tools}
    floor = min(m[t][0] + m[t][1] for t in tools if t.startswith("floor"))
    for t in ["floor-thr", "floor-ep", "pgrig", "pgrig-uring", "pgrig-base", "pgbench", "sysbench"]:
        if t not in m: continue
        u, s, sc, cs, tps = m[t]
        print(f"| {wl} | {c} | {t} | {u:.2f} | {s:.2f} | {u + s:.2f} | {(u + s) / floor:.2f} | {sc:.2f} | {cs:.2f} | {tps:,.0f} |")
    ratio[(wl, c)] = (m["pgrig"][0] + m["pgrig"][1]) / floor
r8 = lambda wl: f"{ratio[(wl, 8)]:.2f}" if (wl, 8) in ratio else "n/a"
print(f"\nfloor ratio: select-only {r8('select-only')} tpcb {r8('tpcb')} oltp_read_write {r8('oltp_read_write')}")
PY
cat "$STATE/table"

[ "$PROFILE" = 1 ] || exit 0

# Kernel functions by self time (cpu-clock samples weighted by their period, i.e. CPU ns).
profile() {
  local tool=$1 wl=$2 data=$STATE/$1.perf out=$STATE/out cmd tx total
  read -r -a cmd <<<"$(cmdline "$tool" "$wl" 8)"
  perf record -q -g -o "$data" -- "${cmd[@]}" >"$out" 2>&1 || { echo "floor.sh: perf record failed" >&2; cat "$out" >&2; exit 1; }
  case "$tool:$wl" in
    floor*) tx=$(awk '{print $2 + $4}' "$out") ;;
    pgrig*:oltp*) tx=$(sed -n 's/^ *transactions: *\([0-9]*\) .*/\1/p' "$out") ;;
    *) tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out") ;;
  esac
  perf report -i "$data" --no-children --sort dso,sym --stdio -g none --percent-limit 0 2>/dev/null >"$STATE/report"
  perf report -i "$data" --children --sort dso,sym --stdio -g none --percent-limit 0 2>/dev/null >"$STATE/report-children"
  total=$(sed -n 's/^# Event count (approx.): \([0-9]*\)/\1/p' "$STATE/report" | head -1)
  python3 - "$STATE/report" "$total" "$tx" "$tool" "$wl" "$STATE/report-children" <<'PY'
import re, sys
path, total, tx, tool, wl, children = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
us = lambda pct: pct / 100 * total / 1000 / tx
kern, user, rows = 0.0, 0.0, []
for line in open(path):
    m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
    if not m: continue
    pct, dso, kind, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()
    if kind == "k": kern += pct; rows.append((pct, sym))
    else: user += pct
print(f"\n{tool}, {wl}, 8 clients: {us(kern + user):.2f} µs/tx sampled ({us(user):.2f} user, {us(kern):.2f} kernel), {tx} transactions")
print("| kernel function (self) | % of client CPU | µs/tx |\n|---|---:|---:|")
for pct, sym in sorted(rows, reverse=True)[:12]:
    print(f"| `{sym}` | {pct:.1f} % | {us(pct):.2f} |")
# time inside each system call, everything under its entry point (children included)
calls = []
for line in open(children):
    m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
    if m and m.group(4) == "k" and m.group(5).strip().startswith("__x64_sys_"):
        calls.append((float(m.group(1)), m.group(5).strip()[len("__x64_sys_"):]))
print("\n| system call (inclusive) | % of client CPU | µs/tx |\n|---|---:|---:|")
for pct, name in sorted(calls, reverse=True)[:6]:
    print(f"| `{name}` | {pct:.1f} % | {us(pct):.2f} |")
PY
}
echo
echo "### Where the client's kernel time goes (perf record -g, cpu-clock, 8 clients)"
for wl in select-only tpcb oltp_read_write; do
  for tool in floor-ep pgrig $([ "$URING" = 1 ] && echo pgrig-uring); do profile "$tool" "$wl"; done
done
echo
tail -1 "$STATE/table"
