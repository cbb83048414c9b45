#!/usr/bin/env bash
# The scheduler_perf SchedulingBasic workload through the whole engine, natively and in
# wasm32 (node, V8) in one run; checks that both made the same placements.
# Usage: ./scripts/bench-scheduling.sh [NODES INITIAL PODS]   (default 5000 1000 10000)
# Downloads nothing: needs cargo with the wasm32-unknown-unknown target, and node.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
nodes="${1:-5000}" initial="${2:-1000}" pods="${3:-10000}"
cd "$ROOT"

timed "native build (bench-native)" cargo build --quiet --profile bench-native -p kubeloop-cli
timed "wasm32 build" bash -c 'cd bench/wasm && cargo build --quiet --release --target wasm32-unknown-unknown'

log "native: $nodes nodes, $initial initial pods, $pods measured pods"
native="$(target/bench-native/kubeloop bench scheduling-basic --nodes "$nodes" --initial "$initial" --pods "$pods")"
echo "$native"
log "wasm32 (node $(node --version)): the same"
wasm="$(node bench/wasm/run.mjs scheduling "$nodes" "$initial" "$pods")"
echo "$wasm"

field() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$1" "$2"; }
if [ "$(field "$native" placements)" = "$(field "$wasm" placements)" ]; then
  log "placements identical: $(field "$native" placements)"
else
  die "placements differ: native $(field "$native" placements), wasm $(field "$wasm" placements)"
fi
echo "pods/s: native $(field "$native" pods_per_second), wasm32 $(field "$wasm" pods_per_second)"
