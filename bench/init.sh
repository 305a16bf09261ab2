#!/usr/bin/env bash
# Initialisation wall time: pgbench -i (the installed pgbench 15) vs pgrig init, alternating
# runs against ONE throwaway server (`pgrig server start`: default PostgreSQL settings, fsync
# on, not the fast test tuning), at each scale. Prints a markdown report (commands, machine,
# versions, per-run times with pgbench's/pgrig's own per-step "done in" lines, medians and
# ratios); with --write it replaces the "## Initialisation" section of docs/performance.md.
#
# Usage: bench/init.sh [--rounds N] [--scales "50 100"] [--write]
# Env:   CARGO_TARGET_DIR (where pgrig is built), INIT_ARGS (extra -i options for both, e.g.
#        "--partitions=4"), PGRIG_INIT_ARGS (extra pgrig init options, e.g. "--load-jobs=1")
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=3
SCALES="50 100"
WRITE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --scales) SCALES=$2; shift 2 ;;
    --write) WRITE=1; shift ;;
    *) echo "usage: $0 [--rounds N] [--scales \"50 100\"] [--write]" >&2; exit 2 ;;
  esac
done

(cd "$ROOT" && cargo build --release -q -p pgrig-cli)
PGRIG="${CARGO_TARGET_DIR:-$ROOT/target}/release/pgrig"
PGBENCH=$(command -v pgbench)

# A private state dir, so this server never collides with another `pgrig server`.
STATE=$(mktemp -d /tmp/pgrig-init-bench.XXXXXX)
export XDG_RUNTIME_DIR=$STATE
cleanup() { "$PGRIG" server stop >/dev/null 2>&1 || true; rm -rf "$STATE"; }
trap cleanup EXIT
eval "$("$PGRIG" server start | grep '^export ')"
psql -qAtc 'create database bench_pgbench' -c 'create database bench_pgrig' postgres >/dev/null

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# run LABEL CMD... : prints "seconds|done line"
run() {
  local t0 t1 out
  psql -qAtc checkpoint postgres >/dev/null
  t0=$(now)
  out=$("$@" 2>&1 >/dev/null) || { echo "failed: $*" >&2; echo "$out" >&2; exit 1; }
  t1=$(now)
  echo "$(echo "$t1 - $t0" | bc)|$(echo "$out" | grep '^done in' | tail -1)"
}

REPORT=$(mktemp)
{
  echo "Command: \`bench/init.sh --rounds $ROUNDS --scales \"$SCALES\"\`: per scale, $ROUNDS rounds of"
  echo "\`pgbench -i -s S ${INIT_ARGS:+$INIT_ARGS }bench_pgbench\` and \`pgrig init -s S ${INIT_ARGS:+$INIT_ARGS }${PGRIG_INIT_ARGS:+$PGRIG_INIT_ARGS }bench_pgrig\`, alternating which"
  echo "goes first, a \`checkpoint\` before each, on one \`pgrig server start\` server (default settings:"
  echo "fsync on, shared_buffers 128MB, max_wal_size 1GB, wal_level replica)."
  echo
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), shared with other"
  echo "jobs (load average at start: $(cut -d' ' -f1-3 /proc/loadavg)); $(uname -sr)."
  echo "Versions: $("$PGBENCH" --version), $("$PGRIG" --version), server $(psql -qAtc 'show server_version' postgres)."
  echo
  echo "| scale | pgbench -i (median s) | pgrig init (median s) | ratio | per-round ratios |"
  echo "|---|---|---|---|---|"
} >"$REPORT"

DETAILS=$(mktemp)
for s in $SCALES; do
  : >"$STATE/a"; : >"$STATE/b"; ratios=""
  for r in $(seq 1 "$ROUNDS"); do
    if [ $((r % 2)) -eq 1 ]; then
      a=$(run "$PGBENCH" -i -s "$s" ${INIT_ARGS:-} bench_pgbench); b=$(run "$PGRIG" init -s "$s" ${INIT_ARGS:-} ${PGRIG_INIT_ARGS:-} bench_pgrig)
    else
      b=$(run "$PGRIG" init -s "$s" ${INIT_ARGS:-} ${PGRIG_INIT_ARGS:-} bench_pgrig); a=$(run "$PGBENCH" -i -s "$s" ${INIT_ARGS:-} bench_pgbench)
    fi
    ta=${a%%|*}; tb=${b%%|*}
    echo "$ta" >>"$STATE/a"; echo "$tb" >>"$STATE/b"
    ratios="$ratios $(printf '%.2f' "$(echo "$tb / $ta" | bc -l)")"
    printf -- '- scale %s round %s: pgbench %.2f s (%s); pgrig %.2f s (%s)\n' \
      "$s" "$r" "$ta" "${a#*|}" "$tb" "${b#*|}" >>"$DETAILS"
    echo "scale $s round $r: pgbench $ta s, pgrig $tb s" >&2
  done
  ma=$(median <"$STATE/a"); mb=$(median <"$STATE/b")
  printf '| %s | %.2f | %.2f | %.2f | %s |\n' "$s" "$ma" "$mb" "$(echo "$mb / $ma" | bc -l)" "${ratios# }" >>"$REPORT"
done
{ echo; echo "Runs (wall time, and each tool's own \`done in\` line):"; echo; cat "$DETAILS"; } >>"$REPORT"

cat "$REPORT"
if [ "$WRITE" = 1 ]; then
  python3 - "$ROOT/docs/performance.md" "$REPORT" <<'EOF'
import re, sys
doc, rep = sys.argv[1], open(sys.argv[2]).read().rstrip() + "\n"
text = open(doc).read()
head = "## Initialisation (bench/init.sh)\n"
start = text.index(head) + len(head)
m = re.search(r"^## ", text[start:], re.M)
end = start + m.start() if m else len(text)
keep = text[start:end]
marker = "<!-- init.sh results -->\n"
if marker in keep:
    keep = keep[: keep.index(marker)]
else:
    keep = "\n"
text = text[:start] + keep + marker + "\n" + rep + ("\n" if m else "") + text[end:]
open(doc, "w").write(text)
EOF
fi
