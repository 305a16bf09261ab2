#!/bin/sh
# The round-trip latency `pgrig capture` adds: pgbench -S -M prepared -c 1 (one statement, one
# round trip per transaction) straight to the server and through the recording proxy, in
# alternating rounds (the order flips every round); prints each round's average latency both
# ways and the difference in µs per round trip, and the proxy's own CPU time per round trip
# (user + system, from /proc: what the proxy costs whatever else runs on the machine; on a
# loaded machine the added latency is mostly the wait for a CPU to run the proxy on).
#
#   bench/capture_overhead.sh [ROUNDS] [SECONDS]        (defaults: 6 rounds of 10 s each way)
#
# The server: PGHOST/PGPORT/PGUSER/PGDATABASE, holding pgbench's tables (pgbench -i); pgrig:
# $PGRIG (default target/release/pgrig, else target/debug/pgrig); pgbench: $PGBENCH (default
# pgbench on PATH).
set -eu
rounds=${1:-6}
secs=${2:-10}
PGRIG=${PGRIG:-}
if [ -z "$PGRIG" ]; then
    if [ -x target/release/pgrig ]; then PGRIG=target/release/pgrig; else PGRIG=target/debug/pgrig; fi
fi
PGBENCH=${PGBENCH:-pgbench}
: "${PGHOST:?set PGHOST (and PGPORT, PGUSER, PGDATABASE) to a server with pgbench tables}"
PGPORT=${PGPORT:-5432}
port=5999
dir=$(mktemp -d)
chmod 700 "$dir"
"$PGRIG" capture --listen "$dir/sock" --port $port --upstream "host=$PGHOST port=$PGPORT" \
    -o "$dir/capture" 2>"$dir/capture.log" &
proxy=$!
trap 'kill $proxy 2>/dev/null; wait $proxy 2>/dev/null; rm -rf "$dir"' EXIT
i=0
while [ ! -S "$dir/sock/.s.PGSQL.$port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done

tck=$(getconf CLK_TCK)
cpu() { # the proxy's user + system CPU time in clock ticks
    awk '{ print $14 + $15 }' "/proc/$proxy/stat"
}
xacts=0
latency() { # latency average in µs of one pgbench run; $@: extra connection options
    out=$("$PGBENCH" -n -S -M prepared -c 1 -T "$secs" "$@" 2>/dev/null)
    if [ $# -gt 0 ]; then
        n=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
        xacts=$((xacts + n))
    fi
    echo "$out" | sed -n 's/^latency average = \([0-9.]*\) ms$/\1/p' | awk '{ printf "%.1f", $1 * 1000 }'
}

echo "round  direct (µs)  proxy (µs)  added (µs per round trip)"
r=1
total=0
cpu0=$(cpu)
while [ $r -le "$rounds" ]; do
    if [ $((r % 2)) -eq 1 ]; then
        d=$(latency); latency -h "$dir/sock" -p $port >"$dir/p"
    else
        latency -h "$dir/sock" -p $port >"$dir/p"; d=$(latency)
    fi
    p=$(cat "$dir/p")
    added=$(awk -v d="$d" -v p="$p" 'BEGIN { printf "%.1f", p - d }')
    printf "%5d %12s %11s %12s\n" "$r" "$d" "$p" "$added"
    total=$(awk -v t="$total" -v a="$added" 'BEGIN { print t + a }')
    r=$((r + 1))
done
awk -v t="$total" -v n="$rounds" 'BEGIN { printf "mean added latency: %.1f µs per round trip\n", t / n }'
awk -v c="$(($(cpu) - cpu0))" -v hz="$tck" -v n="$xacts" \
    'BEGIN { printf "proxy CPU time: %.2f s for %d round trips, %.1f µs per round trip\n", c / hz, n, c / hz / n * 1e6 }'
kill $proxy; wait $proxy 2>/dev/null || true
tail -1 "$dir/capture.log"
