#!/usr/bin/env bash
# Builds the wasm32 benchmark module and times it in node:
#   bench/wasm/run.sh [pods] [runs]                          apiserver list and writes
#   bench/wasm/run.sh scheduling [nodes] [initial] [pods]    SchedulingBasic
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --target wasm32-unknown-unknown
node run.mjs "$@"
