#!/usr/bin/env bash
# Before/after throughput of two or more `ibgraphrag` builds on one machine, alternated so that
# drifting machine speed hits each build alike: for each round, each binary in turn is started on
# the same artifacts, warmed up for 3 s, then driven by gateway_loadgen at --clients for --seconds.
# Prints one line per run (round, binary, answers/s, p50 ms); quote the medians.
#
#   bench/allinone_ab.sh --base=artifacts [--rounds=5] [--seconds=8] [--clients=16] BIN_A BIN_B ...
#
# Copy each build's build/bin/ibgraphrag aside first (e.g. /tmp/aio_before, /tmp/aio_after).
# Port 57211. Questions: $IBGR_DATA_DIR/qa/biomixqa-true-false.csv (../shared/data by default).
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
BASE=artifacts ROUNDS=5 SECONDS_PER_RUN=8 CLIENTS=16 BINS=()
for arg in "$@"; do
  case "$arg" in
    --base=*) BASE="${arg#--base=}" ;;
    --rounds=*) ROUNDS="${arg#--rounds=}" ;;
    --seconds=*) SECONDS_PER_RUN="${arg#--seconds=}" ;;
    --clients=*) CLIENTS="${arg#--clients=}" ;;
    --*) echo "allinone_ab: unknown flag $arg" >&2; exit 2 ;;
    *) BINS+=("$arg") ;;
  esac
done
((${#BINS[@]} >= 2)) || { echo "allinone_ab: name at least two ibgraphrag binaries" >&2; exit 2; }
LOADGEN="${IBGR_BIN:-$REPO/build/bin}/gateway_loadgen"
QUESTIONS="${IBGR_DATA_DIR:-$REPO/../shared/data}/qa/biomixqa-true-false.csv"
LOG=$(mktemp /tmp/ibgr-allinone-ab.XXXXXX)
PID=""
trap '[[ -n "$PID" ]] && kill "$PID" 2>/dev/null; rm -f "$LOG"' EXIT

for round in $(seq "$ROUNDS"); do
  for bin in "${BINS[@]}"; do
    "$bin" --base="$BASE" --host=127.0.0.1 --port=57211 --metrics_port=-1 >"$LOG" 2>&1 &
    PID=$!
    for _ in $(seq 120); do
      grep -q "ibgraphrag: ready" "$LOG" && break
      kill -0 "$PID" 2>/dev/null || break  # exited: reported below
      sleep 1
    done
    grep -q "ibgraphrag: ready" "$LOG" || { echo "allinone_ab: $bin did not start" >&2; cat "$LOG" >&2; exit 1; }
    "$LOADGEN" --target=127.0.0.1:57211 --clients="$CLIENTS" --seconds=3 \
      --questions="$QUESTIONS" >/dev/null 2>&1
    out=$("$LOADGEN" --target=127.0.0.1:57211 --clients="$CLIENTS" --seconds="$SECONDS_PER_RUN" \
      --questions="$QUESTIONS" 2>&1) || { echo "allinone_ab: gateway_loadgen failed: $out" >&2; exit 1; }
    row=$(grep "^| $CLIENTS |" <<<"$out") || { echo "allinone_ab: no result row: $out" >&2; exit 1; }
    # gateway_loadgen's row: | clients | answers | answers/s | p50 ms | ...
    echo "$round $bin $(awk -F'|' '{gsub(/ /, ""); print "answers/s", $4, "p50_ms", $5}' <<<"$row")"
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=""
  done
done
