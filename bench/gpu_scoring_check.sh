#!/usr/bin/env bash
# The triple scorer on CUDA, on a GPU machine that has a CUDA LibTorch but none of the suite's
# Debian packages (a PyTorch machine, say): builds retriever_gpu_test and retriever_scoring_bench
# from this tree with plain g++ and runs them. Only the scorer's files are compiled (no gRPC, KG or
# FAISS); the headers and libraries they need besides LibTorch travel in a tarball made here.
#
#   bench/gpu_scoring_check.sh pack DEPS.tar.xz
#       on the Debian build machine (scripts/install_deps.sh done): Abseil, GoogleTest, Google
#       Benchmark, OpenBLAS and OpenSSL's libcrypto with the headers the scorer's files include.
#   bench/gpu_scoring_check.sh run --deps=DEPS.tar.xz --out=DIR [--torch=DIR] [--repetitions=N]
#       on the GPU machine. --torch: a LibTorch folder (include/, lib/; pytorch.org's zip or a
#       wheel's torch/ folder); by default the torch package of `python3`. Writes DIR/gpu_test.json,
#       DIR/scoring_bench.json and DIR/gpu_check.log; exits non-zero when a test fails or a CUDA test
#       or benchmark was skipped (a CPU-only LibTorch, no driver). $CXX: the
#       compiler (g++ by default).
#
# Both programs are the ones ctest and the CPU benches build (label `gpu`; scoring_bench.cc): CUDA
# scores equal CPU scores, and the CUDA timings sit beside the CPU fused loop's on the same machine.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The scorer and what it links, besides LibTorch (torch_scorer.cc, torch_backend.cc).
LIB_SOURCES=(services/retriever/scoring_backend.cc services/retriever/embedding_table.cc
  services/retriever/scorer_params.cc services/retriever/dde.cc services/retriever/fused_scorer.cc
  common/file_util.cc)
TORCH_SOURCES=(services/retriever/torch_scorer.cc services/retriever/torch_backend.cc)
TEST_SOURCE=services/retriever/scorer_gpu_test.cc
BENCH_SOURCE=services/retriever/scoring_bench.cc

die() {
  echo "gpu_scoring_check: $*" >&2
  exit 2
}

