#!/usr/bin/env bash
# Installs what is missing, then serves the playground with `trunk serve` at
# http://127.0.0.1:8080/, rebuilt on every change. By default it serves the release build
# (the one the benchmarks measure: a debug build is ~30 MB of wasm and many times slower);
# `--dev` serves a debug build, quicker to rebuild while working on the page. Other
# arguments go to trunk, e.g. `./scripts/serve.sh --port 9000`. It builds into
# target/trunk-serve, so it never touches dist/, the release build that the e2e tests and
# benchmark use. Plain `trunk serve` works too (a debug build into dist/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
profile=(--release)
args=()
for a in "$@"; do
  case "$a" in
    --dev) profile=() ;;
    --release) ;;
    *) args+=("$a") ;;
  esac
done
exec trunk serve --dist target/trunk-serve "${profile[@]}" "${args[@]}"
