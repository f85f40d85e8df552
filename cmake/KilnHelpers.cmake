# SPDX-License-Identifier: Apache-2.0
# Helpers for engine libraries and Qt Test executables.

# kiln_engine_library(NAME SOURCES ... DEPS ...): one static library per engine folder.
function(kiln_engine_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  if(NOT ARG_SOURCES)  # a folder whose sources are still to come
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  set_target_properties(${name} PROPERTIES AUTOMOC OFF AUTOUIC OFF AUTORCC OFF)
endfunction()

# kiln_add_test(NAME SOURCES ... LIBS ... LABELS ... [TIMEOUT s]): a Qt Test executable under ctest.
function(kiln_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE Qt6::Core Qt6::Test ${ARG_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tests)
  set_target_properties(${name} PROPERTIES AUTOMOC ON)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_LABELS)
    set(ARG_LABELS fast)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  # A program none of whose test functions ran is reported as skipped, not passed. Qt Test counts
  # initTestCase and cleanupTestCase as passes: "0 passed" when initTestCase skipped, "2 passed"
  # when every other function skipped; any real pass makes it 3 or more.
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;KILN_SOURCE_DIR=${PROJECT_SOURCE_DIR};${ARG_ENV}"
    SKIP_REGULAR_EXPRESSION "Totals: [02] passed, 0 failed, [1-9][0-9]* skipped")
endfunction()
