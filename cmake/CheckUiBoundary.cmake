# SPDX-License-Identifier: Apache-2.0
# The studio's boundary with the engine (docs/architecture.md, "The UI's boundary"): a file under
# ui/ may include engine/api/* and the read-only vocabulary headers listed below, nothing else of
# the engine, and ui/CMakeLists.txt links none of the engine's internal libraries. Run as a test:
#   cmake -DUI_DIR=<source>/ui -P cmake/CheckUiBoundary.cmake
# It prints every offending include as "file:line: ..." and fails when there is one.

if(NOT UI_DIR OR NOT IS_DIRECTORY "${UI_DIR}")
  message(FATAL_ERROR "CheckUiBoundary: UI_DIR must name the ui/ folder (got \"${UI_DIR}\")")
endif()

# The vocabulary: value types and pure functions that describe the document the studio edits. Keep
# this list short; anything that does work belongs behind an engine/api call.
set(KILN_UI_VOCABULARY
  engine/core/error.h         # Error and Result, which every api call returns
  engine/core/json_checked.h  # reading user JSON with errors that name the file and line
  engine/graph/graph.h        # the graph the editor edits
  engine/graph/attr.h         # node attribute values
  engine/io/project.h         # the project document (graph, data, training sections)
  engine/io/layers.h          # composite layer definitions the palette offers
  engine/ops/op_table.h       # the op table: palette, inspector, node cards
  engine/ops/plugin_ops.h     # the op table's plugin rows
  engine/ops/model.h          # shape inference over a graph, shown live by the editor
  engine/ops/summary.h        # per-node parameters, MACs and memory from that analysis
)

file(GLOB_RECURSE sources LIST_DIRECTORIES false "${UI_DIR}/*.h" "${UI_DIR}/*.cpp" "${UI_DIR}/*.hpp")
list(SORT sources)
set(violations 0)
foreach(src ${sources})
  file(STRINGS "${src}" lines)
  set(lineNo 0)
  foreach(line IN LISTS lines)
    math(EXPR lineNo "${lineNo} + 1")
    if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<](engine/[^\">]+)[\">]")
      set(header "${CMAKE_MATCH_1}")
      if(header MATCHES "^engine/api/")
        continue()
      endif()
      list(FIND KILN_UI_VOCABULARY "${header}" at)
      if(at EQUAL -1)
        file(RELATIVE_PATH rel "${UI_DIR}/.." "${src}")
        message(NOTICE "${rel}:${lineNo}: includes ${header}, which ui/ may not include: "
                       "use an engine/api call instead (docs/architecture.md, \"The UI's boundary\")")
        math(EXPR violations "${violations} + 1")
      endif()
    endif()
  endforeach()
endforeach()

# The link lines say the same: ui/ libraries link kiln_api and the vocabulary libraries, never the
# engine's internals directly.
set(KILN_UI_FORBIDDEN_LIBS kiln_engine_all kiln_train kiln_serve kiln_exec kiln_store kiln_data kiln_eval
  kiln_optim kiln_kernels kiln_cuda kiln_mpi)
if(EXISTS "${UI_DIR}/CMakeLists.txt")
  file(STRINGS "${UI_DIR}/CMakeLists.txt" lines)
  set(lineNo 0)
  foreach(line IN LISTS lines)
    math(EXPR lineNo "${lineNo} + 1")
    string(REGEX REPLACE "#.*" "" code "${line}")
    foreach(lib ${KILN_UI_FORBIDDEN_LIBS})
      if(code MATCHES "(^|[ \t(])${lib}([ \t)]|$)")
        file(RELATIVE_PATH rel "${UI_DIR}/.." "${UI_DIR}/CMakeLists.txt")
        message(NOTICE "${rel}:${lineNo}: links ${lib}, which ui/ libraries may not link: "
                       "link kiln_api and the vocabulary libraries (kiln_io, kiln_ops, kiln_graph, kiln_core)")
        math(EXPR violations "${violations} + 1")
      endif()
    endforeach()
  endforeach()
endif()

list(LENGTH sources count)
if(violations GREATER 0)
  message(FATAL_ERROR "CheckUiBoundary: ${violations} use(s) of engine internals under ui/")
endif()
message(STATUS "CheckUiBoundary: ${count} files under ui/ include only engine/api and the vocabulary")
