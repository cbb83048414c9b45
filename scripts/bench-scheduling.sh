#!/usr/bin/env bash
# The scheduler_perf SchedulingBasic workload through the whole engine, natively and in
# wasm32 (headless Debian Chromium, and node) in one run; checks that all three made the
# same placements.
# Usage: ./scripts/bench-scheduling.sh [NODES INITIAL PODS]   (default 5000 1000 10000)
# Downloads nothing: runs scripts/setup.sh (the wasm32 target, node's Playwright, Chromium).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
nodes="${1:-5000}" initial="${2:-1000}" pods="${3:-10000}"
"$ROOT/scripts/setup.sh"
cd "$ROOT"

timed "native build (bench-native)" cargo build --quiet --profile bench-native -p kubeloop-cli
timed "wasm32 build" bash -c 'cd bench/wasm && cargo build --quiet --release --target wasm32-unknown-unknown'

log "native: $nodes nodes, $initial initial pods, $pods measured pods"
native="$(target/bench-native/kubeloop bench scheduling-basic --nodes "$nodes" --initial "$initial" --pods "$pods")"
echo "$native"
log "wasm32 in headless Chromium: the same"
browser="$(node bench/wasm/run-chromium.mjs "$nodes" "$initial" "$pods")"
echo "$browser"
log "wasm32 in node $(node --version): the same"
wasm="$(node bench/wasm/run.mjs scheduling "$nodes" "$initial" "$pods")"
echo "$wasm"

field() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$1" "$2"; }
for other in "$browser" "$wasm"; do
  [ "$(field "$native" placements)" = "$(field "$other" placements)" ] ||
    die "placements differ: native $(field "$native" placements), wasm32 $(field "$other" placements)"
done
log "placements identical: $(field "$native" placements)"
echo "pods/s: native $(field "$native" pods_per_second), wasm32 in Chromium $(field "$browser" pods_per_second), wasm32 in node $(field "$wasm" pods_per_second)"
