#!/usr/bin/env bash
# The Lua path's client cost: sysbench's bundled scripts (`/usr/share/sysbench/NAME.lua`) run BY
# PATH (pgrig's embedded LuaJIT with sysbench's API) vs the real sysbench 1.0.20 running the same
# script, and pgrig's native path (the bundled NAME), alternating in rounds on ONE throwaway
# server (`pgrig server start`). Per run: the client's CPU (user+sys from GNU time) per
# transaction and TPS from the report's "transactions:" line. Also the start-up of a script run:
# the wall time of a script whose event() does nothing, --events=1 (median of --starts runs).
# Prints a markdown table of medians per script, then one line
#   lua ratio: oltp_read_write X oltp_read_only Y oltp_point_select Z
# (pgrig by path's CPU per transaction over sysbench's, the median of the per-round ratios:
# below 1 means the Lua path costs less client CPU than sysbench).
#
# Usage: bench/sysbench_lua.sh [--rounds N] [--time S] [--threads N] [--table-size N]
#                              [--starts N] [--scripts LIST]
#   --scripts: comma-separated bundled scripts (default oltp_read_write,oltp_read_only,
#              oltp_point_select)
# Env:   CARGO_TARGET_DIR (where pgrig is built), SYSBENCH (the oracle, default /usr/bin/sysbench)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3 TIME=10 THREADS=2 SIZE=10000 STARTS=20
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
command -v /usr/bin/time >/dev/null || { echo "GNU time is missing: apt-get install time" >&2; exit 1; }
(cd "$ROOT" && cargo build --release -q -p pgrig-cli)
PGRIG="${CARGO_TARGET_DIR:-$ROOT/target}/release/pgrig"

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

# measure PROGRAM TEST: prints "cpu_us_per_tx tps"
measure() {
  local out
  out=$(/usr/bin/time -f 'CPU %U %S' "$1" "${CONN[@]}" "$2" "--table-size=$SIZE" \
        "--threads=$THREADS" "--time=$TIME" run 2>&1)
  echo "$out" | awk '/transactions:/ {tx=$2; tps=$3; gsub(/\(/, "", tps)} /^CPU/ {cpu=$2+$3}
    END {printf "%.1f %.1f\n", cpu * 1e6 / tx, tps}'
}

declare -A CPU TPS RATIO
for r in $(seq "$ROUNDS"); do
  for name in "${NAMES[@]}"; do
    script=/usr/share/sysbench/$name.lua
    for who in sysbench-lua pgrig-lua pgrig-native; do
      case $who in
        sysbench-lua) m=$(measure "$SYSBENCH" "$script") ;;
        pgrig-lua) m=$(measure "$LINK" "$script") ;;
        pgrig-native) m=$(measure "$LINK" "$name") ;;
      esac
      CPU[$name/$who]+="${m%% *}"$'\n'; TPS[$name/$who]+="${m##* }"$'\n'
      eval "cpu_${who//-/_}=${m%% *}"
      echo "round $r $name $who: ${m%% *} us CPU/tx, ${m##* } tps" >&2
    done
    # this round's ratio, pgrig by path over sysbench (both ran within the round)
    ratio=$(awk -v a="$cpu_pgrig_lua" -v b="$cpu_sysbench_lua" 'BEGIN {printf "%.3f", a / b}')
    RATIO[$name]+="$ratio"$'\n'
    echo "round $r $name: pgrig-lua/sysbench-lua CPU per tx = $ratio" >&2
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
  echo "| client ($name, $THREADS threads, ${TIME}s, $ROUNDS rounds) | CPU µs/tx (median) | TPS (median) |"
  echo "|---|---|---|"
  for who in sysbench-lua pgrig-lua pgrig-native; do
    echo "| $who | $(printf '%s' "${CPU[$name/$who]}" | median) | $(printf '%s' "${TPS[$name/$who]}" | median) |"
  done
  echo
done
echo "| start-up of a one-event script run ($STARTS runs) | wall ms (median) |"
echo "|---|---|"
for who in sysbench pgrig; do
  echo "| $who | $(printf '%s' "${START[$who]}" | median | awk '{printf "%.1f", $1/1000}') |"
done
echo
line="lua ratio:"
for name in "${NAMES[@]}"; do
  line+=" $name $(printf '%s' "${RATIO[$name]}" | median)"
done
echo "$line"
