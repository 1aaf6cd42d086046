#!/usr/bin/env bash
# Start-up time and resident memory of the retriever with and without LibTorch: the CPU build
# (`retriever`, no LibTorch) against the LibTorch build of the same server (`retriever_torch
# --device=cpu`), on the same artifacts, alternating starts. Time = exec to the "retriever: ready"
# log line; RSS read then.
#
#   bench/startup_libtorch.sh --base=artifacts [--seconds=N (starts per binary, default 3)]
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=artifacts SECONDS_PER_LEVEL=3 CLIENTS=1
source bench/bench_common.sh
parse_bench_args "$@"
LOG=$(mktemp /tmp/ibgr-startup.XXXXXX)
trap 'rm -f "$LOG"' EXIT

one() {  # binary
  : >"$LOG"
  local t0 t1 pid rss
  t0=$(date +%s.%N)
  "$BIN/$1" --base="$BASE" --device=cpu --host=127.0.0.1 --port=0 --metrics_port=-1 >"$LOG" 2>&1 &
  pid=$!
  wait_ready "$LOG" "retriever: ready" "$pid"
  t1=$(date +%s.%N)
  rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  printf '| %s | %.2f s | %d MiB |\n' "$1" "$(echo "$t1 - $t0" | bc)" $((rss / 1024))
}

echo "| binary | start-up to ready | RSS at ready |"
echo "|---|--:|--:|"
for _ in $(seq 1 "$SECONDS_PER_LEVEL"); do one retriever; one retriever_torch; done
