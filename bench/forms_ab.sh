#!/usr/bin/env bash
# The all-in-one against the three-process distributed form (kgstore, the retriever with its own
# KG replica, and a gateway that aligns and answers in its own process: `--alignment=local
# --reasoner=local`), both started once on the same artifacts and kept running, then driven in
# alternation so that drifting machine speed hits both alike: each round runs gateway_loadgen at
# --clients for --seconds on each, the order flipping every round. Prints one line per run
# (round, form, answers/s, p50 ms, p99 ms) and the per-round p50 ratio; quote the medians.
#
#   bench/forms_ab.sh --base=artifacts [--rounds=5] [--seconds=8] [--clients=16]
#
# Ports 5750x. Questions and gateway_loadgen as for the other bench/ scripts (bench_common.sh).
set -euo pipefail
BASE=artifacts SECONDS_PER_LEVEL=8 CLIENTS=16 ROUNDS=5 REST=()
for arg in "$@"; do
  case "$arg" in
    --rounds=*) ROUNDS="${arg#*=}" ;;
    *) REST+=("$arg") ;;
  esac
done
cd "$(dirname "$0")/.."
source bench/bench_common.sh
parse_bench_args "${REST[@]+"${REST[@]}"}"
LOGS=$(mktemp -d /tmp/ibgr-forms-ab.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap 'cleanup; rm -rf "$LOGS"' EXIT

common=(--host=127.0.0.1 --metrics_port=-1)
start() {  # name, ready message, command...
  local name=$1 message=$2
  shift 2
  "$@" >"$LOGS/$name.log" 2>&1 &
  PIDS+=($!)
  wait_ready "$LOGS/$name.log" "$message" "$!"
}
start ibgraphrag "ibgraphrag: ready" "$BIN/ibgraphrag" --base="$BASE" --port=57501 "${common[@]}"
start kgstore "kgstore: ready" "$BIN/kgstore" --base="$BASE" --read_only --port=57502 "${common[@]}"
start retriever "retriever: ready" "$BIN/retriever" --base="$BASE" --port=57504 "${common[@]}"
start gateway "gateway: ready" "$BIN/gateway" --alignment=local --reasoner=local --base="$BASE" \
  --retriever=127.0.0.1:57504 --kgstore=127.0.0.1:57502 --port=57505 "${common[@]}"

run() {  # round, form, port; prints "answers/s p50 p99" of the run
  local row
  row=$("$BIN/gateway_loadgen" --target="127.0.0.1:$3" --clients="$CLIENTS" \
    --seconds="$SECONDS_PER_LEVEL" --questions="$QUESTIONS" | grep -E "^\| $CLIENTS \|")
  awk -F'|' '{ gsub(/ /, ""); print $4, $5, $7 }' <<<"$row"
}
echo "| round | form | answers/s | p50 ms | p99 ms |"
echo "|--:|---|--:|--:|--:|"
for round in $(seq 1 "$ROUNDS"); do
  forms=(all-in-one three-processes)
  ((round % 2)) || forms=(three-processes all-in-one)
  declare -A p50=()
  for form in "${forms[@]}"; do
    port=57501
    [[ "$form" == three-processes ]] && port=57505
    read -r rate median tail < <(run "$round" "$form" "$port")
    p50[$form]=$median
    echo "| $round | $form | $rate | $median | $tail |"
  done
  awk -v a="${p50[all-in-one]}" -v t="${p50[three-processes]}" -v r="$round" \
    'BEGIN { printf "round %d: p50 three processes / all-in-one = %.2f\n", r, t / a }' >&2
done
