#!/usr/bin/env bash
# Fits the extractive backend's confidence calibration on the served artifacts and publishes it as
# the next <base>/calibration/<version> (services/reasoner/confidence_calibration.h): starts the
# all-in-one server on loopback WITHOUT a calibration (so answers carry raw signals), runs
# `ibgr eval` on the VALIDATION split of the shared QA sets and of the lookup set asked as
# multiple choice (the test splits stay held out for the figures), fits one calibration per task
# and question class, publishes and stops the server.
#
#   scripts/fit_calibration.sh [--base=artifacts] [--port=57790] [--if_missing]
#                              [--print_staleness] [--print_features_version]
#
# --if_missing does nothing when the newest calibration version is current: fitted on this build's
# signal semantics (features_version, kept in step with reasoner::kCalibrationFeaturesVersion
# by tests/scripts/fit_calibration_script_test.cc) and on the newest kg / alignment / retriever
# versions under the base (the versions its manifest records); otherwise it refits
# (scripts/start.sh uses it). A manifest that cannot be read, or a check that cannot run, counts
# as stale: refitting is always safe, serving uncalibrated is not.
# --print_staleness prints why the newest calibration is stale ("current" when it is not) and
# exits; --print_features_version prints the features version this script checks and exits.
# Environment: IBGR_BIN (default build/bin), IBGR_DATA_DIR (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
BASE="${IBGR_ARTIFACTS:-$PWD/artifacts}"
PORT=57790
IF_MISSING=0
PRINT=""
for arg in "$@"; do
  case "$arg" in
    --base=*) BASE="${arg#*=}" ;;
    --port=*) PORT="${arg#*=}" ;;
    --if_missing) IF_MISSING=1 ;;
    --print_staleness) PRINT=staleness ;;
    --print_features_version) PRINT=features_version ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done
BIN="${IBGR_BIN:-build/bin}"
DATA_DIR="${IBGR_DATA_DIR:-$PWD/../shared/data}"
LOOKUP_SET="$PWD/tools/eval/lookup/clinical_lookup.jsonl"
FEATURES_VERSION=3  # reasoner::kCalibrationFeaturesVersion
# Prints why the newest calibration is stale (nothing when it is current).
calibration_staleness() {
  python3 - "$BASE" "$FEATURES_VERSION" <<'PY'
import json, os, sys
base, features = sys.argv[1], int(sys.argv[2])
def newest(kind):
    d = os.path.join(base, kind)
    vs = [int(v) for v in (os.listdir(d) if os.path.isdir(d) else [])
          if v.isdigit() and os.path.isfile(os.path.join(d, v, "manifest.json"))]
    return str(max(vs)) if vs else ""
cal = newest("calibration")
if not cal:
    print("no calibration version"); sys.exit()
try:
    with open(os.path.join(base, "calibration", cal, "manifest.json")) as f:
        m = json.load(f)
    if not isinstance(m, dict):
        raise ValueError("not a JSON object")
    int(m.get("features_version", 0))
except (OSError, ValueError, TypeError) as e:
    print(f"calibration/{cal}/manifest.json is unreadable ({e})"); sys.exit()
if int(m.get("features_version", 0)) != features:
    print(f"calibration/{cal} has features_version {m.get('features_version', 0)}, not {features}")
for field, kind in (("kg_version", "kg"), ("alignment_bundle_version", "alignment"),
                    ("retriever_model_version", "retriever")):
    recorded, current = m.get(field, ""), newest(kind)
    if recorded and current and recorded != current:
        print(f"calibration/{cal} was fitted on {kind} {recorded}, the newest is {current}")
PY
}
# Under set -e a failing check (python3 missing, a crash) must not abort: it means "refit".
staleness_or_reason() {
  calibration_staleness 2>/dev/null || echo "the staleness check failed (python3 missing?)"
}
case "$PRINT" in
  features_version) echo "$FEATURES_VERSION"; exit 0 ;;
  staleness) STALE="$(staleness_or_reason)"; echo "${STALE:-current}"; exit 0 ;;
esac
if [[ $IF_MISSING == 1 ]]; then
  STALE="$(staleness_or_reason)"
  if [[ -z $STALE ]]; then
    echo "fit_calibration: $BASE/calibration is current; nothing to do"
    exit 0
  fi
  echo "fit_calibration: refitting: $STALE"
fi

LOG="$(mktemp -t ibgr-fit-calibration.XXXXXX.log)"
"$BIN/ibgraphrag" --base="$BASE" --calibration=none --host=127.0.0.1 --port="$PORT" \
  --metrics_port=-1 --http_port=-1 >"$LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 600); do
  grep -aq '"msg":"ibgraphrag: ready"' "$LOG" && break
  if ! kill -0 "$SERVER" 2>/dev/null; then tail -5 "$LOG" >&2; exit 1; fi
  sleep 0.2
done
grep -aq '"msg":"ibgraphrag: ready"' "$LOG" || { echo "server not ready" >&2; tail -5 "$LOG" >&2; exit 1; }

# The shared QA sets (exam questions: mostly clinical_reasoning) and the lookup set's dev questions
# asked as multiple choice (kg_lookup): each question class gets its own calibration.
"$BIN/ibgr" eval --gateway="127.0.0.1:$PORT" --dataset="$DATA_DIR/qa,$LOOKUP_SET" \
  --lookup_as_choices=3 --concurrency=8 --qa_split=validation --fit_calibration="$BASE/calibration.fit.json" --calibration_base="$BASE" \
  >/dev/null
rm -f "$BASE/calibration.fit.json"
