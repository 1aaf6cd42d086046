#!/usr/bin/env bash
# The suite's main job on a fresh machine: install dependencies, build, build the artifacts from
# the real data where missing (KG snapshot, alignment bundle, retriever model, confidence
# calibration; a few minutes the first time), and serve the whole suite in one process
# (`ibgraphrag`: gateway on :50051, metrics on :9091) in the foreground (Ctrl-C drains).
#
#   scripts/start.sh [extra ibgraphrag flags, e.g. --port=50051 --api_keys_file=keys]
#
# Environment: IBGR_DATA_DIR (default ../shared/data), IBGR_ARTIFACTS (default ./artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh --target ibgr retriever_train ibgraphrag
ARTIFACTS="${IBGR_ARTIFACTS:-$PWD/artifacts}"
DATA_DIR="${IBGR_DATA_DIR:-$PWD/../shared/data}"
build/bin/ibgr artifacts build --base="$ARTIFACTS" --data_dir="$DATA_DIR"
# Calibrated extractive confidence and abstention (~20 s the first time; refitted when the
# artifacts or the signal semantics changed). A failed fit is not fatal: serve uncalibrated.
CALIBRATION=()
if ! IBGR_DATA_DIR="$DATA_DIR" scripts/fit_calibration.sh --base="$ARTIFACTS" --if_missing; then
  echo "warning: calibration fit failed; serving uncalibrated confidence (--calibration=none)" >&2
  CALIBRATION=(--calibration=none)
fi
echo "starting ibgraphrag on :50051 (metrics :9091); try:" \
  "build/bin/ibgr ask --gateway=127.0.0.1:50051 \"Which drug treats asthma?\""
exec build/bin/ibgraphrag --base="$ARTIFACTS" "${CALIBRATION[@]}" "$@"
