#!/usr/bin/env bash
# Installs what is missing, builds the page for release, measures it, and appends one row
# to the results table in docs/benchmarks.md (or only prints it with --no-record):
#   - the wasm's size, raw and gzip -9;
#   - time from navigation to the first rendered cluster diagram in headless Chromium,
#     median of RUNS runs (default 21), by e2e/bench/first-diagram.mjs.
# Usage: ./scripts/bench.sh [--no-record]      (RUNS=51 ./scripts/bench.sh for more runs)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
record=1
[ "${1:-}" = "--no-record" ] && record=0

"$ROOT/scripts/setup.sh"
cd "$ROOT"
timed "trunk build --release" trunk build --release

wasm="$(ls dist/*_bg.wasm)"
[ "$(echo "$wasm" | wc -l)" -eq 1 ] || die "expected one wasm in dist/, found: $wasm"
raw=$(stat -c %s "$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)

log "first rendered diagram, ${RUNS:-21} runs"
result="$(cd e2e && node bench/first-diagram.mjs --runs "${RUNS:-21}")"
field() { node -e 'const r = JSON.parse(process.argv[1]); console.log(r[process.argv[2]])' "$result" "$1"; }

kib() { awk -v b="$1" 'BEGIN { printf "%.1f KiB", b / 1024 }'; }
commit="$(git rev-parse --short HEAD)"
git diff --quiet HEAD -- . ':!docs/benchmarks.md' || commit="$commit+dirty"
cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//; s/  */ /g')"
mem="$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
machine="$(nproc) cores, $cpu, $mem, Chromium $(field chromium)"
row="| $(date -u +%Y-%m-%d) | \`$commit\` | $machine | $(kib "$raw") ($raw B) | $(kib "$gz") ($gz B) | $(field median_ms) ms | $(field min_ms)–$(field max_ms) ms | $(field runs) |"

echo "$row"
if [ "$record" -eq 1 ]; then
  echo "$row" >>docs/benchmarks.md
  log "appended to docs/benchmarks.md"
fi
