#!/usr/bin/env bash
# The Lua path's client cost: sysbench's bundled scripts (`/usr/share/sysbench/NAME.lua`) run BY
# PATH (pgrig's embedded LuaJIT with sysbench's API) vs the real sysbench 1.0.20 running the same
# script, and pgrig's native path (the bundled NAME), alternating in rounds on ONE throwaway
# server (`pgrig server start`). Per run: the client process's user and system CPU per
# transaction (getrusage of the child, µs resolution) and TPS from the report's "transactions:"
# line. Each round runs the three clients once per script, in an order that rotates from round
# to round; the ratios over sysbench are taken within each round (a loaded machine moves all
# three together) and summarised by their median, so many short rounds beat a few long ones.
# Also the start-up of a script run: the wall time of a script whose event() does nothing,
# --events=1 (median of --starts runs).
# Prints a markdown table of medians per script (CPU, user, sys, TPS), then the lines
#   lua ratio: oltp_read_write X oltp_read_only Y oltp_point_select Z
#   lua ratio, user: ...            (the same for user time only)
#   lua ratio, sys: ...             (system time only)
#   native ratio: ...               (pgrig's native path, the bundled NAME, over sysbench)
#   lua ratio, quartiles: ...       (the spread of the per-round ratios: Q1-Q3)
#   native ratio, quartiles: ...
# (CPU per transaction over sysbench's, the median of the per-round ratios: below 1 means
# pgrig costs less client CPU than sysbench). Per-run and per-round figures go to stderr.
# On a kernel with tick-based CPU accounting (CONFIG_TICK_CPU_ACCOUNTING) a process's total CPU
# is exact but its user/sys split is sampled: trust the totals, read the split as an estimate.
#
# Usage: bench/sysbench_lua.sh [--rounds N] [--time S] [--threads N] [--table-size N]
#                              [--starts N] [--scripts LIST]
#   --scripts: comma-separated bundled scripts (default oltp_read_write,oltp_read_only,
#              oltp_point_select)
# Env:   CARGO_TARGET_DIR (where pgrig is built), PGRIG (a pgrig binary to measure instead of
#        building one), SYSBENCH (the oracle, default /usr/bin/sysbench)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=9 TIME=4 THREADS=2 SIZE=10000 STARTS=20
SCRIPTS=oltp_read_write,oltp_read_only,oltp_point_select
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --time) TIME=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --table-size) SIZE=$2; shift 2 ;;
    --starts) STARTS=$2; shift 2 ;;
    --scripts) SCRIPTS=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--time S] [--threads N] [--table-size N] [--starts N] [--scripts LIST]" >&2; exit 2 ;;
  esac
done

SYSBENCH=${SYSBENCH:-/usr/bin/sysbench}
IFS=, read -r -a NAMES <<<"$SCRIPTS"
[ -x "$SYSBENCH" ] || { echo "sysbench 1.0.20 is not installed: apt-get install sysbench" >&2; exit 1; }
for n in "${NAMES[@]}"; do
  [ -f "/usr/share/sysbench/$n.lua" ] || { echo "no bundled script /usr/share/sysbench/$n.lua" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "python3 is missing (it reads the client's CPU time)" >&2; exit 1; }
if [ -z "${PGRIG:-}" ]; then
  (cd "$ROOT" && cargo build --release -q -p pgrig-cli)
  PGRIG="${CARGO_TARGET_DIR:-$ROOT/target}/release/pgrig"
fi

STATE=$(mktemp -d /tmp/pgrig-sysbench-lua-bench.XXXXXX)
export XDG_RUNTIME_DIR=$STATE
cleanup() { "$PGRIG" server stop >/dev/null 2>&1 || true; rm -rf "$STATE"; }
trap cleanup EXIT
eval "$("$PGRIG" server start | grep '^export ')"
psql -qAtc 'create database sbtest' postgres >/dev/null
mkdir -p "$STATE/bin"
ln -s "$PGRIG" "$STATE/bin/sysbench"
LINK="$STATE/bin/sysbench"
CONN=(--db-driver=pgsql "--pgsql-host=$PGHOST" "--pgsql-port=$PGPORT" "--pgsql-user=$PGUSER" --pgsql-db=sbtest)
"$SYSBENCH" "${CONN[@]}" oltp_read_write "--table-size=$SIZE" prepare >/dev/null
psql -qAtc 'vacuum analyze' sbtest >/dev/null
printf 'function event() end\n' >"$STATE/empty.lua"

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# measure PROGRAM TEST: prints "user_us_per_tx sys_us_per_tx tps rest_pct" (the client
# process's own user and system CPU from getrusage of the one child, microsecond resolution;
# rest_pct: the CPU the rest of the machine used meanwhile — the server and anything else —
# in % of one core, from /proc/stat, so a round disturbed by other work can be told apart)
measure() {
  python3 -c '
import os, re, resource, subprocess, sys, time
def busy():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(f) - f[3] - f[4]) / os.sysconf("SC_CLK_TCK")
b0, t0 = busy(), time.monotonic()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
b1, t1 = busy(), time.monotonic()
r = resource.getrusage(resource.RUSAGE_CHILDREN)
m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", p.stdout)
if p.returncode != 0 or not m or int(m.group(1)) == 0:
    sys.exit("run failed (status %d): %s\n%s" % (p.returncode, " ".join(sys.argv[1:]), p.stdout[-2000:]))
