#!/usr/bin/env bash
# Answer-RPC load on the embedded KG with the extractive backend, in every deployment form, in one
# sitting: the all-in-one `ibgraphrag`; the five binaries as separate processes on loopback with
# the retriever reading its own read-only KG replica (the form the manifests run); and the same
# with the retriever fetching subgraphs from kgstore over gRPC; the replica form with the gateway
# answering in its own process (`gateway --reasoner=local`: four processes, two network calls per
# answer instead of three); and with the gateway aligning there too (`--alignment=local`: three
# processes, the retriever the one call). Prints one Markdown table per form
# (gateway_loadgen's columns) and the load average. Each form first answers the same 200 questions
# one by one; the script says whether the distributed forms' answers equal the all-in-one's.
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

run_load() {  # label, port, answers file
  echo "### $1 (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$BIN/gateway_loadgen" --target="127.0.0.1:$2" --clients="$CLIENTS" \
    --seconds="$SECONDS_PER_LEVEL" --questions="$QUESTIONS" --answers_out="$3"
  echo
}

same_answers() {  # label, answers file
  local n diff
  n=$(wc -l <"$LOGS/answers-all-in-one.txt")
  diff=$(diff "$LOGS/answers-all-in-one.txt" "$2" | grep -c '^<' || true)
  echo "$1: $((n - diff)) of $n answers identical to the all-in-one's"
  echo
  ((diff == 0)) || KEEP=1
}
KEEP=0

"$BIN/ibgraphrag" --base="$BASE" --host=127.0.0.1 --port=57201 --metrics_port=-1 \
  >"$LOGS/ibgraphrag.log" 2>&1 &
PIDS+=($!)
wait_ready "$LOGS/ibgraphrag.log" "ibgraphrag: ready"
run_load "all-in-one (ibgraphrag)" 57201 "$LOGS/answers-all-in-one.txt"
cleanup; PIDS=()

run_distributed() {  # label, answers file, in the gateway (none|reasoner|both), retriever's KG flags...
  local label="$1" answers="$2" in_gateway="$3"
  shift 3
  common=(--host=127.0.0.1 --metrics_port=-1)
  "$BIN/kgstore" --base="$BASE" --read_only --port=57302 "${common[@]}" >"$LOGS/kgstore.log" 2>&1 &
  PIDS+=($!)
  local gateway_flags=(--alignment=127.0.0.1:57303 --reasoner=127.0.0.1:57305)
  if [[ "$in_gateway" == both ]]; then
    gateway_flags=(--alignment=local --reasoner=local --base="$BASE")
  else
    "$BIN/alignment" --base="$BASE" --port=57303 "${common[@]}" >"$LOGS/alignment.log" 2>&1 &
    PIDS+=($!)
  fi
  if [[ "$in_gateway" == reasoner ]]; then
    gateway_flags=(--alignment=127.0.0.1:57303 --reasoner=local --base="$BASE")
  elif [[ "$in_gateway" == none ]]; then
    "$BIN/reasoner" --base="$BASE" --port=57305 "${common[@]}" >"$LOGS/reasoner.log" 2>&1 &
    PIDS+=($!)
  fi
  wait_ready "$LOGS/kgstore.log" "kgstore: ready"
  "$BIN/retriever" --base="$BASE" "$@" --port=57304 "${common[@]}" >"$LOGS/retriever.log" 2>&1 &
  PIDS+=($!)
  if [[ "$in_gateway" != both ]]; then wait_ready "$LOGS/alignment.log" "alignment: ready"; fi
  if [[ "$in_gateway" == none ]]; then wait_ready "$LOGS/reasoner.log" "reasoner: ready"; fi
  wait_ready "$LOGS/retriever.log" "retriever: ready"
  "$BIN/gateway" --retriever=127.0.0.1:57304 "${gateway_flags[@]}" \
    --kgstore=127.0.0.1:57302 --port=57301 "${common[@]}" >"$LOGS/gateway.log" 2>&1 &
  PIDS+=($!)
  wait_ready "$LOGS/gateway.log" "gateway: ready"
  run_load "$label" 57301 "$answers"
  same_answers "$label" "$answers"
  cleanup; PIDS=()
}

run_distributed "distributed, retriever with its own KG replica (five processes on loopback)" \
  "$LOGS/answers-replica.txt" none
run_distributed "distributed, KG replica, the gateway answering itself (--reasoner=local)" \
  "$LOGS/answers-replica-local.txt" reasoner
run_distributed "distributed, KG replica, the gateway aligning and answering (--alignment=local --reasoner=local)" \
  "$LOGS/answers-replica-local-both.txt" both
run_distributed "distributed, retriever fetching subgraphs from kgstore over gRPC" \
  "$LOGS/answers-kgstore.txt" none --kgstore=127.0.0.1:57302
if ((KEEP)); then echo "answers differ: kept in $LOGS (answers-*.txt, one response per line)"
else rm -rf "$LOGS"; fi
