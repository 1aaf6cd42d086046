#!/usr/bin/env bash
# Before/after of two or more builds of the three-process distributed form (kgstore, the
# retriever with its own KG replica, and a gateway that aligns and answers in its own process:
# `--alignment=local --reasoner=local`), all started once on the same artifacts and kept running,
# then driven in alternation (the order reversing every round) so that drifting machine speed
# hits each build alike. Prints one line per run: round, build, answers/s, p50 ms, p99 ms, and the
# CPU milliseconds per answer of the retriever and of the gateway (from /proc/<pid>/stat), the
# figures a change to the retrieve hop moves; quote the medians of the per-round ratios.
#
#   bench/forms_cpu_ab.sh --base=artifacts [--rounds=6] [--seconds=8] [--clients=16] BIN_A BIN_B ...
#
# Each BIN is a directory holding that build's kgstore, retriever and gateway (copy build/bin
# aside first, e.g. /tmp/bin_before). gateway_loadgen comes from IBGR_BIN (build/bin). Ports
# 577N2 / 577N4 / 577N5 for build N. Questions as for the other bench/ scripts (bench_common.sh).
set -euo pipefail
BASE=artifacts SECONDS_PER_LEVEL=8 CLIENTS=16 ROUNDS=6 REST=() BUILDS=()
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
if ((${#BUILDS[@]} < 2 || ${#BUILDS[@]} > 9)); then
  echo "usage: $0 --base=DIR [--rounds=N] [--seconds=S] [--clients=C] BIN_A BIN_B ..." >&2
  exit 2
fi
LOGS=$(mktemp -d /tmp/ibgr-forms-cpu-ab.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap 'cleanup; rm -rf "$LOGS"' EXIT

common=(--host=127.0.0.1 --metrics_port=-1)
declare -A RETRIEVER_PID GATEWAY_PID
port_of() { echo $((57700 + 10 * $1 + $2)); }  # build, 2 kgstore / 4 retriever / 5 gateway
start() {  # log name, ready message, command...; sets STARTED to the pid
  local name=$1 message=$2
  shift 2
  "$@" >"$LOGS/$name.log" 2>&1 &
  STARTED=$!
  PIDS+=("$STARTED")
  wait_ready "$LOGS/$name.log" "$message" "$STARTED"
}
for i in "${!BUILDS[@]}"; do
  dir=${BUILDS[$i]} kg=$(port_of "$i" 2) ret=$(port_of "$i" 4) gw=$(port_of "$i" 5)
  start "kgstore$i" "kgstore: ready" "$dir/kgstore" --base="$BASE" --read_only --port="$kg" \
    "${common[@]}"
  start "retriever$i" "retriever: ready" "$dir/retriever" --base="$BASE" --port="$ret" \
    "${common[@]}"
  RETRIEVER_PID[$i]=$STARTED
  start "gateway$i" "gateway: ready" "$dir/gateway" --alignment=local --reasoner=local \
    --base="$BASE" --retriever="127.0.0.1:$ret" --kgstore="127.0.0.1:$kg" --port="$gw" \
    "${common[@]}"
  GATEWAY_PID[$i]=$STARTED
  "$BIN/gateway_loadgen" --target="127.0.0.1:$gw" --clients="$CLIENTS" --seconds=3 \
    --questions="$QUESTIONS" >/dev/null  # warm-up
done

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }  # user + system, in clock ticks
hz=$(getconf CLK_TCK)
echo "| round | build | answers/s | p50 ms | p99 ms | retriever CPU ms/answer | gateway CPU ms/answer |"
echo "|--:|---|--:|--:|--:|--:|--:|"
for round in $(seq 1 "$ROUNDS"); do
  order=$(seq 0 $((${#BUILDS[@]} - 1)))
  ((round % 2)) || order=$(seq $((${#BUILDS[@]} - 1)) -1 0)
  for i in $order; do
    r0=$(ticks "${RETRIEVER_PID[$i]}") g0=$(ticks "${GATEWAY_PID[$i]}")
    row=$("$BIN/gateway_loadgen" --target="127.0.0.1:$(port_of "$i" 5)" --clients="$CLIENTS" \
      --seconds="$SECONDS_PER_LEVEL" --questions="$QUESTIONS" | grep -E "^\| $CLIENTS \|")
    r1=$(ticks "${RETRIEVER_PID[$i]}") g1=$(ticks "${GATEWAY_PID[$i]}")
    awk -F'|' -v r="$round" -v b="${BUILDS[$i]}" -v dr=$((r1 - r0)) -v dg=$((g1 - g0)) -v hz="$hz" \
      '{ gsub(/ /, ""); printf "| %d | %s | %s | %s | %s | %.3f | %.3f |\n", r, b, $4, $5, $7,
         1000 * dr / hz / $3, 1000 * dg / hz / $3 }' <<<"$row"
  done
done
