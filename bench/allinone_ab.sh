#!/usr/bin/env bash
# Before/after throughput of two or more `ibgraphrag` builds on one machine, alternated so that
# drifting machine speed hits each build alike: for each round, each binary in turn is started on
# the same artifacts, warmed up for 3 s, then driven by gateway_loadgen at --clients for --seconds.
# Prints one line per run (round, binary[@base][+flags], answers/s, p50 ms, p99 ms, and the
# server's CPU ms per answer from /proc/<pid>/stat, a figure less sensitive than answers/s to the
# load generator sharing the cores); quote the medians.
#
#   bench/allinone_ab.sh --base=artifacts [--rounds=5] [--seconds=8] [--clients=16] BIN_A BIN_B ...
#
# Copy each build's build/bin/ibgraphrag aside first (e.g. /tmp/aio_before, /tmp/aio_after).
# BIN@BASE runs that binary on its own artifacts instead of --base (a change that rebuilds the KG
# or the model: /tmp/aio_before@/tmp/art_before /tmp/aio_after@/tmp/art_after).
# BIN+FLAGS (after any @BASE) starts it with extra flags, comma-separated: one binary against
# itself with another setting, e.g. build/bin/ibgraphrag+--inprocess_calls=grpc build/bin/ibgraphrag.
# Port 57211. Questions and gateway_loadgen as for the other bench/ scripts (bench_common.sh).
set -euo pipefail
BASE=artifacts SECONDS_PER_LEVEL=8 CLIENTS=16 ROUNDS=5 BINS=() REST=()
for arg in "$@"; do
  case "$arg" in
    --rounds=*) ROUNDS="${arg#*=}" ;;
    --*) REST+=("$arg") ;;
    *)
      flags="" spec="$arg"
      [[ "$spec" == *+* ]] && flags="+${spec#*+}" spec="${spec%%+*}"
      if [[ "$spec" == *@* ]]; then  # realpath before the cd below
        BINS+=("$(realpath "${spec%%@*}")@$(realpath "${spec#*@}")$flags")
      else
        BINS+=("$(realpath "$spec")$flags")
      fi
      ;;
  esac
done
((${#BINS[@]} >= 2)) || { echo "allinone_ab: name at least two ibgraphrag binaries" >&2; exit 2; }
CALLER_DIR="$PWD"
cd "$(dirname "$0")/.."
source bench/bench_common.sh
parse_bench_args "${REST[@]+"${REST[@]}"}"
[[ "$BASE" == /* ]] || BASE="$CALLER_DIR/$BASE"
LOG=$(mktemp /tmp/ibgr-allinone-ab.XXXXXX)
PID=""
trap '[[ -n "$PID" ]] && kill "$PID" 2>/dev/null; rm -f "$LOG"' EXIT

for round in $(seq "$ROUNDS"); do
  for entry in "${BINS[@]}"; do
    spec="${entry%%+*}" flags=()
    [[ "$entry" == *+* ]] && IFS=',' read -r -a flags <<<"${entry#*+}"
    bin="${spec%%@*}" base="$BASE"
    [[ "$spec" == *@* ]] && base="${spec#*@}"
    "$bin" --base="$base" --host=127.0.0.1 --port=57211 --metrics_port=-1 "${flags[@]}" \
      >"$LOG" 2>&1 &
    PID=$!
    wait_ready "$LOG" "ibgraphrag: ready" "$PID"
    "$BIN/gateway_loadgen" --target=127.0.0.1:57211 --clients="$CLIENTS" --seconds=3 \
      --questions="$QUESTIONS" >/dev/null 2>&1
    ticks0=$(awk '{print $14 + $15}' "/proc/$PID/stat")  # utime + stime, clock ticks
    out=$("$BIN/gateway_loadgen" --target=127.0.0.1:57211 --clients="$CLIENTS" \
      --seconds="$SECONDS_PER_LEVEL" --questions="$QUESTIONS" 2>&1) ||
      { echo "allinone_ab: gateway_loadgen failed: $out" >&2; exit 1; }
    ticks1=$(awk '{print $14 + $15}' "/proc/$PID/stat")
    row=$(grep "^| $CLIENTS |" <<<"$out") || { echo "allinone_ab: no result row: $out" >&2; exit 1; }
    # gateway_loadgen's row: | clients | answers | answers/s | p50 ms | ...
    echo "$round $entry $(awk -F'|' -v t="$((ticks1 - ticks0))" -v hz="$(getconf CLK_TCK)" \
      '{gsub(/ /, ""); printf "answers/s %s p50_ms %s p99_ms %s cpu_ms_per_answer %.2f\n",
        $4, $5, $7, t * 1000 / hz / $3}' <<<"$row")"
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
  done
done
