# SPDX-License-Identifier: Apache-2.0
# What an engine/api header may include of the engine (docs/architecture.md, "The api's own
# types"): other engine/api headers (not engine/api/internal/), the vocabulary the studio may use itself and a few engine/core
# basics (cmake/KilnEngineVocabulary.cmake). Any other engine header would hand the studio the
# engine's internal types through the api, so the api declares its own and converts in its .cpp.
# Run as a test:
#   cmake -DSOURCE_DIR=<source> -P cmake/CheckApiHeaders.cmake   (checks <source>/engine/api/*.h)
#   cmake -DAPI_DIR=<folder> -P cmake/CheckApiHeaders.cmake      (checks one folder, as the fixture test does)
# It prints every offending include as "file:line: ..." and fails when there is one.

include("${CMAKE_CURRENT_LIST_DIR}/KilnEngineVocabulary.cmake")

if(SOURCE_DIR)
  if(NOT IS_DIRECTORY "${SOURCE_DIR}/engine/api")
    message(FATAL_ERROR "CheckApiHeaders: SOURCE_DIR must name Kiln's source tree (got \"${SOURCE_DIR}\")")
  endif()
  set(apiDir "${SOURCE_DIR}/engine/api")
  set(root "${SOURCE_DIR}")
elseif(API_DIR AND IS_DIRECTORY "${API_DIR}")
  set(apiDir "${API_DIR}")
  get_filename_component(root "${API_DIR}/.." ABSOLUTE)
else()
  message(FATAL_ERROR "CheckApiHeaders: pass SOURCE_DIR (the source tree) or API_DIR (one folder) (got \"${SOURCE_DIR}${API_DIR}\")")
endif()

file(GLOB headers LIST_DIRECTORIES false "${apiDir}/*.h")
list(SORT headers)
set(violations 0)
foreach(header ${headers})
  file(RELATIVE_PATH rel "${root}" "${header}")
  file(STRINGS "${header}" lines)
  set(lineNo 0)
  foreach(line IN LISTS lines)
    math(EXPR lineNo "${lineNo} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<](engine/[^\">]+)[\">]")
      continue()
    endif()
    set(included "${CMAKE_MATCH_1}")
    # engine/api/internal/ is the api's own business (the engine's set-up and the job's trainer), not
    # the api's declarations.
    if(included MATCHES "^engine/api/" AND NOT included MATCHES "^engine/api/internal/")
      continue()
    endif()
    list(FIND KILN_UI_VOCABULARY "${included}" inVocabulary)
    list(FIND KILN_API_CORE_BASICS "${included}" inBasics)
    if(NOT inVocabulary EQUAL -1 OR NOT inBasics EQUAL -1)
      continue()
    endif()
    message(NOTICE "${rel}:${lineNo}: includes ${included}, which an api header may not include: declare the "
                   "api's own types in the header and convert in its .cpp (docs/architecture.md, \"The api's own types\")")
    math(EXPR violations "${violations} + 1")
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "CheckApiHeaders: ${violations} problem(s) with engine/api's includes")
endif()
list(LENGTH headers count)
message(STATUS "CheckApiHeaders: ${count} api headers checked; none includes engine internals")
