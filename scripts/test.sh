#!/usr/bin/env bash
# The whole test suite on a fresh machine: install dependencies, build everything, lint the protos,
# run every ctest test except those labelled gpu (they need CUDA; run with IBGR_TEST_GPU=1) and
# container (they build Docker images and run the compose stack: tens of minutes cold; run with
# IBGR_TEST_CONTAINER=1 where dockerd runs), then the fuzz smoke (each libFuzzer target for a few
# seconds under ASan+UBSan; IBGR_FUZZ_SMOKE_SECONDS, 0 turns it off).
#
#   scripts/test.sh [CTEST ARGS...]
#   scripts/test.sh --sanitize=address [CTEST ARGS...]  clang ASan+UBSan build in build-asan/, the
#                                                        unit and integration tests
#   scripts/test.sh --sanitize=thread [CTEST ARGS...]   clang TSan build in build-tsan/, the
#                                                        concurrency tests (TSAN_TESTS below)
# Sanitizer runs and their measured times: docs/operations.md "Sanitizer runs".
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=""
ctest_args=()
for arg in "$@"; do
  case "$arg" in
    --sanitize=*) sanitize="${arg#--sanitize=}" ;;
    *) ctest_args+=("$arg") ;;
  esac
done

case "$sanitize" in
  "" | address | thread) ;;
  *) echo "test.sh: --sanitize must be address or thread, not '$sanitize'" >&2; exit 2 ;;
esac

scripts/install_deps.sh
# The interop test's Node client (@grpc/grpc-js, pinned by package-lock.json), for every run.
if [[ ! -d tools/grpc-js-client/node_modules/@grpc/grpc-js ]]; then
  (cd tools/grpc-js-client && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# The concurrency-heavy tests TSan runs: the server runner, hot-swap holders (versioned artifacts,
# servable holder), the rate limiter and the gateway pipeline, the reactors and thread pools,
# clients with channel reuse, concurrent ingest, and each service in process under concurrent calls.
# In-process tests only: the subprocess-based integration tests would need every binary built
# under TSan as well, for little more coverage of our own code.
TSAN_TESTS=(server_runner_test versioned_artifacts_test gateway_unit_test gateway_answer_pipeline_test
  blocking_reactor_test parallel_for_test client_test kg_store_ingest_test http_api_test
  reasoner_service_test retriever_service_test alignment_service_test)

run_sanitized() {
  local kind="$1" dir flags
  case "$kind" in
    address) dir=build-asan; flags=(-DIBGR_SANITIZE=address -DIBGR_FUZZ=ON) ;;
    thread) dir=build-tsan; flags=(-DIBGR_SANITIZE=thread) ;;
  esac
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DIBGR_BUILD_BENCHMARKS=OFF -DIBGR_DATA_DIR="${IBGR_DATA_DIR:-$PWD/../shared/data}" \
    "${flags[@]}" >/dev/null
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}"
  export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  export TSAN_OPTIONS="${TSAN_OPTIONS:-suppressions=$PWD/tests/sanitizers/tsan.supp:halt_on_error=1:second_deadlock_stack=1}"
  local select=()
  if [[ $kind == address ]]; then
    # Unit, integration and fault tests (corrupt artifacts, a full disk: the error paths are where
    # memory bugs hide); not the slow ones (minutes even unsanitized), gpu or container, nor
    # deploy_check (it checks the release binaries' runtime packages; these link clang's
    # sanitizer and OpenMP runtimes).
    cmake --build "$dir" -j "${IBGR_JOBS:-$(nproc)}"
    select=(-L 'unit|integration|fault' -LE 'gpu|slow|container' -E '^deploy_check$')
  else
    # Debian's absl::Mutex is uninstrumented: without an instrumented copy TSan reports every
    # hand-off through it as a race (scripts/build_tsan_abseil.sh says more).
    scripts/build_tsan_abseil.sh "$dir/abseil/lib"
    export LD_LIBRARY_PATH="$PWD/$dir/abseil/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    cmake --build "$dir" -j "${IBGR_JOBS:-$(nproc)}" --target "${TSAN_TESTS[@]}"
    # Each executable's entries: the executable itself or its discovered cases (<name>.<Suite>.<Case>).
    select=(-R "^($(IFS='|'; echo "${TSAN_TESTS[*]}"))(\..*)?$")
  fi
  ctest --test-dir "$dir" --output-on-failure -j "${IBGR_TEST_JOBS:-2}" --timeout 1800 \
    "${select[@]}" "${ctest_args[@]+"${ctest_args[@]}"}"
}

if [[ -n "$sanitize" ]]; then
  run_sanitized "$sanitize"
  exit 0
fi

scripts/build.sh
scripts/lint_protos.sh
# The serving binaries the tests start keep Abseil's deadlock detector (they switch it off in
# production: common::UseServingMutexSettings); also set per test by cmake/IbgrTesting.cmake.
export IBGR_MUTEX_DEADLOCK_DETECTION=1
excluded=()
[[ "${IBGR_TEST_GPU:-0}" == 1 ]] || excluded+=(gpu)
[[ "${IBGR_TEST_CONTAINER:-0}" == 1 ]] || excluded+=(container)
label_args=()
((${#excluded[@]})) && label_args=(-LE "$(IFS='|'; echo "${excluded[*]}")")
ctest_log=build/Testing/ctest-output.log
mkdir -p build/Testing
ctest --test-dir build --output-on-failure -j "${IBGR_TEST_JOBS:-2}" \
  "${label_args[@]+"${label_args[@]}"}" "${ctest_args[@]+"${ctest_args[@]}"}" 2>&1 | tee "$ctest_log"
# The skip guard (issue 29): a test that did not run is not a pass. CTest reports a GoogleTest
# case that skipped (GTEST_SKIP, or every case of a suite whose SetUpTestSuite failed) as
# "(Skipped)" and exits 0, so a broken fixture could turn a whole suite green. Only the GPU tests
# may skip (no CUDA device here); anything else skipped fails the run, listed.
skipped=$(grep -E '^[[:space:]]*[0-9]+ - .* \(Skipped\)' "$ctest_log" | grep -vE 'gpu' || true)
if [[ -n "$skipped" ]]; then
  echo "test.sh: these tests were skipped, which counts as a failure (allowed: gpu tests):" >&2
  echo "$skipped" >&2
  exit 1
fi
# Every fuzz target for a few seconds (issue 17): the parsers must not crash on what the fuzzer
# finds quickly. Long runs: scripts/fuzz.sh 600. Only for the whole suite: with ctest arguments
# (`scripts/test.sh -R foo`) the caller asked for a part.
if [[ "${IBGR_FUZZ_SMOKE_SECONDS:-5}" != 0 && ${#ctest_args[@]} -eq 0 ]]; then
  scripts/fuzz.sh "${IBGR_FUZZ_SMOKE_SECONDS:-5}"
fi
