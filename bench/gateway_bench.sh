#!/usr/bin/env bash
# Answer-RPC load on the embedded KG with the extractive backend, in both deployment forms, in one
# sitting: the all-in-one `ibgraphrag`, then the five binaries as separate processes on loopback.
# Prints one Markdown table per form (gateway_loadgen's columns) and the load average.
#
#   bench/gateway_bench.sh --base=artifacts [--seconds=10] [--clients=1,16]
#
# The artifacts must exist (`build/bin/ibgr artifacts build --base=...`). Ports 5720x/5730x.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=artifacts SECONDS_PER_LEVEL=10 CLIENTS=1,16
source bench/bench_common.sh
parse_bench_args "$@"
LOGS=$(mktemp -d /tmp/ibgr-gateway-bench.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

run_load() {  # label, port
  echo "### $1 (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$BIN/gateway_loadgen" --target="127.0.0.1:$2" --clients="$CLIENTS" \
    --seconds="$SECONDS_PER_LEVEL" --questions="$QUESTIONS"
  echo
}

"$BIN/ibgraphrag" --base="$BASE" --host=127.0.0.1 --port=57201 --metrics_port=-1 \
  >"$LOGS/ibgraphrag.log" 2>&1 &
PIDS+=($!)
wait_ready "$LOGS/ibgraphrag.log" "ibgraphrag: ready"
run_load "all-in-one (ibgraphrag)" 57201
cleanup; PIDS=()

common=(--host=127.0.0.1 --metrics_port=-1)
"$BIN/kgstore" --base="$BASE" --read_only --port=57302 "${common[@]}" >"$LOGS/kgstore.log" 2>&1 &
PIDS+=($!)
"$BIN/alignment" --base="$BASE" --port=57303 "${common[@]}" >"$LOGS/alignment.log" 2>&1 &
PIDS+=($!)
"$BIN/reasoner" --port=57305 "${common[@]}" >"$LOGS/reasoner.log" 2>&1 &
PIDS+=($!)
wait_ready "$LOGS/kgstore.log" "kgstore: ready"
"$BIN/retriever" --base="$BASE" --kgstore=127.0.0.1:57302 --port=57304 "${common[@]}" \
  >"$LOGS/retriever.log" 2>&1 &
PIDS+=($!)
wait_ready "$LOGS/alignment.log" "alignment: ready"
wait_ready "$LOGS/reasoner.log" "reasoner: ready"
wait_ready "$LOGS/retriever.log" "retriever: ready"
"$BIN/gateway" --alignment=127.0.0.1:57303 --retriever=127.0.0.1:57304 \
  --reasoner=127.0.0.1:57305 --kgstore=127.0.0.1:57302 --port=57301 "${common[@]}" \
  >"$LOGS/gateway.log" 2>&1 &
PIDS+=($!)
wait_ready "$LOGS/gateway.log" "gateway: ready"
run_load "distributed (five processes on loopback)" 57301
rm -rf "$LOGS"
