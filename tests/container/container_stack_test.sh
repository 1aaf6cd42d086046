#!/usr/bin/env bash
# The container images and the compose stack, built and run for real (issue 16; ctest label
# `container`, test container_stack_test). Steps, each timed:
#   1. the base image (scripts/make_base_image.sh: debootstrap + docker import, no registry);
#   2. every target of docker/Dockerfile (BuildKit, ccache in a cache mount);
#   3. per image: non-root user, HEALTHCHECK, every shared library resolves, the root filesystem
#      refuses writes when run read-only, and its size;
#   4. docker/compose.yaml up: the artifacts job builds the KG, encoder, alignment bundle and
#      retriever model from ../shared/data into the volume, every service turns healthy;
#   5. one question answered through the stack over gRPC (ibgr ask) and HTTP/JSON (/v1/answer),
#      /healthz and /readyz, and the running containers are read-only and non-root;
#   6. compose down -v (also on failure).
# Exits 77 (ctest: skipped) when no Docker daemon answers. Writes a report of times and sizes to
# $IBGR_CONTAINER_REPORT (default build/Testing/container_report.md).
#
#   tests/container/container_stack_test.sh            # from the repository root
#   IBGR_CONTAINER_KEEP=1 ...                           # leave the stack running afterwards
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN="${IBGR_BIN_DIR:-$ROOT/build/bin}"
DATA="${IBGR_DATA_DIR:-$ROOT/../shared/data}"
REPORT="${IBGR_CONTAINER_REPORT:-$ROOT/build/Testing/container_report.md}"
TAG="${IBGR_CONTAINER_TAG:-ctest}"
PROJECT="ibgr-ctest"
# Debian's docker 20.10 client builds with its built-in BuildKit; a newer client without the
# buildx plugin (e.g. a static docker 28 in /usr/local/bin) cannot, so prefer Debian's.
DOCKER="${DOCKER:-$(command -v /usr/bin/docker || command -v docker || true)}"
COMPOSE=()
if "$DOCKER" compose version >/dev/null 2>&1; then COMPOSE=("$DOCKER" compose)
elif command -v docker-compose >/dev/null; then COMPOSE=(docker-compose); fi

if [[ -z "$DOCKER" ]] || ! "$DOCKER" info >/dev/null 2>&1; then
  # Asked for (scripts/test.sh with IBGR_TEST_CONTAINER=1): a missing daemon is a failure.
  if [[ "${IBGR_TEST_CONTAINER:-0}" == 1 ]]; then
    echo "FAIL: IBGR_TEST_CONTAINER=1 but no Docker daemon answers (scripts/install_deps.sh --container; start dockerd)"
    exit 1
  fi
  echo "container_stack_test: SKIPPED: no Docker daemon answers (scripts/install_deps.sh --container; dockerd)"
  exit 77
