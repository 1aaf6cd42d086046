#!/usr/bin/env bash
# Regenerates the Python stubs under ibgraphrag_client/_generated from protos/ with Debian's
# protoc (protobuf-compiler) and grpc_python_plugin (protobuf-compiler-grpc). They are checked in so
# that a fresh clone imports the client with nothing but python3-grpcio and python3-protobuf;
# `--check` (a ctest) fails when they no longer match the protos: run this script after editing one.
#
#   clients/python/generate_stubs.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=clients/python/ibgraphrag_client/_generated
# The API protos and what they import; not grpc/health (a `grpc` folder on sys.path would collide
# with the grpc package) and not the config or artifact protos (no client uses them).
PROTOS=(protos/ibgraphrag/v1/*.proto protos/google/api/*.proto)
# A missing tool fails with the package to install (the ctest must fail, not pass or skip).
for tool in protoc grpc_python_plugin; do
  command -v "$tool" >/dev/null || {
    echo "generate_stubs: $tool is not installed: apt-get install -y protobuf-compiler" \
      "protobuf-compiler-grpc (scripts/install_deps.sh)" >&2
    exit 1
  }
done

generate() {
  local dest=$1
  mkdir -p "$dest"
  protoc --proto_path=protos --python_out="$dest" --grpc_python_out="$dest" \
    --plugin=protoc-gen-grpc_python="$(command -v grpc_python_plugin)" "${PROTOS[@]}"
}

if [[ "${1:-}" == "--check" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  generate "$tmp"
  if ! diff -r -x __pycache__ "$tmp" "$OUT" >/dev/null; then
    diff -r -x __pycache__ "$tmp" "$OUT" | head -20
    echo "$OUT is stale: run clients/python/generate_stubs.sh" >&2
    exit 1
  fi
  echo "python stubs: up to date ($(find "$OUT" -name "*.py" -not -path "*__pycache__*" | wc -l) files)"
  exit 0
fi
rm -rf "$OUT"
generate "$OUT"
echo "python stubs: generated $(find "$OUT" -name "*.py" -not -path "*__pycache__*" | wc -l) files in $OUT"
