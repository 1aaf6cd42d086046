#!/usr/bin/env bash
# The suite's main job on a fresh machine: install dependencies, build, build the embedded default
# KG from the real data (once), and serve it with kgstore in the foreground (Ctrl-C drains).
#
#   scripts/start.sh [extra kgstore flags, e.g. --port=50052 --metrics_port=9092]
#
# Environment: IBGR_DATA_DIR (default ../shared/data), IBGR_ARTIFACTS (default ./artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh --target ibgr kgstore
ARTIFACTS="${IBGR_ARTIFACTS:-$PWD/artifacts}"
DATA_DIR="${IBGR_DATA_DIR:-$PWD/../shared/data}"
build/bin/ibgr kg build --if_missing --base="$ARTIFACTS" --data_dir="$DATA_DIR"
echo "starting kgstore on :50052 (metrics :9092); try: build/bin/ibgr kg stats --target=127.0.0.1:50052"
exec build/bin/kgstore --base="$ARTIFACTS" "$@"
