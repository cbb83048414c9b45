#!/usr/bin/env bash
# The envelope benchmark (issue 13): a full cluster (kubelets, kube-proxy, controllers,
# scheduler) with Deployments totalling PODS pods, to all Running and Ready, natively and
# in wasm32 (headless Debian Chromium when scripts/setup.sh has installed it and
# Playwright, else node's V8) in one run; checks that both made the same placements.
# Usage: ./scripts/bench-envelope.sh [NODES PODS]   (default 1000 30000)
# Builds with cargo only; installs nothing (scripts/setup.sh does).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
nodes="${1:-1000}" pods="${2:-30000}"
cd "$ROOT"
target="${CARGO_TARGET_DIR:-$ROOT/target}"

timed "native build (bench-native)" cargo build --quiet --profile bench-native -p kubeloop-cli
# bench/wasm is its own workspace; its runners read bench/wasm/target.
timed "wasm32 build" bash -c 'cd bench/wasm && CARGO_TARGET_DIR="$PWD/target" cargo build --quiet --release --target wasm32-unknown-unknown'

log "native: $nodes nodes, $pods pods"
native="$("$target/bench-native/kubeloop" bench envelope --nodes "$nodes" --pods "$pods")"
echo "$native"
if [ -x /usr/bin/chromium ] && [ -d e2e/node_modules/@playwright/test ]; then
  log "wasm32 in headless Chromium: the same"
  wasm="$(node bench/wasm/run-chromium-envelope.mjs "$nodes" "$pods")"
else
  log "no Chromium or Playwright (scripts/setup.sh installs them): wasm32 in node $(node --version)"
  wasm="$(node bench/wasm/run.mjs envelope "$nodes" "$pods")"
fi
echo "$wasm"

field() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$1" "$2"; }
[ "$(field "$native" placements)" = "$(field "$wasm" placements)" ] ||
  die "placements differ: native $(field "$native" placements), wasm32 $(field "$wasm" placements)"
log "placements identical: $(field "$native" placements)"
echo "to all Ready: native $(field "$native" seconds) s ($(field "$native" cpu_seconds) CPU-s, peak RSS $(field "$native" peak_rss_bytes) B), wasm32 $(field "$wasm" seconds) s (memory $(field "$wasm" wasm_memory_bytes) B)"
