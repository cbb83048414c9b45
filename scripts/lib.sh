# shellcheck shell=bash
# Shared by the scripts in this folder: repo root, PATH for the pinned tools, helpers.
# Source it; don't run it.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
# wasm-opt comes from the npm package binaryen in e2e/node_modules (see Trunk.toml).
export PATH="$ROOT/e2e/node_modules/.bin:$CARGO_BIN:$PATH"
# wasm-bindgen-test-runner drives Debian's Chromium through this driver (see webdriver.json).
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
# Nothing may download a browser: Playwright uses /usr/bin/chromium.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

TRUNK_VERSION="0.21.14"
BINARYEN_VERSION="132"

if [ -t 2 ]; then
  log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
else
  log() { printf '==> %s\n' "$*" >&2; }
fi
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The wasm-bindgen version locked in Cargo.lock; wasm-bindgen-cli must match it exactly.
wasm_bindgen_lock_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}

# Value of `key = "value"` under [tools] in Trunk.toml.
trunk_tool_pin() {
  awk -v key="$1" '
    /^\[/ { in_tools = ($0 == "[tools]") }
    in_tools && $1 == key { gsub(/"/, "", $3); print $3; exit }
  ' "$ROOT/Trunk.toml"
}

# Runs "$@" and reports how long it took.
timed() {
  local name="$1"; shift
  local start=$SECONDS
  log "$name"
  "$@"
  log "$name: done in $((SECONDS - start))s"
}