tx = int(m.group(1))
rest = max(0.0, (b1 - b0) - r.ru_utime - r.ru_stime) / (t1 - t0) * 100
print("%.2f %.2f %.1f %.0f" % (r.ru_utime * 1e6 / tx, r.ru_stime * 1e6 / tx, float(m.group(2)), rest))
' "$1" "${CONN[@]}" "$2" "--table-size=$SIZE" "--threads=$THREADS" "--time=$TIME" run
}

# quartile Q (1 or 3) of the numbers on stdin
quartile() { sort -g | awk -v q="$1" '{a[NR]=$1} END {i=1+(NR-1)*q/4; j=int(i); f=i-j; v=a[j]; if (j<NR) v+=f*(a[j+1]-a[j]); printf "%.3f", v}'; }

med() { printf '%s' "$1" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

WHO=(sysbench-lua pgrig-lua pgrig-native)
declare -A USER SYS CPU TPS RATIO NRATIO URATIO SRATIO
for r in $(seq "$ROUNDS"); do
  for name in "${NAMES[@]}"; do
    script=/usr/share/sysbench/$name.lua
    declare -A cpu=() usr=() sys=()
    # the three clients in a rotating order: none always runs first (or after the same one)
    for k in 0 1 2; do
      who=${WHO[$(( (k + r) % 3 ))]}
      case $who in
        sysbench-lua) m=$(measure "$SYSBENCH" "$script") ;;
        pgrig-lua) m=$(measure "$LINK" "$script") ;;
        pgrig-native) m=$(measure "$LINK" "$name") ;;
      esac
      read -r u s t rest <<<"$m"
      usr[$who]=$u sys[$who]=$s cpu[$who]=$(awk -v u="$u" -v s="$s" 'BEGIN {printf "%.2f", u + s}')
      USER[$name/$who]+="$u"$'\n'; SYS[$name/$who]+="$s"$'\n'
      CPU[$name/$who]+="${cpu[$who]}"$'\n'; TPS[$name/$who]+="$t"$'\n'
      echo "round $r $name $who: ${cpu[$who]} us CPU/tx (user $u, sys $s), $t tps, rest of the machine ${rest}% of a core" >&2
    done
    # this round's ratios over sysbench (all three ran within the round)
    lr=$(ratio "${cpu[pgrig-lua]}" "${cpu[sysbench-lua]}")
    nr=$(ratio "${cpu[pgrig-native]}" "${cpu[sysbench-lua]}")
    RATIO[$name]+="$lr"$'\n'; NRATIO[$name]+="$nr"$'\n'
    URATIO[$name]+="$(ratio "${usr[pgrig-lua]}" "${usr[sysbench-lua]}")"$'\n'
    SRATIO[$name]+="$(ratio "${sys[pgrig-lua]}" "${sys[sysbench-lua]}")"$'\n'
    echo "round $r $name: CPU per tx over sysbench's: pgrig-lua $lr, pgrig-native $nr" >&2
  done
done

# start-up: wall ms of a one-event run of a script that does nothing, alternating
declare -A START
for i in $(seq "$STARTS"); do
  for who in sysbench pgrig; do
    prog=$SYSBENCH; [ $who = pgrig ] && prog=$LINK
    t0=$(date +%s%N)
    "$prog" "${CONN[@]}" "$STATE/empty.lua" --events=1 --verbosity=0 run >/dev/null
    START[$who]+="$(( ($(date +%s%N) - t0) / 1000 ))"$'\n'
  done
done

for name in "${NAMES[@]}"; do
  echo "| client ($name, $THREADS threads, ${TIME}s, $ROUNDS rounds) | CPU µs/tx | user µs/tx | sys µs/tx | TPS |"
  echo "|---|---|---|---|---|"
  for who in "${WHO[@]}"; do
    echo "| $who | $(med "${CPU[$name/$who]}") | $(med "${USER[$name/$who]}") | $(med "${SYS[$name/$who]}") | $(med "${TPS[$name/$who]}") |"
  done
  echo
done
echo "(medians of the rounds)"
echo
echo "| start-up of a one-event script run ($STARTS runs) | wall ms (median) |"
echo "|---|---|"
for who in sysbench pgrig; do
  echo "| $who | $(printf '%s' "${START[$who]}" | median | awk '{printf "%.1f", $1/1000}') |"
done
echo
# the medians of the per-round ratios
ratios() {
  local -n from=$2
  local line="$1" name
  for name in "${NAMES[@]}"; do
    line+=" $name $(printf '%s' "${from[$name]}" | median)"
  done
  echo "$line"
}
# and their spread: the middle half of the rounds lies between these
spread() {
  local -n from=$2
  local line="$1" name
  for name in "${NAMES[@]}"; do
    line+=" $name $(printf '%s' "${from[$name]}" | quartile 1)-$(printf '%s' "${from[$name]}" | quartile 3)"
  done
  echo "$line"
}
ratios "lua ratio:" RATIO
ratios "lua ratio, user:" URATIO
ratios "lua ratio, sys:" SRATIO
ratios "native ratio:" NRATIO
spread "lua ratio, quartiles:" RATIO
spread "native ratio, quartiles:" NRATIO
