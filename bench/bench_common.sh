# Shared by the bench/*.sh load scripts (source it): argument parsing and waiting for a server.
#   BASE=... SECONDS_PER_LEVEL=... CLIENTS=...   defaults, set by the caller before sourcing
#   parse_bench_args "$@"                       --base=, --seconds=, --clients=
#   BIN, QUESTIONS                              binaries (IBGR_BIN) and the true/false questions
#   wait_ready LOG MESSAGE [PID]                until LOG has {"msg":"MESSAGE"}; fails after 120 s
#                                               or when PID has exited

parse_bench_args() {
  for arg in "$@"; do
    case "$arg" in
      --base=*) BASE="${arg#*=}" ;;
      --seconds=*) SECONDS_PER_LEVEL="${arg#*=}" ;;
      --clients=*) CLIENTS="${arg#*=}" ;;
      *) echo "unknown argument: $arg" >&2; exit 2 ;;
    esac
  done
}

BIN="${IBGR_BIN:-build/bin}"  # IBGR_BIN: another build's bin/ for side-by-side runs
QUESTIONS="${IBGR_DATA_DIR:-$PWD/../shared/data}/qa/biomixqa-true-false.csv"

wait_ready() {
  for _ in $(seq 1 600); do
    grep -aq "\"msg\":\"$2\"" "$1" && return 0
    if [[ -n "${3:-}" ]] && ! kill -0 "$3" 2>/dev/null; then tail -5 "$1" >&2; exit 1; fi
    sleep 0.2
  done
  echo "timed out waiting for '$2' in $1" >&2; tail -5 "$1" >&2; exit 1
}