fi
[[ ${#COMPOSE[@]} -gt 0 ]] || { echo "FAIL: neither 'docker compose' nor docker-compose is installed"; exit 1; }
[[ -x "$BIN/ibgr" ]] || { echo "FAIL: $BIN/ibgr missing (build the ibgr target)"; exit 1; }
[[ -d "$DATA/kg" ]] || { echo "FAIL: data directory $DATA has no kg/"; exit 1; }
export DOCKER_BUILDKIT=1
mkdir -p "$(dirname "$REPORT")"
work="$(mktemp -d /tmp/ibgr-container.XXXXXX)"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
declare -a timings=() sizes=()
step_start=0
begin() { echo "== $1"; step_name="$1"; step_start=$(date +%s); }
end() { local s=$(( $(date +%s) - step_start )); timings+=("| $step_name | $s s |"); echo "   ($s s)"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
GRPC_PORT=$(free_port); HTTP_PORT=$(free_port); PROM_PORT=$(free_port)
export IBGR_IMAGE="ibgraphrag:$TAG" IBGR_PROMETHEUS_IMAGE="ibgraphrag-prometheus:$TAG"
export IBGR_TORCH_IMAGE="ibgraphrag-torch:$TAG"
export IBGR_GATEWAY_PORT=$GRPC_PORT IBGR_GATEWAY_HTTP_PORT=$HTTP_PORT IBGR_PROMETHEUS_PORT=$PROM_PORT
export IBGR_DATA_DIR="$(cd "$DATA" && pwd)"
compose() { "${COMPOSE[@]}" -p "$PROJECT" -f docker/compose.yaml "$@"; }
write_report() {
  {
    echo "## container_stack_test $(date -u +%Y-%m-%dT%H:%MZ) ($failures failure(s))"
    echo
    echo "| step | wall |"; echo "|---|--:|"; printf '%s\n' "${timings[@]+"${timings[@]}"}"
    echo
    echo "| image | size | user | healthcheck | libraries of its largest binary |"; echo "|---|--:|---|---|--:|"
    printf '%s\n' "${sizes[@]+"${sizes[@]}"}"
  } >"$REPORT"
}
cleanup() {
  write_report || true
  if [[ "${IBGR_CONTAINER_KEEP:-0}" != 1 ]]; then
    compose down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# An API key for the stack: the gateway reads key_id:sha256(key) lines.
key="ctest-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf 'ctest:%s\n' "$(printf %s "$key" | sha256sum | cut -d' ' -f1)" >"$work/api_keys"
chmod 0644 "$work/api_keys"
export IBGR_API_KEYS_FILE="$work/api_keys"

begin "base image (debootstrap --variant=minbase bookworm + docker import)"
DOCKER="$DOCKER" scripts/make_base_image.sh ibgraphrag-base:bookworm
end

targets=(all kgstore alignment retriever reasoner gateway torch retriever-gpu prometheus)
for t in "${targets[@]}"; do
  case $t in all) image="ibgraphrag:$TAG" ;; *) image="ibgraphrag-$t:$TAG" ;; esac
  begin "docker build --target $t"
  if ! "$DOCKER" build --progress=plain -f docker/Dockerfile --target "$t" -t "$image" . \
      >"$work/build-$t.log" 2>&1; then
    tail -30 "$work/build-$t.log"; fail "docker build --target $t"; end; continue
  fi
  grep -E "ccache|hits|misses" "$work/build-$t.log" | grep -v "^#.*RUN" | tail -3 || true
  end
done
((failures == 0)) || { echo "container_stack_test: $failures failure(s) building images"; exit 1; }

echo "== image checks"
for t in "${targets[@]}"; do
  case $t in all) image="ibgraphrag:$TAG" ;; *) image="ibgraphrag-$t:$TAG" ;; esac
  user=$("$DOCKER" image inspect -f '{{.Config.User}}' "$image")
  health=$("$DOCKER" image inspect -f '{{if .Config.Healthcheck}}{{join .Config.Healthcheck.Test " "}}{{end}}' "$image")
  bytes=$("$DOCKER" image inspect -f '{{.Size}}' "$image")
  libs="-"
  if [[ $t != prometheus ]]; then
    libs=$("$DOCKER" run --rm --read-only --entrypoint /bin/sh "$image" -c \
      'b=$(ls -S /opt/ibgr/bin/* | head -1); echo "$(basename "$b") $(ldd "$b" | wc -l)"' || echo "?")
  fi
  sizes+=("| $image | $((bytes / 1024 / 1024)) MiB | $user | ${health:-none} | $libs |")
  [[ -n "$user" && "$user" != root && "$user" != 0* ]] || fail "$image runs as '${user:-root}'"
  [[ -n "$health" ]] || fail "$image has no HEALTHCHECK"
  if [[ $t == prometheus ]]; then continue; fi
  # Every binary's shared libraries resolve in the runtime image.
  missing=$("$DOCKER" run --rm --read-only --entrypoint /bin/sh "$image" -c \
    'for b in /opt/ibgr/bin/*; do ldd "$b" 2>/dev/null | grep "not found" | sed "s|^|$b: |"; done' || true)
  [[ -z "$missing" ]] || fail "$image: unresolved libraries: $missing"
  # The CPU images carry no LibTorch (issue 30): no library of it or of what its package pulls in.
  if [[ $t != torch && $t != retriever-gpu ]]; then
    heavy=$("$DOCKER" run --rm --read-only --entrypoint /bin/sh "$image" -c \
      'for b in /opt/ibgr/bin/*; do ldd "$b" 2>/dev/null | grep -E "libtorch|libc10|opencv|libavcodec|libQt|gdal" | sed "s|^|$b: |"; done; ls /usr/lib/x86_64-linux-gnu | grep -E "^libtorch|^libopencv|^libQt" | head -3' || true)
    [[ -z "$heavy" ]] || fail "$image: LibTorch or its dependencies present: $heavy"
  fi
  # Read-only root: nothing can be written outside the volume and /tmp.
  if "$DOCKER" run --rm --read-only --entrypoint /bin/sh "$image" -c 'touch /opt/ibgr/x' 2>/dev/null; then
    fail "$image: wrote to /opt/ibgr with --read-only"
  fi
  [[ $("$DOCKER" run --rm --read-only --entrypoint /usr/bin/id "$image" -u) == 10001 ]] ||
    fail "$image: id -u is not 10001"
done

begin "compose up (artifacts job from ../shared/data, then five services and Prometheus)"
compose up -d >"$work/compose-up.log" 2>&1 || { cat "$work/compose-up.log"; fail "compose up"; exit 1; }
# The artifacts job builds everything in the volume (minutes); the gateway turns healthy after.
deadline=$(( $(date +%s) + ${IBGR_CONTAINER_STACK_TIMEOUT:-1800} ))
status_of() { "$DOCKER" inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' \
  "$(compose ps -q "$1")" 2>/dev/null || echo missing; }
while :; do
  states=""; all_healthy=1
  for s in kgstore alignment retriever reasoner gateway prometheus; do
    st=$(status_of "$s"); states+="$s=$st "; [[ $st == healthy ]] || all_healthy=0
  done
  art=$("$DOCKER" inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$(compose ps -q artifacts)" 2>/dev/null || echo "missing")
  [[ $all_healthy == 1 ]] && break
  if [[ $art == "exited "[1-9]* ]]; then compose logs artifacts | tail -30; fail "artifacts job: $art"; break; fi
  if (( $(date +%s) > deadline )); then compose ps; compose logs --tail=20; fail "stack not healthy: $states"; break; fi
  sleep 10
done
echo "   $states (artifacts: $art)"
end
((failures == 0)) || exit 1

begin "answer through the stack: gRPC (ibgr ask) and HTTP/JSON (/v1/answer)"
question="Which gene is associated with breast cancer?"
if ! "$BIN/ibgr" ask --gateway="127.0.0.1:$GRPC_PORT" --api_key="$key" --deadline_ms=60000 \
    "$question" >"$work/ask.txt" 2>&1; then
  cat "$work/ask.txt"; fail "ibgr ask over gRPC"
fi
sed -n '1,4p' "$work/ask.txt" | cut -c1-160 | sed 's/^/   gRPC: /'
grep -qi "answer" "$work/ask.txt" || fail "ibgr ask printed no answer: $(head -5 "$work/ask.txt")"
grep -qi "breast" "$work/ask.txt" || fail "gRPC answer names no breast cancer entity"
http_code=$(curl -sS -o "$work/answer.json" -w '%{http_code}' -H "x-api-key: $key" \
  -H 'content-type: application/json' --max-time 60 \
  -d "{\"question\": \"$question\"}" "http://127.0.0.1:$HTTP_PORT/v1/answer" || echo 000)
[[ $http_code == 200 ]] || fail "POST /v1/answer -> HTTP $http_code: $(head -c 300 "$work/answer.json")"
python3 - "$work/answer.json" <<'PY' || fail "HTTP answer JSON lacks answer/entities/evidence"
import json, sys
r = json.load(open(sys.argv[1]))
assert r.get("answer"), "no answer"
assert r.get("entities"), "no entities"
assert r.get("evidence"), "no evidence"
print("   HTTP answer: %d entities, %d evidence triples" % (len(r["entities"]), len(r["evidence"])))
PY
for path in healthz readyz; do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/$path" || echo 000)
  [[ $code == 200 ]] || fail "GET /$path -> $code"
done
unauth=$(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
  -d "{\"question\": \"$question\"}" "http://127.0.0.1:$HTTP_PORT/v1/answer" || echo 000)
[[ $unauth == 401 ]] || fail "POST /v1/answer without a key -> $unauth (want 401)"
end

echo "== running containers: read-only root, non-root user"
for s in kgstore alignment retriever reasoner gateway; do
  c=$(compose ps -q "$s")
  [[ $("$DOCKER" inspect -f '{{.HostConfig.ReadonlyRootfs}}' "$c") == true ]] || fail "$s: root filesystem writable"
  [[ $("$DOCKER" exec "$c" id -u) == 10001 ]] || fail "$s: not uid 10001"
  if "$DOCKER" exec "$c" sh -c 'echo x > /etc/ibgr/x' 2>/dev/null; then fail "$s: wrote to /etc"; fi
done

write_report
cat "$REPORT"
if ((failures)); then echo "container_stack_test: $failures failure(s)"; exit 1; fi
echo "container_stack_test: passed"
