# SPDX-License-Identifier: Apache-2.0
# The studio's boundary with the engine (docs/architecture.md, "The UI's boundary"): a file of the
# studio (ui/, and the studio program app/kiln/) may include engine/api/* (not engine/api/internal/,
# the api's own set-up) and the read-only
# vocabulary headers listed below, nothing else of the engine, and their CMakeLists.txt link none
# of the engine's internal libraries. The headless programs under app/ (kiln-train, kiln-serve, ...)
# may use the engine directly and are not checked. Run as a test:
#   cmake -DSOURCE_DIR=<source> -P cmake/CheckUiBoundary.cmake   (checks <source>/ui and <source>/app/kiln)
#   cmake -DUI_DIR=<folder> -P cmake/CheckUiBoundary.cmake       (checks one folder, as the fixture test does)
# It prints every offending include as "file:line: ..." and fails when there is one.

if(SOURCE_DIR)
  if(NOT IS_DIRECTORY "${SOURCE_DIR}/ui" OR NOT IS_DIRECTORY "${SOURCE_DIR}/app/kiln")
    message(FATAL_ERROR "CheckUiBoundary: SOURCE_DIR must name Kiln's source tree (got \"${SOURCE_DIR}\")")
  endif()
  set(KILN_STUDIO_DIRS "${SOURCE_DIR}/ui" "${SOURCE_DIR}/app/kiln")
  set(root "${SOURCE_DIR}")
elseif(UI_DIR AND IS_DIRECTORY "${UI_DIR}")
  set(KILN_STUDIO_DIRS "${UI_DIR}")
  get_filename_component(root "${UI_DIR}/.." ABSOLUTE)
else()
  message(FATAL_ERROR "CheckUiBoundary: pass SOURCE_DIR (the source tree) or UI_DIR (one folder) (got \"${SOURCE_DIR}${UI_DIR}\")")
endif()

# The vocabulary: value types and pure functions that describe the document the studio edits.
include("${CMAKE_CURRENT_LIST_DIR}/KilnEngineVocabulary.cmake")

set(sources "")
foreach(dir ${KILN_STUDIO_DIRS})
  file(GLOB_RECURSE found LIST_DIRECTORIES false "${dir}/*.h" "${dir}/*.cpp" "${dir}/*.hpp")
  list(APPEND sources ${found})
endforeach()
list(SORT sources)
set(violations 0)
foreach(src ${sources})
  file(STRINGS "${src}" lines)
  set(lineNo 0)
  foreach(line IN LISTS lines)
    math(EXPR lineNo "${lineNo} + 1")
    if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<](engine/[^\">]+)[\">]")
      set(header "${CMAKE_MATCH_1}")
      if(header MATCHES "^engine/api/" AND NOT header MATCHES "^engine/api/internal/")
        continue()
      endif()
      list(FIND KILN_UI_VOCABULARY "${header}" at)
      if(at EQUAL -1)
        file(RELATIVE_PATH rel "${root}" "${src}")
        message(NOTICE "${rel}:${lineNo}: includes ${header}, which the studio (ui/, app/kiln/) may not include: "
                       "use an engine/api call instead (docs/architecture.md, \"The UI's boundary\")")
        math(EXPR violations "${violations} + 1")
      endif()
    endif()
  endforeach()
endforeach()

# The link lines say the same: the studio's libraries and program link kiln_api and the vocabulary
# libraries, never the engine's internals directly.
set(KILN_UI_FORBIDDEN_LIBS kiln_engine_all kiln_train kiln_serve kiln_exec kiln_store kiln_data kiln_eval
  kiln_optim kiln_kernels kiln_cuda kiln_mpi)
foreach(dir ${KILN_STUDIO_DIRS})
  if(NOT EXISTS "${dir}/CMakeLists.txt")
    continue()
  endif()
  file(STRINGS "${dir}/CMakeLists.txt" lines)
  set(lineNo 0)
  foreach(line IN LISTS lines)
    math(EXPR lineNo "${lineNo} + 1")
    string(REGEX REPLACE "#.*" "" code "${line}")
    foreach(lib ${KILN_UI_FORBIDDEN_LIBS})
      if(code MATCHES "(^|[ \t(])${lib}([ \t)]|$)")
        file(RELATIVE_PATH rel "${root}" "${dir}/CMakeLists.txt")
        message(NOTICE "${rel}:${lineNo}: links ${lib}, which the studio's libraries may not link: "
                       "link kiln_api and the vocabulary libraries (kiln_io, kiln_ops, kiln_graph, kiln_core)")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

list(LENGTH sources count)
if(violations GREATER 0)
  message(FATAL_ERROR "CheckUiBoundary: ${violations} use(s) of engine internals in the studio")
endif()
string(REPLACE "${root}/" "" shown "${KILN_STUDIO_DIRS}")
string(REPLACE ";" "/, " shown "${shown}")
message(STATUS "CheckUiBoundary: ${count} files under ${shown}/ include only engine/api and the vocabulary")
