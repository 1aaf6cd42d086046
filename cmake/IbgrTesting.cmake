# ibgr_add_test(<name> SOURCES a.cc ... LIBS lib ... [LABELS unit|integration|slow|gpu ...]
#               [TIMEOUT seconds] [ENVIRONMENT VAR=value ...] [RUN_SERIAL] [WHOLE_EXECUTABLE])
# One GoogleTest executable. Each test case is its own ctest entry `<name>.<Suite>.<Case>`
# (gtest_discover_tests, listed when ctest runs so building stays cheap), so `ctest -R` picks a
# case and `ctest -j` spreads the cases of one executable over the cores. WHOLE_EXECUTABLE, or a
# label in IBGR_WHOLE_EXECUTABLE_LABELS, keeps the executable as the single ctest entry <name>:
# integration-style tests start real servers in SetUpTestSuite, and one process per case would
# restart them for every case. Unit tests whose every process pays 0.5 s or more of start-up
# (LibTorch, a KG or the real lexicon built in SetUpTestSuite) are WHOLE_EXECUTABLE too: one
# process per case doubled the suite's wall time (docs/operations.md 12.2 has the measurements).
# TIMEOUT applies per ctest entry. RUN_SERIAL keeps every entry of the test alone on the machine.
# Tests find the real data through IBGR_DATA_DIR (default ../shared/data beside the repo root).
# Tests get TEST_TMPDIR=<build>/Testing/tmp for their scratch files (the helpers that make temp
# dirs and ::testing::TempDir() honour it); the fixture test `ibgr_clean_test_tmp` empties and
# recreates it before the tests that need it, so scratch files never pile up in /tmp across runs.
include(GoogleTest)

set(IBGR_TEST_TMPDIR ${CMAKE_BINARY_DIR}/Testing/tmp)
if(IBGR_BUILD_TESTS AND NOT TEST ibgr_clean_test_tmp)
  add_test(NAME ibgr_clean_test_tmp
    COMMAND sh -c "rm -rf '${IBGR_TEST_TMPDIR}' && mkdir -p '${IBGR_TEST_TMPDIR}'")
  set_tests_properties(ibgr_clean_test_tmp PROPERTIES FIXTURES_SETUP ibgr_test_tmp LABELS unit)
endif()
set(IBGR_WHOLE_EXECUTABLE_LABELS "integration;fault;security;slow" CACHE STRING
  "ctest labels whose tests stay one ctest entry per executable instead of one per test case")
set(IBGR_TEST_DISCOVERY_TIMEOUT 60 CACHE STRING
  "Seconds a test executable may take to list its cases (gtest_discover_tests)")

function(ibgr_add_test name)
  cmake_parse_arguments(ARG "RUN_SERIAL;WHOLE_EXECUTABLE" "TIMEOUT" "SOURCES;LIBS;LABELS;ENVIRONMENT"
    ${ARGN})
  if(NOT IBGR_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  # IBGR_MUTEX_DEADLOCK_DETECTION=1: the serving binaries a test starts keep Abseil's deadlock
  # detector (common::UseServingMutexSettings), so a lock-order cycle aborts the test.
  set(environment
    "IBGR_DATA_DIR=${IBGR_DATA_DIR}" "IBGR_BIN_DIR=${CMAKE_BINARY_DIR}/bin"
    "IBGR_SOURCE_DIR=${CMAKE_SOURCE_DIR}" "TEST_TMPDIR=${IBGR_TEST_TMPDIR}"
    "IBGR_MUTEX_DEADLOCK_DETECTION=1" ${ARG_ENVIRONMENT})
  set(run_serial FALSE)
  if(ARG_RUN_SERIAL)
    set(run_serial TRUE)
  endif()
  foreach(label IN LISTS ARG_LABELS)
    if(label IN_LIST IBGR_WHOLE_EXECUTABLE_LABELS)
      set(ARG_WHOLE_EXECUTABLE TRUE)
    endif()
  endforeach()
  if(ARG_WHOLE_EXECUTABLE)
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
      FIXTURES_REQUIRED ibgr_test_tmp RUN_SERIAL ${run_serial} ENVIRONMENT "${environment}")
    return()
  endif()
  # gtest_discover_tests flattens PROPERTIES into one list, which splits the list values (LABELS,
  # ENVIRONMENT) apart. The properties go instead into a ctest script that runs after the
  # discovery and sets them on the cases it listed in ${name}_TESTS.
  gtest_discover_tests(${name}
    TEST_PREFIX "${name}."
    TEST_LIST ${name}_TESTS
    DISCOVERY_MODE PRE_TEST
    DISCOVERY_TIMEOUT ${IBGR_TEST_DISCOVERY_TIMEOUT})
  set(properties_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_properties.cmake")
  # An executable not built yet is the one entry ${name}_NOT_BUILT (it fails); it keeps the
  # labels, so `-LE gpu` still leaves out a GPU test this build did not make.
  file(WRITE "${properties_file}" "if(${name}_TESTS)
  set(cases \${${name}_TESTS})
elseif(NOT EXISTS [==[${CMAKE_BINARY_DIR}/tests/${name}]==])
  set(cases ${name}_NOT_BUILT)
else()
  set(cases)
endif()
if(cases)
  set_tests_properties(\${cases} PROPERTIES LABELS [==[${ARG_LABELS}]==]
    TIMEOUT ${ARG_TIMEOUT} FIXTURES_REQUIRED ibgr_test_tmp RUN_SERIAL ${run_serial}
    ENVIRONMENT [==[${environment}]==])
endif()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${properties_file}")
endfunction()
