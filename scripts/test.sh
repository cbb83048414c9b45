#!/usr/bin/env bash
# Installs what is missing, then runs every test kubeloop has, stopping at the first failure:
#   1. native engine and CLI tests         cargo test -p kubeloop-sim -p kubeloop-cli
#   2. app tests in headless Chromium      cargo test --target wasm32-unknown-unknown -p kubeloop-web
#   3. the release build of the page       trunk build --release
#   4. user journeys in Chromium           Playwright (e2e/) against dist/
# Ends with one line counting every test that ran: "summary: N passed, 0 failed".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
total_start=$SECONDS

timed "setup" "$ROOT/scripts/setup.sh"
cd "$ROOT"

# A clean checkout gains nothing from incremental compilation; it only costs disk.
export CARGO_INCREMENTAL=0

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

timed "native tests (kubeloop-sim, kubeloop-cli)" \
  bash -o pipefail -c 'cargo test -p kubeloop-sim -p kubeloop-cli 2>&1 | tee "$0"' "$logs/native"

timed "wasm tests in headless Chromium (kubeloop-web)" \
  bash -o pipefail -c 'cargo test --target wasm32-unknown-unknown -p kubeloop-web 2>&1 | tee "$0"' "$logs/wasm"

timed "trunk build --release" trunk build --release

# A free loopback port, so parallel runs (other worktrees, CI) never share a server.
E2E_PORT="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
export E2E_PORT
timed "Playwright e2e (port $E2E_PORT)" \
  bash -o pipefail -c 'cd e2e && npx playwright test 2>&1 | tee "$0"' "$logs/e2e"

# cargo: "test result: ok. 12 passed; 0 failed; ..."; Playwright: "  2 passed (3.1s)".
passed="$(
  {
    grep -hoE '^test result: [a-zA-Z]+\. [0-9]+ passed' "$logs/native" "$logs/wasm" | grep -oE '[0-9]+ passed'
    grep -oE '^ +[0-9]+ passed' "$logs/e2e"
  } | awk '{ n += $1 } END { print n + 0 }'
)"
[ "$passed" -gt 0 ] || die "no test ran"
log "all tests passed in $((SECONDS - total_start))s; target/ holds $(du -sh target | cut -f1)"
echo "summary: $passed passed, 0 failed"
