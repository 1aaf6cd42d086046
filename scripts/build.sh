#!/usr/bin/env bash
# Configure and build into build/ (binaries land in build/bin/). Extra args go to the build step,
# e.g. `scripts/build.sh --target kgstore ibgr`. IBGR_CMAKE_ARGS adds configure options (the
# container build turns tests and benchmarks off with it).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${IBGR_JOBS:-$(nproc)}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${IBGR_BUILD_TYPE:-RelWithDebInfo}" \
  -DIBGR_DATA_DIR="${IBGR_DATA_DIR:-$PWD/../shared/data}" ${IBGR_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$JOBS" "$@"
