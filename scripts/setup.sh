#!/usr/bin/env bash
# Installs everything kubeloop's build, serve and tests need, skipping what is already
# there at the right version. Needs rustup, Node.js (20+) with npm, and apt (Debian).
# Nothing here downloads a prebuilt binary: tools come from crates.io, npm and apt.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }
need rustup "install Rust with rustup"
need cargo "install Rust with rustup"
need node "install Node.js 20 or newer with npm"
need npm "install Node.js 20 or newer with npm"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js $node_major is too old: Playwright needs 20 or newer"

# 1. The wasm32 target for the toolchain this repo builds with.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# 2. trunk, built from crates.io (0.22 needs a newer rustc than ours). ~7 min on 2 cores.
if [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ]; then
  log "cargo install trunk $TRUNK_VERSION (takes several minutes)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# 3. wasm-bindgen-cli, exactly the wasm-bindgen version in Cargo.lock (the wasm's glue
#    and the CLI must agree). Not --locked: its lockfile pins crates our rustc can't build.
wb_version="$(wasm_bindgen_lock_version)"
[ -n "$wb_version" ] || die "no wasm-bindgen in Cargo.lock"
wb_pin="$(trunk_tool_pin wasm_bindgen)"
[ "$wb_pin" = "$wb_version" ] ||
  die "Trunk.toml pins wasm_bindgen = \"$wb_pin\" but Cargo.lock has $wb_version: update Trunk.toml"
if [ "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" != "$wb_version" ] ||
  [ "$(wasm-bindgen-test-runner --version 2>/dev/null | cut -d' ' -f2)" != "$wb_version" ]; then
  log "cargo install wasm-bindgen-cli $wb_version (takes a few minutes)"
  cargo install wasm-bindgen-cli --version "$wb_version" --force
fi

# 4. npm packages: Playwright (no browser download) and binaryen's wasm-opt.
#    `npm ci` again whenever package-lock.json changed since the last install.
lock_sum="$(sha256sum e2e/package-lock.json | cut -d' ' -f1)"
stamp=e2e/node_modules/.kubeloop-lock-sha256
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ]; then
  log "npm ci (e2e/)"
  (cd e2e && npm ci --no-audit --no-fund)
  echo "$lock_sum" >"$stamp"
fi
opt_pin="$(trunk_tool_pin wasm_opt)"
[ "$opt_pin" = "version_$BINARYEN_VERSION" ] ||
  die "Trunk.toml pins wasm_opt = \"$opt_pin\" but scripts/lib.sh expects version_$BINARYEN_VERSION"
wasm-opt --version | grep -q "(version_$BINARYEN_VERSION)" ||
  die "wasm-opt on PATH is $(command -v wasm-opt) ($(wasm-opt --version)); expected binaryen $BINARYEN_VERSION from e2e/node_modules"

# 4b. The code editor's npm packages (CodeMirror, esbuild) and its bundle.
"$ROOT/scripts/build-editor.sh"

# 5. Debian's Chromium and its ChromeDriver, for wasm-bindgen-test and Playwright.
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  log "apt-get install chromium chromium-driver"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    chromium chromium-driver fonts-dejavu-core
fi
# A CJK-capable font, so the 简体中文 page's screenshots show glyphs, not boxes.
if ! dpkg -s fonts-wqy-microhei >/dev/null 2>&1; then
  log "apt-get install fonts-wqy-microhei"
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fonts-wqy-microhei
fi
chromium_major="$(/usr/bin/chromium --version 2>/dev/null | grep -oE '[0-9]+' | head -1)"
driver_major="$(/usr/bin/chromedriver --version 2>/dev/null | grep -oE '[0-9]+' | head -1)"
[ "$chromium_major" = "$driver_major" ] ||
  die "chromium $chromium_major and chromedriver $driver_major differ: apt-get install --only-upgrade chromium chromium-driver"

log "setup: trunk $TRUNK_VERSION, wasm-bindgen $wb_version, binaryen $BINARYEN_VERSION, chromium $chromium_major: ready"
