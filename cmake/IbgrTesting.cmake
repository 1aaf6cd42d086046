# ibgr_add_test(<name> SOURCES a.cc ... LIBS lib ... [LABELS unit|integration|slow|gpu ...]
#               [TIMEOUT seconds])
# One GoogleTest executable registered with ctest as a single test (fast to list, easy to label).
# Tests find the real data through IBGR_DATA_DIR (default ../shared/data beside the repo root).
# Tests get TEST_TMPDIR=<build>/Testing/tmp for their scratch files (the helpers that make temp
# dirs and ::testing::TempDir() honour it); the fixture test `ibgr_clean_test_tmp` empties and
# recreates it before the tests that need it, so scratch files never pile up in /tmp across runs.
set(IBGR_TEST_TMPDIR ${CMAKE_BINARY_DIR}/Testing/tmp)
if(IBGR_BUILD_TESTS AND NOT TEST ibgr_clean_test_tmp)
  add_test(NAME ibgr_clean_test_tmp
    COMMAND sh -c "rm -rf '${IBGR_TEST_TMPDIR}' && mkdir -p '${IBGR_TEST_TMPDIR}'")
  set_tests_properties(ibgr_clean_test_tmp PROPERTIES FIXTURES_SETUP ibgr_test_tmp LABELS unit)
endif()
function(ibgr_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT IBGR_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    FIXTURES_REQUIRED ibgr_test_tmp
    ENVIRONMENT "IBGR_DATA_DIR=${IBGR_DATA_DIR};IBGR_BIN_DIR=${CMAKE_BINARY_DIR}/bin;IBGR_SOURCE_DIR=${CMAKE_SOURCE_DIR};TEST_TMPDIR=${IBGR_TEST_TMPDIR}")
endfunction()
