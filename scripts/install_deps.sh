#!/usr/bin/env bash
# The single list of system packages IBGraphRAG needs. Used by the README quick start, .ci/run and
# the Dockerfiles' build stage. Idempotent: a machine that already has everything returns quickly.
#
#   scripts/install_deps.sh            build + test dependencies (default)
#   scripts/install_deps.sh --build    what compiling the servers and the CLI needs (container build
#                                      stage: no test peers, no browser, no database)
#   scripts/install_deps.sh --runtime  runtime libraries of the CPU serving binaries only (the lean
#                                      image: no LibTorch)
#   scripts/install_deps.sh --runtime-torch  LibTorch's runtime, added to those by the tools / GPU
#                                      image (retriever_torch, retriever_train, ibgr_encoder)
#   scripts/install_deps.sh --container Docker daemon, compose and debootstrap (container tests)
set -euo pipefail

COMPILE_PKGS=(
  build-essential cmake ninja-build ccache pkg-config git ca-certificates
  protobuf-compiler libprotobuf-dev protobuf-compiler-grpc libgrpc++-dev libgrpc-dev
  libabsl-dev librocksdb-dev libfaiss-dev libtorch-dev
  libopenblas0-pthread libopenblas-dev liblapack-dev
  prometheus-cpp-dev nlohmann-json3-dev libcurl4-openssl-dev zlib1g-dev libpq-dev
  # the serving executables' allocator (cmake/IbgrDependencies.cmake, ibgr_serving_malloc)
  libjemalloc-dev
  # HTTP/JSON API (cpp-httplib)
  libcpp-httplib-dev
)
TEST_PKGS=(
  libgtest-dev libgmock-dev libbenchmark-dev
  # fuzzing and sanitizer builds (scripts/fuzz.sh, scripts/test.sh --sanitize=...)
  clang-14 libfuzzer-14-dev
  # the OpenAPI generator (protoc-gen-swagger), the Python client's runtime (the system python3,
  # /usr/bin/python3)
  golang-grpc-gateway python3-grpcio python3-protobuf
  # test and benchmark peers: promtool (metrics lint, alert rules), PostgreSQL (benchmark anchor),
  # node (buf lint, manifest validation), yamllint (deploy/ and docker/ YAML), shellcheck (deploy
  # scripts); kubectl with kustomize v4+ (deploy checks) is not a Debian 12 package (its
  # kubernetes-client is 1.20, kustomize v2.0.3): deploy/check_deploy.sh fails naming how to get it
  # (README "Quick start").
  prometheus postgresql nodejs npm yamllint shellcheck
  # headless browser of the evidence viewer's test (web/ui, evidence_viewer_test)
  chromium
  # reliability diagrams and coverage curves of `ibgr eval` (tools/eval/plot_calibration.py)
  python3-matplotlib
)
# The container tests (ctest label container, tests/container/): the Docker daemon, compose and the
# base image maker. Not part of the default set: a daemon is a machine-level choice.
CONTAINER_PKGS=(docker.io docker-compose debootstrap)
RUNTIME_PKGS=(
  # What the CPU serving binaries load (tests/container/ checks `ldd` finds every library in the
  # image). FAISS and RocksDB are linked statically from Debian's -dev packages; their shared
  # dependencies (OpenMP, OpenBLAS with its LAPACK, compression libraries) are listed here. No
  # LibTorch: its Debian package pulls in OpenCV, FFmpeg, GDAL and Qt (~1 GB).
  ca-certificates libgrpc++1.51 libprotobuf32 libabsl20220623 libgomp1
  libopenblas0-pthread libprometheus-cpp-pull1.0 libprometheus-cpp-core1.0 libcurl4 libssl3
  libcpp-httplib0.11 libsnappy1v5 liblz4-1 libzstd1 libbz2-1.0 libjemalloc2
)
RUNTIME_TORCH_PKGS=(libtorch1.13)

case "${1:-}" in
  --runtime) PKGS=("${RUNTIME_PKGS[@]}") ;;
  --runtime-torch) PKGS=("${RUNTIME_PKGS[@]}" "${RUNTIME_TORCH_PKGS[@]}") ;;
  --build) PKGS=("${COMPILE_PKGS[@]}") ;;
  --container) PKGS=("${CONTAINER_PKGS[@]}") ;;
  "") PKGS=("${COMPILE_PKGS[@]}" "${TEST_PKGS[@]}") ;;
  *) echo "install_deps: unknown option '$1' (--build, --runtime, --runtime-torch, --container or nothing)" >&2; exit 2 ;;
esac

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from outside Debian on developer machines; accept any working binary.
if command -v node >/dev/null && command -v npm >/dev/null; then
  tmp=(); for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || tmp+=("$p"); done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi

if ((${#missing[@]})); then
  echo "install_deps: installing ${#missing[@]} package(s): ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install_deps: all ${#PKGS[@]} packages present"
fi
# PostgreSQL's Debian package starts a cluster service; we only want its binaries for benchmarks.
