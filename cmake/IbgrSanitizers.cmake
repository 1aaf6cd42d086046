# Sanitizer and fuzzing builds (issue 17). Both are separate build directories configured by the
# scripts, never the default build:
#
#   scripts/test.sh --sanitize=address   build-asan/: clang, ASan + UBSan (+ libFuzzer coverage)
#   scripts/test.sh --sanitize=thread    build-tsan/: clang, TSan
#   scripts/fuzz.sh [SECONDS]            build-asan/ with IBGR_FUZZ=ON: the tests/fuzz/ targets
#
# IBGR_SANITIZE=address adds -fsanitize=address,undefined to every target; UBSan findings abort
# (-fno-sanitize-recover) so a test or fuzz run fails on the first one. IBGR_SANITIZE=thread adds
# -fsanitize=thread. IBGR_FUZZ=ON (clang only) adds libFuzzer's coverage instrumentation to every
# target (-fsanitize=fuzzer-no-link) and builds the fuzz targets in tests/fuzz/ with libFuzzer's
# main; the ASan tests and the fuzzers then share one build directory and one compile. Without
# IBGR_FUZZ, tests/fuzz/ builds each target against a replay main instead (any compiler): ctest's
# fuzz_regression_test feeds it every seed and every input that once crashed.
#
# Debian's libraries (gRPC, protobuf, RocksDB, FAISS, LibTorch) are not instrumented: ASan still
# checks every access our code makes, TSan may miss races whose only synchronisation is inside
# them; tests/sanitizers/tsan.supp lists what was found to be such and why.
set(IBGR_SANITIZE "" CACHE STRING "Sanitizer build: '' (none), address (ASan+UBSan) or thread (TSan)")
set_property(CACHE IBGR_SANITIZE PROPERTY STRINGS "" address thread)
option(IBGR_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)

if(IBGR_SANITIZE STREQUAL "address")
  set(_ibgr_san_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer)
  # vptr checks need RTTI of every class crossing our boundary; Debian's LibTorch and protobuf
  # types trip it without a bug in our code. Everything else of UBSan stays on.
  list(APPEND _ibgr_san_flags -fno-sanitize=vptr)
elseif(IBGR_SANITIZE STREQUAL "thread")
  set(_ibgr_san_flags -fsanitize=thread -fno-omit-frame-pointer)
elseif(NOT IBGR_SANITIZE STREQUAL "")
  message(FATAL_ERROR "IBGR_SANITIZE must be '', address or thread, not '${IBGR_SANITIZE}'")
endif()
if(_ibgr_san_flags)
  add_compile_options(${_ibgr_san_flags})
  add_link_options(${_ibgr_san_flags})
  # -O1 keeps sanitizer reports readable and compiles faster than -O2.
  string(REPLACE "-O2" "-O1" CMAKE_CXX_FLAGS_RELWITHDEBINFO "${CMAKE_CXX_FLAGS_RELWITHDEBINFO}")
  string(REPLACE "-DNDEBUG" "" CMAKE_CXX_FLAGS_RELWITHDEBINFO "${CMAKE_CXX_FLAGS_RELWITHDEBINFO}")
endif()
if(IBGR_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "IBGR_FUZZ=ON needs clang (libFuzzer): CXX=clang++-14 CC=clang-14")
  endif()
  if(NOT IBGR_SANITIZE STREQUAL "address")
    # The coverage hooks -fsanitize=fuzzer-no-link inserts are provided by the ASan runtime.
    message(FATAL_ERROR "IBGR_FUZZ=ON needs IBGR_SANITIZE=address (scripts/fuzz.sh sets both)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
