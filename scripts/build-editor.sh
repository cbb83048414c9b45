#!/usr/bin/env bash
# Builds the page's code editor: CodeMirror 6 bundled by esbuild into one ES module,
# codemirror/dist/kubeloop-editor.js, which the wasm imports (src/ui/codemirror.rs).
# Offline: `npm ci` from codemirror/package-lock.json (again only when the lock file
# changed), then esbuild over node_modules. Run by scripts/setup.sh and by trunk's
# pre_build hook (Trunk.toml), so `trunk build` and `trunk serve` always have it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT/codemirror"

lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
stamp=node_modules/.kubeloop-lock-sha256
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_sum" ]; then
  log "npm ci (codemirror/)"
  npm ci --no-audit --no-fund --prefer-offline
  echo "$lock_sum" >"$stamp"
fi
# Rebuilt only when an input is newer than the bundle, so cargo (which tracks the file)
# does not rebuild the wasm for nothing.
out=dist/kubeloop-editor.js
if [ ! -f "$out" ] || [ -n "$(find src build.mjs package-lock.json -newer "$out" -print -quit)" ]; then
  node build.mjs
fi
