#!/usr/bin/env bash
# buf lint over protos/ with the pinned buf from npm (tools/proto-lint/package.json).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x tools/proto-lint/node_modules/.bin/buf ]]; then
  (cd tools/proto-lint && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi
tools/proto-lint/node_modules/.bin/buf lint
echo "buf lint: ok ($(find protos -name '*.proto' | wc -l) files)"
