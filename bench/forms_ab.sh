#!/usr/bin/env bash
# The all-in-one against the three-process distributed form (kgstore, the retriever with its own
# KG replica, and a gateway that aligns and answers in its own process: `--alignment=local
# --reasoner=local`), all started once on the same artifacts and kept running, then driven in
# alternation so that drifting machine speed hits every form alike: each round runs
# gateway_loadgen at --clients for --seconds on each, the order rotating every round. Prints one
# line per run (round, form, answers/s, p50 ms, p99 ms) and each round's p50 ratio of every
# three-process form to the all-in-one; quote the medians.
#
#   bench/forms_ab.sh --base=artifacts [--rounds=5] [--seconds=8] [--clients=16] [BIN ...]
#
# With no BIN, one three-process form of IBGR_BIN's (build/bin) binaries. Each BIN given is a
# directory with another build's kgstore, retriever and gateway (copy build/bin aside first):
# their three-process forms all run against IBGR_BIN's all-in-one in the same rounds, for a
# before/after of a change to the distributed form. Ports 5750x (all-in-one), 575N2 / 575N4 /
# 575N5 for three-process form N. Questions and gateway_loadgen as for the other bench/ scripts
# (bench_common.sh).
set -euo pipefail
BASE=artifacts SECONDS_PER_LEVEL=8 CLIENTS=16 ROUNDS=5 REST=() BUILDS=()
for arg in "$@"; do
  case "$arg" in
    --rounds=*) ROUNDS="${arg#*=}" ;;
    --*) REST+=("$arg") ;;
    *) BUILDS+=("$(realpath "$arg")") ;;  # before the cd below
  esac
done
CALLER_DIR="$PWD"
cd "$(dirname "$0")/.."
source bench/bench_common.sh
parse_bench_args "${REST[@]+"${REST[@]}"}"
[[ "$BASE" == /* ]] || BASE="$CALLER_DIR/$BASE"
((${#BUILDS[@]})) || BUILDS=("$(realpath "$BIN")")
if ((${#BUILDS[@]} > 9)); then
  echo "usage: $0 --base=DIR [--rounds=N] [--seconds=S] [--clients=C] [BIN ...] (at most 9)" >&2
  exit 2
fi
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
FORMS=(all-in-one)
declare -A PORT=([all-in-one]=57501)
for n in $(seq 1 "${#BUILDS[@]}"); do
  dir=${BUILDS[$((n - 1))]} base_port=$((57500 + 10 * n))
  form=three-processes
  ((${#BUILDS[@]} == 1)) || form="three-processes#$n"
  start "kgstore$n" "kgstore: ready" "$dir/kgstore" --base="$BASE" --read_only \
    --port=$((base_port + 2)) "${common[@]}"
  start "retriever$n" "retriever: ready" "$dir/retriever" --base="$BASE" \
    --port=$((base_port + 4)) "${common[@]}"
  start "gateway$n" "gateway: ready" "$dir/gateway" --alignment=local --reasoner=local \
    --base="$BASE" --retriever=127.0.0.1:$((base_port + 4)) \
    --kgstore=127.0.0.1:$((base_port + 2)) --port=$((base_port + 5)) "${common[@]}"
  ((${#BUILDS[@]} == 1)) || echo "$form: $dir" >&2
  FORMS+=("$form")
  PORT[$form]=$((base_port + 5))
done

run() {  # port; prints "answers/s p50 p99" of the run
  local row
  row=$("$BIN/gateway_loadgen" --target="127.0.0.1:$1" --clients="$CLIENTS" \
    --seconds="$SECONDS_PER_LEVEL" --questions="$QUESTIONS" | grep -E "^\| $CLIENTS \|")
  awk -F'|' '{ gsub(/ /, ""); print $4, $5, $7 }' <<<"$row"
}
echo "| round | form | answers/s | p50 ms | p99 ms |"
echo "|--:|---|--:|--:|--:|"
for round in $(seq 1 "$ROUNDS"); do
  declare -A p50=()
  shift_by=$(((round - 1) % ${#FORMS[@]}))
  order=("${FORMS[@]:$shift_by}" "${FORMS[@]:0:$shift_by}")
  for form in "${order[@]}"; do
    read -r rate median tail < <(run "${PORT[$form]}")
    p50[$form]=$median
    echo "| $round | $form | $rate | $median | $tail |"
  done
  for form in "${FORMS[@]:1}"; do
    awk -v a="${p50[all-in-one]}" -v t="${p50[$form]}" -v r="$round" -v f="$form" \
      'BEGIN { printf "round %d: p50 %s / all-in-one = %.2f\n", r, f, t / a }' >&2
  done
done
