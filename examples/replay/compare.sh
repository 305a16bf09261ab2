#!/usr/bin/env bash
# Record → replay → compare, on throwaway PostgreSQL servers: a server logging every statement's
# duration (log_min_duration_statement = 0) runs a pgbench script of two statements; the log is
# replayed onto a second server holding the same data but without the index the first statement
# uses, and `pgrig replay --compare` shows which statement got slower (+) and which did not (~).
# The replay is kept in a results store and drawn by `pgrig report` (compare.html).
# usage: examples/replay/compare.sh [PG_BINDIR]     (needs pgrig on PATH, or PGRIG=path)
set -euo pipefail
bindir=${1:-/usr/lib/postgresql/15/bin}
pgrig=${PGRIG:-pgrig}
tmp=$(mktemp -d); as=()
if [ "$(id -u)" = 0 ]; then chown postgres "$tmp"; as=(runuser -u postgres --); fi
out=$PWD
stop() { for s in rec rep; do "${as[@]}" "$bindir/pg_ctl" -D "$tmp/$s" -m immediate stop >/dev/null 2>&1 || true; done; rm -rf "$tmp"; }
trap stop EXIT
start() { # start NAME PORT [SETTINGS...]: a throwaway server on a private socket
  local name=$1 port=$2; shift 2
  "${as[@]}" "$bindir/initdb" -D "$tmp/$name" -U postgres -A trust >/dev/null
  "${as[@]}" "$bindir/pg_ctl" -D "$tmp/$name" -l "$tmp/$name.log" -w \
    -o "-k $tmp -p $port -c listen_addresses='' -c fsync=off $*" start >/dev/null
}
rec=$((20000 + RANDOM % 20000)); rep=$((rec + 1))
start rec $rec -c logging_collector=on -c log_directory=log -c log_filename=rec.log \
  -c log_connections=on -c log_disconnections=on "-c log_line_prefix='%m|%u|%d|%c|'" -c lc_messages=C
start rep $rep
schema="CREATE TABLE big (id int PRIMARY KEY, k int, pad text);
INSERT INTO big SELECT i, i / 2, repeat('x', 40) FROM generate_series(1, 200000) i;
CREATE INDEX big_k ON big (k);
CREATE TABLE small (id int, v int);
INSERT INTO small SELECT i, i FROM generate_series(1, 10000) i;"
for port in $rec $rep; do
  psql -Xq -h "$tmp" -p "$port" -U postgres -d postgres -c "CREATE DATABASE shop"
  psql -Xq -h "$tmp" -p "$port" -U postgres -d shop -c "$schema" -c "VACUUM ANALYZE"
done
# 1. record: every statement with its duration
psql -Xq -h "$tmp" -p $rec -U postgres -d postgres -c "ALTER DATABASE shop SET log_min_duration_statement = 0"
cat >"$tmp/two.sql" <<'SQL'
\set k random(1, 100000)
SELECT pg_sleep(0.01), count(*) FROM big WHERE k BETWEEN :k AND :k + 5000;
SELECT pg_sleep(0.01), sum(v) FROM small WHERE id > 0;
SQL
pgbench -n -M simple -c 2 -t 100 -h "$tmp" -p $rec -U postgres -f "$tmp/two.sql" shop >/dev/null
psql -Xq -h "$tmp" -p $rec -U postgres -d shop -c "SELECT 'recording done'" >/dev/null
for _ in $(seq 50); do grep -q "recording done" "$tmp/rec/log/rec.log" 2>/dev/null && break; sleep 0.2; done
# 2. change the replay server: the first statement's index is gone
psql -Xq -h "$tmp" -p $rep -U postgres -d shop -c "DROP INDEX big_k"
# 3. replay and compare; keep the replay in a store and draw it
rm -f "$out/compare.db"
PGUSER=postgres "$pgrig" replay --compare -h "$tmp" -p $rep --store "$out/compare.db" \
  --json "$out/compare.json" "$tmp/rec/log/rec.log"
"$pgrig" report --store "$out/compare.db" -o "$out/compare.html"
echo "report: $out/compare.html"
