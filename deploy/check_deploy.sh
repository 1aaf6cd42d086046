#!/usr/bin/env bash
# Deployment checks (ctest `deploy_check`, label unit; also runnable by hand):
#   1. yamllint over deploy/ and docker/;
#   2. `kubectl kustomize` (kustomize v4+; or a standalone `kustomize build`) renders every overlay
#      (dev, prod, prod-gpu, prod-local-reasoner, prod-local-pipeline); without one the check
#      fails naming what to install;
#   3. every rendered object validates against the Kubernetes API schemas and the
#      prometheus-operator / cert-manager CRD schemas (tools/deploy-validate/validate.mjs);
#   4. promtool checks the alert rules; the PrometheusRule carries the same groups;
#   5. consistency with the binaries (tools/deploy-validate/consistency.mjs): every flag used in
#      the manifests, compose and Dockerfile exists in the binary's --helpfull, ports and probes
#      match the binaries' default ports, Services/NetworkPolicies/addresses point at real ports,
#      the Dockerfile calls only scripts CI runs;
#   6. negative cases on temporary copies: a wrong probe port, an unknown kind, a missing required
#      field, a misspelt field, an unknown flag and a wrong port in an address must each make the
#      check fail with the validator's message.
#
#   deploy/check_deploy.sh            (binaries from $IBGR_BIN_DIR, default build/bin)
#
# Environment: IBGR_SOURCE_DIR (repo root), IBGR_BIN_DIR, IBGR_DEPLOY_EXPECT (binaries and
# `ibgr:<command>`s that must exist; set by deploy/CMakeLists.txt from the targets it knows of;
# anything else missing is reported as NOT CHECKED).
set -euo pipefail
SRC="${IBGR_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
BIN="${IBGR_BIN_DIR:-$SRC/build/bin}"
EXPECT="${IBGR_DEPLOY_EXPECT:-}"
TOOLS="$SRC/tools/deploy-validate"
OVERLAYS=(dev prod prod-gpu prod-local-reasoner prod-local-pipeline)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

for tool in node yamllint promtool shellcheck; do
  command -v "$tool" >/dev/null || { echo "check_deploy: $tool is not installed (scripts/install_deps.sh)" >&2; exit 1; }
