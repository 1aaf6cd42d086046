#!/usr/bin/env bash
# The whole test suite on a fresh machine: install dependencies, build everything, lint the protos,
# run every ctest test except those labelled gpu (they need CUDA; run with IBGR_TEST_GPU=1).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
scripts/lint_protos.sh
# The interop test's Node client (@grpc/grpc-js, pinned by package-lock.json).
if [[ ! -d tools/grpc-js-client/node_modules/@grpc/grpc-js ]]; then
  (cd tools/grpc-js-client && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
exclude=(-LE gpu)
[[ "${IBGR_TEST_GPU:-0}" == 1 ]] && exclude=()
ctest --test-dir build --output-on-failure -j "${IBGR_TEST_JOBS:-2}" "${exclude[@]}" "$@"
