#!/usr/bin/env bash
# The report benchmark (issue 12): a store of 1,000 runs, each with a 60-second series, into one
# HTML report. Goal: under 2 s and under 5 MB. Prints wall time (best of 3), peak RSS and sizes.
# Usage: bench/report.sh [RUNS]   (release build; results go to docs/performance.md by hand)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000}
cargo build --release -q -p pgrig-cli
cargo build --release -q -p pgrig-report --example bench_store
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$PWD/target/release/examples/bench_store" "$dir/bench.db" "$runs"
best=""
bin=$PWD/target/release/pgrig
cd "$dir"
for i in 1 2 3; do
  /usr/bin/time -f "%e %M" -o "$dir/time" "$bin" report --store "$dir/bench.db" bench \
    -o "$dir/report.html" --svg "$dir/svg" 2>/dev/null
  read -r wall rss < "$dir/time"
  echo "run $i: ${wall} s wall, ${rss} kB peak RSS"
  if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; fi
done
html=$(stat -c %s "$dir/report.html")
svgs=$(ls "$dir/svg" | wc -l)
echo "report of $runs runs: best ${best} s, HTML $(awk "BEGIN{printf \"%.2f\", $html/1048576}") MB ($html bytes), $svgs charts, store $(du -h "$dir/bench.db" | cut -f1)"
