#!/bin/sh
# ctest's fuzz_regression_test: runs every fuzz target once over each file of
# tests/fuzz/seeds/<target>/ and tests/fuzz/regressions/<target>/.
# Usage: run_regressions.sh replay|libfuzzer BIN_DIR SOURCE_DIR TARGET...
# Fails when a target binary or either directory is missing, or when any input crashes a target
# or breaks one of its invariants.
set -u
mode=$1 bin_dir=$2 src_dir=$3
shift 3
failed=""
for target in "$@"; do
  binary="$bin_dir/$target"
  for dir in "$src_dir/seeds/$target" "$src_dir/regressions/$target"; do
    if [ ! -d "$dir" ]; then
      echo "FAIL $target: missing directory $dir"
      failed="$failed $target"
    fi
  done
  if [ ! -x "$binary" ]; then
    echo "FAIL $target: no binary $binary (build the target)"
    failed="$failed $target"
    continue
  fi
  if [ "$mode" = libfuzzer ]; then
    # -runs=0 runs the given corpus directories once without fuzzing.
    "$binary" -runs=0 -artifact_prefix="${TEST_TMPDIR:-/tmp}/" "$src_dir/seeds/$target" "$src_dir/regressions/$target" >"${TEST_TMPDIR:-/tmp}/$target.replay.log" 2>&1
  else
    "$binary" "$src_dir/seeds/$target" "$src_dir/regressions/$target" >"${TEST_TMPDIR:-/tmp}/$target.replay.log" 2>&1
  fi
  status=$?
  if [ $status -ne 0 ]; then
    echo "FAIL $target (exit $status):"
    tail -n 30 "${TEST_TMPDIR:-/tmp}/$target.replay.log"
    failed="$failed $target"
  else
    echo "ok   $target: $(tail -n 1 "${TEST_TMPDIR:-/tmp}/$target.replay.log")"
  fi
done
if [ -n "$failed" ]; then
  echo "fuzz regressions failed:$failed"
  exit 1
fi
echo "all $# fuzz targets passed their seeds and regressions"
