#!/usr/bin/env bash
# Installs what is missing, then serves the playground with `trunk serve`
# (http://127.0.0.1:8080/, rebuilt on every change). Extra arguments go to trunk,
# e.g. `./scripts/serve.sh --port 9000 --release`. It builds into target/trunk-serve, so
# it never touches dist/, the release build that the e2e tests and benchmark use.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
exec trunk serve --dist target/trunk-serve "$@"
