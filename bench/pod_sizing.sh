#!/usr/bin/env bash
# What each pod needs: resident memory at rest and at its peak under load, and the CPU it burns
# while the gateway answers `--clients` callers, for the five services as separate processes on
# loopback (the Kubernetes form: the retriever with its own KG replica; then the same with the
# gateway answering itself, `--reasoner=local`, the prod-local-reasoner overlay's four pods; with
# the gateway aligning too, `--alignment=local`, the prod-local-pipeline overlay's three; then with
# subgraphs from kgstore over gRPC) and for the all-in-one. Prints one Markdown table per form
# (docs/operations.md "Sizing" reads them).
#
#   bench/pod_sizing.sh --base=artifacts [--seconds=20] [--clients=16]
#
# Memory: /proc/PID/status VmRSS after start-up (idle) and VmHWM after the load (peak). CPU:
# utime + stime from /proc/PID/stat over the load window, in cores (CPU seconds / wall seconds).
# The artifacts must exist (`build/bin/ibgr artifacts build --base=...`). Ports 5740x/5741x.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=artifacts SECONDS_PER_LEVEL=20 CLIENTS=16
source bench/bench_common.sh
parse_bench_args "$@"
LOGS=$(mktemp -d /tmp/ibgr-pod-sizing.XXXXXX)
PIDS=()
NAMES=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
TICKS=$(getconf CLK_TCK)

mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }
status_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

start() {  # name, ready message, command...
  local name=$1 message=$2
  shift 2
  "$@" >"$LOGS/$name.log" 2>&1 &
  PIDS+=($!)
  NAMES+=("$name")
  wait_ready "$LOGS/$name.log" "$message" "$!"
}

measure() {  # label, gateway port
  local label=$1 port=$2 i
  local -a idle before after
  for i in "${!PIDS[@]}"; do
    idle[$i]=$(status_kib "${PIDS[$i]}" VmRSS)
    before[$i]=$(cpu_ticks "${PIDS[$i]}")
  done
  local started=$SECONDS
  "$BIN/gateway_loadgen" --target="127.0.0.1:$port" --clients="$CLIENTS" \
    --seconds="$SECONDS_PER_LEVEL" --questions="$QUESTIONS" >"$LOGS/load-$port.md"
  local wall=$((SECONDS - started))
  for i in "${!PIDS[@]}"; do after[$i]=$(cpu_ticks "${PIDS[$i]}"); done
  echo "### $label: $CLIENTS clients for ${SECONDS_PER_LEVEL} s (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "| process | RSS at rest MiB | peak RSS MiB | CPU under load (cores) |"
  echo "|---|--:|--:|--:|"
  for i in "${!PIDS[@]}"; do
    printf '| %s | %s | %s | %s |\n' "${NAMES[$i]}" "$(mib "${idle[$i]}")" \
      "$(mib "$(status_kib "${PIDS[$i]}" VmHWM)")" \
      "$(awk -v t=$((after[i] - before[i])) -v hz="$TICKS" -v w="$wall" \
        'BEGIN { printf "%.2f", t / hz / (w > 0 ? w : 1) }')"
  done
  echo
  grep -E '^\|' "$LOGS/load-$port.md"
  echo
}

common=(--host=127.0.0.1 --metrics_port=-1)
distributed() {  # label, in the gateway (none|reasoner|both), retriever's KG flags...
  local label=$1 in_gateway=$2
  shift 2
  start kgstore "kgstore: ready" "$BIN/kgstore" --base="$BASE" --read_only --port=57402 "${common[@]}"
  local gateway_flags=(--alignment=local --reasoner=local --base="$BASE")
  if [[ "$in_gateway" != both ]]; then
    start alignment "alignment: ready" "$BIN/alignment" --base="$BASE" --port=57403 "${common[@]}"
    gateway_flags=(--alignment=127.0.0.1:57403 --reasoner=local --base="$BASE")
  fi
  if [[ "$in_gateway" == none ]]; then
    start reasoner "reasoner: ready" "$BIN/reasoner" --base="$BASE" --port=57405 "${common[@]}"
    gateway_flags=(--alignment=127.0.0.1:57403 --reasoner=127.0.0.1:57405)
  fi
  start retriever "retriever: ready" "$BIN/retriever" --base="$BASE" "$@" --port=57404 "${common[@]}"
  start gateway "gateway: ready" "$BIN/gateway" --retriever=127.0.0.1:57404 "${gateway_flags[@]}" \
    --kgstore=127.0.0.1:57402 --port=57401 "${common[@]}"
  measure "$label" 57401
  cleanup
  PIDS=()
  NAMES=()
}
# The manifests' form: the retriever reads its own KG replica; the same with the gateway
# answering itself, then aligning too; then the retriever over kgstore.
distributed "distributed, retriever with its own KG replica (five processes on loopback)" none
distributed "distributed, KG replica, the gateway answering itself (--reasoner=local)" reasoner
distributed "distributed, KG replica, the gateway aligning and answering (--alignment=local --reasoner=local)" both
distributed "distributed, retriever fetching subgraphs from kgstore over gRPC" none \
  --kgstore=127.0.0.1:57402

start ibgraphrag "ibgraphrag: ready" "$BIN/ibgraphrag" --base="$BASE" --host=127.0.0.1 \
  --port=57411 --metrics_port=-1
measure "all-in-one (ibgraphrag)" 57411
rm -rf "$LOGS"