# Folders to remove however the script ends (a failed compile, `die`, set -e).
CLEANUP=()
cleanup() {
  local pids=()
  mapfile -t pids < <(jobs -p)
  ((${#pids[@]})) && kill "${pids[@]}" 2>/dev/null
  ((${#CLEANUP[@]})) && rm -rf "${CLEANUP[@]}"
  return 0
}
trap cleanup EXIT

pack() {
  local out="$1" libdir=/usr/lib/x86_64-linux-gnu
  [[ -n "${out}" ]] || die "pack: name the tarball to write"
  local stage
  stage="$(mktemp -d)"
  CLEANUP+=("${stage}")
  mkdir -p "${stage}/include" "${stage}/lib"
  # Abseil, GoogleTest and Benchmark whole (another compiler may take other #if branches); of
  # gRPC (one header for grpc::Status in the test matchers), OpenSSL and CBLAS the headers the
  # non-LibTorch files include.
  cp -a /usr/include/absl /usr/include/gtest /usr/include/gmock /usr/include/benchmark \
    "${stage}/include/"
  local header
  (cd "${REPO}" && for f in "${LIB_SOURCES[@]}" "${TEST_SOURCE}" "${BENCH_SOURCE}"; do
    g++ -std=c++17 -I. -M "${f}"
  done) | tr -s "\\\\ " "\n" | grep '^/usr/include/' | sort -u | while read -r header; do
    local rel="${header#/usr/include/}"
    case "${rel}" in
      grpc/* | grpcpp/* | openssl/*) ;;
      x86_64-linux-gnu/cblas.h | x86_64-linux-gnu/openblas_config.h | x86_64-linux-gnu/openssl/*)
        rel="${rel#x86_64-linux-gnu/}" ;;
      *) continue ;;
    esac
    mkdir -p "${stage}/include/$(dirname "${rel}")"
    cp -L "${header}" "${stage}/include/${rel}"
  done
  [[ -f "${stage}/include/cblas.h" && -f "${stage}/include/absl/status/status.h" ]] ||
    die "pack: headers missing (run scripts/install_deps.sh first)"
  # Libraries: shared where Debian ships them shared, GoogleTest's static archives.
  cp -a "${libdir}"/libabsl_*.so* "${libdir}"/libbenchmark.so* "${stage}/lib/"
  cp -a "${libdir}"/libgtest.a "${libdir}"/libgtest_main.a "${libdir}"/libgmock.a "${stage}/lib/"
  cp -L "${libdir}/libopenblas.so.0" "${stage}/lib/libopenblas.so.0"
  cp -L "${libdir}/libgfortran.so.5" "${libdir}/libquadmath.so.0" "${libdir}/libcrypto.so.3" \
    "${stage}/lib/"
  ln -s libopenblas.so.0 "${stage}/lib/libopenblas.so"
  ln -s libcrypto.so.3 "${stage}/lib/libcrypto.so"
  tar -C "${stage}" -cJf "${out}" include lib
  echo "gpu_scoring_check: wrote ${out} ($(du -h "${out}" | cut -f1))"
}

run() {
  local deps="" out="" torch="" repetitions=5 arg
  for arg in "$@"; do
    case "${arg}" in
      --deps=*) deps="${arg#--deps=}" ;;
      --out=*) out="${arg#--out=}" ;;
      --torch=*) torch="${arg#--torch=}" ;;
      --repetitions=*) repetitions="${arg#--repetitions=}" ;;
      *) die "run: unknown argument ${arg}" ;;
    esac
  done
  [[ -f "${deps}" ]] || die "run: --deps=TARBALL (made by 'pack') is required"
  [[ -n "${out}" ]] || die "run: --out=DIR is required"
  mkdir -p "${out}"
  out="$(cd "${out}" && pwd)"
  local status=0
  build_and_run "${deps}" "${out}" "${torch}" "${repetitions}" 2>&1 | tee "${out}/gpu_check.log" ||
    status=$?
  ((status == 0)) || return "${status}"
  # Skips are not passes: a CPU-only LibTorch or a missing driver skips every CUDA test and
  # benchmark, and both programs exit 0 then.
  if grep -q '"result": "SKIPPED"' "${out}/gpu_test.json" ||
    grep -q '"error_occurred": true' "${out}/scoring_bench.json"; then
    echo "gpu_scoring_check: a CUDA test was skipped or a benchmark reported an error" >&2
    return 1
  fi
}

# Runs in the pipeline's subshell (its output goes through tee), which has its own EXIT trap.
build_and_run() {
  trap cleanup EXIT
  local deps="$1" out="$2" torch="$3" repetitions="$4"
  if [[ -z "${torch}" ]]; then
    torch="$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__))')" ||
      die "run: no --torch and python3 has no torch package"
    local abi
    abi="$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')"
    # The Debian libraries in the tarball use the C++11 string ABI; so must LibTorch.
    [[ "${abi}" == 1 ]] || die "run: this LibTorch uses the old C++ ABI (_GLIBCXX_USE_CXX11_ABI=0)"
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
                "devices", torch.cuda.device_count())'
  fi
  [[ -d "${torch}/include" && -d "${torch}/lib" ]] || die "run: ${torch} has no include/ and lib/"
  [[ -f "${torch}/lib/libtorch_cuda.so" ]] || die "run: ${torch}/lib has no libtorch_cuda.so (a CPU-only LibTorch)"
  nvidia-smi -L || die "run: nvidia-smi found no GPU (driver missing?)"
  "${CXX:-g++}" --version | head -1

  local work
  work="$(mktemp -d)"
  CLEANUP+=("${work}")
  tar -C "${work}" -xJf "${deps}"
  local inc="${work}/include" lib="${work}/lib" obj="${work}/obj"
  mkdir -p "${obj}"
  local cxx=("${CXX:-g++}" -std=c++17 -O2 -g1 -DNDEBUG -pthread -I"${REPO}" -I"${inc}")
  local torch_inc=(-isystem "${torch}/include" -isystem "${torch}/include/torch/csrc/api/include")
  # Compile in parallel; the fused loop at -O3 as CMake builds it.
  local pids=() f o
  for f in "${LIB_SOURCES[@]}" "${TEST_SOURCE}" "${BENCH_SOURCE}"; do
    o="${obj}/$(basename "${f}" .cc).o"
    local extra=()
    [[ "${f}" == */fused_scorer.cc ]] && extra=(-O3)
    "${cxx[@]}" "${extra[@]}" -c "${REPO}/${f}" -o "${o}" & pids+=($!)
  done
  # Newer LibTorch headers may want C++20; the suite's files are C++17 (GCC mixes them safely).
  for f in "${TORCH_SOURCES[@]}"; do
    o="${obj}/$(basename "${f}" .cc).o"
    ("${cxx[@]}" "${torch_inc[@]}" -c "${REPO}/${f}" -o "${o}" 2>"${o}.log" ||
      "${cxx[@]}" -std=c++20 "${torch_inc[@]}" -c "${REPO}/${f}" -o "${o}" ||
      { cat "${o}.log"; false; }) & pids+=($!)
  done
  local pid
  for pid in "${pids[@]}"; do wait "${pid}" || die "compile failed"; done

  local lib_objs=()
  for f in "${LIB_SOURCES[@]}" "${TORCH_SOURCES[@]}"; do lib_objs+=("${obj}/$(basename "${f}" .cc).o"); done
  local absl=() so
  for so in "${lib}"/libabsl_*.so; do
    so="$(basename "${so}" .so)"
    absl+=("-l${so#lib}")
  done
  # libtorch_cuda registers the CUDA kernels from static initialisers and is named by no symbol of
  # ours: --no-as-needed keeps it (and c10_cuda) linked.
  local cuda_libs=()
  # shellcheck disable=SC2054  # the commas are the linker's
  cuda_libs=(-Wl,--no-as-needed -ltorch_cuda -lc10_cuda -Wl,--as-needed)
  # shellcheck disable=SC2054  # the commas are the linker's
  local link=(-L"${lib}" -Wl,-rpath,"${lib}" -L"${torch}/lib" -Wl,-rpath,"${torch}/lib"
    -Wl,--as-needed "${cuda_libs[@]}" -ltorch -ltorch_cpu -lc10 "${absl[@]}" -lopenblas -lcrypto
    -pthread)
  "${CXX:-g++}" -o "${work}/retriever_gpu_test" "${obj}/scorer_gpu_test.o" "${lib_objs[@]}" \
    "${lib}/libgmock.a" "${lib}/libgtest_main.a" "${lib}/libgtest.a" "${link[@]}"
  "${CXX:-g++}" -o "${work}/retriever_scoring_bench" "${obj}/scoring_bench.o" "${lib_objs[@]}" \
    -lbenchmark "${link[@]}"

  # The Debian libraries find each other (libabsl_base -> libabsl_spinlock_wait) by the search
  # path, not by the programs' RUNPATH.
  export LD_LIBRARY_PATH="${lib}:${torch}/lib${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
  local status=0
  "${work}/retriever_gpu_test" --gtest_output="json:${out}/gpu_test.json" || status=$?
  "${work}/retriever_scoring_bench" --benchmark_repetitions="${repetitions}" \
    --benchmark_report_aggregates_only=true --benchmark_out="${out}/scoring_bench.json" ||
    status=$?
  return "${status}"
}

case "${1:-}" in
  pack) pack "${2:-}" ;;
  run)
    shift
    run "$@"
    ;;
  *) die "usage: $0 pack DEPS.tar.xz | run --deps=DEPS.tar.xz --out=DIR [--torch=DIR]" ;;
esac
