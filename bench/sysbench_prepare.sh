#!/usr/bin/env bash
# sysbench `prepare` wall time: the real sysbench 1.0.20 vs pgrig's loader (parallel binary
# COPY, keys after the load), alternating runs against ONE throwaway PostgreSQL server started
# here with default settings (fsync on), TABLES x TABLE_SIZE rows with THREADS threads/jobs,
# each on its own database, cleaned up between runs. Prints a markdown report (commands,
# machine, versions, per-run times, medians, ratio); with --write it replaces the results in
# the "## sysbench prepare (bench/sysbench_prepare.sh)" section of docs/performance.md.
#
# Usage: bench/sysbench_prepare.sh [--rounds N] [--tables N] [--table-size N] [--threads N] [--write]
# Env:   CARGO_TARGET_DIR (where pgrig is built), PGBIN (PostgreSQL's bin dir)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3 TABLES=4 SIZE=250000 THREADS=2 WRITE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --tables) TABLES=$2; shift 2 ;;
    --table-size) SIZE=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --write) WRITE=1; shift ;;
    *) echo "usage: $0 [--rounds N] [--tables N] [--table-size N] [--threads N] [--write]" >&2; exit 2 ;;
  esac
done

SYSBENCH=$(command -v sysbench) || { echo "sysbench is not installed (apt-get install sysbench)" >&2; exit 1; }
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
(cd "$ROOT" && cargo build --release -q -p pgrig-workloads --example sysbench_prepare)
LOADER="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/sysbench_prepare"

# A throwaway cluster; initdb/postgres refuse root, so they run as nobody then.
DIR=$(mktemp -d /tmp/pgrig-sbprep.XXXXXX)
chmod 755 "$DIR"
AS=()
if [ "$(id -u)" = 0 ]; then chown nobody "$DIR"; AS=(runuser -u nobody --); fi
PORT=$((20000 + RANDOM % 20000))
stop() { "${AS[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap stop EXIT
"${AS[@]}" "$PGBIN/initdb" -D "$DIR/data" -A trust -U postgres >/dev/null
printf "listen_addresses = ''\nunix_socket_directories = '%s'\nport = %s\n" "$DIR" "$PORT" >>"$DIR/data/postgresql.conf"
"${AS[@]}" "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w start >/dev/null
export PGOPTIONS="-c client_min_messages=warning"
PSQL=("$PGBIN/psql" -qAt -h "$DIR" -p "$PORT" -U postgres)
"${PSQL[@]}" -c 'create database sb_sysbench' -c 'create database sb_pgrig' postgres

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
SB=("$SYSBENCH" --db-driver=pgsql "--pgsql-host=$DIR" "--pgsql-port=$PORT" --pgsql-user=postgres
    --pgsql-db=sb_sysbench "--tables=$TABLES" "--table-size=$SIZE" "--threads=$THREADS" oltp_read_write)
PG=("$LOADER" "host=$DIR port=$PORT user=postgres dbname=sb_pgrig" oltp_read_write "$THREADS"
    "tables=$TABLES" "table_size=$SIZE")
drop() { for i in $(seq "$TABLES"); do echo "drop table if exists sbtest$i;"; done | "${PSQL[@]}" "$1"; }

DETAILS=$(mktemp) SBT=$(mktemp) PGT=$(mktemp) ANT=$(mktemp)
for r in $(seq "$ROUNDS"); do
  drop sb_sysbench
  t0=$(now); "${SB[@]}" prepare >/dev/null; t1=$(now)
  s=$(echo "$t1 - $t0" | bc); echo "$s" >>"$SBT"
  drop sb_pgrig
  t0=$(now); line=$("${PG[@]}"); t1=$(now)
  p=$(echo "$t1 - $t0" | bc); echo "$p" >>"$PGT"
  rows=$("${PSQL[@]}" -c "select (select count(*) from sbtest1) + (select count(*) from sbtest$TABLES)" sb_pgrig)
  drop sb_pgrig
  t0=$(now); aline=$("${PG[@]}" analyze=on); t1=$(now)
  a=$(echo "$t1 - $t0" | bc); echo "$a" >>"$ANT"
  printf -- "- round %s: sysbench %.2f s, pgrig %.2f s (%s; sbtest1 + sbtest%s: %s rows), pgrig analyze=on %.2f s (%s)\n" \
    "$r" "$s" "$p" "$line" "$TABLES" "$rows" "$a" "$aline" >>"$DETAILS"
done
ms=$(median <"$SBT") mp=$(median <"$PGT") ma=$(median <"$ANT")
ratio=$(echo "scale=2; $ms / $mp" | bc) aratio=$(echo "scale=2; $ms / $ma" | bc)

REPORT=$(mktemp)
{
  echo "Command: \`bench/sysbench_prepare.sh --rounds $ROUNDS --tables $TABLES --table-size $SIZE --threads $THREADS\`"
  echo "($(date -u +%Y-%m-%d), $(nproc) cores, $("$SYSBENCH" --version), PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'),"
  echo "one throwaway server with default settings, alternating runs; sysbench: \`sysbench oltp_read_write"
  echo "--tables=$TABLES --table-size=$SIZE --threads=$THREADS prepare\`; pgrig: the same dataset through"
  echo "\`pgrig_init::generic::load\` with $THREADS connections, as \`pgrig sysbench ... prepare\` runs it)."
  echo
  echo "| | median wall time | speed-up |"
  echo "|---|---|---|"
  printf "| sysbench prepare | %.2f s | |\n| pgrig prepare (the same tables: no ANALYZE, as sysbench) | %.2f s | **%sx** |\n" "$ms" "$mp" "$ratio"
  printf "| pgrig prepare, analyze=on (+ ANALYZE, which sysbench does not run) | %.2f s | %sx |\n" "$ma" "$aratio"
  echo
  echo "Runs:"
  echo
  cat "$DETAILS"
} >"$REPORT"
cat "$REPORT"
rm -f "$DETAILS" "$SBT" "$PGT" "$ANT"

if [ "$WRITE" = 1 ]; then
  python3 - "$ROOT/docs/performance.md" "$REPORT" <<'EOF'
import re, sys
doc, rep = sys.argv[1], open(sys.argv[2]).read().rstrip() + "\n"
text = open(doc).read()
head = "## sysbench prepare (bench/sysbench_prepare.sh)\n"
if head not in text:
    text = text.rstrip() + "\n\n" + head + "\n"
start = text.index(head) + len(head)
m = re.search(r"^## ", text[start:], re.M)
end = start + m.start() if m else len(text)
keep = text[start:end]
marker = "<!-- sysbench_prepare.sh results -->\n"
keep = keep[: keep.index(marker)] if marker in keep else "\n"
text = text[:start] + keep + marker + "\n" + rep + ("\n" if m else "") + text[end:]
open(doc, "w").write(text)
EOF
fi
rm -f "$REPORT"
