#!/usr/bin/env bash
# Builds the wasm32 benchmark module and times it in node: bench/wasm/run.sh [pods] [runs]
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --target wasm32-unknown-unknown
node run.mjs "$@"