done
# Rendering the overlays needs kustomize v4 or later (their `labels:` and `replicas:` fields):
# kubectl 1.21+ (which embeds it) or a standalone `kustomize`. Neither is a Debian 12 package
# (its kubernetes-client is kubectl 1.20 with kustomize v2.0.3), so a missing or too old one fails
# here, loudly, naming what to install: never a silent pass.
KUSTOMIZE=()
kustomize_major() {  # the major version in a "v5.5.0" / "kustomize/v5.5.0" string, 0 when none
  local v="${1##*/v}"; v="${v#v}"; v="${v%%.*}"
  [[ "$v" =~ ^[0-9]+$ ]] && echo "$v" || echo 0
}
if command -v kubectl >/dev/null &&
  (( $(kustomize_major "$(kubectl version --client -o json 2>/dev/null |
      sed -n 's/.*"kustomizeVersion": *"\([^"]*\)".*/\1/p')") >= 4 )); then
  KUSTOMIZE=(kubectl kustomize)
elif command -v kustomize >/dev/null &&
  (( $(kustomize_major "$(kustomize version 2>/dev/null | head -1)") >= 4 )); then
  KUSTOMIZE=(kustomize build)
else
  cat >&2 <<'MSG'
check_deploy: FAILED: no kustomize v4 or later to render deploy/k8s/overlays.
  Debian 12's kubernetes-client (kubectl 1.20, kustomize v2.0.3) is too old, and no newer one is a
  Debian package. Install either
    - kubectl 1.21 or later: https://kubernetes.io/docs/tasks/tools/install-kubectl-linux/
    - or kustomize v4+ as `kustomize` on PATH: https://kubectl.docs.kubernetes.io/installation/kustomize/
  then rerun. To run the other tests meanwhile: scripts/test.sh -E deploy_check (this check stays
  red in CI until then).
MSG
  exit 1
fi
if [[ ! -d "$TOOLS/node_modules/kubernetes-models" ]]; then
  (cd "$TOOLS" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# --- what the binaries say about themselves ---------------------------------------------
INFO="$WORK/bin-info"
mkdir -p "$INFO"
for b in kgstore alignment retriever reasoner gateway ibgraphrag ibgr retriever_train retriever_torch ibgr_encoder; do
  [[ -x "$BIN/$b" ]] || continue
  # --helpfull lists each flag as "    --name (help) ..."; continuation lines are indented more.
  # (absl exits 1 after printing --helpfull.)
  "$BIN/$b" --helpfull >"$INFO/$b.help" 2>&1 || true
  sed -n 's/^    --\([A-Za-z0-9_]*\) .*/\1/p' "$INFO/$b.help" | sort -u >"$INFO/$b.flags"
  [[ -s "$INFO/$b.flags" ]] || { echo "check_deploy: $BIN/$b --helpfull listed no flags" >&2; exit 1; }
done
if [[ -x "$BIN/ibgr" ]]; then "$BIN/ibgr" >"$INFO/ibgr.usage" 2>&1 || true; fi
# Default ports: the kDefault<Service>Port / kDefault<Service>MetricsPort constants the binaries
# are compiled with.
python3 - "$SRC" >"$INFO/ports.json" <<'PY'
import glob, json, re, sys
ports = {}
for h in glob.glob(sys.argv[1] + "/services/*/*.h"):
    for name, metrics, value in re.findall(r"kDefault(\w+?)(Metrics)?Port\s*=\s*(\d+)", open(h).read()):
        ports.setdefault(name.lower(), {})["metrics" if metrics else "grpc"] = int(value)
need = ["kgstore", "alignment", "retriever", "reasoner", "gateway"]
missing = [n for n in need if set(ports.get(n, {})) != {"grpc", "metrics"}]
for n in missing:
    # The gateway's constants may not exist yet: fall back to the documented ports, and say so.
    if n == "gateway":
        ports["gateway"] = {"grpc": 50051, "metrics": 9091}
        print("NOT CHECKED: gateway default ports (no kDefaultGatewayPort in services/gateway);"
              " assuming 50051/9091", file=sys.stderr)
    else:
        sys.exit(f"check_deploy: no kDefault{n}Port/MetricsPort constants under services/")
print(json.dumps(ports))
PY

# --- the checks, on a tree (the real one, or a mutated copy) ----------------------------------
# check_tree ROOT OUT [quick]: renders and checks ROOT's deploy/ and docker/; output in OUT.log.
# quick (the negative cases): the dev overlay only, no yamllint/promtool/shellcheck.
check_tree() {
  local root="$1" out="$2" quick="${3:-}" rc=0 overlays=("${OVERLAYS[@]}")
  [[ -n "$quick" ]] && overlays=(dev)
  mkdir -p "$out"
  {
    if [[ -z "$quick" ]]; then
      echo "== yamllint"
      yamllint --strict -c "$root/deploy/yamllint.yaml" "$root/deploy" "$root/docker" || rc=1
      echo "== promtool"
      promtool check rules "$root/deploy/monitoring/ibgr-alerts.rules.yaml" || rc=1
    fi
    local rendered=()
    for o in "${overlays[@]}"; do
      mkdir -p "$out/$o"
      echo "== ${KUSTOMIZE[*]} deploy/k8s/overlays/$o"
      if "${KUSTOMIZE[@]}" "$root/deploy/k8s/overlays/$o" >"$out/$o/rendered.yaml"; then
        rendered+=("$out/$o/rendered.yaml")
        echo "== validate $o"
        (cd "$TOOLS" && node validate.mjs "$out/$o/rendered.yaml") >"$out/$o/validate.log" 2>&1 || rc=1
        grep -v '^ok ' "$out/$o/validate.log" || true
      else
        rc=1
      fi
    done
    echo "== consistency with the binaries in $BIN"
    (cd "$TOOLS" && node consistency.mjs --bin-info "$INFO" --expect "$EXPECT" \
      --compose "$root/docker/compose.yaml" --dockerfile "$root/docker/Dockerfile" \
      --ci-script "$SRC/scripts/test.sh" --rules "$root/deploy/monitoring/ibgr-alerts.rules.yaml" \
      "${rendered[@]}") || rc=1
    # The shellcheck tool is required like the tools above (a missing tool fails, never
    # skips); --quick leaves it out on purpose.
    if [[ -z "$quick" ]]; then
      echo "== shellcheck"
      shellcheck "$root/docker/ibgr-ops.sh" "$root/deploy/check_deploy.sh" || rc=1
    fi
  } >"$out.log" 2>&1
  return $rc
}

# --- the runtime image's package list covers every shared library the binaries load -------------
# (the Dockerfile's runtime stage installs `scripts/install_deps.sh --runtime` and nothing else).
check_runtime_packages() {
  local bins=() b
  for b in kgstore alignment retriever reasoner gateway ibgraphrag ibgr; do
    [[ -x "$BIN/$b" ]] && bins+=("$BIN/$b")
  done
  ldd "${bins[@]}" | awk '/=> \//{print $3}' | sort -u >"$WORK/libs"
  local missing=()
  # One dpkg query for all libraries: by resolved path, then by the path ldd printed (usrmerge).
  xargs -r readlink -f <"$WORK/libs" >"$WORK/libs.real"
  { xargs -r dpkg -S <"$WORK/libs.real" 2>/dev/null || true; } >"$WORK/owners"
  { xargs -r dpkg -S <"$WORK/libs" 2>/dev/null || true; } >>"$WORK/owners"
  mapfile -t -O "${#missing[@]}" missing < <(paste "$WORK/libs" "$WORK/libs.real" | awk -v owners="$WORK/owners" '
    BEGIN { while ((getline line < owners) > 0) { n = split(line, f, ": "); owned[f[n]] = 1 } }
    !($1 in owned) && !($2 in owned) { print $1 " (no Debian package owns it)" }')
  sed 's/:.*//' "$WORK/owners" | tr ',' '\n' | sed 's/^ *//' | sort -u >"$WORK/pkgs"
  local runtime
  runtime="$(sed -n '/^RUNTIME_PKGS=(/,/^)/p' "$SRC/scripts/install_deps.sh" | sed '1d;$d;s/#.*//' | tr '\n' ' ')"
  # shellcheck disable=SC2086  # word splitting of the package list is intended
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances $runtime 2>/dev/null | grep -v '^ ' | sed 's/:.*//' | sort -u >"$WORK/closure"
  local p
  while read -r p; do
    grep -qx "$p" "$WORK/closure" || missing+=("$p (needed by a binary, not pulled in by RUNTIME_PKGS)")
  done <"$WORK/pkgs"
  if ((${#missing[@]})); then
    printf 'FAIL runtime packages: %s\n' "${missing[@]}" >&2
    return 1
  fi
  echo "== runtime packages: $(wc -l <"$WORK/libs") shared libraries of ${#bins[@]} binaries, all in the closure of RUNTIME_PKGS"
}

echo "check_deploy: checking deploy/ and docker/ (binaries: $BIN)"
if command -v dpkg >/dev/null && command -v apt-cache >/dev/null; then
  check_runtime_packages || { echo "check_deploy: FAILED" >&2; exit 1; }
fi
if ! check_tree "$SRC" "$WORK/real"; then
  cat "$WORK/real.log"
  echo "check_deploy: FAILED" >&2
  exit 1
fi
grep -E '^(== |NOT CHECKED|consistency:|[0-9]+ object)' "$WORK/real.log"

# --- negative cases: each mutation must fail with the named message ---------------------------
# negative NAME EXPECTED_MESSAGE_REGEX MUTATION_COMMAND (run inside the copy's root)
negative() {
  local name="$1" want="$2" mutation="$3" copy="$WORK/neg-$1"
  mkdir -p "$copy"
  cp -r "$SRC/deploy" "$SRC/docker" "$copy/"
  (cd "$copy" && eval "$mutation")
  if check_tree "$copy" "$WORK/neg-$name-out" quick; then
    echo "check_deploy: negative case '$name' passed the check, but must fail" >&2
    exit 1
  fi
  local msg
  msg="$(grep -E -m1 -- "$want" "$WORK/neg-$name-out.log" || true)"
  if [[ -z "$msg" ]]; then
    echo "check_deploy: negative case '$name' failed without the expected message /$want/:" >&2
    cat "$WORK/neg-$name-out.log" >&2
    exit 1
  fi
  echo "negative '$name': rejected: $msg"
}
negative wrong-probe-port 'startupProbe.grpc.port 50099, but the server listens on 50052' \
  "sed -i '0,/port: 50052/s//port: 50099/' deploy/k8s/base/kgstore.yaml"
negative unknown-kind 'unknown kind "Deploymnt"' \
  "printf -- '---\napiVersion: apps/v1\nkind: Deploymnt\nmetadata:\n  name: typo\n' >>deploy/k8s/base/namespace.yaml"
negative missing-required-field 'data/spec must have required property selector' \
  "python3 -c \"import re,sys; p='deploy/k8s/base/alignment.yaml'; s=open(p).read(); open(p,'w').write(s.replace('  selector:\n    matchLabels:\n      app.kubernetes.io/name: alignment\n', '', 1))\""
negative misspelt-field 'containers\[0\]\.livenesProbe: unknown field' \
  "sed -i 's/livenessProbe:/livenesProbe:/' deploy/k8s/base/reasoner.yaml"
negative unknown-flag 'reasoner has no flag --no_such_flag' \
  "sed -i 's#\"--config=/etc/ibgr/reasoner.textproto\", #\"--config=/etc/ibgr/reasoner.textproto\", \"--no_such_flag=1\", #' docker/compose.yaml"
negative wrong-address-port 'kgstore listens on 50052' \
  "sed -i 's#kgstore-headless.ibgr.svc.cluster.local:50052#kgstore-headless.ibgr.svc.cluster.local:50059#' deploy/k8s/base/gateway.yaml"
echo "check_deploy: OK"
