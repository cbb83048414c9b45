#!/usr/bin/env bash
# Installs what is missing, builds the page for release, measures it, and appends one row
# to the results table in docs/benchmarks.md (or only prints it with --no-record):
#   - the wasm's size, raw and gzip -9;
#   - time from navigation to the first rendered cluster diagram in headless Chromium,
#     median of RUNS runs (default 21), by e2e/bench/first-diagram.mjs;
#   - the page while the hundred-nodes example scales to REPLICAS pods (default 1500):
#     the longest task, the long tasks (> 50 ms), frame p50/p95/max, by e2e/bench/scale.mjs.
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

log "scaling hundred-nodes to ${REPLICAS:-1500} pods"
load="$(cd e2e && node bench/scale.mjs --replicas "${REPLICAS:-1500}" --speed "${SPEED:-8}")"
lfield() { node -e 'const r = JSON.parse(process.argv[1]); console.log(r[process.argv[2]])' "$load" "$1"; }
load_row="| $(date -u +%Y-%m-%d) | \`$commit\` | $machine | $(lfield replicas) pods, $(lfield speed)× | $(lfield longest_task_ms) ms | $(lfield long_tasks) | $(lfield frame_p50_ms) / $(lfield frame_p95_ms) / $(lfield frame_max_ms) ms | $(lfield to_all_ready_s) s | $(lfield elements) | $(field median_ms) ms |"

echo "$row"
echo "$load_row"
if [ "$record" -eq 1 ]; then
  # Each row goes under its own table: the first table's rows end before "## The page under load".
  node -e '
    const fs = require("fs");
    const [file, row, loadRow] = process.argv.slice(1);
    let s = fs.readFileSync(file, "utf8");
    const put = (s, marker, r) => {
      const at = s.indexOf(marker);
      if (at < 0) throw new Error(`no "${marker}" in ${file}`);
      return s.slice(0, at) + r + "\n" + s.slice(at);
    };
    s = put(s, "<!-- first-diagram rows end -->", row);
    s = put(s, "<!-- load rows end -->", loadRow);
    fs.writeFileSync(file, s);
  ' docs/benchmarks.md "$row" "$load_row"
  log "recorded in docs/benchmarks.md"
fi
