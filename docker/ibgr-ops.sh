#!/bin/sh
# ibgr-ops: small operational helpers baked into the image (POSIX sh + coreutils only).
#
#   ibgr-ops health [PORT]            gRPC health check of the server in this container
#                                     (PORT default $IBGR_HEALTH_PORT). With IBGR_TLS_CERT set it
#                                     speaks mTLS with the server's own certificate (cert-manager
#                                     certificates carry server and client auth), verifying the
#                                     server against IBGR_TLS_CLIENT_CA and the name in
#                                     IBGR_HEALTH_SERVER_NAME. Exit 0 only when SERVING.
#   ibgr-ops wait-artifacts BASE KIND...  block until BASE/KIND/<version>/ exists for each KIND
#                                     (kg, alignment, retriever); IBGR_WAIT_SECONDS caps the wait
#                                     (default 3600), exit 1 when it runs out.
#   ibgr-ops sync-kg SRC DST [SECONDS] copy every KG snapshot SRC/kg/<v>/ missing from DST/kg/
#                                     (copy to DST/kg/.staging-<v>, then rename: a version
#                                     directory appears complete or not at all); keep the newest
#                                     $IBGR_KEEP_VERSIONS (default 2). With SECONDS, repeat forever.
set -eu

log() { printf '{"level":"%s","msg":"ibgr-ops: %s"}\n' "$1" "$2" >&2; }

versions() {  # numeric version directories under $1, ascending
  [ -d "$1" ] || return 0
  for d in "$1"/*/; do
    v=$(basename "$d")
    case "$v" in '' | *[!0-9]*) continue ;; esac
    echo "$v"
  done | sort -n
}

health() {
  port="${1:-${IBGR_HEALTH_PORT:?IBGR_HEALTH_PORT is not set}}"
  if [ -n "${IBGR_TLS_CERT:-}" ]; then
    exec ibgr health --target="127.0.0.1:${port}" --tls_ca="${IBGR_TLS_CLIENT_CA:?IBGR_TLS_CLIENT_CA is not set}" \
      --tls_cert="${IBGR_TLS_CERT}" --tls_key="${IBGR_TLS_KEY:?IBGR_TLS_KEY is not set}" \
      --tls_server_name="${IBGR_HEALTH_SERVER_NAME:-localhost}"
  fi
  exec ibgr health --target="127.0.0.1:${port}"
}

wait_artifacts() {
  base="$1"; shift
  deadline=$(( $(date +%s) + ${IBGR_WAIT_SECONDS:-3600} ))
  for kind in "$@"; do
    while [ -z "$(versions "$base/$kind")" ]; do
      if [ "$(date +%s)" -ge "$deadline" ]; then
        log error "no $kind version under $base/$kind after ${IBGR_WAIT_SECONDS:-3600} s"
        exit 1
      fi
      sleep 5
    done
    log info "found $kind version $(versions "$base/$kind" | tail -n 1) under $base"
  done
}

sync_once() {
  src="$1/kg"; dst="$2/kg"
  mkdir -p "$dst"
  for v in $(versions "$src"); do
    [ -d "$dst/$v" ] && continue
    rm -rf "$dst/.staging-$v"
    cp -a "$src/$v" "$dst/.staging-$v"
    mv "$dst/.staging-$v" "$dst/$v"
    log info "copied KG snapshot $v to $dst"
  done
  keep="${IBGR_KEEP_VERSIONS:-2}"
  total=$(versions "$dst" | wc -l)
  if [ "$total" -gt "$keep" ]; then
    for v in $(versions "$dst" | head -n $((total - keep))); do
      rm -rf "${dst:?}/$v"
      log info "removed old KG snapshot $v from $dst"
    done
  fi
}

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  health) health "$@" ;;
  wait-artifacts)
    [ $# -ge 2 ] || { echo "usage: ibgr-ops wait-artifacts BASE KIND..." >&2; exit 2; }
    wait_artifacts "$@" ;;
  sync-kg)
    [ $# -ge 2 ] || { echo "usage: ibgr-ops sync-kg SRC DST [SECONDS]" >&2; exit 2; }
    if [ $# -ge 3 ]; then
      while :; do sync_once "$1" "$2" || log warning "sync failed; retrying"; sleep "$3"; done
    fi
    sync_once "$1" "$2" ;;
  *) echo "usage: ibgr-ops health|wait-artifacts|sync-kg ... (see the header of this script)" >&2; exit 2 ;;
esac
