#!/usr/bin/env bash
# HTTP/JSON vs gRPC on one all-in-one server: starts `ibgraphrag` with both ports and runs
# http_vs_grpc_loadgen (the same questions over each transport, alternating per level). Prints
# its Markdown table and the load average before and after.
#
#   bench/http_bench.sh --base=artifacts [--seconds=10] [--clients=1,4]
#
# The artifacts must exist (`build/bin/ibgr artifacts build --base=...`). Ports 57401/57481.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=artifacts SECONDS_PER_LEVEL=10 CLIENTS=1,4
source bench/bench_common.sh
parse_bench_args "$@"
LOG=$(mktemp /tmp/ibgr-http-bench.XXXXXX.log)
"$BIN/ibgraphrag" --base="$BASE" --host=127.0.0.1 --port=57401 --http_port=57481 \
  --metrics_port=-1 >"$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT
wait_ready "$LOG" "ibgraphrag: ready" $PID
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN/http_vs_grpc_loadgen" --grpc_target=127.0.0.1:57401 --http_port=57481 \
  --clients="$CLIENTS" --seconds="$SECONDS_PER_LEVEL" --questions="$QUESTIONS"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
